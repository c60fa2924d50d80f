#!/usr/bin/env bash
# Counters in the Firefox Profiler, checked with its own loader against
# each thread's own rusage: one counter per process and recorded event,
# and per thread and event a track whose call tree weighs stacks by that
# event's deltas, its total the thread's fault count.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

"$EVPROF" record -e cpu-clock,page-faults,context-switches \
	-o "$TMP/c.json.gz" -- "$WL" 6000 0 2 100 >/dev/null 2>"$TMP/err" ||
	fail "record: $(tail -3 "$TMP/err")"
node "$TOOLS/fxcheck.mjs" "$TMP/c.json.gz" >"$TMP/check" 2>&1 &&
	ok "structural check (counters and their display config)" ||
	fail "structural check: $(cat "$TMP/check")"
node "$TOOLS/fxquery.mjs" "$TMP/c.json.gz" >"$TMP/q"
FXLOAD_TOTALS=1 bash "$TOOLS/fxload.sh" "$TMP/c.json.gz" >"$TMP/load" 2>&1
status=$?
[ "$status" -eq 77 ] && {
	echo "SKIP: the profiler's loader is unavailable: $(tail -1 "$TMP/load")"
	exit 77
}
[ "$status" -eq 0 ] || fail "loader: $(tail -5 "$TMP/load")"

# One counter per recorded event, of the one process, and no other.
for ev in page-faults context-switches; do
	n=$(grep -c "^  c-[0-9]*: $ev (evprof) \[p-0 wl_faults" "$TMP/load")
	[ "$n" -eq 1 ] && ok "the loader lists one $ev counter" ||
		fail "$n $ev counters in: $(grep '^  c-' "$TMP/load")"
done
n=$(grep -c '^  c-[0-9]*: ' "$TMP/load")
[ "$n" -eq 2 ] && ok "two counters in all" || fail "$n counters"

# The process's counter sums its threads' deltas (the same samples).
sum=$(awk '$1 == "counter" && $2 == "page-faults" { sub(/sum=/, "", $5); print $5 }' "$TMP/q")
threads=$(awk '$1 == "thread" { for (i = 1; i <= NF; i++)
	if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$TMP/q")
[ -n "$sum" ] && [ "$sum" -eq "$threads" ] &&
	ok "page-faults counter $sum = its threads' deltas" ||
	fail "page-faults counter '$sum' vs threads' deltas $threads"
truth=$(sed -n 's/^process faults=//p' "$TMP/err")
within "$sum" "$truth" 1 && ok "page-faults counter $sum ~ rusage $truth" ||
	fail "page-faults counter '$sum' vs rusage '$truth'"
# The profiler reads a counter sample as what came since the one before
# (the first as 0): its total over the profile is still every delta.
shown=$(sed -n 's/^  c-[0-9]*: page-faults (evprof) .* in the visible range: \([0-9,]*\) .*/\1/p' "$TMP/load" | tr -d ,)
[ -n "$shown" ] && [ "$shown" = "$sum" ] &&
	ok "the loader's page-faults counter total $shown = its deltas" ||
	fail "the loader's page-faults counter total '$shown' vs deltas $sum"

# Per thread: its page-faults track's call tree total, as the loader sums
# it, is the thread's rusage; exactly its recorded deltas.
for t in 0 1; do
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
	tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) .*/\1/p" "$TMP/err")
	got=$(awk -v n="faulter-$t page-faults (count)" \
		'$1 == "loader-total" { t = $3; $1 = $2 = $3 = ""; sub(/^ +/, "");
		 if ($0 == n) print t }' "$TMP/load")
	rec=$(awk -v t="tid=$tid" '$1 == "thread" && $3 == t {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); print $i } }' "$TMP/q")
	[ -n "$got" ] && [ "$got" = "$rec" ] &&
		ok "faulter-$t page-faults tree total $got = recorded deltas" ||
		fail "faulter-$t page-faults tree total '$got' vs recorded '$rec'"
	if [ -n "$got" ] && within "$got" "$truth" 0.5; then
		ok "faulter-$t page-faults tree total $got ~ rusage $truth"
	else
		fail "faulter-$t page-faults tree total '$got' vs rusage '$truth'"
	fi
	grep -q "^loader-total t-[0-9]* [0-9]* faulter-$t context-switches (count)$" \
		"$TMP/load" && ok "faulter-$t context-switches track listed" ||
		fail "no faulter-$t context-switches track"
done

# Reading the file back ignores the counter tracks (no double counts).
"$EVPROF" report --weight page-faults -o "$TMP/r.folded" \
	"$TMP/c.json.gz" 2>"$TMP/rerr" || fail "report: $(cat "$TMP/rerr")"
back=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/r.folded")
[ "$back" -eq "$threads" ] && ok "read back: $back page faults, once" ||
	fail "read back $back page faults, recorded $threads"
finish
