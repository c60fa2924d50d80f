#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Leaves without a frame under -g fp (the default), ring engine: wl_libc's
# functions call libc directly (nanosleep, read of a pipe, the futex
# syscall; memcpy and memset), whose code keeps no frame pointer, so the
# kernel's frame-pointer walk from inside libc skips them.
# - off-CPU, task and cpu mode: each function's waits (voluntary +
#   preempted) within 2% of what it measured itself; the closing line and
#   the profile's notes give the shares that gained a frame and that were
#   not recovered. With -g fp,noleaf (the walk alone) they are not there.
# - on-CPU in libc: the frame above the user leaf is the one the DWARF
#   unwinder (-g dwarf) finds above that leaf in >= 99% of the samples.
# - the BPF engine, which cannot, says so.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_libc
TOOLS=$SRCDIR/tests/tools

# ms of column $2 under function $3 (any frame but the root) in folded $1
sum_under() {
	awk -v f="$2" '{ n = $NF; $NF = ""; if (index($0, ";" f ";")) s += n }
		END { printf "%.3f\n", s / 1e6 }' "$1"
}

# off_cpu PREFIX FUNCTION: voluntary + preempted ms under FUNCTION in
# PREFIX.off-cpu.folded and PREFIX.preempted.folded ("none" without the first)
off_cpu() {
	local b=0
	[ -s "$1.off-cpu.folded" ] || { echo none; return; }
	# A short run may have had no preemption at all: an empty file.
	[ ! -s "$1.preempted.folded" ] || b=$(sum_under "$1.preempted.folded" "$2")
	awk -v a="$(sum_under "$1.off-cpu.folded" "$2")" -v b="$b" \
		'BEGIN { printf "%.3f", a + b }'
}

for mode in task cpu; do
	out=$TMP/$mode
	"$EVPROF" record --off-cpu --mode "$mode" -e cpu-clock \
		-o "$out.pb.gz" -o "$out.json.gz" -- "$WL" wait 50 \
		>/dev/null 2>"$out.err" ||
		{ fail "$mode: record failed: $(tail -3 "$out.err")"; continue; }
	for w in off-cpu preempted; do
		"$EVPROF" report "$out.pb.gz" -o "$out.$w.folded" \
			--weight "$w" >/dev/null 2>&1 ||
			fail "$mode: no folded --weight $w"
	done
	for f in nap pipe_wait futex_wait; do
		truth=$(awk -v f="$f" '$1 == "wait" && $2 == f { print $3 / 1e6 }' "$out.err")
		got=$(off_cpu "$out" "$f")
		if [ -n "$truth" ] && within "$got" "$truth" 2; then
			ok "$mode: $f off-CPU $got ms, truth $truth ms"
		else
			fail "$mode: $f off-CPU '$got' ms, truth '$truth' ms"
		fi
	done
	line=$(grep "call graph fp, leaves:" "$out.err")
	if [[ $line =~ ([0-9]+)\ stacks\ checked,\ ([0-9.]+)%\ gained.*\ ([0-9.]+)%\ leaf\ not ]] &&
		[ "${BASH_REMATCH[1]}" -gt 0 ]; then
		ok "$mode: closing line: ${line#evprof: }"
	else
		fail "$mode: no leaf line in the closing lines: $(tail -3 "$out.err")"
	fi
	node "$TOOLS/fxquery.mjs" "$out.json.gz" >"$out.q"
	grep -q "^meta call graph: leaves mended from 512-byte stack copies: of [1-9][0-9]* stacks, [0-9]* gained" "$out.q" &&
		ok "$mode: the profile's notes give the leaf shares" ||
		fail "$mode: no leaf note: $(grep '^meta' "$out.q")"
done

# The walk alone: every wait lands on the caller of these functions.
out=$TMP/noleaf
"$EVPROF" record --off-cpu -e cpu-clock -g fp,noleaf -o "$out.pb.gz" \
	-- "$WL" wait 15 >/dev/null 2>"$out.err" ||
	fail "fp,noleaf: record failed: $(tail -3 "$out.err")"
for w in off-cpu preempted; do
	"$EVPROF" report "$out.pb.gz" -o "$out.$w.folded" --weight "$w" \
		>/dev/null 2>&1 || fail "fp,noleaf: no folded --weight $w"
done
truth=$(awk '$1 == "wait" && $2 == "nap" { print $3 / 1e6 }' "$out.err")
got=$(off_cpu "$out" nap)
if [ -n "$truth" ] && [ "$got" != none ] &&
	awk -v g="$got" -v t="$truth" 'BEGIN { exit !(g < t / 10) }' &&
	! grep -q "leaves:" "$out.err"; then
	ok "fp,noleaf: nap shows $got of its $truth ms: the walk skips it"
else
	fail "fp,noleaf: nap shows '$got' of '$truth' ms, or a leaf line"
fi

# On-CPU inside libc. Per sample: the user leaf (the last frame not in the
# kernel) when it is not one of wl_libc's own functions, and its parent.
leaves() {
	awk '{ n = $NF; k = split($1, f, ";"); while (k > 0 && f[k] ~ /_\[k\]$/) k--
		if (k < 2 || f[k] ~ /^(main|copy_main|copy_block|fill_block|ns)$/)
			next; print f[k], f[k - 1], n }' "$1"
}
for g in fp dwarf; do
	"$EVPROF" record -e cpu-clock -F 1000 -g "$g" -o "$TMP/c.$g" \
		--format folded -- "$WL" copy 1.5 >/dev/null 2>"$TMP/c.$g.err" ||
		fail "copy -g $g: record failed: $(tail -3 "$TMP/c.$g.err")"
	leaves "$TMP/c.$g" >"$TMP/l.$g"
done
# Each libc leaf's parent as DWARF unwinds it (the most samples), then the
# share of -g fp's libc samples with that parent above their leaf.
read -r agree total <<<"$(awk 'NR == FNR { c[$1 " " $2] += $3
		if (c[$1 " " $2] > best[$1]) { best[$1] = c[$1 " " $2]; p[$1] = $2 }
		next } { t += $3; if (p[$1] == $2) a += $3 }
		END { print a + 0, t + 0 }' "$TMP/l.dwarf" "$TMP/l.fp")"
top=$(sort -k3,3nr "$TMP/l.dwarf" | head -1)
if [ "$total" -ge 500 ] && [ $((agree * 100)) -ge $((total * 99)) ]; then
	ok "on-CPU in libc: $agree of $total samples have DWARF's frame above the leaf (first: $top)"
else
	fail "on-CPU in libc: $agree of $total samples agree with DWARF's frame above the leaf"
fi
# DWARF's own answer is the workload's: memcpy under copy_block.
grep -q "memcpy.* copy_block " "$TMP/l.dwarf" ||
	fail "-g dwarf: no memcpy leaf under copy_block: $(head -3 "$TMP/l.dwarf")"

if bpf_engine; then
	"$EVPROF" record --engine bpf -e cpu-clock -o "$TMP/b.folded" \
		-- "$WL" copy 0.2 >/dev/null 2>"$TMP/b.err"
	grep -q "a leaf without a frame .* loses its caller" "$TMP/b.err" &&
		ok "bpf engine: says it keeps the walk's leaves" ||
		fail "bpf engine: no word on leaves: $(tail -3 "$TMP/b.err")"
fi
finish
