#!/usr/bin/env bash
# -p PID@NS: a pid as a container's pid namespace sees it. A workload runs
# as pid 1 of a new pid namespace (unshare); record -p 1@HOSTPID and
# 1@/proc/HOSTPID/ns/pid find its host pid (the one unshare forked) and
# record it; a pid that namespace does not have is refused. Profiles show
# the ids inside beside the host's: a shell as pid 1 (there before the
# recording) starts wl_faults, whose threads print their ids inside.
. "$(dirname "$0")/lib.sh"
WL=$FIXTURES/wl_ends

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: a new pid namespace needs root"
	exit 77
}
unshare --pid --fork --mount-proc "$WL" deep 10 3 >/dev/null &
outer=$!
host=$(child_of "$outer")
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

# ns_pid/ns_tid of a report --per-thread header: "thread NAME ... k=v".
ns_of() { # FILE THREAD-NAME KEY
	awk -v n="$2" -v k="$3" '$1 == "==" && $3 == n {
		for (i = 4; i <= NF; i++) if (index($i, k "=") == 1) {
			sub(/.*=/, "", $i); print $i; exit } }' "$1"
}
unshare --pid --fork --mount-proc sh -c \
	"sleep 1; $FIXTURES/wl_faults 3000 0 2 300; true" 2>"$TMP/wl.err" &
outer=$!
host=$(child_of "$outer")
"$EVPROF" record -e cpu-clock -p "1@$host" -o "$TMP/ids.json.gz" \
	-o "$TMP/ids.pb.gz" >/dev/null 2>"$TMP/ids.rec" ||
	fail "record -p 1@$host: $(tail -3 "$TMP/ids.rec")"
wait
pid=$(sed -n 's/^process pid=//p' "$TMP/wl.err")
[ -n "$pid" ] || fail "wl_faults printed no pid: $(cat "$TMP/wl.err")"
for f in ids.json.gz ids.pb.gz; do
	"$EVPROF" report --per-thread "$TMP/$f" >"$TMP/$f.rep" 2>&1 ||
		fail "report $f: $(tail -3 "$TMP/$f.rep")"
	got="$(ns_of "$TMP/$f.rep" sh ns_pid)/$(ns_of "$TMP/$f.rep" sh ns_tid)"
	[ "$got" = 1/1 ] && ok "$f: the shell, there before, is pid 1 inside" ||
		fail "$f: the shell's ns_pid/ns_tid: '$got': $(grep '^==' "$TMP/$f.rep")"
	got="$(ns_of "$TMP/$f.rep" wl_faults ns_pid)/$(ns_of "$TMP/$f.rep" wl_faults ns_tid)"
	[ "$got" = "$pid/$pid" ] && ok "$f: wl_faults, started later, is pid $pid inside" ||
		fail "$f: wl_faults' ns_pid/ns_tid: '$got', it printed $pid"
	for t in 0 1; do
		tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) .*/\1/p" "$TMP/wl.err")
		got="$(ns_of "$TMP/$f.rep" "faulter-$t" ns_pid)/$(ns_of "$TMP/$f.rep" "faulter-$t" ns_tid)"
		[ "$got" = "$pid/$tid" ] && ok "$f: faulter-$t is tid $tid of $pid inside" ||
			fail "$f: faulter-$t's ns_pid/ns_tid: '$got', it printed $pid/$tid"
	done
done
# The Firefox Profiler shows it in the process name.
zcat "$TMP/ids.json.gz" | grep -q "\"wl_faults \[[^]]*pid $pid inside\]\"" &&
	ok "the Firefox process name says pid $pid inside" ||
	fail "no Firefox process name with 'pid $pid inside': $(zcat "$TMP/ids.json.gz" | grep -o '"processName":"[^"]*"' | sort -u)"
finish
