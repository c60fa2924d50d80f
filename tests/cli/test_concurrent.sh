#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Two recordings at once, on the same CPUs: evprof beside evprof in each
# mode (task, cpu, the BPF engine, and cpu beside the BPF engine) and
# evprof beside perf record -a sampling page faults and context switches
# on every CPU. Each recording runs its own wl_paced (three threads
# faulting for a set time, each counting its own faults with getrusage),
# both let go once both say they run (perf and evprof start them only once
# they record); the runs must overlap, once spread over the CPUs and once
# both pinned to one CPU of this test's affinity mask (six threads taking
# turns on one CPU's counters). Every thread of every evprof recording:
# page faults within 0.5% of its own rusage. perf's own counts are shown,
# not held to that: it drops what a thread counts after its last sample
# (seen: 96-98% of the truth). A per-CPU recording takes every context
# switch of its CPUs: under a storm of switches from outside (a pipe
# ping-pong, 150,000 a second) or a loaded host its ring overflows, it
# says "lost N records", and what the CPU counted in the gap is no
# thread's: a pair with such a recording runs once more (lost_line), and
# fails when it loses again, the loss shown.
. "$(dirname "$0")/lib.sh"
PACED=$FIXTURES/wl_paced
secs=1.5
# A page-fault sample every 512, not 64: a per-CPU ring of six faulting
# threads beside another recording overflowed at 64 with an ASan build's
# reader, in both runs of a pair.
pf=page-faults/period=512/

kinds="task cpu"
bpf_engine && kinds="$kinds bpf"

perf_ok=
if ! command -v perf >/dev/null; then
	skip "no perf"
elif ! perf record -a -e cpu-clock -o "$TMP/probe.data" -- true \
	>/dev/null 2>"$TMP/probe.err"; then
	skip "perf record -a cannot run here: $(tail -1 "$TMP/probe.err")"
else
	perf_ok=1
fi

cpu=$(taskset -pc $$ | sed 's/.*: //; s/[-,].*//')

# run DIR KIND PIN: records wl_paced with KIND (an evprof mode, bpf or
# perf), the workload under PIN, going on a line in DIR/go; its status in
# DIR/rc
run() {
	local d=$1 kind=$2 pin=$3 rc
	case $kind in
	perf)
		perf record -a -g -o "$d/perf.data" \
			-e '{cpu-clock,page-faults,context-switches}:S' \
			-- $pin "$PACED" "$secs" 3 0 "$d/go" >/dev/null 2>"$d/err"
		;;
	bpf)
		"$EVPROF" record --engine bpf -e "cpu-clock,$pf" \
			-o "$d/p.pb.gz" -- $pin "$PACED" "$secs" 3 0 "$d/go" \
			>/dev/null 2>"$d/err"
		;;
	*)
		"$EVPROF" record --mode "$kind" -e "cpu-clock,$pf" \
			-o "$d/p.pb.gz" -- $pin "$PACED" "$secs" 3 0 "$d/go" \
			>/dev/null 2>"$d/err"
		;;
	esac
	rc=$?
	echo "$rc" >"$d/rc"
}

# counts DIR KIND: "TID FAULTS" per thread of the recording
counts() {
	if [ "$2" = perf ]; then
		perf script -i "$1/perf.data" -F tid,event,period 2>/dev/null |
			awk '$3 == "page-faults:" { s[$1] += $2 }
				END { for (t in s) print t, s[t] }'
	else
		"$EVPROF" report -T -n 1 "$1/p.pb.gz" |
			awk '/^== thread / { sub(/tid=/, "", $5); cur = $5 }
				/^total:/ { for (i = 2; i <= NF; i++)
					if (index($i, "page-faults=") == 1) {
						sub(/.*=/, "", $i); s[cur] += $i } }
				END { for (t in s) print t, s[t] }'
	fi
}

