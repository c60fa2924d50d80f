#!/usr/bin/env bash
# evprof stat against independent truth: the kernel's rusage counts of the
# same workload, and the machine's own answer on hardware counters.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_faults

# 1. page faults vs rusage, cycles, exit status.
"$EVPROF" stat -e task-clock,page-faults,cycles -- "$WL" 20000 3 \
	>"$TMP/out" 2>"$TMP/err"
status=$?
cat "$TMP/out"
[ "$status" -eq 3 ] && ok "exit status 3 passed through" ||
	fail "exit status $status, expected 3"
truth=$(sed -n 's/^process faults=//p' "$TMP/err")
got=$(awk '$2 == "page-faults" { print $1 }' "$TMP/out")
if [ -n "$got" ] && [ -n "$truth" ] && within "$got" "$truth" 2; then
	ok "page-faults $got within 2% of rusage $truth"
else
	fail "page-faults '$got' vs rusage '$truth'"
fi
# The truth about cycles comes from the kernel: does a cpu PMU exist?
if ls /sys/bus/event_source/devices/ | grep -qE '^(cpu|cpu_core|armv)'; then
	grep -qE '^ +[0-9]+ +cycles' "$TMP/out" && ok "cycles counted" ||
		fail "cycles should be counted on a machine with a PMU"
else
	grep -qE '<not supported> +cycles' "$TMP/out" &&
		ok "cycles <not supported> without a PMU" ||
		fail "cycles should be <not supported>"
fi
grep -qE '^ +[0-9.]+ msec +task-clock +# +[0-9.]+ CPUs utilized' "$TMP/out" &&
	ok "task-clock in msec with CPUs utilized" || fail "task-clock line"
grep -q 'seconds time elapsed' "$TMP/out" && ok "elapsed" || fail "elapsed"

# 2. a group of software events, two threads: totals add up.
"$EVPROF" stat -e '{task-clock,page-faults,context-switches}' -- \
	"$WL" 5000 0 2 >"$TMP/out" 2>"$TMP/err" || fail "group run failed"
truth=$(sed -n 's/^process faults=//p' "$TMP/err")
got=$(awk '$2 == "page-faults" { print $1 }' "$TMP/out")
within "$got" "$truth" 2 && ok "group page-faults $got ~ $truth" ||
	fail "group page-faults '$got' vs '$truth'"
grep -qE '^ +[0-9]+ +context-switches' "$TMP/out" &&
	ok "context-switches counted" || fail "context-switches missing"

# 3. the exit status of a command killed by a signal.
"$EVPROF" stat -e task-clock -- sh -c 'kill -9 $$' >/dev/null 2>&1
status=$?
[ "$status" -eq 137 ] && ok "killed command gives 137" ||
	fail "killed command gave $status"

# 4. a command that does not exist.
"$EVPROF" stat -e task-clock -- /nonexistent/cmd >/dev/null 2>"$TMP/err"
status=$?
[ "$status" -eq 127 ] && grep -q "cannot run" "$TMP/err" &&
	ok "missing command: 127 and a message" ||
	fail "missing command gave $status: $(cat "$TMP/err")"

# 5. unknown event: an error naming known events, status 2.
"$EVPROF" stat -e no-such-event -- true >/dev/null 2>"$TMP/err"
status=$?
[ "$status" -eq 2 ] && grep -q "task-clock" "$TMP/err" &&
	ok "unknown event rejected with known names" ||
	fail "unknown event: status $status, $(cat "$TMP/err")"

# 6. intervals: the deltas of the interval lines add up to the total
#    (within the faults of the last partial interval, which is printed too).
"$EVPROF" stat -I 100 -e page-faults -- "$WL" 3000 0 1 400 \
	>"$TMP/out" 2>"$TMP/err" || fail "interval run failed"
n=$(awk '$3 == "page-faults" && $1 ~ /^[0-9.]+$/' "$TMP/out" | wc -l)
sum=$(awk '$3 == "page-faults" && $1 ~ /^[0-9.]+$/ { s += $2 } END { print s + 0 }' "$TMP/out")
total=$(awk 'NF == 2 && $2 == "page-faults" { print $1 }' "$TMP/out")
[ "$n" -ge 3 ] && ok "$n interval lines" || fail "only $n interval lines"
[ "$sum" -eq "$total" ] &&
	ok "interval deltas add up to the total $total" ||
	fail "interval deltas $sum vs total $total"

# 7. -p with --per-thread: attach to a process with two named threads that
#    fault after a delay; each thread's count matches its own rusage.
"$WL" 4000 0 2 500 2>"$TMP/wl_err" &
wl=$!
sleep 0.2
"$EVPROF" stat --per-thread -e page-faults -p "$wl" >"$TMP/out" 2>"$TMP/err" &
st=$!
wait "$wl"
wait "$st" || fail "stat -p exited non-zero: $(cat "$TMP/err")"
cat "$TMP/out"
for t in 0 1; do
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/wl_err")
	got=$(awk -v n="faulter-$t-" 'index($1, n) == 1 && $3 == "page-faults" { print $2 }' "$TMP/out")
	if [ -n "$got" ] && within "$got" "$truth" 2; then
		ok "thread faulter-$t: $got faults ~ rusage $truth"
	else
		fail "thread faulter-$t: '$got' vs rusage '$truth'"
	fi
done
finish
