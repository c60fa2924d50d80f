#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Bad input never costs a recording: outputs that cannot be written are
# refused before the command runs; a full disk at write time saves the
# profile elsewhere, and that file loads; -F above the kernel's maximum is
# clamped with a note; stat as an unprivileged user counts user space.
. "$(dirname "$0")/lib.sh"

WL="$FIXTURES/wl_faults"

# 1. A missing directory and an unwritable file: refused, command not run
# (--format: /proc/version's name says no format).
for out in "$TMP/missing/dir/p.json.gz" /proc/version; do
	rm -f "$TMP/ran"
	if "$EVPROF" record -e cpu-clock --format firefox -o "$out" -- touch "$TMP/ran" \
		>/dev/null 2>"$TMP/err"; then
		fail "-o $out: exit status 0"
	elif [ -e "$TMP/ran" ]; then
		fail "-o $out: the command ran anyway"
	elif ! grep -q "cannot write $out" "$TMP/err"; then
		fail "-o $out: message '$(cat "$TMP/err")'"
	else
		ok "-o $out refused before the command: $(head -1 "$TMP/err")"
	fi
done

# 2. A full disk at write time: a tmpfs filled up while the command runs.
mkdir -p "$TMP/tiny" "$TMP/elsewhere"
if mount -t tmpfs -o size=64k tmpfs "$TMP/tiny" 2>/dev/null; then
	TMPDIR="$TMP/elsewhere" "$EVPROF" record -e cpu-clock,page-faults \
		-o "$TMP/tiny/p.json.gz" -- sh -c "dd if=/dev/zero \
		of='$TMP/tiny/fill' bs=4k 2>/dev/null; exec '$WL' 3000 0 1" \
		>/dev/null 2>"$TMP/err"
	status=$?
	saved=$(sed -n 's/.*saved the profile as //p' "$TMP/err")
	if [ "$status" -ne 0 ] || [ -z "$saved" ]; then
		fail "ENOSPC: status $status, stderr: $(cat "$TMP/err")"
	elif [ "$(dirname "$saved")" != "$TMP/elsewhere" ]; then
		fail "ENOSPC: saved as $saved, not under \$TMPDIR"
	elif ! "$EVPROF" report "$saved" >"$TMP/rep" 2>&1 ||
		! grep -q "page-faults" "$TMP/rep"; then
		fail "ENOSPC: $saved does not load: $(cat "$TMP/rep")"
	elif ls "$TMP/tiny"/*.tmp >/dev/null 2>&1; then
		fail "ENOSPC: a temporary file was left on the full disk"
	else
		ok "ENOSPC: saved as $saved, loads: $(grep '^total' "$TMP/rep")"
	fi
	umount "$TMP/tiny"
else
	skip "ENOSPC: cannot mount a tmpfs here (not root?)"
fi

# 3. -F above half of kernel.perf_event_max_sample_rate: clamped there (at
#    the maximum the kernel throttles now and then), and said.
max=$(($(cat /proc/sys/kernel/perf_event_max_sample_rate) / 2))
"$EVPROF" record -e cpu-clock -F $((max * 10)) -o "$TMP/f.folded" -- \
	"$WL" 100 0 1 >/dev/null 2>"$TMP/err" ||
	fail "-F $((max * 10)): $(cat "$TMP/err")"
if grep -q "sampling at $max Hz" "$TMP/err" && [ -s "$TMP/f.folded" ]; then
	ok "-F $((max * 10)) clamped to $max"
else
	fail "-F $((max * 10)) not clamped to $max: $(cat "$TMP/err")"
fi

# 4. stat as an unprivileged user: user-space counting where the kernel
#    allows nothing more (perf_event_paranoid >= 2), and it says so.
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	# Both binaries where nobody can reach them: the build tree may sit
	# under a 0700 home.
	chmod 755 "$TMP"
	cp "$EVPROF" "$WL" "$TMP/"
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$TMP/evprof" stat -e task-clock,page-faults -- \
		"$TMP/$(basename "$WL")" 2000 0 1 \
		>"$TMP/out" 2>"$TMP/err"
	status=$?
	paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
	faults=$(awk '$2 ~ /^page-faults/ { print $1 }' "$TMP/out")
	if [ "$status" -ne 0 ] || [ -z "$faults" ]; then
		fail "stat as nobody: status $status: $(cat "$TMP/err" "$TMP/out")"
	elif [ "$paranoid" -ge 2 ] &&
		! grep -q "counting user space only" "$TMP/err"; then
		fail "stat as nobody at paranoid $paranoid: no :u note"
	elif [ "$faults" -lt 2000 ]; then
		fail "stat as nobody: $faults page faults for 2000 pages touched"
	else
		ok "stat as nobody (paranoid $paranoid): $faults page faults"
	fi
else
	skip "stat as nobody: not root or no setpriv: cannot become an unprivileged user"
fi
finish
