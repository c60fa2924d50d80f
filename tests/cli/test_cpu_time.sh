#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Each thread's recorded CPU time against the thread's own
# (CLOCK_THREAD_CPUTIME_ID), in cpu and task mode: wl_naps's two threads
# nap 1 ms 200 times each, pinned to one CPU at a time, so that every wake
# follows that CPU's idle task. Some kernels never sample the idle task of
# some CPUs (Linux 6.18 in a VM here: CPU 1's, neither its switch-outs nor
# its cpu-clock ticks): were a stretch no read ends charged to the next
# read, a napper would take about 1 ms of idle time per wake.
#
# Tolerance per thread: one sampling period (its last stretch), 50 us per
# context switch it made (/proc: the scheduler and perf draw the line at
# different points of the switch path) and the CPU's interrupt and steal
# time during the run (/proc/stat: wall-clock perf clocks count them, the
# thread's clock does not).
. "$(dirname "$0")/lib.sh"

command -v taskset >/dev/null || { skip "no taskset"; finish; }
hz=$(getconf CLK_TCK)
freq=1000

# irq + softirq + steal of CPU $1 so far, in ns
busy_ns() {
	awk -v c="cpu$1" -v hz="$hz" '$1 == c { printf "%.0f\n", ($7 + $8 + $9) * 1e9 / hz }' /proc/stat
}

cpus=$(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
for mode in cpu task; do
	for c in $cpus; do
		out="$TMP/$mode-$c"
		b0=$(busy_ns "$c")
		"$EVPROF" record --mode "$mode" -e cpu-clock -F "$freq" \
			-o "$out.pb.gz" -- taskset -c "$c" "$FIXTURES/wl_naps" 200 \
			>/dev/null 2>"$out.err" ||
			{ fail "$mode cpu $c: record failed: $(tail -3 "$out.err")"; continue; }
		b1=$(busy_ns "$c")
		"$EVPROF" report "$out.pb.gz" --per-thread >"$out.rep" 2>&1 ||
			{ fail "$mode cpu $c: report failed"; continue; }
		for t in nap-a nap-b; do
			line=$(grep "^thread $t " "$out.err")
			own=$(echo "$line" | sed -n 's/.* cpu=\([0-9]*\) .*/\1/p')
			sw=$(echo "$line" | awk '{ for (i = 1; i <= NF; i++) {
				split($i, kv, "="); if (kv[1] == "vol" || kv[1] == "invol")
				s += kv[2] } } END { print s + 0 }')
			got=$(grep -A1 "^== thread $t " "$out.rep" | tail -1 |
				sed -n 's/.* cpu-ms=\([0-9.]*\).*/\1/p')
			tol=$(awk -v f="$freq" -v s="$sw" -v b="$((b1 - b0))" \
				'BEGIN { printf "%.3f", (1e9 / f + s * 50000 + b) / 1e6 }')
			ownms=$(awk -v o="$own" 'BEGIN { printf "%.3f", o / 1e6 }')
			if [ -n "$own" ] && [ -n "$got" ] && awk -v a="$got" \
				-v b="$ownms" -v t="$tol" \
				'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
				ok "$mode cpu $c: $t CPU $got ms, its own $ownms ms (+-$tol)"
			else
				fail "$mode cpu $c: $t CPU '$got' ms, its own '$ownms' ms (+-$tol)"
			fi
		done
	done
done
finish
