#!/usr/bin/env bash
# evprof record against independent truth: each thread's own rusage for
# page faults, the known 2:1 split of the demo's CPU time, and the Firefox
# Profiler's own loader for every profile written.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults
DEMO=$(dirname "$EVPROF")/demo

# Every profile: our structural check, then the real loader.
check_profile() { # FILE EXPECTED-GREP...
	local f=$1
	shift
	node "$TOOLS/fxcheck.mjs" "$f" >"$TMP/check" 2>&1 &&
		ok "$f passes the structural check" ||
		fail "$f structural check: $(cat "$TMP/check")"
	bash "$TOOLS/fxload.sh" "$f" >"$TMP/load" 2>&1 ||
		fail "$f does not load: $(tail -5 "$TMP/load")"
	for want in "$@"; do
		grep -q -- "$want" "$TMP/load" && ok "loader shows '$want'" ||
			fail "loader output lacks '$want'"
	done
}

# 1. Fallback chain and per-thread page-fault deltas vs rusage.
"$EVPROF" record -e cycles,page-faults,context-switches -o "$TMP/pf.json.gz" \
	-- "$WL" 6000 5 2 100 >"$TMP/out" 2>"$TMP/err"
status=$?
[ "$status" -eq 5 ] && ok "exit status 5 passed through" ||
	fail "exit status $status: $(cat "$TMP/err")"
if ! ls /sys/bus/event_source/devices/ | grep -qE '^(cpu|cpu_core|armv)'; then
	grep -q "cycles cannot sample.*sampling cpu-clock" "$TMP/err" &&
		ok "fallback to cpu-clock said on stderr" ||
		fail "no fallback message: $(cat "$TMP/err")"
fi
grep -q "samples of" "$TMP/err" && ok "closing summary" || fail "no summary"
node "$TOOLS/fxquery.mjs" "$TMP/pf.json.gz" --through touch_pages >"$TMP/q"
cat "$TMP/q"
if ! ls /sys/bus/event_source/devices/ | grep -qE '^(cpu|cpu_core|armv)'; then
	grep -q "^meta cycles cannot sample" "$TMP/q" &&
		ok "fallback recorded in the profile meta" ||
		fail "fallback not in meta"
fi
for t in 0 1; do
	tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) faults=.*/\1/p" "$TMP/err")
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
	got=$(awk -v t="tid=$tid" '$1 == "thread" && $3 == t {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); print $i } }' "$TMP/q")
	thr=$(awk -v t="tid=$tid" '$1 == "through" && $3 == t {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); print $i } }' "$TMP/q")
	name=$(awk -v t="tid=$tid" '$1 == "thread" && $3 == t { print $2 }' "$TMP/q")
	[ "$name" = "faulter-$t" ] && ok "thread $tid named $name" ||
		fail "thread $tid named '$name'"
	if [ -n "$got" ] && within "$got" "$truth" 0.5; then
		ok "faulter-$t page-fault deltas $got within 0.5% of rusage $truth"
	else
		fail "faulter-$t page-fault deltas '$got' vs rusage '$truth'"
	fi
	if [ -n "$thr" ] && [ "$((thr * 2))" -gt "$got" ]; then
		ok "faulter-$t: $thr of $got faults on stacks through touch_pages"
	else
		fail "faulter-$t: only '$thr' of '$got' faults through touch_pages"
	fi
done
grep -qE '^thread faulter-0 .*context-switches=[0-9]+' "$TMP/q" &&
	ok "context-switch deltas present" || fail "no context-switch deltas"
check_profile "$TMP/pf.json.gz" faulter-0 faulter-1 touch_pages

# 2. Known CPU shares: the demo's main thread spends 2/3 in heavy(), 1/3
#    in light() (same loop, 2:1 iterations).
"$EVPROF" record -e cpu-clock -F 2000 -o "$TMP/demo.json.gz" -- "$DEMO" 1.5 \
	>/dev/null 2>"$TMP/err" || fail "demo record: $(cat "$TMP/err")"
node "$TOOLS/fxquery.mjs" "$TMP/demo.json.gz" --through heavy >"$TMP/qh"
node "$TOOLS/fxquery.mjs" "$TMP/demo.json.gz" --through light >"$TMP/ql"
main=$(awk '$1 == "thread" && $2 == "demo" { print $3 }' "$TMP/qh")
h=$(awk -v t="$main" '$1 == "through" && $3 == t { sub(/samples=/, "", $4); print $4 }' "$TMP/qh")
lt=$(awk -v t="$main" '$1 == "through" && $3 == t { sub(/samples=/, "", $4); print $4 }' "$TMP/ql")
if [ -n "$h" ] && [ -n "$lt" ] && [ $((h + lt)) -gt 200 ]; then
	share=$(awk -v h="$h" -v l="$lt" 'BEGIN { printf "%.1f", 100 * h / (h + l) }')
	awk -v s="$share" 'BEGIN { exit !(s > 61.7 && s < 71.7) }' &&
		ok "heavy() share $share% (expected 66.7%)" ||
		fail "heavy() share $share%, expected 66.7 +- 5"
else
	fail "too few samples in heavy/light: '$h' '$lt'"
fi
check_profile "$TMP/demo.json.gz" faulter heavy light

# 3. Folded output with --weight, from the same kind of run.
"$EVPROF" record -e cpu-clock,page-faults --weight page-faults \
	-o "$TMP/pf.folded" -- "$WL" 3000 0 1 >/dev/null 2>"$TMP/err" ||
	fail "folded record failed"
