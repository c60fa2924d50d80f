#!/usr/bin/env bash
# evprof info's PMU part against sysfs: one block per core PMU directory
# (cpu, cpu_core, cpu_atom, armv*) with its type file's number, "none"
# where there is none; EVPROF_MAX_GROUP_EVENTS named when it decides.
. "$(dirname "$0")/lib.sh"
SYS=/sys/bus/event_source/devices

"$EVPROF" info >"$TMP/out" 2>"$TMP/err" || fail "info failed: $(cat "$TMP/err")"
cat "$TMP/out"
core=()
for d in "$SYS"/cpu "$SYS"/cpu_core "$SYS"/cpu_atom "$SYS"/armv*; do
	[ -r "$d/type" ] && core+=("$(basename "$d")")
done
if [ "${#core[@]}" -eq 0 ]; then
	grep -q '^hardware PMU: *none: ' "$TMP/out" &&
		ok "no core PMU in sysfs: info says none" ||
		fail "no core PMU in sysfs, info does not say none"
	grep -q '^  [a-z].* (type [0-9]*):$' "$TMP/out" &&
		fail "info invents a core PMU"
else
	grep -q "^hardware PMU: *${#core[@]} core PMU" "$TMP/out" &&
		ok "${#core[@]} core PMUs" || fail "not ${#core[@]} core PMUs"
	for p in "${core[@]}"; do
		grep -q "^  $p (type $(cat "$SYS/$p/type")):$" "$TMP/out" &&
			ok "$p listed with its type" || fail "$p not listed"
	done
fi
grep -q '^group fit: ' "$TMP/out" && ok "says what decides group fit" ||
	fail "no group fit line"

# The debug cache line: the directory asked for, its .debug files and bytes
# (two made here: 1.5 and 2.5 MB; other names are not counted).
mkdir "$TMP/dc"
head -c 1500000 /dev/zero >"$TMP/dc/aa.debug"
head -c 2500000 /dev/zero >"$TMP/dc/bb.debug"
head -c 999999 /dev/zero >"$TMP/dc/other"
EVPROF_DEBUG_CACHE="$TMP/dc" "$EVPROF" info >"$TMP/out" 2>&1
grep -qx "debug cache: *$TMP/dc (2 files, 4.0 MB)" "$TMP/out" &&
	ok "debug cache: its directory and 2 files" ||
	fail "debug cache line: $(grep 'debug cache' "$TMP/out")"
# With the copy of the kernel's symbols (kallsyms-BOOT-MODULES), apart.
head -c 700000 /dev/zero >"$TMP/dc/kallsyms-x-0"
EVPROF_DEBUG_CACHE="$TMP/dc" "$EVPROF" info >"$TMP/out" 2>&1
grep -qx "debug cache: *$TMP/dc (2 files, 4.0 MB; kernel symbol tables, 0.7 MB)" "$TMP/out" &&
	ok "debug cache: the kernel's symbols apart" ||
	fail "debug cache line with kallsyms: $(grep 'debug cache' "$TMP/out")"
EVPROF_DEBUG_CACHE= "$EVPROF" info >"$TMP/out" 2>&1
grep -q '^debug cache: *off' "$TMP/out" && ok "debug cache off said" ||
	fail "debug cache off not said"

EVPROF_MAX_GROUP_EVENTS=3 "$EVPROF" info >"$TMP/out" 2>&1
grep -q '^group fit: *EVPROF_MAX_GROUP_EVENTS=3 decides' "$TMP/out" &&
	ok "the override is named" || fail "override not named"
finish
