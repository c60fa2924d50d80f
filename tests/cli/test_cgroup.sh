#!/usr/bin/env bash
# record -a --cgroup: a workload inside a cgroup this test makes keeps each
# thread's page faults within 0.5% of its own rusage while a busy process
# outside leaves no sample, with each attribution, one-shot and continuous
# (its windows summed), and with the BPF engine (skipped where it is not
# available); stat -a --cgroup counts the
# cgroup's page faults within 0.5% of what the workload faulted once inside
# and no more CPU time than the workload's own; a nested cgroup is left
# out with a note; a missing path, one outside the hierarchy and --cgroup
# without -a are refused with a message. The hierarchy is the one holding
# the perf_event controller, found here from /proc/self/mountinfo: a cgroup
# v1 perf_event mount where there is one (test_cgroup_v1.sh runs this test
# with one), where the BPF engine, which filters by cgroup v2 only, must
# refuse with a message.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: making a cgroup needs root"
	exit 77
}
mnt=$(cgroup_mount v1)
v=1
[ -n "$mnt" ] || {
	v=2
	mnt=$(cgroup_mount v2)
}
[ -n "$mnt" ] || {
	echo "SKIP: no cgroup2 and no cgroup v1 perf_event mount here"
	exit 77
}
name=evprof-test-$$
CG=$mnt/$name
mkdir "$CG" "$CG/sub" || {
	echo "SKIP: cannot make a cgroup under $mnt"
	exit 77
}
busy=
cleanup() {
	[ -n "$busy" ] && kill "$busy" 2>/dev/null
	wait 2>/dev/null
	rmdir "$CG/sub" "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# A process outside the cgroup, busy the whole time.
sh -c 'while :; do :; done' &
busy=$!

# inside ARGS...: the workload, moved into the cgroup before its exec.
record() {
	local tag=$1
	shift
	unlost "$TMP/$tag.err" "$EVPROF" record -a "$@" -e cpu-clock,page-faults \
		-o "$TMP/$tag.json.gz" \
		-- sh -c "echo \$\$ > $CG/cgroup.procs && exec $WL 6000 0 2 300" \
		>/dev/null ||
		fail "record $tag: $(tail -3 "$TMP/$tag.err")"
	node "$TOOLS/fxquery.mjs" "$TMP/$tag.json.gz" >"$TMP/$tag.q"
}

check() {
	local tag=$1 t truth tid got
	for t in 0 1; do
		truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/$tag.err")
		tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) .*/\1/p" "$TMP/$tag.err")
		got=$(awk -v t="tid=$tid" '$1 == "thread" && $3 == t {
			for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) {
				sub(/.*=/, "", $i); print $i } }' "$TMP/$tag.q")
		within "${got:-x}" "${truth:-0}" 0.5 &&
			ok "$tag: faulter-$t $got page faults, rusage $truth" ||
			fail "$tag: faulter-$t '$got' page faults, rusage '$truth'; $(grep -E 'lost|named another|unsampled' "$TMP/$tag.err" | cut -c1-160 | tr '\n' ' ')"
	done
	n=$(awk -v p="pid=$busy" '$1 == "thread" && $4 == p' "$TMP/$tag.q" | wc -l)
	[ "$n" -eq 0 ] && ok "$tag: the busy process outside ($busy) is absent" ||
		fail "$tag: $n threads of the busy process outside"
	n=$(awk '$1 == "thread"' "$TMP/$tag.q" | awk '{ print $4 }' | sort -u | wc -l)
	[ "$n" -eq 1 ] && ok "$tag: one process, the workload" ||
		fail "$tag: $n processes: $(awk '$1 == "thread"' "$TMP/$tag.q" | head -5)"
	# Who ran it: the ids samples carry named by the hierarchy they are of
	# (the perf_event one's in the ring engine, cgroup2's in the BPF one).
	n=$(zcat "$TMP/$tag.json.gz" | grep -o '"evprofCgroup":"[^"]*"' | sort -u)
	[ "$n" = "\"evprofCgroup\":\"/$name\"" ] && ok "$tag: its threads are labelled /$name" ||
		fail "$tag: cgroup labels $(echo $n), not /$name"
}

"$EVPROF" info | grep -q "^cgroups: *v$v at $mnt " &&
	ok "info names the v$v hierarchy at $mnt" ||
	fail "info: $("$EVPROF" info | grep '^cgroups')"

record own -G "$name"
check own
grep -q "recording 1 cgroup of the cgroup v$v hierarchy at $mnt" "$TMP/own.err" &&
	ok "the hierarchy is said" || fail "no hierarchy line: $(head -3 "$TMP/own.err")"
cpus=$(getconf _NPROCESSORS_ONLN)
grep -q "groups of [0-9]* events on $cpus CPUs: [0-9]* perf event fds for 1 cgroup" \
	"$TMP/own.err" && ok "the fd count is said" ||
	fail "no fd count: $(grep fds "$TMP/own.err")"
