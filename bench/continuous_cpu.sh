#!/usr/bin/env bash
# What `evprof record -a --continuous -F 19` costs when left on, in two
# cases: `idle` (the machine as it is) and `switching` (beside a pipe ring,
# bench/switch_work.c, doing SWITCH_RATE passes a second: 25000; 0: as fast
# as it goes; every switch is a sample of the hidden switch member in cpu
# mode). ROUNDS rounds (at least 6); in each, per case, SECONDS of the
# machine without evprof and SECONDS with it, in an order that rotates
# every round. The cost is the whole machine's busy CPU a second with
# evprof minus without it in the same round (bench/lib.sh: evprof's
# process, its BPF programs or sampling interrupts in other tasks'
# context, the kernel's threads; a rate, so that evprof's start and end,
# which make its run longer than SECONDS, do not count the machine's
# other work over that time; median and 95% confidence interval), in CPU
# seconds a minute and in % of one CPU; beside it evprof's own CPU (user + system from its
# rusage) and peak RSS, the machine's context switches a second (from
# /proc/stat), windows written and what the closing line says was lost.
# Each window is written to a directory and pushed to the local Pyroscope
# stand-in (tests/tools/pyroscope_endpoint.mjs) when node and its packages
# are there. ENGINE=bpf records with the in-kernel engine (default: ring).
# Usage: bench/continuous_cpu.sh [SECONDS [INTERVAL [CASES [ROUNDS]]]]
# (defaults 30 10 "idle switching" 6; root; needs build/evprof; QUICK=1:
# 5 s rounds of 1 s windows; BENCH_LOCK=FILE holds an flock on FILE over
# each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
secs=${1:-30}
interval=${2:-10}
cases=${3:-idle switching}
rounds=${4:-6}
[ -z "${QUICK:-}" ] || secs=5 interval=1
[ "$rounds" -ge 6 ] || bench_fail "at least 6 rounds"
evprof=${EVPROF:-build/evprof}
[ -x "$evprof" ] || bench_fail "no $evprof: build first (scripts/build.sh)"
engine=${ENGINE:-ring}
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c

ep_pid= sw_pid=
bench_on_exit='[ -z "$ep_pid" ] || kill "$ep_pid"; [ -z "$sw_pid" ] || kill "$sw_pid"'
push=()
if command -v node >/dev/null &&
	[ -d tests/tools/node_modules/pprof-format ]; then
	node tests/tools/pyroscope_endpoint.mjs --port-file "$out/port" \
		--log "$out/push.log" 2>/dev/null &
	ep_pid=$!
	for _ in $(seq 100); do
		[ -s "$out/port" ] && break
		sleep 0.1
	done
	[ -s "$out/port" ] || bench_fail "the Pyroscope stand-in did not start"
	push=(--push "http://127.0.0.1:$(cat "$out/port")" --tag service_name=bench)
else
	echo "(no node or tests/tools packages: windows are written, not pushed)"
fi

ctxt() { awk '/^ctxt/ { print $2 }' /proc/stat; }

# one ROUND CASE CONFIG: SECONDS without (bare) or with evprof
one() {
	local r=$1 c=$2 k=$3 c0 c1 lost
	c0=$(ctxt)
	if [ "$k" = bare ]; then
		bench_run "$r" "$c-bare" sleep "$secs"
	else
		rm -rf "$out/dir" && mkdir "$out/dir"
		bench_run "$r" "$c-evprof" /usr/bin/time -f "%U %S %M" \
			-o "$out/time" "$evprof" record -a --engine "$engine" \
			--continuous -F 19 --interval "$interval" \
			--output-dir "$out/dir" "${push[@]}" --duration "$secs"
		lost=$(bench_evprof_lost "$out/stderr")
		echo "$(cat "$out/time") $(ls "$out/dir" | wc -l) ${lost/ /+}" >>"$out/$c"
		grep -E '^evprof: push: ' "$out/stderr" >"$out/$c.push" ||
			[ ${#push[@]} -eq 0 ] || bench_fail "no push line: $(tail -2 "$out/stderr")"
	fi
	c1=$(ctxt)
	echo $(((c1 - c0) / secs)) >>"$out/$c.ctxt"
}

echo "evprof record -a --continuous -F 19 --interval $interval" \
	"--engine $engine; $rounds rounds of ${secs} s a case and config"
bench_machine before
for r in $(seq "$rounds"); do
	bench_round_begin
	for c in $cases; do
		if [ "$c" = switching ]; then
			"$out/sw" 4 100000000000 "${SWITCH_RATE:-25000}" 2>/dev/null &
			sw_pid=$!
			sleep 1
		fi
		for k in $(bench_rotate "$r" bare evprof); do
			one "$r" "$c" "$k"
		done
		if [ -n "$sw_pid" ]; then
			kill "$sw_pid"
			wait "$sw_pid" 2>/dev/null || [ $? -eq 143 ] ||
				bench_fail "switch_work failed"
			sw_pid=
		fi
	done
	bench_round_end
done
bench_machine after
bench_rounds
echo "95% CI of each median: coverage $(bench_coverage "$rounds")"
printf "%-10s %9s %-26s %-24s %8s %8s %9s %8s %s\n" case bare_cpu/s \
	"cost cpu_s/min [95% CI]" "cost cpu_% [95% CI]" own_cpu% maxrss_kB \
	switch/s windows "lost each run"
for c in $cases; do
	printf "%-10s %9s %-26s %-24s %8s %8s %9s %8s %s\n" "$c" \
		"$(bench_values "$c-bare" rate | bench_mci %.2f | cut -d' ' -f1)" \
		"$(bench_diffs "$c-bare" "$c-evprof" rate |
			awk '{ print $1 * 60 }' | bench_mci)" \
		"$(bench_diffs "$c-bare" "$c-evprof" rate |
			awk '{ print $1 * 100 }' | bench_mci %.2f)" \
		"$(awk -v t="$secs" '{ print ($1 + $2) * 100 / t }' "$out/$c" |
			bench_mci %.2f | cut -d' ' -f1)" \
		"$(cut -d' ' -f3 "$out/$c" | sort -n | tail -1)" \
		"$(bench_median <"$out/$c.ctxt")" \
		"$(cut -d' ' -f4 "$out/$c" | bench_median)" \
		"$(cut -d' ' -f5 "$out/$c" | tr '\n' ' ')"
	[ ! -s "$out/$c.push" ] || sed 's/^/    last run: /' "$out/$c.push"
done
