#!/usr/bin/env bash
# evprof record --continuous: a complete profile per window, against the
# workload's own truth: two threads fault pages for 3.5 s (their rusage
# counts them); the windows' page faults, summed per thread, are within
# 0.5% of it (the windows of one run hold every delta exactly once: the
# unit test test_session's build_parts checks that exactly). --keep
# rotates, Ctrl-C writes the last partial window.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
LOOP=$FIXTURES/wl_loop
loop=
trap '[ -n "$loop" ] && kill "$loop" 2>/dev/null; rm -rf "$TMP"' EXIT

# Sum of EVENT for thread NAME over the fxquery outputs of every window.
windows_sum() { # DIR NAME EVENT
	for f in "$1"/evprof-*.json.gz; do
		node "$TOOLS/fxquery.mjs" "$f"
	done | awk -v n="$2" -v e="$3=" '$1 == "thread" && $2 == n {
		for (i = 1; i <= NF; i++) if (index($i, e) == 1) {
			sub(/.*=/, "", $i); s += $i } } END { print s + 0 }'
}

# The windows in DIR, one a line, named after their starts (ms).
windows() { ls "$1" 2>/dev/null | grep -E '^evprof-.*Z\.(json|pb)\.gz$'; }

# A run of 3.5 s has 3 ticks and the last window; on a loaded machine a
# tick can come late (CI once had 2 windows in 3.5 s): what the checks
# rely on is at least one tick and the last window, and the starts tell
# when the ticks came.
late() { # DIR WHAT
	local n
	n=$(windows "$1" | wc -l)
	[ "$n" -ge 4 ] ||
		echo "note: $2: $n windows in 3.5 s, a tick late; starts:" \
			"$(windows "$1" | tr '\n' ' ')" >&2
}

# 1. Windows of 1 s over a 3.5 s run: several, each complete, summing to
#    each thread's rusage faults.
"$EVPROF" record --continuous --interval 1 --output-dir "$TMP/w" \
	--format firefox -e cpu-clock,page-faults -- "$LOOP" 3.5 2 \
	>/dev/null 2>"$TMP/err" ||
	fail "continuous record failed: $(tail -3 "$TMP/err")"
n=$(windows "$TMP/w" | wc -l)
late "$TMP/w" "windows"
[ "$n" -ge 2 ] && ok "$n windows written" || fail "only $n windows: $(ls "$TMP/w")"
with=0
for f in "$TMP"/w/evprof-*.json.gz; do
	node "$TOOLS/fxquery.mjs" "$f" >"$TMP/q" ||
		fail "$f does not load"
	grep -q '^thread looper-' "$TMP/q" && with=$((with + 1))
done
[ "$with" -ge 2 ] && ok "$with windows hold the loopers' samples" ||
	fail "only $with windows hold samples"
for t in 0 1; do
	truth=$(sed -n "s/^thread looper-$t tid=[0-9]* faults=//p" "$TMP/err")
	got=$(windows_sum "$TMP/w" "looper-$t" page-faults)
	if [ -n "$truth" ] && within "$got" "$truth" 0.5; then
		ok "looper-$t: windows sum to $got page faults ~ rusage $truth"
	else
		fail "looper-$t: windows sum to '$got' page faults vs rusage '$truth'"
	fi
done

# 2. pprof by default, --keep 2: the two newest windows stay (of about
#    10: windows of 0.25 s leave room for late ticks).
"$EVPROF" record --continuous --interval 0.25 --keep 2 --output-dir "$TMP/k" \
	-e cpu-clock -- "$LOOP" 2.5 1 >/dev/null 2>"$TMP/err" ||
	fail "--keep record failed: $(tail -3 "$TMP/err")"
written=$(sed -n 's/.*wrote \([0-9]*\) windows.*/\1/p' "$TMP/err")
n=$(windows "$TMP/k" | wc -l)
[ "$n" -eq 2 ] && [ "${written:-0}" -ge 3 ] &&
	ok "--keep 2: 2 of $written windows stay" ||
	fail "--keep 2: $n files of '${written}' windows: $(ls "$TMP/k")"

