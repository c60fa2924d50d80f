#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Short-lived tasks keep their counts in every mode: wl_churn runs 300
# threads and 100 processes that live less than a sample period each, a
# process killed by SIGKILL, an exec from a non-leader thread, a vfork +
# exec and an orphan; the page faults of the whole profile must be within
# 0.5% of the tree's own rusage, taken in the same run.
. "$(dirname "$0")/lib.sh"

for mode in auto task cpu; do
	unlost "$TMP/err" "$EVPROF" record --mode "$mode" -e cpu-clock,page-faults \
		-o "$TMP/c.pb.gz" -- "$FIXTURES/wl_churn" 300 100 50 >/dev/null ||
		{ fail "$mode: record failed: $(tail -3 "$TMP/err")"; continue; }
	if [ "$mode" != cpu ] && grep -q "task exits cannot be sampled" "$TMP/err"; then
		# No tracefs to be had (not root, no mount): the recorder says
		# so, and task mode cannot keep what follows a last sample.
		skip "$mode: $(grep "task exits" "$TMP/err")"
		continue
	fi
	truth=$(sed -n 's/^tree faults=//p' "$TMP/err")
	got=$("$EVPROF" report "$TMP/c.pb.gz" |
		sed -n 's/^total:.* page-faults=\([0-9]*\).*/\1/p')
	if [ -n "$truth" ] && [ -n "$got" ] && within "$got" "$truth" 0.5; then
		ok "$mode: $got page faults, rusage of the tree $truth"
	else
		fail "$mode: '$got' page faults, rusage of the tree '$truth' ($(grep -o 'lost [0-9]* records' "$TMP/err"))"
	fi
	# The closing lines say the total too, as perf stat prints it.
	said=$(sed -n 's/^evprof: totals: \(.*, \)*\([0-9,]*\) page-faults.*/\2/p' "$TMP/err" | tr -d ,)
	if [ -n "$truth" ] && [ -n "$said" ] && within "$said" "$truth" 0.5; then
		ok "$mode: the closing lines count $said page faults"
	else
		fail "$mode: the closing lines count '$said' page faults, rusage '$truth': $(grep '^evprof: totals' "$TMP/err")"
	fi
done

# Windows of 1 s over a tree churning for 6 s of wall time (rounds of
# the above, whatever this host's speed): at least 3 windows, each full one
# with page faults of its own; part builds forget the tasks that are done
# (test_session_gc checks what they hold) while the windows, summed, keep
# every fault of the tree. Counters ride along and leaves are not mended
# here (what parts keep is the subject, not where counts land): with own
# samples and leaf copies, a reader slowed by ASan lost records per CPU
# (12 000 of a 6 s run with 4 MiB rings), a limit the notes say.
for mode in auto cpu; do
	rm -rf "$TMP/w"
	"$EVPROF" record --continuous --interval 1 --mode "$mode" \
		--attribution ride -g fp,noleaf \
		--output-dir "$TMP/w" -e cpu-clock,page-faults \
		-- "$FIXTURES/wl_churn" 300 100 50 6 >/dev/null 2>"$TMP/err" ||
		{ fail "continuous $mode: record failed: $(tail -3 "$TMP/err")"; continue; }
	if [ "$mode" != cpu ] && grep -q "task exits cannot be sampled" "$TMP/err"; then
		skip "continuous $mode: $(grep "task exits" "$TMP/err")"
		continue
	fi
	truth=$(sed -n 's/^tree faults=//p' "$TMP/err")
	rounds=$(sed -n 's/^rounds=//p' "$TMP/err")
	n=0 got=0 counts= empty=0
	for f in "$TMP"/w/evprof-*.pb.gz; do
		g=$("$EVPROF" report "$f" |
			sed -n 's/^total:.* page-faults=\([0-9]*\).*/\1/p')
		n=$((n + 1)) got=$((got + ${g:-0}))
		counts="$counts${counts:+ }${g:-0}"
		# Only the last window may be a sliver.
		[ "${g:-0}" -gt 0 ] || [ "$f" = "$(ls "$TMP"/w/evprof-*.pb.gz | tail -1)" ] ||
			empty=$((empty + 1))
	done
	if [ "$n" -ge 3 ] && [ "$empty" -eq 0 ]; then
		ok "continuous $mode: $n windows of $rounds rounds, page faults $counts"
	else
		fail "continuous $mode: $n windows (3 at least) of '$rounds' rounds, page faults $counts"
	fi
	if [ -n "$truth" ] && within "$got" "$truth" 0.5; then
		ok "continuous $mode: $n windows sum to $got page faults, rusage of the tree $truth"
	else
		fail "continuous $mode: $n windows sum to '$got' page faults, rusage of the tree '$truth' ($(grep -o 'lost [0-9]* records' "$TMP/err"))"
	fi
done
finish
