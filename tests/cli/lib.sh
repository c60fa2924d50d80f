# Shared helpers for CLI tests (sourced). EVPROF, FIXTURES, SRCDIR come
# from CTest.
set -u
: "${EVPROF:?}" "${FIXTURES:?}" "${SRCDIR:?}"
TMP=$(mktemp -d /tmp/evprof-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0
skips=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

ok() {
	echo "ok: $*"
}

# skip REASON: a check that cannot run here. The script goes on with its
# other checks; finish then exits 77 (CTest: Skipped) unless one failed.
skip() {
	echo "SKIP: $*"
	skips=$((skips + 1))
}

# lost_line ERR: the start of record's line on the records the kernel lost
# (a ring full while evprof could not read it: a loaded host), or nothing.
# Such a recording cannot be exact per thread: tests that hold threads to
# their own counts make it once more, and say so.
lost_line() {
	grep -m1 '^evprof: the kernel lost' "$1" | cut -c1-60
}

# unlost ERR CMD...: runs CMD (a whole evprof recording, its workload in
# it), stderr to ERR, once more when the kernel lost records; CMD's status.
unlost() {
	local err=$1 rc
	shift
	"$@" 2>"$err"
	rc=$?
	[ -n "$(lost_line "$err")" ] || return $rc
	echo "note: $(lost_line "$err")...: once more" >&2
	"$@" 2>"$err"
}

# within A B PCT: |A - B| <= PCT% of B; false, and says so, when one of them
# is not a number (an empty value, a word from a failed parse).
within() {
	local v
	for v in "$1" "$2" "$3"; do
		if ! [[ $v =~ ^-?([0-9]+([.][0-9]*)?|[.][0-9]+)$ ]]; then
			echo "within: '$v' is not a number" >&2
			return 1
		fi
	done
	awk -v a="$1" -v b="$2" -v p="$3" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}

# child_of PID: the first child of PID within 5 s (what unshare --fork
# started), or nothing.
child_of() {
	local c
	for _ in $(seq 50); do
		c=$(pgrep -P "$1" | head -1)
		[ -n "$c" ] && echo "$c" && return
		sleep 0.1
	done
}

# cgroup_mount v1|v2: where the cgroup v1 hierarchy with the perf_event
# controller, or cgroup2, is mounted ("" for none). Fields of mountinfo
# after its " - " separator: the optional fields before it vary.
cgroup_mount() {
	awk -v want="$1" '{
		for (i = 7; i < NF && $i != "-"; i++) ;
		if (want == "v2" && $(i + 1) == "cgroup2" ||
		    want == "v1" && $(i + 1) == "cgroup" && $(i + 3) ~ /(^|,)perf_event(,|$)/) {
			print $5; exit } }' /proc/self/mountinfo
}

finish() {
	# No test passes with a throttle: a throttled group misses events
	# (every evprof closing line kept in $TMP is looked at).
	local thr
	thr=$(grep -rhI "^evprof: the kernel throttled sampling" "$TMP" 2>/dev/null | head -1)
	[ -z "$thr" ] || fail "a recording was throttled: $thr"
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed" >&2
		exit 1
	fi
	if [ "$skips" -ne 0 ]; then
		echo "$skips check(s) skipped, the others passed"
		exit 77
	fi
	echo "all checks passed"
	exit 0
}

# The first CPU this shell may run on ("0-3,8" from taskset): a test pins
# within its affinity mask, never to a CPU a cpuset keeps it from.
first_cpu() {
	taskset -pc $$ | sed 's/.*: //; s/[-,].*//'
}

# bpf_engine: true when the BPF engine can record here. Otherwise false,
# after a skip when this host cannot have it (not built in, not root, no
# kernel BTF) or a failure when it is built and permitted but unusable.
bpf_engine() {
	local why
	why=$("$EVPROF" info | sed -n 's/^  bpf  *no  *//p')
	case $why in
	"") return 0 ;;
	"not built in"* | "needs root"* | "no kernel BTF"*)
		skip "the BPF engine is not available here: $why"
		;;
	*) fail "the BPF engine is built and permitted but unusable: $why" ;;
	esac
	return 1
}

# need_push: the local Pyroscope stand-in's tools (tests/tools/ensure.sh)
# and an evprof built with libcurl, or the whole script skips (exit 77).
need_push() {
	bash "$SRCDIR/tests/tools/ensure.sh" || exit 77
	if "$EVPROF" record --push http://127.0.0.1:1 -- true 2>&1 |
		grep -q "built without libcurl"; then
		echo "SKIP: evprof built without libcurl"
		exit 77
	fi
}