# 3. Ctrl-C on an attached process: the last, partial window is written.
"$LOOP" 0 1 2>"$TMP/loop" &
loop=$!
for _ in $(seq 100); do
	grep -q ready "$TMP/loop" && break
	sleep 0.1
done
"$EVPROF" record --continuous --interval 60 --output-dir "$TMP/c" \
	--format firefox -e cpu-clock -p "$loop" >/dev/null 2>"$TMP/err" &
rec=$!
sleep 2
kill -INT "$rec"
wait "$rec" && ok "Ctrl-C: exit 0" || fail "Ctrl-C: exit $?: $(tail -3 "$TMP/err")"
n=$(windows "$TMP/c" | wc -l)
samples=0
[ "$n" -eq 1 ] && samples=$(node "$TOOLS/fxquery.mjs" "$TMP"/c/evprof-*.json.gz |
	awk '$1 == "thread" && $2 == "looper-0" { sub(/samples=/, "", $5); print $5 }')
[ "${samples:-0}" -gt 100 ] &&
	ok "Ctrl-C after 2 s: the partial window holds $samples samples" ||
	fail "Ctrl-C: $n windows, '$samples' samples"

# 4. --push: every window queued and sent, each one parsed and accepted
#    by the local Pyroscope stand-in; --output-dir beside it says how
#    many windows there were.
if bash "$TOOLS/ensure.sh" >/dev/null 2>&1 &&
	! "$EVPROF" record --push http://127.0.0.1:1 -- true 2>&1 |
	grep -q "built without libcurl"; then
	node "$TOOLS/pyroscope_endpoint.mjs" --port-file "$TMP/ep.port" \
		--log "$TMP/ep.log" 2>"$TMP/ep.err" &
	ep=$!
	for _ in $(seq 100); do
		[ -s "$TMP/ep.port" ] && break
		sleep 0.1
	done
	"$EVPROF" record --continuous --interval 1 -e cpu-clock,page-faults \
		--output-dir "$TMP/p" \
		--push "http://127.0.0.1:$(cat "$TMP/ep.port")" -- "$LOOP" 3.5 1 \
		>/dev/null 2>"$TMP/err" || fail "--push: $(tail -3 "$TMP/err")"
	kill "$ep"
	wait "$ep" 2>/dev/null
	sent=$(sed -n 's/.*push: \([0-9]*\) profiles sent.*/\1/p' "$TMP/err")
	made=$(sed -n 's/.*wrote \([0-9]*\) windows.*/\1/p' "$TMP/err")
	late "$TMP/p" "--push"
	n=$(wc -l <"$TMP/ep.log")
	accepted=$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1])
	if json.loads(l).get("status") == 200 and json.loads(l).get("series")))' "$TMP/ep.log")
	[ "$n" -ge 2 ] && [ "${made:-0}" = "$n" ] && [ "$accepted" = "$n" ] &&
		[ "${sent:-0}" = "$n" ] &&
		ok "--push: $n windows of $made sent, all parsed and accepted" ||
		fail "--push: $n requests for '$made' windows, $accepted accepted, '$sent' sent: $(tail -3 "$TMP/err")"
else
	skip "--push: no endpoint tools or no libcurl"
fi

# 5. Refused: no directory nor push, -o, --off-cpu.
"$EVPROF" record --continuous -- true 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "output-dir" "$TMP/err" && ok "--output-dir required" ||
	fail "no --output-dir: $(cat "$TMP/err")"
"$EVPROF" record --continuous --output-dir "$TMP/x" --off-cpu -- true 2>"$TMP/err"
[ $? -eq 2 ] && ok "--off-cpu refused" || fail "--off-cpu: $(cat "$TMP/err")"
finish
