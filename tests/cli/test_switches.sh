#!/usr/bin/env bash
# Each thread's context switches against its own count: wl_naps's two
# threads nap and wake 200 times and print, at their end, their voluntary
# and involuntary switches from /proc. A task's context-switches counter
# counts its switches out; the kernel adds a switch to the counter after
# the sched_switch tracepoint and after a recorder's read there, so a
# recorder that reads at switches gives it to the task switched in unless
# it takes it ahead for the one switched out, and a counter's own sample
# in the switch path, reading it after, gave it to both (a thread took
# 236 to 255 for its 205; in cpu mode, below, 400 for its 202). Tolerance:
# 2 below, for the /proc read's own moment, and 2 + 5% above, for the
# thread's switches after its print (its exit path, preempted under load:
# up to 5 seen here on a quiet machine). Task mode, cpu mode on each CPU of the test's affinity
# (some kernels never sample the idle task's switch-out on some CPUs: its
# switch-out then fell into the next thread's read, which took two
# switches a wake) and the BPF engine (each attribution; skipped where it
# cannot run).
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_naps

# check TAG [--on CPU] ARGS...: record wl_naps with ARGS (on CPU), each
# nap thread's count.
check() {
	local tag=$1 t truth got pin=()
	shift
	[ "$1" = --on ] && pin=(taskset -c "$2") && shift 2
	unlost "$TMP/$tag.err" "$EVPROF" record "$@" -e cpu-clock,context-switches \
		-o "$TMP/$tag.pb.gz" -- "${pin[@]}" "$WL" 200 300 1000 >/dev/null ||
		{ fail "$tag: record: $(tail -3 "$TMP/$tag.err")"; return; }
	"$EVPROF" report --per-thread "$TMP/$tag.pb.gz" >"$TMP/$tag.rep" 2>&1
	for t in nap-a nap-b; do
		truth=$(awk -v n="$t" '$1 == "thread" && $2 == n {
			for (i = 3; i <= NF; i++) if ($i ~ /^(vol|invol)=/) {
				sub(/.*=/, "", $i); s += $i } print s }' "$TMP/$tag.err")
		got=$(grep -A1 "^== thread $t " "$TMP/$tag.rep" | tail -1 |
			sed -n 's/.* context-switches=\([0-9]*\).*/\1/p')
		awk -v a="${got:-x}" -v b="${truth:-0}" 'BEGIN {
			exit !(a ~ /^[0-9]+$/ && b > 0 && a >= b - 2 &&
				a <= b + 2 + b * 5 / 100) }' &&
			ok "$tag: $t $got context switches, /proc says $truth" ||
			fail "$tag: $t '$got' context switches, /proc says '$truth'"
	done
}

check task --mode task
if command -v taskset >/dev/null; then
	for c in $(taskset -pc $$ | sed 's/.*: //' | tr ',' '\n' |
		awk -F- '{ for (c = $1; c <= ($2 == "" ? $1 : $2); c++) print c }'); do
		check "cpu-on-$c" --on "$c" --mode cpu
	done
else
	skip "no taskset"
fi
if bpf_engine; then
	check bpf-own --engine bpf --attribution own
	check bpf-ride --engine bpf --attribution ride
fi
finish
