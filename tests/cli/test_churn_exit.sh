#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Counts of tasks too short to sample are not blamed on how they exited:
# wl_churn's 300 threads and 100 processes each live less than a sample
# period, so most of their page faults come after their last sample (all
# of them for a task never sampled). That part goes to one frame
# "[unsampled]" right under the process, not to the kernel's exit path,
# where the switch-out of a dying task reads its group; every count is on
# a stack, and the total stays within 0.5% of the tree's own rusage.
#
# Each counter is attributed by its own samples, so nothing reaches the
# exit path but faults taken there: none here (the same test made 49-67%
# there when every tail went on it, 90% on 16 cores), nor on libc's exit
# or start_thread as the last user frame. Task and cpu mode, and the BPF
# engine, which settles a thread's tail at its last switch-out.
. "$(dirname "$0")/lib.sh"

modes="task cpu"
bpf_engine && modes="$modes bpf"
for mode in $modes; do
	opt=(--mode "$mode")
	[ "$mode" != bpf ] || opt=(--engine bpf)
	unlost "$TMP/err" "$EVPROF" record "${opt[@]}" -e cpu-clock,page-faults \
		-o "$TMP/c.pb.gz" -- "$FIXTURES/wl_churn" 300 100 50 >/dev/null ||
		{ fail "$mode: record failed: $(tail -3 "$TMP/err")"; continue; }
	if [ "$mode" = task ] && grep -q "task exits cannot be sampled" "$TMP/err"; then
		skip "$mode: $(grep "task exits" "$TMP/err")"
		continue
	fi
	truth=$(sed -n 's/^tree faults=//p' "$TMP/err")
	"$EVPROF" report -o "$TMP/c.folded" --weight page-faults "$TMP/c.pb.gz" ||
		{ fail "$mode: no folded output"; continue; }
	# Per line: its count, then whether it is the root's "[unsampled]",
	# runs through the exit path (the kernel's, or libc's exit or
	# start_thread as the last user frame), or has no frame under the
	# process.
	read -r total unsampled onexit stackless < <(awk '
		{ n = $NF; t += n; k = split($1, f, ";")
		  while (k > 1 && f[k] ~ /_\[k\]$/) k-- }
		length(f) == 2 && f[2] == "[unsampled]" { u += n }
		/(^|;)(do_exit|do_group_exit)_\[k\](;|$)/ ||
		    /sched_process_exit/ ||
		    f[k] ~ /^(exit|_exit|__GI_exit|__run_exit_handlers|start_thread)$/ { e += n }
		length(f) < 2 { s += n }
		END { printf "%d %d %d %d\n", t, u, e, s }' "$TMP/c.folded")
	if [ -n "$truth" ] && within "$total" "$truth" 0.5; then
		ok "$mode: $total page faults, rusage of the tree $truth"
	else
		fail "$mode: '$total' page faults, rusage of the tree '$truth'"
	fi
	if [ "$unsampled" -gt 0 ]; then
		ok "$mode: $unsampled page faults on [unsampled] under the process"
	else
		fail "$mode: no page faults on [unsampled] right under the process"
	fi
	# The closing line gives that share, as the profile holds it.
	said=$(sed -n 's/^evprof: counted after each thread.s last sample, on \[unsampled\]: page-faults \([0-9.]*\)%.*/\1/p' "$TMP/err")
	share=$(awk -v u="$unsampled" -v t="$total" 'BEGIN { printf "%.1f", 100 * u / t }')
	if [ -n "$said" ] && awk -v a="$said" -v b="$share" \
		'BEGIN { d = a - b; exit !(d <= 0.15 && d >= -0.15) }'; then
		ok "$mode: the closing line says $said% of page faults on [unsampled] ($share% in the profile)"
	else
		fail "$mode: the closing line says '$said'% on [unsampled], the profile $share%"
	fi
	if [ "$stackless" -eq 0 ]; then
		ok "$mode: every page fault on a stack"
	else
		fail "$mode: $stackless page faults with no stack"
	fi
	if [ "$onexit" -eq 0 ]; then
		ok "$mode: no page fault on the exit path"
	else
		fail "$mode: $onexit of $total page faults on the exit path"
	fi
done
finish
