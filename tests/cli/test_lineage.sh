#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# One process per process: wl_lineage's tree (fork + exec, an exec of an
# exec, posix_spawn, an exec from a thread that is not the leader, short
# and long forks) recorded in task and cpu mode, with --off-cpu and with
# the BPF engine. In each, the Firefox file's processes (its threads'
# pids) and their names, report -T's pids of the pprof file and the
# closing line's count are the tree's processes as it counts them; every
# Firefox thread track holds samples (a thread that neither ran nor
# counted has none).
. "$(dirname "$0")/lib.sh"

# check LABEL RECORD-ARGS...: records the tree with RECORD-ARGS
check() {
	local label=$1 truth names got
	shift
	"$EVPROF" record "$@" -o "$TMP/l.json.gz" -o "$TMP/l.pb.gz" -- \
		"$FIXTURES/wl_lineage" "$TMP" >"$TMP/out" 2>"$TMP/err" ||
		{ fail "$label: record failed: $(tail -3 "$TMP/err")"; return; }
	truth=$(sed -n 's/^processes=//p' "$TMP/out")
	names=$(sed -n 's/^process //p' "$TMP/out" | sort | paste -sd,)
	node "$SRCDIR/tests/tools/fxquery.mjs" "$TMP/l.json.gz" >"$TMP/q" ||
		{ fail "$label: fxquery failed"; return; }
	# pid and process name of each track, one line per process
	awk '$1 == "thread" { p = n = ""; for (i = 3; i <= NF; i++) {
		if ($i ~ /^pid=/) p = $i; if ($i ~ /^process=/) n = $i }
		print p, n }' "$TMP/q" | sort -u >"$TMP/procs"
	got=$(wc -l <"$TMP/procs")
	if [ -n "$truth" ] && [ "$got" -eq "$truth" ] &&
		[ "$(cut -d' ' -f1 "$TMP/procs" | sort -u | wc -l)" -eq "$got" ]; then
		ok "$label: Firefox: $got processes, the tree's $truth"
	else
		fail "$label: Firefox: $got processes ($(paste -sd, "$TMP/procs")), the tree's '$truth'"
	fi
	got=$(sed 's/.*process=//' "$TMP/procs" | sort | paste -sd,)
	[ -n "$names" ] && [ "$got" = "$names" ] &&
		ok "$label: Firefox: processes named $got" ||
		fail "$label: Firefox: processes named '$got', the tree's '$names'"
	got=$("$EVPROF" report -T -n 1 "$TMP/l.pb.gz" |
		sed -n 's/^== thread .* \(pid=[0-9]*\) .*/\1/p' | sort -u | wc -l)
	[ "$got" -eq "$truth" ] && ok "$label: report -T (pprof): $got processes" ||
		fail "$label: report -T (pprof): $got processes, the tree's $truth"
	got=$(sed -n 's/^evprof: .* threads in \([0-9]*\) processes.*/\1/p' "$TMP/err")
	[ "$got" = "$truth" ] && ok "$label: closing line: $got processes" ||
		fail "$label: closing line: '$got' processes, the tree's $truth"
	got=$(awk '$1 == "thread" { for (i = 3; i <= NF; i++)
		if ($i == "samples=0") print }' "$TMP/q")
	[ -z "$got" ] && ok "$label: every thread track has samples" ||
		fail "$label: tracks without a sample: $got"
}

check default
check cpu --mode cpu
check off-cpu --off-cpu
bpf_engine && check bpf --engine bpf
finish
