#!/usr/bin/env bash
# -g dwarf against a known call path: wl_nofp, built without frame
# pointers, spends its time in deep_hot, always called as main -> deep_a ->
# deep_b -> deep_hot. DWARF unwinding must show that whole path, the kernel
# frame-pointer walk must not, and a stack copy too small for the path must
# give "[truncated:stack-copy]" stacks and a count in the summary.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_nofp
TOOLS=$SRCDIR/tests/tools

# record MODE FILE: folded stacks of a 1.5 s run at 1000 Hz of cpu-clock.
record() {
	"$EVPROF" record -e cpu-clock -F 1000 -g "$1" -o "$2" --format folded \
		-- "$WL" 1.5 >/dev/null 2>"$TMP/err.$1" ||
		fail "record -g $1: $(cat "$TMP/err.$1")"
}

# share FILE PATTERN: "in_hot matching" sample counts among deep_hot's.
share() {
	awk -v pat="$2" '/;deep_hot(;|$| )/ { n = $NF; hot += n
		if (index($0, pat)) m += n } END { print hot + 0, m + 0 }' "$1"
}

record dwarf "$TMP/dwarf.folded"
read -r hot full <<<"$(share "$TMP/dwarf.folded" ";main;deep_a;deep_b;deep_hot")"
echo "dwarf: $full of $hot deep_hot samples show main;deep_a;deep_b;deep_hot"
if [ "$hot" -ge 300 ] && [ $((full * 100)) -ge $((hot * 90)) ]; then
	ok "dwarf: $full/$hot deep_hot samples have the full chain (>= 90%)"
else
	fail "dwarf: $full/$hot deep_hot samples have the full chain"
fi
grep -q "call graph dwarf: [0-9]* stacks unwound, 0 truncated" \
	"$TMP/err.dwarf" && ok "summary: nothing truncated at 8192 bytes" ||
	fail "summary: $(cat "$TMP/err.dwarf")"

record fp "$TMP/fp.folded"
read -r hot full <<<"$(share "$TMP/fp.folded" ";main;deep_a;deep_b;deep_hot")"
echo "fp: $full of $hot deep_hot samples show main;deep_a;deep_b;deep_hot"
if [ "$hot" -ge 300 ] && [ $((full * 100)) -lt $((hot * 50)) ]; then
	ok "fp: only $full/$hot deep_hot samples have the full chain"
else
	fail "fp: $full/$hot deep_hot samples have the full chain (expected few)"
fi

# 64 bytes hold deep_hot's, deep_b's and deep_a's frames, not main's.
record dwarf,64 "$TMP/small.folded"
read -r hot cut <<<"$(share "$TMP/small.folded" "[truncated:stack-copy];main;deep_a;deep_b;deep_hot")"
if [ "$hot" -ge 300 ] && [ $((cut * 100)) -ge $((hot * 90)) ]; then
	ok "dwarf,64: $cut/$hot deep_hot stacks rooted at [truncated:stack-copy] after main"
else
	fail "dwarf,64: $cut/$hot deep_hot stacks rooted at [truncated:stack-copy]"
fi
trunc=$(sed -n 's/.*stacks unwound, \([0-9]*\) truncated at 64 bytes.*/\1/p' \
	"$TMP/err.dwarf,64")
[ -n "$trunc" ] && [ "$trunc" -ge "$cut" ] &&
	ok "summary counts $trunc truncated stacks" ||
	fail "summary: $(cat "$TMP/err.dwarf,64")"

# The Firefox profile says which unwinding was used, and loads.
"$EVPROF" record -e cpu-clock -g dwarf -o "$TMP/d.json.gz" -- "$WL" 0.3 \
	>/dev/null 2>"$TMP/err" || fail "record firefox: $(cat "$TMP/err")"
node "$TOOLS/fxquery.mjs" "$TMP/d.json.gz" >"$TMP/q"
grep -q "^meta call graph: dwarf" "$TMP/q" && ok "profile meta names dwarf" ||
	fail "no call-graph note: $(cat "$TMP/q")"
bash "$TOOLS/fxload.sh" "$TMP/d.json.gz" >"$TMP/load" 2>&1 &&
	grep -q deep_hot "$TMP/load" && ok "Firefox loader shows deep_hot" ||
	fail "loader: $(tail -5 "$TMP/load")"

"$EVPROF" record -g dwarf,70000 -- true 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "SIZE from 8 to 65528" "$TMP/err" &&
	ok "oversized stack copy refused" || fail "dwarf,70000: $(cat "$TMP/err")"
finish
