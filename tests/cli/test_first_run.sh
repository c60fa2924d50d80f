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
# Then a first run without privileges (below).
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
# A first run without privileges (user nobody): one line first says why
# the fallbacks that follow happen (when kernel.perf_event_paranoid keeps
# an unprivileged user out of the kernel, as here it is read), nothing of
# tracefs' files, a recording of no sample says why, and context switches
# counted in user space are said to count nothing.
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo 2)
if [ "$(id -u)" -ne 0 ]; then
	skip "dropping privileges to user nobody needs root"
elif ! command -v setpriv >/dev/null; then
	skip "no setpriv(1) to drop privileges"
else
	# The binary where nobody may run it (the clone may be in a 0700 home).
	pub=$(mktemp -d /tmp/evprof-pub.XXXXXX)
	chmod 777 "$pub"
	cp "$EVPROF" "$pub/evprof"
	nobody() {
		(cd "$pub" && setpriv --reuid=65534 --regid=65534 --clear-groups \
			--inh-caps=-all "$@")
	}
	nobody ./evprof record -e cpu-clock,context-switches -o "$pub/u.pb.gz" \
		-- true >/dev/null 2>"$TMP/u.err"
	rc=$?
	head -1 "$TMP/u.err" >"$TMP/u.first"
	if [ "$paranoid" -ge 2 ]; then
		grep -q "^evprof: without privileges here (kernel.perf_event_paranoid=$paranoid, no CAP_PERFMON)" "$TMP/u.first" &&
			ok "unprivileged: first says why: $(cut -c1-90 "$TMP/u.first")..." ||
			fail "unprivileged: the first line is: $(cat "$TMP/u.first")"
		grep -q "context switches and CPU migrations happen in the kernel: they count 0 here" "$TMP/u.err" &&
			ok "unprivileged: context-switches said to count 0 in user space" ||
			fail "unprivileged: nothing said of context-switches counting 0: $(cat "$TMP/u.err")"
	else
		! grep -q "without privileges" "$TMP/u.err" &&
			ok "unprivileged at perf_event_paranoid=$paranoid: no privilege line" ||
			fail "unprivileged at perf_event_paranoid=$paranoid: $(cat "$TMP/u.first")"
	fi
	[ $rc = 0 ] && ! grep -q "cannot read tracefs" "$TMP/u.err" &&
		ok "unprivileged: recorded (status 0), nothing said of tracefs' files" ||
		fail "unprivileged: status $rc: $(cat "$TMP/u.err")"
	if grep -q "^evprof: 0 samples of" "$TMP/u.err"; then
		grep -q "^evprof: no sample of cpu-clock: every thread ran less than one sampling period" "$TMP/u.err" &&
			ok "unprivileged: 0 samples, and why" ||
			fail "unprivileged: 0 samples unexplained: $(cat "$TMP/u.err")"
	elif grep -q "^evprof: [1-9][0-9]* samples of cpu-clock" "$TMP/u.err"; then
		ok "unprivileged: true was sampled: $(grep -o '[0-9]* samples of cpu-clock' "$TMP/u.err")"
	else
		fail "unprivileged: no closing line: $(cat "$TMP/u.err")"
	fi
	rm -rf "$pub"
fi
finish
