#!/usr/bin/env bash
# Each thread's context switches against its own count: wl_naps's two
# threads nap and wake 200 times and print, at their end, their voluntary
# and involuntary switches from /proc. A task's context-switches counter
# counts its switches out; the kernel adds a switch to the counter after
# the sched_switch tracepoint and after a recorder's read there, so a
# recorder that reads at switches gives it to the task switched in unless
# it takes it ahead for the one switched out, and a counter's own sample
# in the switch path, reading it after, gave it to both. Tolerance 1% + 2:
# the thread's switches after its print (its exit) and the /proc read's
# own moment. Task mode and the BPF engine (each attribution; skipped
# where it cannot run).
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_naps

# check TAG ARGS...: record wl_naps with ARGS, each nap thread's count.
check() {
	local tag=$1 t truth got
	shift
	"$EVPROF" record "$@" -e cpu-clock,context-switches -o "$TMP/$tag.pb.gz" \
		-- "$WL" 200 300 1000 >/dev/null 2>"$TMP/$tag.err" ||
		{ fail "$tag: record: $(tail -3 "$TMP/$tag.err")"; return; }
	"$EVPROF" report --per-thread "$TMP/$tag.pb.gz" >"$TMP/$tag.rep" 2>&1
	for t in nap-a nap-b; do
		truth=$(awk -v n="$t" '$1 == "thread" && $2 == n {
			for (i = 3; i <= NF; i++) if ($i ~ /^(vol|invol)=/) {
				sub(/.*=/, "", $i); s += $i } print s }' "$TMP/$tag.err")
		got=$(grep -A1 "^== thread $t " "$TMP/$tag.rep" | tail -1 |
			sed -n 's/.* context-switches=\([0-9]*\).*/\1/p')
		awk -v a="${got:-x}" -v b="${truth:-0}" 'BEGIN {
			d = a - b; if (d < 0) d = -d
			exit !(a ~ /^[0-9]+$/ && b > 0 && d <= b / 100 + 2) }' &&
			ok "$tag: $t $got context switches, /proc says $truth" ||
			fail "$tag: $t '$got' context switches, /proc says '$truth'"
	done
}

check task --mode task
if bpf_engine; then
	check bpf-own --engine bpf --attribution own
	check bpf-ride --engine bpf --attribution ride
fi
finish
