#!/usr/bin/env bash
# What mending frameless leaves costs: record -g fp (registers and a
# 512-byte stack copy per sample, unwound at build) against -g fp,noleaf
# (the kernel's walk alone) and a bare run, ring engine, task mode,
# cpu-clock at FREQ. Workloads: cpu_work.c (CPU-bound, 2 threads) and
# switch_work.c (a pipe ping-pong) with --off-cpu, where every switch-out
# carries a copy too. ROUNDS rounds (at least 6), each running the three
# in an order that rotates every round. Two measures per run: the CPU time
# of the recorder and the workload it runs (GNU time: user + system of
# evprof and its waited-for child, sampling interrupts and stack copies in
# the workload's context included; other processes of a shared machine
# left out), and the whole machine's busy CPU (bench/lib.sh). Per config
# the median overhead over bare with its 95% CI, and the ratio of the
# medians fp / fp,noleaf.
# Usage: bench/leaf_overhead.sh [ROUNDS] (needs build/evprof; EVPROF=path
# overrides it; FREQ (1000), CPU_ITER (1.5e9), SWITCH_PASSES (100000);
# BENCH_LOCK=FILE holds an flock on FILE over each round).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
bench_args "${1:-7}"
[ -x /usr/bin/time ] || bench_fail "no GNU time (/usr/bin/time)"
freq=${FREQ:-1000}
cpu_iter=${CPU_ITER:-1500000000}
passes=${SWITCH_PASSES:-100000}
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/cpu" bench/cpu_work.c
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c
declare -A wl=([cpu]="$out/cpu 2 $cpu_iter" [switch]="$out/sw 4 $passes")
declare -A extra=([cpu]="" [switch]="--off-cpu")

# one ROUND WORKLOAD CONFIG: one run; its own CPU into $out/W-C.own
one() {
	local r=$1 w=$2 c=$3
	if [ "$c" = bare ]; then
		bench_run "$r" "$w-$c" /usr/bin/time -f "%U %S" -o "$out/t" \
			${wl[$w]}
	else
		bench_run "$r" "$w-$c" /usr/bin/time -f "%U %S" -o "$out/t" \
			"$evprof" record -e cpu-clock -F "$freq" -g "$c" \
			${extra[$w]} -o "$out/p.pb.gz" -- ${wl[$w]}
		bench_evprof_lost "$out/stderr" >>"$out/$w-$c.lost"
		grep -o "leaves: .*" "$out/stderr" >"$out/$w-$c.leaves" || true
	fi
	awk -v r="$r" '{ print r, $1 + $2 }' "$out/t" >>"$out/$w-$c.own"
}

# own_diffs W C: C's own CPU minus bare's, round by round.
own_diffs() {
	awk 'NR == FNR { b[$1] = $2; next } { print $2 - b[$1] }' \
		"$out/$1-bare.own" "$out/$1-$2.own"
}

configs=(bare fp fp,noleaf)
bench_machine before
for r in $(seq "$rounds"); do
	bench_round_begin
	for w in cpu switch; do
		for c in $(bench_rotate "$r" "${configs[@]}"); do
			one "$r" "$w" "$c"
		done
	done
	bench_round_end
done
bench_machine after
bench_rounds
echo "$rounds rounds at $freq Hz; 95% CI of each median: coverage $(bench_coverage "$rounds")"
printf "%-7s %-10s %9s %-26s %-26s %s\n" workload config bare_own \
	"own_overhead_s [95% CI]" "busy_overhead_s [95% CI]" \
	"lost each run (records, samples)"
for w in cpu switch; do
	for c in fp fp,noleaf; do
		printf "%-7s %-10s %9s %-26s %-26s %s\n" "$w" "$c" \
			"$(cut -d' ' -f2 "$out/$w-bare.own" | bench_median)" \
			"$(own_diffs "$w" "$c" | bench_mci)" \
			"$(bench_diffs "$w-bare" "$w-$c" | bench_mci)" \
			"$(tr '\n' ' ' <"$out/$w-$c.lost")"
	done
	echo "$w: fp / fp,noleaf own overhead (medians):" \
		"$(awk -v a="$(own_diffs "$w" fp | bench_median)" \
			-v b="$(own_diffs "$w" fp,noleaf | bench_median)" \
			'BEGIN { if (b > 0) printf "%.2f\n", a / b; else print "-" }');" \
		"last run's $(cat "$out/$w-fp.leaves")"
done
