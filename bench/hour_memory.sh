#!/usr/bin/env bash
# A long recording's memory: `evprof record -F HZ` of THREADS busy threads
# (bench/cpu_work.c) for SECONDS with both a Firefox and a pprof output,
# evprof's RSS read every STEP seconds from /proc, its peak from its rusage,
# and the samples it took. The target for an hour at 1 kHz of four threads
# is a peak under 200 MB. NICE (default 0) runs the workload at that nice
# level, so that the bench can run beside other work: it then gets fewer
# samples, which the table says.
# Usage: bench/hour_memory.sh [SECONDS [HZ [THREADS [STEP]]]]
# (defaults 3600 1000 4 300; needs build/evprof).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3600}
hz=${2:-1000}
threads=${3:-4}
step=${4:-300}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-hour.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/spin" bench/cpu_work.c

echo "evprof record -F $hz -e cpu-clock,page-faults, $threads busy threads" \
	"(nice ${NICE:-0}), $secs s, Firefox + pprof outputs"
/usr/bin/time -f "maxrss_kb=%M" -o "$out/time" "$evprof" record -F "$hz" \
	-e cpu-clock,page-faults -o "$out/p.json.gz" -o "$out/p.pb.gz" \
	--duration "$secs" -- nice -n "${NICE:-0}" "$out/spin" "$threads" \
	1000000000000000 >/dev/null 2>"$out/err" &
pid=$!
sleep 1
# GNU time's child: evprof
rec=$(pgrep -P "$pid") || {
	echo "hour_memory: evprof is not running: $(tail -2 "$out/err")" >&2
	exit 1
}
printf "%8s %10s\n" seconds rss_kB
for ((t = step; t <= secs; t += step)); do
	sleep "$step"
	[ -n "$rec" ] && [ -r "/proc/$rec/status" ] || break
	printf "%8d %10s\n" "$t" \
		"$(awk '/^VmRSS/ { print $2 }' "/proc/$rec/status")"
done
rc=0
wait "$pid" || rc=$?
# 143: the workload ended by --duration's SIGTERM, as meant
if [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ]; then
	tail -3 "$out/err" >&2
	echo "hour_memory: exit status $rc" >&2
	exit 1
fi
echo "peak RSS: $(sed -n 's/^maxrss_kb=//p' "$out/time") kB;" \
	"$(sed -n 's/.*evprof: \([0-9]* samples of.*\)/\1/p' "$out/err")"
ls -l "$out"/p.* | awk '{ print "  " $NF ": " $5 " bytes" }'
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
