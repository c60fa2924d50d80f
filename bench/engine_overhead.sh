#!/usr/bin/env bash
# The BPF engine against the ring engine and perf record, in one run:
# overhead = total CPU time of the whole process tree (workload + profiler
# + the kernel's work in their context: GNU time's user + sys, children
# included) minus the bare run's, from REPEATS interleaved rounds; per
# config the median of the per-round differences and a 95% confidence
# interval of that median (order statistics of the paired differences).
# Workloads: cpu_work.c (CPU-bound, 2 threads) and switch_work.c (a pipe
# ping-pong: tens of thousands of switches a second), at 1 and 10 kHz.
# Then the profiler's own peak RSS in two recording lengths (-a, idle
# machine: the profiler is the only process GNU time sees).
# WORKLOADS ("cpu switch"), FREQS ("1000 10000") and CPU_ITER (1.5e9, the
# CPU-bound run's iterations: about 0.8 s of CPU here) choose the cases.
# Usage: bench/engine_overhead.sh [REPEATS] (root: the BPF engine and -a;
# needs build/evprof and perf; EVPROF=path overrides build/evprof).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-10}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/cpu" bench/cpu_work.c
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c
declare -A wl=([cpu]="$out/cpu 2 ${CPU_ITER:-1500000000}" [switch]="$out/sw 4 300000")
workloads=${WORKLOADS:-cpu switch}
freqs=${FREQS:-1000 10000}

# cpu NAME CMD...: appends the tree's CPU seconds (user + sys) to $out/NAME
cpu() {
	local name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$out/time" "$@" >/dev/null 2>"$out/stderr" ||
		{ cat "$out/stderr" >&2; exit 1; }
	awk '{ print $1 + $2 }' "$out/time" >>"$out/$name"
}

configs="ring bpf perf"
for i in $(seq "$reps"); do
	for w in $workloads; do
		for f in $freqs; do
			cpu "$w-$f-bare" ${wl[$w]}
			cpu "$w-$f-ring" "$evprof" record --mode cpu -F $f \
				-e cpu-clock,page-faults -o "$out/r.pb.gz" -- ${wl[$w]}
			cpu "$w-$f-bpf" "$evprof" record --engine bpf -F $f \
				-e cpu-clock,page-faults -o "$out/b.pb.gz" -- ${wl[$w]}
			cpu "$w-$f-perf" perf record -q -F $f -g \
				-e cpu-clock,page-faults -o "$out/perf.data" -- ${wl[$w]}
		done
	done
done

# stats BASE CONFIG: "median lo hi" of the paired differences, seconds
stats() {
	paste "$out/$2" "$out/$1" | awk '{ print $1 - $2 }' | sort -g |
		awk '{ d[NR] = $1 } END {
			n = NR; m = (n % 2) ? d[(n + 1) / 2] : (d[n / 2] + d[n / 2 + 1]) / 2
			k = int((n - 1.96 * sqrt(n)) / 2); if (k < 1) k = 1
			printf "%.3f [%.3f, %.3f]", m, d[k], d[n - k + 1] }'
}
median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
printf "%-14s %8s %-8s %s\n" workload bare_cpu config "overhead_cpu_s median [95% CI]"
for w in $workloads; do
	for f in $freqs; do
		for c in $configs; do
			printf "%-14s %8s %-8s %s\n" "$w@$f" \
				"$(median <"$out/$w-$f-bare")" "$c" \
				"$(stats "$w-$f-bare" "$w-$f-$c")"
		done
	done
done

echo
printf "%-8s %10s %10s\n" engine "rss_kB(2s)" "rss_kB(8s)"
for e in ring bpf; do
	r=()
	for d in 2 8; do
		/usr/bin/time -f "%M" -o "$out/time" "$evprof" record --engine $e \
			-a -F 1000 -e cpu-clock,page-faults --duration $d \
			-o "$out/a.pb.gz" >/dev/null 2>&1
		r+=("$(cat "$out/time")")
	done
	printf "%-8s %10s %10s\n" "$e" "${r[0]}" "${r[1]}"
done
