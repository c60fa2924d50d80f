#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fxload.sh PROFILE [EXPECTED...]
#
# Loads PROFILE (.json or .json.gz) with the Firefox Profiler's own loader,
# run offline by @firefox-devtools/profiler-cli (pinned in package.json next
# to this script), and prints `profile info`, `thread list`, `counter list`
# and every thread's `thread samples-top-down` (but for the per-counter
# tracks "<thread> <event> (count)", which repeat their thread's stacks).
# With FXLOAD_TOTALS=1, also one line per thread, counter tracks included,
# with the root total of its call tree as the loader computes it:
#   loader-total t-N <samples> <thread name>
# Each EXPECTED string must appear in that output (fixed-string match).
#
# Exit: 0 loaded and every expectation found; 1 load/query failure or an
# expectation missing; 77 when the loader is unavailable: node is missing,
# or node_modules is missing and `npm ci` cannot install it.
set -u

tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cli="$tools/node_modules/.bin/profiler-cli"

if [ $# -lt 1 ]; then
	echo "usage: fxload.sh PROFILE [EXPECTED...]" >&2
	exit 2
fi
profile=$1
shift

bash "$tools/ensure.sh" || exit $?
if [ ! -x "$cli" ]; then
	echo "fxload: SKIP: $cli missing" >&2
	exit 77
fi

# The daemon's Unix socket lives here: keep the path short (< 108 bytes).
session=$(mktemp -d /tmp/fxl.XXXXXX) || exit 1
export PROFILER_CLI_SESSION_DIR=$session PROFILER_CLI_NO_SYMBOLICATE=1
out=$session/out.txt
cleanup() {
	"$cli" stop --all >/dev/null 2>&1
	rm -rf "$session"
}
trap cleanup EXIT

run() {
	echo "\$ profiler-cli $*" >>"$out"
	if ! "$cli" "$@" >>"$out" 2>&1; then
		cat "$out"
		echo "fxload: FAIL: 'profiler-cli $*' failed on $profile" >&2
		cat "$session"/*.log >&2 2>/dev/null
		exit 1
	fi
}

# The loader gives its daemon 500 ms to start, then gives up but leaves
# it running: on a busy machine (seen at load 8 on 2 cores, 4 loads in 5)
# that daemon is still starting, so wait for it to answer (60 s) rather
# than stop it and start another that meets the same 500 ms.
loaded=0
for try in 1 2 3; do
	"$cli" load "$profile" >"$session/load.txt" 2>&1 && loaded=1 && break
	grep -q "did not become ready" "$session/load.txt" || break
	for wait in $(seq 120); do
		"$cli" profile info >/dev/null 2>&1 && loaded=1 && break 2
		sleep 0.5
	done
	"$cli" stop --all >/dev/null 2>&1
done
echo "\$ profiler-cli load $profile" >>"$out"
cat "$session/load.txt" >>"$out"
if [ "$loaded" != 1 ]; then
	cat "$out"
	echo "fxload: FAIL: 'profiler-cli load $profile' failed" >&2
	exit 1
fi
run profile info
run thread list
run counter list
threads=$(grep -o '\bt-[0-9]\+\b' "$out" | sort -u -t- -k2n)
counter_tracks=$(grep -o '\bt-[0-9]\+ .* ([^)]*count)' "$out" |
	grep -o '^t-[0-9]\+' | sort -u)
for t in $threads; do
	grep -qx -- "$t" <<<"$counter_tracks" && continue
	run thread samples-top-down --thread "$t"
done
if [ "${FXLOAD_TOTALS:-0}" = 1 ]; then
	for t in $threads; do
		# Idle samples count too: a track's total is every weight in it.
		if ! "$cli" thread samples-top-down --thread "$t" --json \
			--include-idle --max-lines 1 >"$session/tree.json" 2>&1 ||
			! node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
console.log(`loader-total ${process.argv[2]} ${r.regularCallTree.totalSamples} ${r.friendlyThreadName}`);
' "$session/tree.json" "$t" >>"$out"; then
			cat "$out" "$session/tree.json"
			echo "fxload: FAIL: call tree total of $t" >&2
			exit 1
		fi
	done
fi
cat "$out"

status=0
for want in "$@"; do
	if ! grep -qF -- "$want" "$out"; then
		echo "fxload: FAIL: expected '$want' in the loader's output" >&2
		status=1
	fi
done
exit $status
