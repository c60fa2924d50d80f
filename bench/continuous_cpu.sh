#!/usr/bin/env bash
# What `evprof record -a --continuous -F 19` costs when left on: its own CPU
# seconds per minute (user + system of the evprof process, from its rusage:
# symbolization, building each window and pushing it are all in it) and its
# peak RSS over a long run, twice: on the machine as it is (run it idle) and
# beside a pipe ring (bench/switch_work.c) doing SWITCH_RATE passes a second
# (25000; 0: as fast as it goes), its context switches counted from
# /proc/stat (every switch is a sample of the hidden switch member in cpu
# mode). Each window is written to a
# directory and pushed to the local Pyroscope stand-in
# (tests/tools/pyroscope_endpoint.mjs) when node and its packages are there.
# ENGINE=bpf records with the in-kernel engine (default: ring).
# Usage: bench/continuous_cpu.sh [SECONDS [INTERVAL [CASES]]]
# (defaults 300 10 "idle switching"; needs build/evprof).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-300}
interval=${2:-10}
cases=${3:-idle switching}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d /tmp/evprof-cont.XXXXXX)
ep_pid=
cleanup() {
	[ -n "$ep_pid" ] && kill "$ep_pid" 2>/dev/null
	rm -rf "$out"
}
trap cleanup EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/sw" bench/switch_work.c

push=()
if command -v node >/dev/null &&
	[ -d tests/tools/node_modules/pprof-format ]; then
	node tests/tools/pyroscope_endpoint.mjs --port-file "$out/port" \
		--log "$out/push.log" 2>/dev/null &
	ep_pid=$!
	for _ in $(seq 100); do
		[ -s "$out/port" ] && break
		sleep 0.1
	done
	push=(--push "http://127.0.0.1:$(cat "$out/port")" --tag service_name=bench)
else
	echo "(no node or tests/tools packages: windows are written, not pushed)"
fi

ctxt() { awk '/^ctxt/ { print $2 }' /proc/stat; }

echo "evprof record -a --continuous -F 19 --interval $interval" \
	"--engine ${ENGINE:-ring}, $secs s a case"
printf "%-10s %12s %12s %10s %10s %8s %8s\n" case cpu_s cpu_s/min \
	cpu_% maxrss_kB switch/s windows
for c in $cases; do
	rm -rf "$out/dir" && mkdir "$out/dir"
	sw_pid=
	if [ "$c" = switching ]; then
		"$out/sw" 4 100000000000 "${SWITCH_RATE:-25000}" 2>/dev/null &
		sw_pid=$!
		sleep 1
	fi
	c0=$(ctxt)
	/usr/bin/time -f "%U %S %M" -o "$out/time" "$evprof" record -a \
		--engine "${ENGINE:-ring}" --continuous -F 19 --interval "$interval" --output-dir "$out/dir" \
		"${push[@]}" --duration "$secs" >/dev/null 2>"$out/err" || true
	c1=$(ctxt)
	[ -n "$sw_pid" ] && { kill "$sw_pid"; wait "$sw_pid" 2>/dev/null || true; }
	read -r u s rss <"$out/time"
	awk -v c="$c" -v u="$u" -v s="$s" -v rss="$rss" -v t="$secs" \
		-v sw=$(((c1 - c0) / secs)) -v w="$(ls "$out/dir" | wc -l)" 'BEGIN {
		printf "%-10s %12.2f %12.3f %10.3f %10d %8d %8d\n", c, u + s,
			(u + s) * 60 / t, (u + s) * 100 / t, rss, sw, w }'
	grep -E "pushed|unsent|dropped|lost" "$out/err" | sed 's/^/    /' || true
done
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
