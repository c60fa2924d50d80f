#!/usr/bin/env bash
# How stacks end, against stacks whose end wl_ends knows: whole when they
# reach _start (DWARF), cut by the kernel's depth limit (a recursion deeper
# than kernel.perf_event_max_stack, read from this host), ended by the
# frame-pointer walk in libc's start code (built without frame pointers),
# stopped at code without CFI, or at the end of a stack copy too small, and
# the copy size the closing line asks for then holds the whole stack.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_ends
MAX=$(cat /proc/sys/kernel/perf_event_max_stack)

# record NAME CALLGRAPH ARGS...: folded stacks of cpu-clock at 1000 Hz.
record() {
	local name=$1 g=$2
	shift 2
	"$EVPROF" record -e cpu-clock -F 1000 -g "$g" -o "$TMP/$name.folded" \
		-- "$WL" "$@" >/dev/null 2>"$TMP/$name.err" ||
		fail "record $name: $(tail -3 "$TMP/$name.err")"
}

# roots FILE: "weight first-frame" per root, the process name skipped.
roots() {
	awk '{ w = $NF; $NF = ""; split($0, f, ";"); r[f[2]] += w }
		END { for (k in r) print r[k], k }' "$1" | sort -rn
}

# share FILE ROOT: "weight all" of the stacks whose first frame is ROOT.
share() {
	roots "$1" | awk -v r="$2" '{ all += $1; if ($2 == r) n += $1 }
		END { print n + 0, all + 0 }'
}

# mostly N ALL: N is at least 90% of ALL, and ALL has 50 samples.
mostly() {
	[ "$2" -ge 50 ] && [ $(($1 * 100)) -ge $(($2 * 90)) ]
}

# Deeper than the kernel keeps: its chains stop at the limit.
record deep fp deep $((MAX + 40)) 1
read -r n all <<<"$(share "$TMP/deep.folded" "[truncated:depth-limit]")"
mostly "$n" "$all" &&
	ok "depth $((MAX + 40)) > perf_event_max_stack $MAX: $n/$all stacks end at [truncated:depth-limit]" ||
	fail "depth limit: $n/$all at [truncated:depth-limit]: $(roots "$TMP/deep.folded" | head -3)"
grep -q "end before their thread's first frame;.* [0-9.]*% at the depth limit" \
	"$TMP/deep.err" && ok "the closing line names the depth limit" ||
	fail "closing line: $(grep 'end before' "$TMP/deep.err")"

# A shallow one under frame pointers: the walk stops in libc's start code
# (no frame pointers there), short of _start; no depth-limit frame.
record shallow fp deep 10 1
read -r n all <<<"$(share "$TMP/shallow.folded" "[truncated:depth-limit]")"
[ "$all" -ge 50 ] && [ "$n" -eq 0 ] && ok "depth 10: no depth-limit frame" ||
	fail "depth 10: $n/$all at the depth limit"
pct=$(sed -n "s/.*(\([0-9.]*\)%) end before their thread's first frame; \([0-9.]*\)% where the frame-pointer walk ended.*/\2/p" \
	"$TMP/shallow.err")
[ -n "$pct" ] && awk -v p="$pct" 'BEGIN { exit !(p >= 90) }' &&
	ok "fp: $pct% said to end where the frame-pointer walk ended, with the -g dwarf hint" ||
	fail "fp closing line: $(grep 'end before' "$TMP/shallow.err")"
grep -q "\-g dwarf unwinds it" "$TMP/shallow.err" || fail "no -g dwarf hint"

# DWARF unwinds the same up to _start, whose CFI ends the stack: whole.
record whole dwarf deep 10 1
read -r n all <<<"$(share "$TMP/whole.folded" "_start")"
mostly "$n" "$all" && ok "dwarf: $n/$all stacks reach _start" ||
	fail "dwarf: $n/$all reach _start: $(roots "$TMP/whole.folded" | head -3)"
if grep -q "end before their thread's first frame" "$TMP/whole.err"; then
	# A sample in the start code or the exit path may end elsewhere.
	pct=$(sed -n "s/.*(\([0-9.]*\)%) end before.*/\1/p" "$TMP/whole.err")
	awk -v p="$pct" 'BEGIN { exit !(p < 5) }' &&
		ok "dwarf: $pct% said to end short" ||
		fail "dwarf: $(grep 'end before' "$TMP/whole.err")"
else
	ok "dwarf: no stack said to end short"
fi

# A stack copy too small: its frame, and the size the closing line asks
# for (from the stack's own mapping) holds the whole stack.
record small dwarf,256 deep 100 1
read -r n all <<<"$(share "$TMP/small.folded" "[truncated:stack-copy]")"
mostly "$n" "$all" && ok "dwarf,256: $n/$all stacks end at [truncated:stack-copy]" ||
	fail "dwarf,256: $n/$all at [truncated:stack-copy]"
size=$(sed -n 's/.*at the end of the 256-byte stack copy (the deepest needed [0-9]* bytes: -g dwarf,\([0-9]*\)).*/\1/p' \
	"$TMP/small.err")
if [ -n "$size" ]; then
	ok "the closing line asks for -g dwarf,$size"
	record big "dwarf,$size" deep 100 1
	read -r n all <<<"$(share "$TMP/big.folded" "_start")"
	mostly "$n" "$all" && ok "dwarf,$size: $n/$all stacks reach _start" ||
		fail "dwarf,$size: $n/$all reach _start: $(roots "$TMP/big.folded" | head -3)"
else
	fail "no copy size asked for: $(grep 'end before' "$TMP/small.err")"
fi

# Code without CFI stops DWARF unwinding there (x86-64: the fixture's
# assembly).
if [ "$(uname -m)" = x86_64 ]; then
	record nocfi dwarf nocfi 1
	read -r n all <<<"$(awk '{ w = $NF; all += w
		if (index($0, ";[truncated:no-cfi];spin_nocfi ")) n += w }
		END { print n + 0, all + 0 }' "$TMP/nocfi.folded")"
	mostly "$n" "$all" && ok "nocfi: $n/$all stacks end at [truncated:no-cfi] above spin_nocfi" ||
		fail "nocfi: $n/$all: $(roots "$TMP/nocfi.folded" | head -3)"
	grep -q "% at code without CFI" "$TMP/nocfi.err" &&
		ok "the closing line names code without CFI" ||
		fail "nocfi closing line: $(grep 'end before' "$TMP/nocfi.err")"
else
	skip "the no-CFI fixture is x86-64 assembly"
fi

# The profile's notes say the same.
"$EVPROF" record -e cpu-clock -o "$TMP/d.json.gz" -- "$WL" deep $((MAX + 40)) 0.3 \
	>/dev/null 2>&1 || fail "record json"
zcat "$TMP/d.json.gz" | grep -q "stacks: [0-9]* of [0-9]* ([0-9.]*%) end before their thread's first frame:.* depth limit" &&
	ok "the profile's notes give the depth limit" ||
	fail "no stack-end note in the profile"
finish
