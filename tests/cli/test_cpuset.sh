#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# evprof confined to one CPU (taskset) still records on every online CPU:
# per-CPU recordings (cpu mode, and the BPF engine where it runs) of a
# workload that runs on another CPU of this test's mask count each
# thread's page faults within 0.5% of its rusage. A recording that opened
# only where evprof itself may run would see none of them.
. "$(dirname "$0")/lib.sh"

command -v taskset >/dev/null || { skip "no taskset"; finish; }
set -- $(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
if [ $# -lt 2 ]; then
	skip "one CPU in this test's affinity mask: none to run the workload apart"
	finish
fi
here=$1 there=$2
engines="ring"
bpf_engine && engines="ring bpf"

for engine in $engines; do
	label="$engine engine, evprof on CPU $here, workload on CPU $there"
	taskset -c "$here" "$EVPROF" record --mode cpu --engine "$engine" \
		-e cpu-clock,page-faults -o "$TMP/c.pb.gz" -- \
		taskset -c "$there" "$FIXTURES/wl_faults" 4000 0 2 \
		>/dev/null 2>"$TMP/err" ||
		{ fail "$label: record failed: $(tail -3 "$TMP/err")"; continue; }
	"$EVPROF" report -T -n 1 "$TMP/c.pb.gz" >"$TMP/r" ||
		{ fail "$label: report failed"; continue; }
	for t in 0 1; do
		truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
		got=$(awk -v n="faulter-$t" '/^== thread / { cur = $3 }
			/^total:/ && cur == n { for (i = 2; i <= NF; i++)
				if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); s += $i } }
			END { print s + 0 }' "$TMP/r")
		if [ -n "$truth" ] && within "$got" "$truth" 0.5; then
			ok "$label: faulter-$t page faults $got ~ rusage $truth"
		else
			fail "$label: faulter-$t page faults '$got' vs rusage '$truth'"
		fi
	done
done
finish
