#!/usr/bin/env bash
# Installs what is missing, builds, and shows evprof on a demo workload.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
BUILD=build scripts/build.sh
echo "== evprof info"
build/evprof info
echo
echo "== evprof stat on the demo (two threads: a spinner and a page faulter)"
build/evprof stat -e task-clock,page-faults,context-switches,cycles,instructions \
	-- build/demo 1