# check LABEL DIR KIND: every paced thread against its rusage
check() {
	local label=$1 d=$2 kind=$3 line name tid truth got
	if [ "$(cat "$d/rc")" != 0 ]; then
		fail "$label: record failed: $(tail -3 "$d/err")"
		return
	fi
	counts "$d" "$kind" >"$d/counts"
	for t in 0 1 2; do
		line=$(grep "^thread paced-$t " "$d/err")
		tid=$(echo "$line" | sed -n 's/.* tid=\([0-9]*\) .*/\1/p')
		truth=$(echo "$line" | sed -n 's/.* faults=\([0-9]*\)$/\1/p')
		got=$(awk -v t="$tid" '$1 == t { print $2 }' "$d/counts")
		if [ "$kind" = perf ]; then
			if [ "${got:-0}" -gt 0 ] && [ -n "$truth" ]; then
				ok "$label: perf saw paced-$t: $got page faults, rusage $truth"
			else
				fail "$label: perf has no page faults of paced-$t ('$got', rusage '$truth')"
			fi
		elif [ -n "$truth" ] && [ -n "$got" ] && within "$got" "$truth" 0.5; then
			ok "$label: paced-$t page faults $got ~ rusage $truth"
		else
			fail "$label: paced-$t page faults '$got' vs rusage '$truth' ($(grep -o 'lost [0-9]* records' "$d/err"))"
		fi
	done
}

# pair A B PIN: recordings of kinds A and B at once, in $TMP/a and $TMP/b
pair() {
	rm -rf "$TMP/a" "$TMP/b"
	mkdir "$TMP/a" "$TMP/b"
	mkfifo "$TMP/a/go" "$TMP/b/go"
	# Opened both ways: a line written waits for its reader.
	exec 3<>"$TMP/a/go" 4<>"$TMP/b/go"
	run "$TMP/a" "$1" "$3" &
	run "$TMP/b" "$2" "$3" &
	for _ in $(seq 300); do
		[ "$(grep -l ready "$TMP/a/err" "$TMP/b/err" 2>/dev/null |
			wc -l)" -eq 2 ] && break
		sleep 0.1
	done
	echo go >&3
	echo go >&4
	wait
	exec 3>&- 4>&-
}

# overlap A B: the seconds both workloads ran at once
overlap() {
	awk '$1 == "ran" { sub(/start=/, "", $2); sub(/end=/, "", $3)
		if (!n++) { s = $2; e = $3 } else {
			if ($2 > s) s = $2; if ($3 < e) e = $3 } }
		END { printf "%.3f\n", (n == 2 && e > s) ? e - s : 0 }' "$1" "$2"
}

pairs=
for k in $kinds; do
	pairs="$pairs $k:$k"
	[ -n "$perf_ok" ] && pairs="$pairs $k:perf"
done
# The BPF engine's programs on every CPU beside a per-CPU recording (once
# 1.25% of the latter's deltas lost, under ctest -j2).
case $kinds in *bpf*) pairs="$pairs cpu:bpf" ;; esac
for pin in "" "taskset -c $cpu"; do
	for p in $pairs; do
		a=${p%:*} b=${p#*:}
		label="$a + $b${pin:+ on CPU $cpu}"
		for try in 1 2; do
			pair "$a" "$b" "$pin"
			lost=$(lost_line "$TMP/a/err")$(lost_line "$TMP/b/err")
			[ "$try" = 1 ] && [ -n "$lost" ] || break
			echo "note: $label: $lost...: once more"
		done
		both=$(overlap "$TMP/a/err" "$TMP/b/err")
		if awk -v o="$both" -v s="$secs" 'BEGIN { exit !(o >= s / 2) }'; then
			ok "$label: the workloads ran $both s at once"
		else
			fail "$label: the workloads ran only '$both' s at once"
		fi
		check "$label (1st)" "$TMP/a" "$a"
		check "$label (2nd)" "$TMP/b" "$b"
	done
done

finish
