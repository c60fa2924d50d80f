#!/usr/bin/env bash
# evprof record checks its group against the PMU before anything opens or
# runs, as stat does (one check, evprof_group__validate), and software
# events still record beside it. EVPROF_MAX_GROUP_EVENTS makes the answer
# the same on a host with a PMU and on one without: it overrides trial and
# tables, and counts hardware events whether or not they open here (on a
# PMU-less host they fall back after the check).
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

# 1. Two hardware events where the user allows one: refused with both
#    numbers and their source, before the command runs, nothing written.
EVPROF_MAX_GROUP_EVENTS=1 "$EVPROF" record -e cycles,instructions \
	-o "$TMP/no.json.gz" -- touch "$TMP/ran" >"$TMP/out" 2>"$TMP/err"
status=$?
[ "$status" -eq 2 ] && ok "refused with status 2" ||
	fail "status $status: $(cat "$TMP/err")"
grep -q "group {cycles,instructions} needs 2 hardware counters but the PMU has 1 (from EVPROF_MAX_GROUP_EVENTS)" "$TMP/err" &&
	ok "refusal names the group, both numbers and their source" ||
	fail "refusal message: $(cat "$TMP/err")"
grep -q "nmi_watchdog" "$TMP/err" &&
	fail "watchdog hint where the watchdog is not the reason" ||
	ok "no watchdog hint"
[ ! -e "$TMP/ran" ] && ok "the command never ran" || fail "the command ran"
[ ! -e "$TMP/no.json.gz" ] && ok "nothing written" || fail "a profile was written"

# 2. At the limit, with a software event beside the hardware one: it
#    records, and the page-fault deltas of each thread match its rusage.
EVPROF_MAX_GROUP_EVENTS=1 "$EVPROF" record -e cycles,page-faults \
	-o "$TMP/pf.json.gz" -- "$WL" 3000 3 2 50 >"$TMP/out" 2>"$TMP/err"
status=$?
[ "$status" -eq 3 ] && ok "recorded within the limit (status 3 passed through)" ||
	fail "status $status: $(cat "$TMP/err")"
node "$TOOLS/fxquery.mjs" "$TMP/pf.json.gz" >"$TMP/q" 2>&1 ||
	fail "cannot query the profile: $(cat "$TMP/q")"
for t in 0 1; do
	tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) faults=.*/\1/p" "$TMP/err")
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
	got=$(awk -v t="tid=$tid" '$1 == "thread" && $3 == t {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); print $i } }' "$TMP/q")
	if [ -n "$tid" ] && [ -n "$got" ] && within "$got" "$truth" 0.5; then
		ok "faulter-$t page-fault deltas $got within 0.5% of rusage $truth"
	else
		fail "faulter-$t page-fault deltas '$got' vs rusage '$truth'"
	fi
done

# 3. Software events only take no counter: a limit of 1 holds any number.
EVPROF_MAX_GROUP_EVENTS=1 "$EVPROF" record \
	-e page-faults,minor-faults,context-switches,task-clock \
	-o "$TMP/sw.json.gz" -- "$WL" 1000 0 1 0 >"$TMP/out" 2>"$TMP/err"
status=$?
[ "$status" -eq 0 ] && grep -q "samples of page-faults" "$TMP/err" &&
	ok "four software events recorded under a limit of 1" ||
	fail "software group: status $status: $(cat "$TMP/err")"
finish
