#!/usr/bin/env bash
# Peak RSS of evprof record against recording length: two busy threads
# recorded at 5 kHz for a short and a long time with both a Firefox and a
# pprof output, and the growth per sample between the two (target: under 4
# bytes a sample; the session builds in parts and drops what it built, the
# timeline spills to $TMPDIR or /var/tmp). Two workloads: "spin", two
# threads spinning in two functions (bench/cpu_work.c, stopped by
# --duration), and "faulting", two threads mapping, touching and unmapping
# pages (tests/fixtures/wl_loop): most of its samples land in the kernel's
# page-fault code at ever new addresses, each a frame and a stack of the
# profile (the profile grows with distinct addresses, not with samples).
# Usage: bench/flat_memory.sh [SHORT_S [LONG_S [HZ [WORKLOADS]]]]
# (defaults 10 60 5000 "spin faulting"; needs build/evprof and, for
# faulting, build/tests/wl_loop).
set -euo pipefail
cd "$(dirname "$0")/.."
short=${1:-10}
long=${2:-60}
hz=${3:-5000}
workloads=${4:-spin faulting}
evprof=${EVPROF:-build/evprof}
loop=${WL_LOOP:-build/tests/wl_loop}
out=$(mktemp -d /tmp/evprof-flat.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/spin" bench/cpu_work.c

# run WORKLOAD SECONDS: prints "seconds samples maxrss_kB"
run() {
	local cmd
	case $1 in
	spin) cmd=("$out/spin" 2 1000000000000) ;;
	faulting) cmd=("$loop" "$2" 2) ;;
	esac
	local rc=0 samples rss
	/usr/bin/time -f "maxrss_kb=%M" "$evprof" record -F "$hz" \
		-e cpu-clock,page-faults -o "$out/p.json.gz" -o "$out/p.pb.gz" \
		--duration "$2" -- "${cmd[@]}" >/dev/null 2>"$out/err" || rc=$?
	# 143: the workload ended by --duration's SIGTERM, as meant
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ]; then
		tail -3 "$out/err" >&2
		echo "flat_memory: $1 for $2 s: exit status $rc" >&2
		exit 1
	fi
	samples=$(sed -n 's/^evprof: \([0-9]*\) samples of .*; lost .*/\1/p' "$out/err")
	rss=$(sed -n 's/^maxrss_kb=\([0-9]*\).*/\1/p' "$out/err")
	[ -n "$samples" ] && [ -n "$rss" ] || {
		echo "flat_memory: no closing line or max RSS: $(tail -2 "$out/err")" >&2
		exit 1
	}
	printf "%s %s %s\n" "$2" "$samples" "$rss"
}

for w in $workloads; do
	a=$(run "$w" "$short")
	b=$(run "$w" "$long")
	echo "$w:"
	printf "%8s %10s %10s\n" seconds samples maxrss_kB
	printf "%8s %10s %10s\n" $a
	printf "%8s %10s %10s\n" $b
	read -r _ sa ra <<<"$a"
	read -r _ sb rb <<<"$b"
	awk -v sa="$sa" -v sb="$sb" -v ra="$ra" -v rb="$rb" 'BEGIN {
		if (sb <= sa) { print "no more samples in the long run"; exit }
		printf "growth: %.2f bytes per sample (%d kB over %d samples)\n",
			(rb - ra) * 1024 / (sb - sa), rb - ra, sb - sa }'
done
