#!/usr/bin/env bash
# The cost of evprof record --off-cpu on a switch-heavy workload, beside
# evprof without it and perf's switch tracing (perf record -e
# sched:sched_switch -g), in one run: interleaved repeats, medians of the
# workload's own wall time (slowdown = config / baseline), of the CPU time
# of the whole tree (recorder and workload: what recording costs the
# machine, less sensitive to other load than wall time), lost records.
# Usage: bench/offcpu_vs_perf.sh [REPEATS] [PASSES] (needs build/evprof and
# perf; EVPROF=path overrides build/evprof).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
passes=${2:-200000}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/switch_work.c
work=("$out/work" 4 "$passes")

# run NAME CMD...: appends "work_s lost switches_per_s cpu_s" to $out/NAME
run() {
	local name=$1 lost=- TIMEFORMAT='%U %S'
	shift
	{ time "$@" >/dev/null 2>"$out/stderr"; } 2>"$out/time" ||
		{ cat "$out/stderr" >&2; exit 1; }
	case $name in
	evprof*)
		# lost records + lost samples; with --off-cpu, + intervals
		# whose end was lost.
		lost=$(sed -n 's/.*lost \([0-9]*\) records.*, \([0-9]*\) samples;.*/\1+\2/p' "$out/stderr")
		lost=$lost$(sed -n 's/.*intervals; \([0-9]*\) lost their end/+\1/p' "$out/stderr")
		;;
	perf*)
		# "Processed N events and lost M chunks!" only when it lost any.
		lost=$(sed -n 's/.*and lost \([0-9]*\) chunks.*/\1/p' "$out/stderr")
		lost=${lost:-0}
		;;
	esac
	echo "$(sed -n 's/^work_s=//p' "$out/stderr") $lost" \
		"$(sed -n 's/^switches_per_s=//p' "$out/stderr")" \
		"$(awk '{ print $1 + $2 }' "$out/time")" >>"$out/$name"
}

configs="baseline evprof-task evprof-task-off-cpu evprof-cpu evprof-cpu-off-cpu"
configs="$configs perf-sched-switch-g"
for i in $(seq "$reps"); do
	run baseline "${work[@]}"
	for m in task cpu; do
		run "evprof-$m" "$evprof" record --mode $m -e cpu-clock \
			-o "$out/p.pb.gz" -- "${work[@]}"
		run "evprof-$m-off-cpu" "$evprof" record --mode $m --off-cpu \
			-e cpu-clock -o "$out/o.pb.gz" -- "${work[@]}"
	done
	run perf-sched-switch-g perf record -q -e sched:sched_switch -g \
		-o "$out/perf.data" -- "${work[@]}"
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
base=$(cut -d' ' -f1 "$out/baseline" | median)
cbase=$(cut -d' ' -f4 "$out/baseline" | median)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
printf "%-22s %9s %9s %8s %8s %9s %s\n" config median_s slowdown cpu_s "cpu x" \
	passes/s "lost (each run)"
for c in $configs; do
	m=$(cut -d' ' -f1 "$out/$c" | median)
	cm=$(cut -d' ' -f4 "$out/$c" | median)
	sw=$(cut -d' ' -f3 "$out/$c" | median)
	printf "%-22s %9s %9s %8s %8s %9s %s\n" "$c" "$m" "$(ratio "$m" "$base")" \
		"$cm" "$(ratio "$cm" "$cbase")" "$sw" \
		"$(cut -d' ' -f2 "$out/$c" | tr '\n' ' ')"
done
