#!/usr/bin/env bash
# -p PID@NS: a pid as a container's pid namespace sees it. A workload runs
# as pid 1 of a new pid namespace (unshare); record -p 1@HOSTPID and
# 1@/proc/HOSTPID/ns/pid find its host pid (the one unshare forked) and
# record it; a pid that namespace does not have is refused.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_ends

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: a new pid namespace needs root"
	exit 77
}
unshare --pid --fork --mount-proc "$WL" deep 10 3 >/dev/null &
outer=$!
host=
for _ in $(seq 50); do
	host=$(pgrep -P "$outer" | head -1)
	[ -n "$host" ] && break
	sleep 0.1
done
[ -n "$host" ] || {
	kill "$outer" 2>/dev/null
	echo "SKIP: unshare --pid --fork started nothing here"
	exit 77
}
inner=$(awk '/^NSpid:/ { print $NF }' "/proc/$host/status")
[ "$inner" = 1 ] && ok "the workload is pid 1 of its namespace (host pid $host)" ||
	fail "NSpid of $host: '$inner'"

for spec in "1@$host" "1@/proc/$host/ns/pid"; do
	"$EVPROF" record -e cpu-clock -p "$spec" --duration 0.5 \
		-o "$TMP/ns.folded" >/dev/null 2>"$TMP/err" ||
		fail "record -p $spec: $(tail -3 "$TMP/err")"
	grep -q "pid 1 of the pid namespace /proc/$host/ns/pid is pid $host here" \
		"$TMP/err" && ok "-p $spec resolves to $host" ||
		fail "-p $spec: $(head -3 "$TMP/err")"
	n=$(awk '/^wl_ends;/ { s += $NF } END { print s + 0 }' "$TMP/ns.folded")
	[ "$n" -ge 20 ] && ok "-p $spec: $n samples of wl_ends" ||
		fail "-p $spec: $n samples of wl_ends: $(head -3 "$TMP/ns.folded")"
done

"$EVPROF" record -e cpu-clock -p "999999@$host" -o "$TMP/x.folded" \
	>/dev/null 2>"$TMP/err"
[ $? -eq 2 ] && grep -q "no process 999999 in the pid namespace" "$TMP/err" &&
	ok "a pid the namespace lacks is refused" ||
	fail "999999@$host: $(cat "$TMP/err")"
kill "$outer" 2>/dev/null
wait
finish
