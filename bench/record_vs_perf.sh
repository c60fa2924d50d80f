#!/usr/bin/env bash
# evprof record against perf record on the same fixed CPU-bound workload,
# side by side in one run: ROUNDS rounds (at least 6), each running every
# config once in an order that rotates every round. Per config: the
# workload's own wall time (work_s, median, and the slowdown against the
# bare run's median), the whole command's (total_s: total - work is set-up
# plus writing the output), the overhead in the whole machine's busy CPU
# against the bare run of the same round (bench/lib.sh; median and 95%
# confidence interval), samples, and what each run lost (evprof: records
# and samples from its closing line; perf: LOST and LOST_SAMPLES records
# from perf report --stats).
# Usage: bench/record_vs_perf.sh [ROUNDS] (needs build/evprof and perf;
# EVPROF=path overrides build/evprof, ITER the spin iterations, QUICK=1 a
# tenth of the work; BENCH_LOCK=FILE holds an flock on FILE each round;
# EVPROF_OLD=path adds that build's runs, old-evprof-*, to every round, and
# the difference between the two builds with its interval).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_args "${1:-7}"
command -v perf >/dev/null || bench_fail "no perf"
iter=${ITER:-400000000}
[ -z "${QUICK:-}" ] || iter=$((iter / 10))
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c
FREQ=1000
EVENTS=cpu-clock,page-faults,context-switches
work=("$out/work" 2 "$iter")

# one ROUND CONFIG: one measured run; appends "work_s samples lost" to
# $out/CONFIG.
one() {
	local r=$1 c=$2 samples=- lost=- secs
	case $c in
	baseline) bench_run "$r" "$c" "${work[@]}" ;;
	evprof-firefox | evprof-folded | old-evprof-firefox | old-evprof-folded)
		local o=$out/p.json.gz bin=$evprof
		[ "${c%firefox}" != "$c" ] || o=$out/p.folded
		[ "${c#old-}" = "$c" ] || bin=$EVPROF_OLD
		bench_run "$r" "$c" "$bin" record -e "$EVENTS" -F $FREQ \
			-o "$o" -- "${work[@]}"
		lost=$(bench_evprof_lost "$out/stderr")
		lost=${lost/ /+}
		samples=$(sed -n 's/^evprof: \([0-9]*\) samples of .*; lost .*/\1/p' "$out/stderr")
		;;
	perf-g | perf-g-leader-S)
		local ev=$EVENTS
		[ "$c" = perf-g ] || ev="{$EVENTS}:S"
		bench_run "$r" "$c" perf record -g -F $FREQ -e "$ev" \
			-o "$out/$c.data" -- "${work[@]}"
		lost=$(bench_perf_lost "$out/$c.data")
		# "(N samples)" only when there were any
		samples=$(sed -n '/^\[ perf record: Captured and wrote /{
			s/.* (\([0-9]*\) samples) \]$/\1/p; t; s/.*/0/p; }' "$out/stderr")
		;;
	esac
	secs=$(sed -n 's/^work_s=//p' "$out/stderr")
	[ -n "$secs" ] || bench_fail "$c: the workload printed no work_s"
	[ -n "$samples" ] || bench_fail "$c: no sample count in its output"
	echo "$secs $samples $lost" >>"$out/$c"
}

configs=(baseline evprof-firefox evprof-folded perf-g perf-g-leader-S)
if [ -n "${EVPROF_OLD:-}" ]; then
	[ -x "$EVPROF_OLD" ] || bench_fail "EVPROF_OLD=$EVPROF_OLD is not executable"
	configs+=(old-evprof-firefox old-evprof-folded)
fi
bench_machine before
bench_each_round "$rounds" one "${configs[@]}"
bench_machine after
bench_rounds
echo "$rounds rounds; 95% CI of each median: coverage $(bench_coverage "$rounds")"
base=$(cut -d' ' -f1 "$out/baseline" | bench_median)
printf "%-16s %7s %8s %7s %-26s %7s %s\n" config work_s slowdown total_s \
	"busy_overhead_s [95% CI]" samples "lost each run"
for c in "${configs[@]}"; do
	m=$(cut -d' ' -f1 "$out/$c" | bench_median)
	over=- samples=-
	if [ "$c" != baseline ]; then
		over=$(bench_diffs baseline "$c" | bench_mci)
		samples=$(cut -d' ' -f2 "$out/$c" | bench_median)
	fi
	printf "%-16s %7s %7.3fx %7s %-26s %7s %s\n" "$c" "$m" \
		"$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')" \
		"$(bench_values "$c" wall | bench_median)" "$over" \
		"$samples" \
		"$(cut -d' ' -f3 "$out/$c" | tr '\n' ' ')"
done
if [ -n "${EVPROF_OLD:-}" ]; then
	echo
	echo "this build minus EVPROF_OLD, round by round: median [95% CI]"
	for c in evprof-firefox evprof-folded; do
		printf "%-16s busy_s %-26s wall_s %s\n" "$c" \
			"$(bench_diffs "old-$c" "$c" | bench_mci)" \
			"$(bench_diffs "old-$c" "$c" wall | bench_mci)"
	done
fi
echo
echo "work_s: the workload's own wall time (slowdown = config / baseline);"
echo "total_s - work_s: set-up plus writing the output after the workload ends."
ls -l "$out"/p.json.gz "$out"/p.folded "$out"/perf-g.data | awk '{ print $5, $9 }'
