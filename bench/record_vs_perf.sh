#!/usr/bin/env bash
# evprof record against perf record on the same fixed CPU-bound workload,
# side by side in one run: workload slowdown, samples and lost samples,
# time spent after the workload ended (writing the output), peak memory.
# Usage: bench/record_vs_perf.sh [REPEATS] (needs build/evprof and perf).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c
FREQ=1000
EVENTS=cpu-clock,page-faults,context-switches

# run NAME CMD...: prints NAME work_s total_s maxrss_kb samples lost
run() {
	local name=$1
	shift
	/usr/bin/time -f "maxrss_kb=%M total_s=%e" "$@" >"$out/stdout" 2>"$out/stderr" || true
	local work total rss samples lost
	work=$(sed -n 's/^work_s=//p' "$out/stderr")
	total=$(sed -n 's/.*total_s=//p' "$out/stderr")
	rss=$(sed -n 's/^maxrss_kb=\([0-9]*\).*/\1/p' "$out/stderr")
	case $name in
	evprof*)
		# The closing line; another "evprof: N samples" line may come first.
		samples=$(sed -n 's/.*evprof: \([0-9]*\) samples of.*/\1/p' "$out/stderr" | tail -1)
		lost=$(sed -n 's/.*records (.*), \([0-9]*\) samples;.*/\1/p' "$out/stderr")
		;;
	perf*)
		samples=$(sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$out/stderr")
		lost=$(grep -c "lost" "$out/stderr" || true)
		;;
	*) samples=-; lost=- ;;
	esac
	printf "%-22s %8s %8s %10s %8s %6s\n" "$name" "$work" "$total" "${rss:--}" "${samples:--}" "${lost:--}"
}

printf "%-22s %8s %8s %10s %8s %6s\n" config work_s total_s maxrss_kB samples lost
for i in $(seq "$reps"); do
	run baseline "$out/work"
	run "evprof-firefox" "$evprof" record -e "$EVENTS" -F $FREQ -o "$out/p.json.gz" -- "$out/work"
	run "evprof-folded" "$evprof" record -e "$EVENTS" -F $FREQ -o "$out/p.folded" -- "$out/work"
	run "perf-g" perf record -g -F $FREQ -e "$EVENTS" -o "$out/perf.data" -- "$out/work"
	run "perf-g-leader-S" perf record -g -F $FREQ -e "{$EVENTS}:S" -o "$out/perf2.data" -- "$out/work"
done
echo
echo "work_s: the workload's own wall time (slowdown = config / baseline);"
echo "total_s - work_s: set-up plus writing the output after the workload ends."
ls -l "$out"/p.json.gz "$out"/p.folded "$out"/perf.data 2>/dev/null | awk '{ print $5, $9 }'
