#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The embedding example (examples/faults.c), built as a user would: from
# the installed headers and library through `pkg-config evprof`. It records
# wl_funcs, whose fault_a() and fault_b() touch a known number of fresh
# pages each, and must print those page faults per function within 0.5% in
# task and in cpu mode, less up to one sampling period: the faults after a
# thread's last page-fault sample are [unsampled].
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$EVPROF")
A=20000
B=10000

cmake --install "$BUILD" --prefix "$TMP/inst" >"$TMP/install.log" 2>&1 ||
	{ cat "$TMP/install.log"; fail "cmake --install"; finish; }
pc=$(find "$TMP/inst" -name evprof.pc | head -1)
[ -n "$pc" ] || { fail "no evprof.pc installed"; finish; }
export PKG_CONFIG_PATH=$(dirname "$pc")
flags=$(pkg-config --define-prefix --cflags --libs evprof) ||
	{ fail "pkg-config evprof"; finish; }
# A sanitized library needs its runtime in the program too.
if grep -q '^EVPROF_SANITIZE:BOOL=ON' "$BUILD/CMakeCache.txt"; then
	flags="$flags -fsanitize=address,undefined"
fi
# shellcheck disable=SC2086
cc -std=gnu11 -Wall -Wextra -Werror "$SRCDIR/examples/faults.c" $flags \
	-o "$TMP/faults" 2>"$TMP/cc.err" ||
	{ cat "$TMP/cc.err"; fail "the example does not build from the package"; finish; }
ok "built from the installed package: $flags"
period=$(grep -o 'page-faults/period=[0-9]*' "$SRCDIR/examples/faults.c" | cut -d= -f2)
[ -n "$period" ] || { fail "no page-faults period in the example"; finish; }
libdir=$(pkg-config --define-prefix --variable=libdir evprof)

# A group the kernel throttled missed events (the example says so): no
# truth to compare with, so that run is made again, once.
run() {
	LD_LIBRARY_PATH=$libdir "$TMP/faults" "$1" "$FIXTURES/wl_funcs" \
		"$A" "$B" >"$TMP/out.$1" 2>"$TMP/err.$1" ||
		fail "$1: the example failed: $(cat "$TMP/err.$1")"
}
for mode in task cpu; do
	run $mode
	if grep -q '^throttled' "$TMP/err.$mode"; then
		echo "$mode: $(cat "$TMP/err.$mode"); once more"
		run $mode
	fi
	for f in a b; do
		truth=$([ $f = a ] && echo $A || echo $B)
		got=$(awk -v f="fault_$f" '$2 == f { print $1 }' "$TMP/out.$mode")
		if [ -n "$got" ] && { within "$got" "$truth" 0.5 ||
			within $((got + period)) "$truth" 0.5; }; then
			ok "$mode: fault_$f $got page faults, truth $truth"
		else
			fail "$mode: fault_$f '$got' page faults, truth $truth $(cat "$TMP/err.$mode")"
			# Where the rest went: every function's count.
			sed 's/^/  /' "$TMP/out.$mode"
		fi
	done
done
finish
