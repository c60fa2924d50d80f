#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# fxload.sh PROFILE [EXPECTED...]
#
# Loads PROFILE (.json or .json.gz) with the Firefox Profiler's own loader,
# run offline by @firefox-devtools/profiler-cli (pinned in package.json next
# to this script), and prints `profile info`, `thread list` and every
# thread's `thread samples-top-down`. Each EXPECTED string must appear in
# that output (fixed-string match).
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

if ! command -v node >/dev/null 2>&1; then
	echo "fxload: SKIP: node is not installed" >&2
	exit 77
fi
if [ ! -x "$cli" ]; then
	# Parallel tests may all get here: one installs, the others wait.
	(
		flock 9
		[ -x "$cli" ] || npm ci --prefix "$tools" --no-audit --no-fund \
			--loglevel=error >&2
	) 9>"$tools/.install.lock"
	if [ ! -x "$cli" ]; then
		echo "fxload: SKIP: $cli missing and 'npm ci --prefix $tools' failed" >&2
		exit 77
	fi
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

# The loader gives its daemon 500 ms to start: on a busy machine that is
# not always enough, and its own message says to retry.
for try in 1 2 3 4 5; do
	"$cli" load "$profile" >"$session/load.txt" 2>&1 && loaded=1 && break
	loaded=0
	grep -q "did not become ready" "$session/load.txt" || break
	"$cli" stop --all >/dev/null 2>&1
	sleep "$try"
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
for t in $(grep -o '\bt-[0-9]\+\b' "$out" | sort -u -t- -k2n); do
	run thread samples-top-down --thread "$t"
done
cat "$out"

status=0
for want in "$@"; do
	if ! grep -qF -- "$want" "$out"; then
		echo "fxload: FAIL: expected '$want' in the loader's output" >&2
		status=1
	fi
done
exit $status
