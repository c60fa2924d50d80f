# Shared helpers for CLI tests (sourced). EVPROF, FIXTURES, SRCDIR come
# from CTest.
set -u
: "${EVPROF:?}" "${FIXTURES:?}" "${SRCDIR:?}"
TMP=$(mktemp -d /tmp/evprof-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

ok() {
	echo "ok: $*"
}

# within A B PCT: |A - B| <= PCT% of B
within() {
	awk -v a="$1" -v b="$2" -v p="$3" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}

finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures check(s) failed" >&2
		exit 1
	fi
	echo "all checks passed"
	exit 0
}

# The first CPU this shell may run on ("0-3,8" from taskset): a test pins
# within its affinity mask, never to a CPU a cpuset keeps it from.
first_cpu() {
	taskset -pc $$ | sed 's/.*: //; s/[-,].*//'
}
