#!/usr/bin/env bash
# evprof import against perf's own readers on the same perf.data file, in
# one run: `evprof import` (Firefox JSON and folded output, symbolized),
# `perf script` and `perf report --stdio`, interleaved REPEATS times;
# medians of wall and CPU time, max RSS of one more run, and each one's
# time over evprof's.
# Usage: bench/import_vs_perf.sh [REPEATS] [FREQ] (needs build/evprof and
# perf; EVPROF=path overrides build/evprof, ITER the spin iterations;
# the file and outputs go to TMPDIR, /tmp by default: a tmpfs there keeps
# disk waits out of both tools' wall times; KEEP=1 leaves them there,
# DATA=FILE imports FILE instead of a new recording; EVPROF_OLD=path adds
# that build's imports, old-evprof-*, to every repeat, and the difference
# between the two builds with its interval).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
reps=${1:-5}
freq=${2:-4000}
evprof=${EVPROF:-build/evprof}
out=$(mktemp -d "${TMPDIR:-/tmp}/evprof-bench.XXXXXX")
trap '[ -n "${KEEP:-}" ] || rm -rf "$out"' EXIT
# The file: 2 threads of CPU work, each touching 20000 fresh pages;
# cpu-clock at FREQ and every page fault sampled, frame-pointer stacks.
# ITER 2e10 spins each thread about 10 s (85,000 samples, 7.5 MB): files
# people import hold seconds to minutes of recording, and with a 1 s one
# (2e9: 45,000 samples, mostly the 40,000 page faults) both tools' fixed
# costs (process start, symbol tables, DWARF) are most of what is measured.
# DATA=FILE reads that file instead (one KEEP=1 left, for two builds alike).
if [ -n "${DATA:-}" ]; then
	ln -s "$(realpath "$DATA")" "$out/perf.data"
else
	cc -O1 -fno-omit-frame-pointer -pthread -o "$out/work" bench/cpu_work.c
	perf record -q -g -e "cpu-clock/freq=$freq/" -e page-faults/period=1/ \
		-o "$out/perf.data" -- "$out/work" 2 "${ITER:-20000000000}" \
		>/dev/null 2>&1
fi
samples=$(perf script -i "$out/perf.data" -F event 2>/dev/null | wc -l)
echo "file: $(stat -L -c %s "$out/perf.data") bytes, $samples samples" \
	"(cpu-clock at $freq Hz and every page fault, -g)"

# run NAME CMD...: appends "wall_s cpu_s" to $out/NAME: the shell's own
# timing, to the ms, of the command alone (CPU: user + sys, threads
# included); a wrapper process (perf stat, GNU time) would add its start to
# both tools' times and narrow their ratio.
run() {
	local name=$1 t
	shift
	t=$({ TIMEFORMAT='%3R %3U %3S'; time "$@" >/dev/null 2>"$out/stderr"; } 2>&1) ||
		{ cat "$out/stderr" >&2; exit 1; }
	awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' <<<"$t" >>"$out/$name"
}

# rss NAME CMD...: the command's max RSS (kB) into $out/NAME.rss, from one
# more run under GNU time.
rss() {
	local name=$1
	shift
	/usr/bin/time -f "%M" -o "$out/$name.rss" "$@" >/dev/null 2>"$out/stderr" ||
		{ cat "$out/stderr" >&2; exit 1; }
}

configs="evprof-import-firefox evprof-import-folded evprof-import-no-inline"
configs="$configs perf-script perf-report-stdio"
if [ -n "${EVPROF_OLD:-}" ]; then
	[ -x "$EVPROF_OLD" ] || { echo "EVPROF_OLD=$EVPROF_OLD is not executable" >&2; exit 1; }
	configs="$configs old-evprof-import-firefox old-evprof-import-folded"
