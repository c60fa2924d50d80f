#!/usr/bin/env bash
# The cost of evprof record --off-cpu on a switch-heavy workload, beside
# evprof without it and perf's switch tracing (perf record -e
# sched:sched_switch -g), in one run: ROUNDS rounds (at least 6), each
# running every config once in an order that rotates every round. Per
# config: the median of the workload's own wall time (slowdown = config /
# baseline), the overhead in the whole machine's busy CPU against the bare
# run of the same round (bench/lib.sh: recorder, workload, the kernel's
# work wherever it ran; median and 95% confidence interval), passes a
# second, and what each run lost (evprof: records + samples from its
# closing line, with --off-cpu + intervals whose end was lost; perf: LOST
# and LOST_SAMPLES records from perf report --stats).
# Usage: bench/offcpu_vs_perf.sh [ROUNDS] [PASSES] (needs build/evprof and
# perf; EVPROF=path overrides build/evprof, QUICK=1 a tenth of the passes;
# BENCH_LOCK=FILE holds an flock on FILE over each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-7}
[ "$rounds" -ge 6 ] || bench_fail "at least 6 rounds"
passes=${2:-200000}
[ -z "${QUICK:-}" ] || passes=$((passes / 10))
evprof=${EVPROF:-build/evprof}
[ -x "$evprof" ] || bench_fail "no $evprof: build first (scripts/build.sh)"
command -v perf >/dev/null || bench_fail "no perf"
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/switch_work.c
work=("$out/work" 4 "$passes")

# one ROUND CONFIG: one measured run; appends "work_s passes_per_s lost"
# to $out/CONFIG
one() {
	local r=$1 c=$2 lost=- mode secs sw
	case $c in
	baseline) bench_run "$r" "$c" "${work[@]}" ;;
	evprof-*)
		mode=${c#evprof-}
		mode=${mode%%-*}
		if [ "$c" = "${c%-off-cpu}" ]; then
			bench_run "$r" "$c" "$evprof" record --mode "$mode" \
				-e cpu-clock -o "$out/p.pb.gz" -- "${work[@]}"
		else
			bench_run "$r" "$c" "$evprof" record --mode "$mode" \
				--off-cpu -e cpu-clock -o "$out/o.pb.gz" -- "${work[@]}"
		fi
		lost=$(bench_evprof_lost "$out/stderr")
		lost=${lost/ /+}
		# with --off-cpu: + intervals whose end was lost (the line is
		# there only when it counted any interval)
		if [ "$c" != "${c%-off-cpu}" ]; then
			local ends
			ends=$(sed -n 's/^evprof: off-CPU: .* intervals; \([0-9]*\) lost their end.*/\1/p' "$out/stderr")
			[ -n "$ends" ] || bench_fail "$c: no off-CPU line"
			lost=$lost+$ends
		fi
		;;
	perf-sched-switch-g)
		bench_run "$r" "$c" perf record -q -e sched:sched_switch -g \
			-o "$out/perf.data" -- "${work[@]}"
		lost=$(bench_perf_lost "$out/perf.data")
		;;
	esac
	secs=$(sed -n 's/^work_s=//p' "$out/stderr")
	sw=$(sed -n 's/^switches_per_s=//p' "$out/stderr")
	[ -n "$secs" ] && [ -n "$sw" ] ||
		bench_fail "$c: the workload printed no work_s or switches_per_s"
	echo "$secs $sw $lost" >>"$out/$c"
}

configs=(baseline evprof-task evprof-task-off-cpu evprof-cpu
	evprof-cpu-off-cpu perf-sched-switch-g)
bench_machine before
bench_each_round "$rounds" one "${configs[@]}"
bench_machine after
bench_rounds
echo "$rounds rounds of $passes passes; 95% CI of each median: coverage" \
	"$(bench_coverage "$rounds")"
base=$(cut -d' ' -f1 "$out/baseline" | bench_median)
printf "%-20s %8s %8s %7s %-26s %8s %s\n" config work_s slowdown busy_s \
	"busy_overhead_s [95% CI]" passes/s "lost each run"
for c in "${configs[@]}"; do
	m=$(cut -d' ' -f1 "$out/$c" | bench_median)
	over=-
	[ "$c" = baseline ] || over=$(bench_diffs baseline "$c" | bench_mci)
	printf "%-20s %8s %7.2fx %7s %-26s %8s %s\n" "$c" "$m" \
		"$(awk -v a="$m" -v b="$base" 'BEGIN { print a / b }')" \
		"$(bench_values "$c" | bench_median)" "$over" \
		"$(cut -d' ' -f2 "$out/$c" | bench_median)" \
		"$(cut -d' ' -f3 "$out/$c" | tr '\n' ' ')"
done
