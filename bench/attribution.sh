#!/usr/bin/env bash
# What attributing each counter by its own samples costs, side by side in
# one run: ROUNDS rounds (at least 6), each running every config once in
# an order that rotates every round. Configs, for a CPU-bound workload
# (cpu_work.c, 2 threads) and a switch-heavy one (switch_work.c, a pipe
# ping-pong), at evprof's default rates and at a tenth of them (periods
# 10x): the bare run; evprof record -e cpu-clock,page-faults with own
# samples (the default) and riding along (--attribution ride); perf record
# -g sampling the same events, not grouped, at the same periods, and the
# same with evprof's leaf payload (perf's nearest: --call-graph dwarf,512,
# a 512-byte stack copy and the user registers with each sample; the group
# reads perf cannot take without a group); plain perf record -g on
# cpu-clock. (context-switches would ride along in
# evprof beside its hidden switch cut: not the same payload.)
# Per config: the overhead in the whole machine's busy CPU against the
# bare run of the same round (bench/lib.sh; median and 95% confidence
# interval), samples, and each own run's ratio to perf's same-payload run
# and to plain perf record -g (ratio of the medians).
# Usage: bench/attribution.sh [ROUNDS] (needs build/evprof and perf;
# EVPROF=path overrides build/evprof; QUICK=1 a tenth of the work;
# BENCH_LOCK=FILE holds an flock on FILE each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_args "${1:-7}"
command -v perf >/dev/null || bench_fail "no perf"
iter=${ITER:-400000000} passes=${PASSES:-100000}
[ -z "${QUICK:-}" ] || iter=$((iter / 10)) passes=$((passes / 10))
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/cpu" bench/cpu_work.c
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c
declare -A wl=([cpu]="$out/cpu 2 $iter" [switch]="$out/sw 4 $passes")
# evprof's defaults (docs/record.md: how counters are attributed), x1, x10.
declare -A freq=([1]=1000 [10]=100) pf=([1]=16 [10]=160)

# one ROUND CONFIG: CONFIG is WORKLOAD-RATE-WHAT (cpu-1-own, ...).
one() {
	local r=$1 c=$2 w x what samples=-
	IFS=- read -r w x what <<<"$c"
	local ev="cpu-clock,page-faults/period=${pf[$x]}/"
	# shellcheck disable=SC2206
	local cmd=(${wl[$w]})
	case $what in
	bare) bench_run "$r" "$c" "${cmd[@]}" ;;
	own | ride)
		bench_run "$r" "$c" "$evprof" record --attribution "$what" \
			-e "$ev" -F "${freq[$x]}" -o "$out/p.pb.gz" -- "${cmd[@]}"
		samples=$(sed -n 's/^evprof: \([0-9]*\) samples of [^ ,]*\( (+\([0-9]*\) of counters on their own)\)\{0,1\},.*/\1+\3/p' \
			"$out/stderr")
		;;
	perf | perfdw)
		local cg=-g
		[ "$what" = perf ] || cg=--call-graph=dwarf,512
		bench_run "$r" "$c" perf record "$cg" -F "${freq[$x]}" -e cpu-clock \
			-e "page-faults/period=${pf[$x]}/" -o "$out/perf.data" -- "${cmd[@]}"
		samples=$(sed -n 's/.* (\([0-9]*\) samples) \]$/\1/p' "$out/stderr")
		;;
	perfg)
		bench_run "$r" "$c" perf record -g -F "${freq[$x]}" -e cpu-clock \
			-o "$out/perf.data" -- "${cmd[@]}"
		samples=$(sed -n 's/.* (\([0-9]*\) samples) \]$/\1/p' "$out/stderr")
		;;
	esac
	echo "${samples:--}" >>"$out/$c.samples"
}

configs=()
for w in cpu switch; do
	for x in 1 10; do
		for what in bare own ride perf perfdw perfg; do
			configs+=("$w-$x-$what")
		done
	done
done
bench_machine before
bench_each_round "$rounds" one "${configs[@]}"
bench_machine after
bench_rounds
echo "$rounds rounds; 95% CI of each median: coverage $(bench_coverage "$rounds")"
printf "%-16s %-28s %-16s %s\n" config "busy_overhead_s [95% CI]" \
	"samples (median)" "own / this"
for c in "${configs[@]}"; do
	[ "${c##*-}" != bare ] || continue
	base=${c%-*}-bare
	ratio=-
	if [ "${c##*-}" != own ]; then
		ratio=$(awk -v a="$(bench_diffs "$base" "${c%-*}-own" | bench_median)" \
			-v b="$(bench_diffs "$base" "$c" | bench_median)" \
			'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')
	fi
	printf "%-16s %-28s %-16s %s\n" "$c" "$(bench_diffs "$base" "$c" | bench_mci)" \
		"$(sort -t+ -k1 -n "$out/$c.samples" | sed -n "$(((rounds + 1) / 2))p")" \
		"$ratio"
done
echo
echo "own / this: the median overhead of own attribution over this config's"
echo "(perf: the same events at the same periods, ungrouped; perfdw: the"
echo "same with 512-byte stack copies and user registers; perfg: plain perf"
echo "record -g on cpu-clock; ride: counters on cpu-clock's samples)."
echo "samples: evprof's 'time+counters'; perf's all events."