fi
# each FN: FN NAME CMD... for every config, in turn. The outputs are
# removed between runs: replacing the last one would time its deletion too
# (a synchronous discard on a filesystem mounted with -o discard), which
# perf script, writing to /dev/null, never pays.
each() {
	rm -f "$out/p.json.gz" "$out/p.folded"
	"$1" evprof-import-firefox "$evprof" import -o "$out/p.json.gz" "$out/perf.data"
	"$1" evprof-import-folded "$evprof" import -o "$out/p.folded" "$out/perf.data"
	rm -f "$out/p.json.gz"
	"$1" evprof-import-no-inline "$evprof" import --no-inline \
		-o "$out/p.json.gz" "$out/perf.data"
	"$1" perf-script perf script -i "$out/perf.data"
	"$1" perf-report-stdio perf report --stdio -i "$out/perf.data"
}
# each_old FN: the same for EVPROF_OLD's imports, before the others in
# every second repeat so that neither build always runs on a warmer cache.
each_old() {
	[ -n "${EVPROF_OLD:-}" ] || return 0
	rm -f "$out/p.json.gz" "$out/p.folded"
	"$1" old-evprof-import-firefox "$EVPROF_OLD" import -o "$out/p.json.gz" "$out/perf.data"
	"$1" old-evprof-import-folded "$EVPROF_OLD" import -o "$out/p.folded" "$out/perf.data"
}
for i in $(seq "$reps"); do
	if ((i % 2)); then
		each run
		each_old run
	else
		each_old run
		each run
	fi
done
each rss
each_old rss

median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1fx", (b > 0 ? a / b : 0) }'; }
base=$(cut -d' ' -f1 "$out/evprof-import-firefox" | median)
cbase=$(cut -d' ' -f2 "$out/evprof-import-firefox" | median)
printf "%-24s %8s %8s %10s %14s %14s\n" config wall_s cpu_s maxrss_kB \
	"wall / evprof" "cpu / evprof"
for c in $configs; do
	m=$(cut -d' ' -f1 "$out/$c" | median)
	cm=$(cut -d' ' -f2 "$out/$c" | median)
	printf "%-24s %8s %8s %10s %14s %14s\n" "$c" "$m" "$cm" \
		"$(cat "$out/$c.rss")" "$(ratio "$m" "$base")" \
		"$(ratio "$cm" "$cbase")"
done
# The issue's figure: perf script's time over each evprof import's.
ps=$(cut -d' ' -f1 "$out/perf-script" | median)
pc=$(cut -d' ' -f2 "$out/perf-script" | median)
for c in evprof-import-firefox evprof-import-folded evprof-import-no-inline; do
	printf "perf script / %-24s wall %6s  cpu %6s\n" "$c" \
		"$(ratio "$ps" "$(cut -d' ' -f1 "$out/$c" | median)")" \
		"$(ratio "$pc" "$(cut -d' ' -f2 "$out/$c" | median)")"
done
# Each config's median with the 95% interval of bench/lib.sh.
echo "median [95% CI], coverage $(bench_coverage "$reps"):"
for c in $configs; do
	printf "%-28s wall_s %-26s cpu_s %s\n" "$c" \
		"$(cut -d' ' -f1 "$out/$c" | bench_mci)" \
		"$(cut -d' ' -f2 "$out/$c" | bench_mci)"
done
if [ -n "${EVPROF_OLD:-}" ]; then
	echo "this build minus EVPROF_OLD, repeat by repeat: median [95% CI]"
	for c in evprof-import-firefox evprof-import-folded; do
		for f in 1 2; do
			paste -d' ' <(cut -d' ' -f$f "$out/$c") \
				<(cut -d' ' -f$f "$out/old-$c") |
				awk '{ print $1 - $2 }' | bench_mci >"$out/d$f"
		done
		printf "%-28s wall_s %-26s cpu_s %s\n" "$c" "$(cat "$out/d1")" \
			"$(cat "$out/d2")"
	done
fi
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg), $reps repeats"
