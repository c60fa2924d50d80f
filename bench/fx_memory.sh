#!/usr/bin/env bash
# Peak RSS of the Firefox output against the pprof output's as a recording
# grows: one thread spinning (bench/cpu_work.c) recorded at HZ for SHORT_S
# and LONG_S seconds, once with a Firefox output alone and once with a
# pprof output alone; per output, the growth in bytes per sample between
# the short and the long run, and the Firefox growth beyond the pprof
# growth (target: at most 8 bytes a sample). With EVPROF_OLD=path, the
# same for that build, interleaved: each round runs every (build, output,
# length) once, in a rotating order; medians over ROUNDS.
# Usage: bench/fx_memory.sh [ROUNDS [SHORT_S [LONG_S [HZ]]]] (defaults 3 2
# 30 5000). BENCH_LOCK=FILE holds FILE (flock) over each round.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
short=${2:-2}
long=${3:-30}
hz=${4:-5000}
builds="new"
[ -z "${EVPROF_OLD:-}" ] || builds="old new"
out=$(mktemp -d /tmp/evprof-fxmem.XXXXXX)
trap 'rm -rf "$out"' EXIT
cc -O1 -fno-omit-frame-pointer -pthread -o "$out/spin" bench/cpu_work.c

# run BUILD OUT SECONDS: appends "BUILD OUT SECONDS samples maxrss_kB"
run() {
	local bin=${EVPROF:-build/evprof} rc=0 samples rss
	[ "$1" = new ] || bin=$EVPROF_OLD
	rm -f "$out"/p.*
	/usr/bin/time -f "maxrss_kb=%M" \
		"$bin" record -F "$hz" -e cpu-clock,page-faults -o "$out/p.$2" \
		--duration "$3" -- "$out/spin" 1 1000000000000 \
		>/dev/null 2>"$out/err" || rc=$?
	# 143: the workload ended by --duration's SIGTERM, as meant
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 143 ]; then
		tail -3 "$out/err" >&2
		echo "fx_memory: $*: exit status $rc" >&2
		exit 1
	fi
	samples=$(sed -n 's/^evprof: \([0-9]*\) samples of .*; lost .*/\1/p' "$out/err")
	rss=$(sed -n 's/^maxrss_kb=\([0-9]*\).*/\1/p' "$out/err")
	[ -n "$samples" ] && [ -n "$rss" ] || {
		echo "fx_memory: no closing line or max RSS: $(tail -2 "$out/err")" >&2
		exit 1
	}
	echo "$1 $2 $3 $samples $rss" >>"$out/runs"
}

: >"$out/runs"
[ -z "${BENCH_LOCK:-}" ] || exec {lock}>>"$BENCH_LOCK"
set --
for b in $builds; do
	for o in json.gz pb.gz; do
		for s in "$short" "$long"; do
			set -- "$@" "$b $o $s"
		done
	done
done
for ((r = 0; r < rounds; r++)); do
	n=$#
	[ -z "${lock:-}" ] || flock "$lock"
	for ((k = 0; k < n; k++)); do
		i=$(((k + r) % n + 1))
		# shellcheck disable=SC2086
		run ${!i}
	done
	[ -z "${lock:-}" ] || flock -u "$lock"
	echo "round $((r + 1)) of $rounds done" >&2
done
echo "runs (build output seconds samples maxrss_kB):"
cat "$out/runs"
# Per round and build: the growth per sample of each output, then medians.
awk -v short="$short" -v long="$long" -v builds="$builds" '
function median(a, n,   i, j, t) {
	for (i = 1; i <= n; i++)
		for (j = i + 1; j <= n; j++)
			if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	k = $1 " " $2 " " $3
	c[k]++
	s[k, c[k]] = $4
	m[k, c[k]] = $5
}
END {
	nb = split(builds, bs, " ")
	printf "%-5s %14s %14s %14s %14s %12s %12s %14s\n", "build",
		"firefox kB", "pprof kB", "firefox kB", "pprof kB",
		"firefox B/s", "pprof B/s", "firefox-pprof"
	printf "%-5s %14s %14s %14s %14s %12s %12s %14s\n", "",
		"(short)", "(short)", "(long)", "(long)", "(growth)",
		"(growth)", "B/sample"
	for (x = 1; x <= nb; x++) {
		b = bs[x]
		n = c[b " json.gz " short]
		for (i = 1; i <= n; i++) {
			f = b " json.gz "; p = b " pb.gz "
			df = s[f long, i] - s[f short, i]
			dp = s[p long, i] - s[p short, i]
			gf[i] = (m[f long, i] - m[f short, i]) * 1024 / df
			gp[i] = (m[p long, i] - m[p short, i]) * 1024 / dp
			d[i] = gf[i] - gp[i]
			fs[i] = m[f short, i]; ps[i] = m[p short, i]
			fl[i] = m[f long, i]; pl[i] = m[p long, i]
		}
		printf "%-5s %14d %14d %14d %14d %12.1f %12.1f %14.1f\n", b,
			median(fs, n), median(ps, n), median(fl, n),
			median(pl, n), median(gf, n), median(gp, n),
			median(d, n)
	}
	print "medians over " n " rounds; growth: (long - short max RSS) / (long - short samples)"
}' "$out/runs"