truth=$(sed -n 's/^thread faulter-0 tid=[0-9]* faults=//p' "$TMP/err")
got=$(awk '$1 ~ /^faulter-0;/ { s += $NF } END { print s + 0 }' "$TMP/pf.folded")
within "$got" "$truth" 0.5 && ok "folded page-fault weights $got ~ $truth" ||
	fail "folded page-fault weights '$got' vs '$truth'"
grep -q ';touch_pages' "$TMP/pf.folded" && ok "folded stacks name touch_pages" ||
	fail "touch_pages missing from folded stacks"

# 4. Hundreds of short-lived threads: no hang, named threads.
timeout 120 "$EVPROF" record -e cpu-clock,page-faults -o "$TMP/thr.json.gz" \
	-- "$FIXTURES/wl_threads" 300 >/dev/null 2>"$TMP/err"
status=$?
[ "$status" -eq 0 ] && ok "300 short threads recorded" ||
	fail "short threads: status $status $(tail -3 "$TMP/err")"
node "$TOOLS/fxquery.mjs" "$TMP/thr.json.gz" >"$TMP/q"
n=$(grep -c '^thread short-' "$TMP/q")
[ "$n" -ge 100 ] && ok "$n threads named short-N in the profile" ||
	fail "only $n named short threads"
check_profile "$TMP/thr.json.gz" short-

# 5. Ctrl-C mid-run still writes a valid profile.
"$EVPROF" record -e cpu-clock -o "$TMP/int.json.gz" -- "$DEMO" 20 \
	>/dev/null 2>"$TMP/err" &
rec=$!
sleep 1.5
kill -INT "$rec"
wait "$rec"
status=$?
[ "$status" -eq 130 ] && ok "Ctrl-C: the command's status 130" ||
	fail "Ctrl-C: status $status $(cat "$TMP/err")"
node "$TOOLS/fxquery.mjs" "$TMP/int.json.gz" >"$TMP/q" &&
	awk '$1 == "thread" { sub(/samples=/, "", $5); s += $5 } END { exit !(s > 100) }' "$TMP/q" &&
	ok "interrupted profile has samples" || fail "interrupted profile empty"
check_profile "$TMP/int.json.gz" heavy

# -c N: a sample every N events, also for a software sampler (with
# PERF_SAMPLE_PERIOD the kernel would record every single event).
"$EVPROF" record -c 1000 -e page-faults -o "$TMP/c.folded" -- "$WL" 20000 0 1 \
	>/dev/null 2>"$TMP/err" || fail "-c record failed: $(cat "$TMP/err")"
truth=$(sed -n 's/^process faults=//p' "$TMP/err")
n=$(sed -n 's/^evprof: \([0-9]*\) samples of page-faults.*/\1/p' "$TMP/err")
if [ -n "$n" ] && [ -n "$truth" ] && [ "$n" -ge $((truth / 1000 - 2)) ] &&
	[ "$n" -le $((truth / 1000 + 2)) ]; then
	ok "-c 1000: $n samples for $truth page faults"
else
	fail "-c 1000: '$n' samples for '$truth' page faults"
fi

# A program without debug information and no debug file anywhere: with no
# debuginfod server set (DEBUGINFOD_URLS), the search for one does not
# load libdebuginfod (with libcurl and some 30 more libraries); with one
# set it does, when the library is installed.
printf 'int main(void) { volatile long x = 0; for (long i = 0; i < 300000000; i++) x += i; return 0; }\n' \
	>"$TMP/nodbg.c"
if cc -O1 -o "$TMP/nodbg" "$TMP/nodbg.c"; then
	(unset DEBUGINFOD_URLS; LD_DEBUG=files "$EVPROF" record -o "$TMP/nd.folded" \
		-- "$TMP/nodbg" >/dev/null 2>"$TMP/ld")
	if ! grep -qE '(^|;)main( |;)' "$TMP/nd.folded"; then
		fail "no-debug program: no main in $(head -3 "$TMP/nd.folded")"
	elif grep -q "file=libdebuginfod" "$TMP/ld"; then
		fail "no-debug program: libdebuginfod loaded without a server set"
	else
		ok "no-debug program symbolized, libdebuginfod not loaded"
	fi
	if /sbin/ldconfig -p | grep -q "libdebuginfod.so.1 "; then
		DEBUGINFOD_URLS=http://127.0.0.1:1 DEBUGINFOD_TIMEOUT=1 \
			DEBUGINFOD_CACHE_PATH="$TMP/dcache" LD_DEBUG=files \
			"$EVPROF" record -o "$TMP/nd2.folded" -- "$TMP/nodbg" \
			>/dev/null 2>"$TMP/ld"
		grep -q "file=libdebuginfod" "$TMP/ld" &&
			ok "with a server set, libdebuginfod is asked" ||
			fail "DEBUGINFOD_URLS set: libdebuginfod not loaded"
	fi
else
	skip "no-debug program: no cc"
fi

# A recording of no sample says the period it was short of, as asked:
# true runs for about 1 ms, below each of these periods.
for c in "-F 2|500 ms at 2 Hz" "-c 400000000|400 ms" \
	"-e cpu-clock/period=300000000/|300 ms" \
	"-e page-faults/period=1000000/|1000000 page-faults"; do
	args=${c%|*}
	want=${c#*|}
	# shellcheck disable=SC2086 # the options, split
	"$EVPROF" record $args -o "$TMP/none.folded" -- true >/dev/null 2>"$TMP/err" ||
		{ fail "$args: record failed: $(tail -3 "$TMP/err")"; continue; }
	grep -q "one sampling period of it ($want);" "$TMP/err" &&
		ok "$args: no sample, short of $want" ||
		fail "$args: wanted '$want' in: $(grep "no sample" "$TMP/err")"
done

finish