record ride -G "$mnt/$name" --attribution ride
check ride

# Continuous: windows of 0.3 s whose page faults sum to each thread's
# rusage, the busy process absent from every one.
cont() {
	local tag=$1 t truth got n
	shift
	"$EVPROF" record -a -G "$name" --continuous --interval 0.3 \
		--output-dir "$TMP/$tag" --format firefox -e cpu-clock,page-faults "$@" \
		-- sh -c "echo \$\$ > $CG/cgroup.procs && exec $WL 6000 0 2 300" \
		>/dev/null 2>"$TMP/$tag.err" ||
		fail "record $tag: $(tail -3 "$TMP/$tag.err")"
	for f in "$TMP/$tag"/evprof-*.json.gz; do
		node "$TOOLS/fxquery.mjs" "$f"
	done >"$TMP/$tag.q"
	n=$(ls "$TMP/$tag" | grep -c '\.json\.gz$')
	for t in 0 1; do
		truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/$tag.err")
		got=$(awk -v n="faulter-$t" '$1 == "thread" && $2 == n {
			for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) {
				sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$TMP/$tag.q")
		within "${got:-x}" "${truth:-0}" 0.5 &&
			ok "$tag: faulter-$t's $n windows sum to $got page faults, rusage $truth" ||
			fail "$tag: faulter-$t's $n windows sum to '$got' page faults, rusage '$truth'"
	done
	n=$(awk -v p="pid=$busy" '$1 == "thread" && $4 == p' "$TMP/$tag.q" | wc -l)
	[ "$n" -eq 0 ] && ok "$tag: the busy process outside is in no window" ||
		fail "$tag: $n window threads of the busy process outside"
}
cont cont

# The BPF engine: its programs drop the slices and samples of every task
# outside the cgroup (a cgroup array, bpf_current_task_under_cgroup), the
# same truths.
if [ $v = 1 ] && bpf_engine; then
	"$EVPROF" record -a -G "$name" --engine bpf -o "$TMP/x.json.gz" -- true \
		>/dev/null 2>"$TMP/bpf.err"
	rc=$?
	[ $rc -ne 0 ] && grep -q "filters by cgroup v2 only.*cgroup v1 hierarchy ($mnt)" "$TMP/bpf.err" &&
		ok "bpf on a v1 hierarchy refused: $(grep -m1 'v2 only' "$TMP/bpf.err")" ||
		fail "bpf on a v1 hierarchy: rc $rc, $(cat "$TMP/bpf.err")"
elif bpf_engine; then
	record bpf -G "$name" --engine bpf
	check bpf
	grep -q "the BPF programs keep to 1 cgroup" "$TMP/bpf.err" &&
		ok "bpf: the filter is said" || fail "bpf: no filter line: $(head -3 "$TMP/bpf.err")"
	record bpfnested -G "$name" -G "$name/sub" --engine bpf
	check bpfnested
	# At 10 Hz a thread may have no sample of time, only its counters'
	# own and its "[unsampled]" tail: those carry its cgroup too (before,
	# such a thread took the cgroup the shell had before its move, "/").
	record bpfslow -G "$name" --engine bpf -F 10
	check bpfslow
	cont bpf-cont --engine bpf
fi

# Nested: the cgroup inside the other is left out, counted once.
record nested -G "$name" -G "$name/sub"
check nested
grep -q "cgroup /$name/sub is left out" "$TMP/nested.err" &&
	ok "nested cgroup left out" || fail "nested: $(head -3 "$TMP/nested.err")"

# Another session in a pid namespace of its own, started while this one
# records (a profiler in a container, test_confined): Linux fills a
# software event's sample once for every session counting it, with the
# first one's task ids, and that session cannot see the workload: its
# context-switch samples came as the idle task's, and their reads were
# dropped with them (up to 4% of each thread's page faults, seen in
# clean-clone runs). Each sample now goes to the task the CPU's switch
# records name, and the recording says how many did.
record_beside() {
	local tag=$1 stop=$TMP/$1.stop
	shift
	"$EVPROF" record -a "$@" -e cpu-clock,page-faults -o "$TMP/$tag.json.gz" \
		-- sh -c "echo \$\$ > $CG/cgroup.procs && exec $WL 6000 0 2 1000" \
		>/dev/null 2>"$TMP/$tag.err" &
	local rec=$!
	(while [ ! -e "$stop" ]; do
		unshare --pid --fork --mount-proc "$EVPROF" record -a -e cpu-clock \
			--duration 0.3 -o "$TMP/$tag.beside.folded" >/dev/null 2>&1 || break
	done) &
	local beside=$!
	wait "$rec" || fail "record $tag: $(tail -3 "$TMP/$tag.err")"
	touch "$stop"
	wait "$beside"
	node "$TOOLS/fxquery.mjs" "$TMP/$tag.json.gz" >"$TMP/$tag.q"
}
if unshare --pid --fork --mount-proc true 2>/dev/null; then
	record_beside beside -G "$name"
	check beside
	grep -q "samples named another task than the one their CPU ran" "$TMP/beside.err" &&
		ok "beside: $(grep -o '^evprof: [0-9]* samples named another task' "$TMP/beside.err")" ||
		echo "note: beside: no sample named another task (this kernel gives each session its own task ids, or the sessions did not meet)"
else
	skip "unshare cannot make a pid namespace here: no session beside"
fi

# stat -a -G: the workload moves itself into the cgroup first thing
# (WL_CGROUP) and prints what it faulted since: that is all the cgroup's
# page faults hold of it, exact, where its rusage also holds its exec's.
# The busy process outside would add its CPU time to the cgroup's
# task-clock, which must stay within the workload's own user + sys time.
# stat TAG DIR ARGS...: the workload in the cgroup DIR (under $CG).
stat() {
	local tag=$1 dir=$2
	shift 2
	WL_CGROUP=$CG$dir "$EVPROF" stat -a "$@" -e page-faults,task-clock \
		-- "$WL" 6000 0 2 300 >"$TMP/$tag.out" 2>"$TMP/$tag.err" ||
		fail "stat $tag: $(tail -3 "$TMP/$tag.err")"
}
# stat_check TAG CGROUP: its lines against the truth.
stat_check() {
	local tag=$1 cg=$2 truth got clock cpu
	truth=$(sed -n 's/^cgroup faults=//p' "$TMP/$tag.err")
	got=$(awk -v c="$cg" '$2 == "page-faults" && $3 == c { print $1 }' "$TMP/$tag.out")
	within "${got:-x}" "${truth:-0}" 0.5 &&
		ok "stat $tag: $cg $got page faults, $truth in the workload's rusage since its move" ||
		fail "stat $tag: $cg '$got' page faults, rusage since the move '$truth': $(cat "$TMP/$tag.out")"
	clock=$(awk -v c="$cg" '$3 == "task-clock" && $4 == c { print $1 }' "$TMP/$tag.out")
	cpu=$(awk '$2 == "seconds" && ($3 == "user" || $3 == "sys") { s += $1 * 1000 } END { print s }' \
		"$TMP/$tag.out")
	awk -v a="${clock:-x}" -v b="${cpu:-0}" 'BEGIN { exit !(a ~ /^[0-9.]+$/ && a > 0 && a <= b * 1.1 + 10) }' &&
		ok "stat $tag: $cg task-clock $clock ms within the workload's $cpu ms: the busy process outside absent" ||
		fail "stat $tag: $cg task-clock '$clock' ms, the workload's user + sys $cpu ms"
}
stat st "" -G "$name"
stat_check st "/$name"
grep -q "^evprof: [0-9]* groups on $cpus CPUs for 1 cgroup: [0-9]* perf event fds" \
	"$TMP/st.err" && ok "stat: the fd count is said" ||
	fail "stat: no fd count: $(grep fds "$TMP/st.err")"
# Nested: each cgroup its own lines (as perf stat -G), the outer one
# counting the inner one's tasks.
stat stnested /sub -G "$name" -G "$CG/sub"
stat_check stnested "/$name"
stat_check stnested "/$name/sub"

# refused ARGS... -- WORDS: exit 2 and a message with WORDS, nothing run.
refused() {
	local what=$1 want=$2
	shift 2
	"$EVPROF" record "$@" -o "$TMP/x.json.gz" -- true >/dev/null 2>"$TMP/r.err"
	rc=$?
	[ "$rc" -ne 0 ] && grep -q "$want" "$TMP/r.err" && ok "$what refused: $(head -1 "$TMP/r.err")" ||
		fail "$what: rc $rc, $(cat "$TMP/r.err")"
}
refused "a missing cgroup" "no such cgroup" -a -G "$name/none"
refused "a path outside the hierarchy" "outside the perf_event hierarchy" -a -G "$TMP"
refused "--cgroup without -a" "add -a" -G "$name"
# The same refusals in stat.
refused() {
	local what=$1 want=$2
	shift 2
	"$EVPROF" stat "$@" -- true >/dev/null 2>"$TMP/r.err"
	rc=$?
	[ "$rc" -ne 0 ] && grep -q "$want" "$TMP/r.err" && ok "stat: $what refused: $(head -1 "$TMP/r.err")" ||
		fail "stat: $what: rc $rc, $(cat "$TMP/r.err")"
}
refused "a missing cgroup" "no such cgroup" -a -G "$name/none"
refused "a path outside the hierarchy" "outside the perf_event hierarchy" -a -G "$TMP"
refused "--cgroup without -a" "add -a" -G "$name"
finish
