#!/usr/bin/env bash
# The BPF engine against the ring engine and perf record, in one run.
# Overhead = the whole machine's busy CPU during a profiled run minus
# during the bare run of the same round (bench/lib.sh: user + nice +
# system + irq + softirq of /proc/stat; what the profiler costs in its own
# process, in the workload's context and in the kernel's threads alike).
# ROUNDS rounds (at least 6: fewer cannot give a 95% interval), each running bare, ring, bpf and perf in an
# order that rotates every round; per config the median of the per-round
# differences with its 95% confidence interval (order statistics of the
# differences), the median steal apart. Workloads: cpu_work.c (CPU-bound,
# 2 threads) and switch_work.c (a pipe ping-pong: tens of thousands of
# switches a second), at 1 and 10 kHz. Then the profiler's own peak RSS in
# two recording lengths (-a: the profiler is the only process GNU time
# sees).
# WORKLOADS ("cpu switch"), FREQS ("1000 10000"), CPU_ITER (1.5e9: about
# 0.8 s of CPU) and SWITCH_PASSES (300000) choose the cases; QUICK=1 is a
# smoke run (6 rounds, cpu at 1 kHz, a tenth of the work, no RSS part).
# Usage: bench/engine_overhead.sh [ROUNDS] (root: the BPF engine and -a;
# needs build/evprof and perf; EVPROF=path overrides build/evprof;
# BENCH_LOCK=FILE holds an flock on FILE over each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_args "${1:-7}"
command -v perf >/dev/null || bench_fail "no perf"
workloads=${WORKLOADS:-cpu switch}
freqs=${FREQS:-1000 10000}
cpu_iter=${CPU_ITER:-1500000000}
passes=${SWITCH_PASSES:-300000}
if [ -n "${QUICK:-}" ]; then
	rounds=6 workloads=cpu freqs=1000 cpu_iter=150000000
fi
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/cpu" bench/cpu_work.c
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c
declare -A wl=([cpu]="$out/cpu 2 $cpu_iter" [switch]="$out/sw 4 $passes")

# one ROUND WORKLOAD FREQ CONFIG: one measured run and what it lost
one() {
	local r=$1 w=$2 f=$3 c=$4 lost
	case $c in
	bare) bench_run "$r" "$w-$f-$c" ${wl[$w]} ;;
	ring | bpf)
		bench_run "$r" "$w-$f-$c" "$evprof" record --engine "$c" \
			--mode cpu -F "$f" -e cpu-clock,page-faults \
			-o "$out/p.pb.gz" -- ${wl[$w]}
		lost=$(bench_evprof_lost "$out/stderr")
		echo "${lost/ /+}" >>"$out/$w-$f-$c.lost"
		;;
	perf)
		bench_run "$r" "$w-$f-$c" perf record -q -F "$f" -g \
			-e cpu-clock,page-faults -o "$out/perf.data" -- ${wl[$w]}
		bench_perf_lost "$out/perf.data" >>"$out/$w-$f-$c.lost"
		;;
	esac
}

configs=(bare ring bpf perf)
bench_machine before
for r in $(seq "$rounds"); do
	bench_round_begin
	for w in $workloads; do
		for f in $freqs; do
			for c in $(bench_rotate "$r" "${configs[@]}"); do
				one "$r" "$w" "$f" "$c"
			done
		done
	done
	bench_round_end
done
bench_machine after
bench_rounds
echo "$rounds rounds; 95% CI of each median: coverage $(bench_coverage "$rounds")"
printf "%-14s %9s %-6s %-28s %-28s %8s %s\n" workload bare_busy config \
	"busy_overhead_s [95% CI]" "wall_overhead_s [95% CI]" steal_s \
	"lost each run (records+samples; perf: LOST records)"
for w in $workloads; do
	for f in $freqs; do
		for c in ring bpf perf; do
			printf "%-14s %9s %-6s %-28s %-28s %8s %s\n" "$w@$f" \
				"$(bench_values "$w-$f-bare" | bench_median)" "$c" \
				"$(bench_diffs "$w-$f-bare" "$w-$f-$c" | bench_mci)" \
				"$(bench_diffs "$w-$f-bare" "$w-$f-$c" wall | bench_mci)" \
				"$(bench_values "$w-$f-$c" steal | bench_median)" \
				"$(tr '\n' ' ' <"$out/$w-$f-$c.lost")"
		done
	done
done
[ -z "${QUICK:-}" ] || exit 0

echo
printf "%-8s %10s %10s\n" engine "rss_kB(2s)" "rss_kB(8s)"
for e in ring bpf; do
	rss=()
	for d in 2 8; do
		/usr/bin/time -f "%M" -o "$out/time" "$evprof" record --engine $e \
			-a -F 1000 -e cpu-clock,page-faults --duration $d \
			-o "$out/a.pb.gz" >/dev/null 2>"$out/stderr" ||
			{ tail -3 "$out/stderr" >&2; bench_fail "-a --engine $e failed"; }
		rss+=("$(cat "$out/time")")
	done
	printf "%-8s %10s %10s\n" "$e" "${rss[0]}" "${rss[1]}"
done
