#!/usr/bin/env bash
# evprof import against perf's own readers on the same perf.data file, in
# one run: `evprof import` (Firefox JSON and folded output, symbolized),
# `perf script` and `perf report --stdio`, interleaved REPEATS times;
# medians of wall time and of max RSS, and each one's time over evprof's.
# Usage: bench/import_vs_perf.sh [REPEATS] [FREQ] (needs build/evprof and
# perf; EVPROF=path overrides build/evprof).
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
freq=${2:-4000}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c

# The file: 2 threads of CPU work and page faults, frame-pointer stacks.
perf record -q -g -e cpu-clock -F "$freq" -o "$out/perf.data" -- \
	"$out/work" 2 "${ITER:-6000000000}" >/dev/null 2>&1
samples=$(perf report -i "$out/perf.data" --stdio -n --sort comm 2>/dev/null |
	awk '/^# Samples:/ { print $3 }' | head -1)
echo "file: $(stat -c %s "$out/perf.data") bytes, $samples samples ($freq Hz cpu-clock, -g)"

# run NAME CMD...: appends "wall_s maxrss_kB" to $out/NAME
run() {
	local name=$1
	shift
	/usr/bin/time -f "%e %M" -o "$out/time" "$@" >/dev/null 2>"$out/stderr" ||
		{ cat "$out/stderr" >&2; exit 1; }
	cat "$out/time" >>"$out/$name"
}

configs="evprof-import-firefox evprof-import-folded perf-script perf-report-stdio"
for i in $(seq "$reps"); do
	run evprof-import-firefox "$evprof" import -o "$out/p.json.gz" "$out/perf.data"
	run evprof-import-folded "$evprof" import -o "$out/p.folded" "$out/perf.data"
	run perf-script perf script -i "$out/perf.data"
	run perf-report-stdio perf report --stdio -i "$out/perf.data"
done

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
base=$(cut -d' ' -f1 "$out/evprof-import-firefox" | median)
printf "%-22s %10s %12s %16s\n" config median_s maxrss_kB "time / evprof"
for c in $configs; do
	m=$(cut -d' ' -f1 "$out/$c" | median)
	printf "%-22s %10s %12s %16s\n" "$c" "$m" \
		"$(cut -d' ' -f2 "$out/$c" | median)" \
		"$(awk -v a="$m" -v b="$base" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }')"
done
