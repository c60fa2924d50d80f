#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Each thread's recorded CPU time against the thread's own
# (CLOCK_THREAD_CPUTIME_ID), in cpu and task mode: wl_naps's two threads
# nap 5 ms and work 3 ms 200 times each, pinned to one CPU at a time, so
# that most wakes follow that CPU's idle task. Some kernels never sample
# the idle task of some CPUs (Linux 6.18 in a VM here: CPU 1's, neither
# its switch-outs nor its cpu-clock ticks): were a stretch no read ends
# charged to the next read, a napper would take up to 5 ms of idle time
# per wake.
#
# Tolerance per thread: 2% + 1 ms (the scheduler and perf draw the line at
# different points of the switch path: 10 to 35 us a switch seen here, at
# 3 ms of work a wake under 1.2%), and the interrupt and steal time the
# thread measured inside its work stretches (wall time less its CPU time
# and its run-queue wait: perf's clocks are wall clocks and count them,
# the thread's clock does not).
. "$(dirname "$0")/lib.sh"

command -v taskset >/dev/null || { skip "no taskset"; finish; }
freq=1000

cpus=$(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
	awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }')
for mode in cpu task; do
	for c in $cpus; do
		out="$TMP/$mode-$c"
		unlost "$out.err" "$EVPROF" record --mode "$mode" -e cpu-clock -F "$freq" \
			-o "$out.pb.gz" -- taskset -c "$c" "$FIXTURES/wl_naps" 200 3000 5000 \
			>/dev/null ||
			{ fail "$mode cpu $c: record failed: $(tail -3 "$out.err")"; continue; }
		"$EVPROF" report "$out.pb.gz" --per-thread >"$out.rep" 2>&1 ||
			{ fail "$mode cpu $c: report failed"; continue; }
		for t in nap-a nap-b; do
			line=$(grep "^thread $t " "$out.err")
			own=$(echo "$line" | sed -n 's/.* cpu=\([0-9]*\) .*/\1/p')
			st=$(echo "$line" | sed -n 's/.* stolen=\([0-9]*\)$/\1/p')
			got=$(grep -A1 "^== thread $t " "$out.rep" | tail -1 |
				sed -n 's/.* cpu-ms=\([0-9.]*\).*/\1/p')
			tol=$(awk -v o="${own:-0}" -v b="${st:-0}" \
				'BEGIN { printf "%.3f", (o * 0.02 + 1e6 + b) / 1e6 }')
			ownms=$(awk -v o="$own" 'BEGIN { printf "%.3f", o / 1e6 }')
			if [ -n "$own" ] && [ -n "$got" ] && awk -v a="$got" \
				-v b="$ownms" -v t="$tol" \
				'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'; then
				ok "$mode cpu $c: $t CPU $got ms, its own $ownms ms (+-$tol, irq+steal ${st:-?} ns)"
			else
				fail "$mode cpu $c: $t CPU '$got' ms, its own '$ownms' ms (+-$tol, irq+steal ${st:-?} ns; $(grep -o 'lost [0-9]* records' "$out.err"))"
			fi
		done
	done
done
finish
