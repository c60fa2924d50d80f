#!/usr/bin/env bash
# Task mode's cost per context switch beside perf's, in one run: 16
# threads pass a token through pipes (bench/switch_work.c) alone, under
# evprof record --mode task (its cut member writes a sample, with the
# group's read and the user stack, at every switch), under perf record -g
# -e '{cpu-clock,page-faults,context-switches}:S' (issue 33's baseline) and
# under a perf recording that also writes a sample at every switch
# (-g -e cpu-clock -e context-switches/period=1/). ROUNDS rounds (at least
# 5), each running every config once in a rotating order. Per config: the
# median of the workload's own wall time, the whole machine's busy CPU over
# the run less the same round's bare run (bench/lib.sh: recorder, workload
# and the kernel's work wherever it ran; median and 95% CI), the kernel
# time of the workload's own threads (where the kernel's sampling in the
# switch path lands), and for perf the samples written and the threads
# they came from (perf 6.1 opens a :S group without inherit: it records
# the launched thread only).
# Usage: bench/task_switch_vs_perf.sh [ROUNDS] [PASSES] [THREADS]
# (defaults 6 50000 16; EVPROF=path overrides build/evprof, EVPROF_OLD=path
# adds that build's task mode; BENCH_LOCK=FILE holds FILE over each round;
# PARTS=1 adds evprof runs that each leave one more piece out, to say where
# a switch's cost goes: leaf copies (-g fp,noleaf), counters' own samples
# (--attribution ride), the counters (-e cpu-clock), the stacks (-g none),
# and per-CPU groups instead of per-task ones (--mode cpu); and, without
# evprof, one inherited cpu-clock sampling event without and with
# PERF_SAMPLE_READ (bench/inherit_read.c), what that sample type costs a
# switch by itself).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
rounds=${1:-6}
[ "$rounds" -ge 5 ] || bench_fail "at least 5 rounds"
passes=${2:-50000}
threads=${3:-16}
evprof=${EVPROF:-build/evprof}
[ -x "$evprof" ] || bench_fail "no $evprof: build first (scripts/build.sh)"
command -v perf >/dev/null || bench_fail "no perf"
bench_init
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/switch_work.c
cc -O1 -o "$out/inherit_read" bench/inherit_read.c
work=("$out/work" "$threads" "$passes")
events=cpu-clock,page-faults,context-switches

# one ROUND CONFIG: one measured run; appends "work_s sys_s samples
# threads" to $out/CONFIG
one() {
	local r=$1 c=$2 n=- t=- bin=$evprof secs sys
	case $c in
	baseline) bench_run "$r" "$c" "${work[@]}" ;;
	clock-inherit) bench_run "$r" "$c" "$out/inherit_read" 0 "${work[@]}" ;;
	clock-inherit-read)
		bench_run "$r" "$c" "$out/inherit_read" 1 "${work[@]}"
		;;
	evprof-*)
		local mode=task ev=$events args=()
		case $c in
		evprof-task-old) bin=$EVPROF_OLD ;;
		evprof-noleaf) args=(-g fp,noleaf) ;;
		evprof-ride) args=(-g fp,noleaf --attribution ride) ;;
		evprof-clock) args=(-g fp,noleaf) ev=cpu-clock ;;
		evprof-nostack) args=(-g none) ev=cpu-clock ;;
		evprof-cpu) mode=cpu ;;
		esac
		bench_run "$r" "$c" "$bin" record --mode $mode -e "$ev" \
			"${args[@]}" -o "$out/p.pb.gz" -- "${work[@]}"
		n=$(sed -n 's/^evprof: \([0-9]*\) samples of .*/\1/p' "$out/stderr")
		;;
	perf-*)
		if [ "$c" = perf-S ]; then
			bench_run "$r" "$c" perf record -q -g -e "{$events}:S" \
				-o "$out/perf.data" -- "${work[@]}"
		else
			bench_run "$r" "$c" perf record -q -g -e cpu-clock \
				-e context-switches/period=1/ \
				-o "$out/perf.data" -- "${work[@]}"
		fi
		n=$(perf report -i "$out/perf.data" --stats 2>/dev/null |
			awk '/^ *SAMPLE events:/ { print $3; exit }')
		t=$(perf script -i "$out/perf.data" -F tid 2>/dev/null |
			sort -u | wc -l)
		;;
	esac
	secs=$(sed -n 's/^work_s=//p' "$out/stderr")
	sys=$(sed -n 's/^sys_s=//p' "$out/stderr")
	[ -n "$secs" ] && [ -n "$sys" ] ||
		bench_fail "$c: the workload printed no work_s or sys_s"
	echo "$secs $sys $n $t" >>"$out/$c"
}

configs=(baseline evprof-task perf-S perf-switch)
[ -z "${EVPROF_OLD:-}" ] || configs+=(evprof-task-old)
[ -z "${PARTS:-}" ] ||
	configs+=(evprof-noleaf evprof-ride evprof-clock evprof-nostack evprof-cpu
		clock-inherit clock-inherit-read)
bench_machine before
bench_each_round "$rounds" one "${configs[@]}"
bench_machine after
bench_rounds
echo "$rounds rounds of $threads threads, $passes passes; 95% CI of each" \
	"median: coverage $(bench_coverage "$rounds")"
printf "%-16s %7s %7s %-26s %-24s %9s %s\n" config work_s busy_s \
	"busy_overhead_s [95% CI]" "workload_sys_s [95% CI]" samples threads
for c in "${configs[@]}"; do
	over=-
	[ "$c" = baseline ] || over=$(bench_diffs baseline "$c" | bench_mci)
	printf "%-16s %7s %7s %-26s %-24s %9s %s\n" "$c" \
		"$(cut -d' ' -f1 "$out/$c" | bench_median)" \
		"$(bench_values "$c" | bench_median)" "$over" \
		"$(cut -d' ' -f2 "$out/$c" | bench_mci)" \
		"$(cut -d' ' -f3 "$out/$c" | bench_median)" \
		"$(cut -d' ' -f4 "$out/$c" | tr '\n' ' ')"
done
