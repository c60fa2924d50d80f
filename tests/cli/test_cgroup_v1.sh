#!/usr/bin/env bash
# --cgroup where the perf_event controller is on a cgroup v1 hierarchy, as
# on hosts that still mount one: test_cgroup.sh run in a mount namespace of
# its own where this test mounts a v1 hierarchy with only perf_event. The
# controller leaves cgroup v2 for the whole host while that hierarchy lives
# (a controller is on one hierarchy at a time), so this test runs alone
# (RUN_SERIAL) and unmounts it before the namespace goes, once its cgroups
# are freed: a hierarchy that still holds one lingers unmounted, and with it
# the controller.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: mounting a cgroup hierarchy needs root"
	exit 77
}
# perf_event's hierarchy id: 0 while it is on cgroup v2 (or unmounted).
hier() { awk '$1 == "perf_event" { print $2 }' /proc/cgroups; }
case $(hier) in
"")
	echo "SKIP: this kernel has no perf_event cgroup controller"
	exit 77
	;;
0) ;;
*)
	echo "SKIP: this host has perf_event on a cgroup v1 hierarchy already: test_cgroup.sh runs there"
	exit 77
	;;
esac
mkdir "$TMP/v1"
# The hierarchy outlives its last unmount while it holds a cgroup, a
# removed one too until the kernel has freed it: only the root may be left.
unshare --mount --propagation private bash -c '
	mount -t cgroup -o perf_event evprof-v1 "$1" 2>"$1.err" || exit 99
	bash "$2"
	rc=$?
	for _ in $(seq 100); do
		awk "\$1 == \"perf_event\" { exit \$3 != 1 }" /proc/cgroups && break
		sleep 0.1
	done
	umount "$1"
	exit $rc' sh "$TMP/v1" "$SRCDIR/tests/cli/test_cgroup.sh"
rc=$?
if [ $rc -eq 99 ]; then
	echo "SKIP: a cgroup v1 perf_event hierarchy cannot be mounted here: $(cat "$TMP/v1.err")"
	exit 77
fi
# The controller back on cgroup v2 for the tests after this one.
for _ in $(seq 100); do
	[ "$(hier)" = 0 ] && break
	sleep 0.1
done
if [ "$(hier)" != 0 ]; then
	echo "FAIL: perf_event stays on v1 hierarchy $(hier) after the test" >&2
	exit 1
fi
exit $rc
