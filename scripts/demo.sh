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
echo
echo "== evprof record: samples carry page-fault and context-switch deltas"
build/evprof record -e cycles,page-faults,context-switches -o demo.json.gz -- build/demo 1
build/evprof record -e cpu-clock,page-faults --weight page-faults -o demo.folded -- build/demo 1
echo
echo "== where the page faults happen (folded stacks weighted by page-faults, top 5)"
awk '{ print $NF "\t" $0 }' demo.folded | sort -rn | head -5 | cut -f2
echo
echo "Open demo.json.gz in the Firefox Profiler (https://profiler.firefox.com, 'Load a profile from file')."
