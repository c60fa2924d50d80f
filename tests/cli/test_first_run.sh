#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A first run on a host where tracefs is not mounted: evprof mounts it
# itself for the exit member (as perf does) and must say nothing untrue on
# the way, no "unknown event 'sched:sched_process_exit' (tracefs is not
# mounted ...)" for a tracefs it then mounts. Run in a private mount
# namespace (unshare -m) with every tracefs unmounted there, so that the
# host's mounts stay as they are. The exit member must work: task mode
# keeps the page faults of wl_churn's tree of tasks shorter than a sample
# period (within 0.5% of its rusage), which it cannot without task exits.
. "$(dirname "$0")/lib.sh"

# The part run inside the namespace: prints "notmounted" once no tracefs
# is left there, then records; evprof's stderr goes to $TMP/err.
inner='
for d in /sys/kernel/debug/tracing /sys/kernel/tracing; do
	while mountpoint -q "$d"; do umount "$d" || exit 3; done
done
if [ -e /sys/kernel/tracing/events ] || [ -e /sys/kernel/debug/tracing/events ]; then
	exit 4
fi
echo notmounted
"$EVPROF" record --mode task -e cpu-clock,page-faults -o "$TMP/c.pb.gz" \
	-- "$FIXTURES/wl_churn" 300 100 50 >/dev/null 2>"$TMP/err" || exit 5
[ -e /sys/kernel/tracing/events ] && echo mounted
exit 0'

if [ "$(id -u)" -ne 0 ]; then
	skip "mounting tracefs in a mount namespace needs root"
elif ! unshare -m true 2>/dev/null; then
	skip "unshare -m is not allowed here"
elif ! command -v mountpoint >/dev/null; then
	skip "no mountpoint(1) to find the tracefs mounts"
else
	rc=0
	said=$(EVPROF="$EVPROF" FIXTURES="$FIXTURES" TMP="$TMP" \
		unshare -m bash -c "$inner") || rc=$?
	case $rc in
	0) ;;
	3 | 4) skip "tracefs cannot be unmounted in a mount namespace here" ;;
	*) fail "record failed (status $rc): $(tail -3 "$TMP/err" 2>/dev/null)" ;;
	esac
	if [ "$rc" -eq 0 ]; then
		if grep -q "unknown event\|tracefs is not mounted" "$TMP/err"; then
			fail "a first run said: $(grep "unknown event\|tracefs" "$TMP/err")"
		else
			ok "nothing said of tracefs on a first run"
		fi
		if [ "$said" = "notmounted"$'\n'"mounted" ] &&
			! grep -q "task exits cannot be sampled" "$TMP/err"; then
			ok "tracefs mounted by the recording, the exit member open"
		else
			fail "tracefs not mounted or no exit member: '$said', $(grep "task exits" "$TMP/err")"
		fi
		truth=$(sed -n 's/^tree faults=//p' "$TMP/err")
		got=$("$EVPROF" report "$TMP/c.pb.gz" |
			sed -n 's/^total:.* page-faults=\([0-9]*\).*/\1/p')
		if [ -n "$truth" ] && [ -n "$got" ] && within "$got" "$truth" 0.5; then
			ok "task mode: $got page faults, rusage of the tree $truth"
		else
			fail "task mode: '$got' page faults, rusage of the tree '$truth'"
		fi
	fi
fi
finish
