#!/usr/bin/env bash
# A real container, profiled from the host (issue 32 item 4). The test builds
# a root file system holding wl_faults at /opt/evprof-wl/wl_faults with the
# libraries ldd names (the dynamic loader too), so that the binary's path
# exists only inside the container's mount namespace, and runs it under
# Debian's podman (rootful, --rootfs, runc, cgroupfs, no network, so no
# registry). It records the container from the host twice: -a --cgroup with
# the container's cgroup path, and -p 1@HOSTPID (the container's pid 1). Each
# faulter thread's page faults must be within 0.5% of the rusage the workload
# prints (podman logs), a busy process on the host must leave no sample, the
# container's process must be the only one, and touch_pages (nm of the binary
# says it is there) must be named with the thread's faults under it although
# its binary is only in the container and has exited before the profile is
# built (evprof__dso_pin() copies it into the debug cache); so must the container's libc
# (start_thread), a copy of the host's at the same path. Where podman cannot run a container
# here, its part is a skip with podman's own error line, and the same checks
# run against an unshare --pid --mount --fork "container" chrooted into the
# same root file system, in a cgroup the test makes. EVPROF_TEST_NO_PODMAN=1
# runs that fallback on a host where podman works. Last, evprof runs inside
# a podman container and says what it lacks there (inside_part).
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults
IN=/opt/evprof-wl/wl_faults
# wl_faults PAGES EXIT THREADS DELAY_MS: the delay lets the recording start.
ARGS=(6000 0 2 2000)

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: a rootful container needs root"
	exit 77
}
mnt=$(cgroup_mount v1)
v1=1
[ -n "$mnt" ] || {
	v1=
	mnt=$(cgroup_mount v2)
}
[ -n "$mnt" ] || {
	echo "SKIP: no cgroup2 and no cgroup v1 perf_event mount here"
	exit 77
}

ROOTFS=$TMP/rootfs
mkdir -p "$ROOTFS/opt/evprof-wl" "$ROOTFS/proc" "$ROOTFS/dev" "$ROOTFS/sys" \
	"$ROOTFS/tmp" "$ROOTFS/etc"
cp "$WL" "$ROOTFS$IN"
for f in $(ldd "$WL" | grep -o '/[^ ]*'); do
	mkdir -p "$ROOTFS$(dirname "$f")"
	cp -L "$f" "$ROOTFS$f"
done
[ -e "$IN" ] && {
	echo "SKIP: $IN exists on this host; the test needs a path only the container has"
	exit 77
}

busy= ctrs=() CG=
cleanup() {
	local c
	[ -n "$busy" ] && kill "$busy" 2>/dev/null
	for c in "${ctrs[@]}"; do podman rm -f "$c" >/dev/null 2>&1; done
	wait 2>/dev/null
	[ -n "$CG" ] && rmdir "$CG" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# A process outside the container, busy the whole time.
sh -c 'while :; do :; done' &
busy=$!

# cgroup_of PID: its cgroup in the hierarchy evprof records (perf_event's).
cgroup_of() {
	if [ -n "$v1" ]; then
		awk -F: '$2 ~ /(^|,)perf_event(,|$)/ { print $3 }' "/proc/$1/cgroup"
	else
		awk -F: '$1 == 0 { print $3 }' "/proc/$1/cgroup"
	fi
}

# check TAG HOSTPID LOG [PID]: the profile $TMP/TAG.json.gz against the
# workload's own counts in LOG; its processes must be HOSTPID (and PID: the
# unshare that forked it, in the fallback's cgroup too).
check() {
	local tag=$1 host=$2 log=$3 also=${4:-} t truth got n q=$TMP/$tag.q
	node "$TOOLS/fxquery.mjs" "$TMP/$tag.json.gz" --through touch_pages >"$q" ||
		fail "$tag: fxquery: $(tail -3 "$q")"
	local all=0 under
	for t in 0 1; do
		truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$log")
		got=$(awk -v n="faulter-$t" '$1 == "thread" && $2 == n {
			for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) {
				sub(/.*=/, "", $i); print $i } }' "$q")
		within "${got:-x}" "${truth:-0}" 0.5 &&
			ok "$tag: faulter-$t $got page faults, rusage $truth" ||
			fail "$tag: faulter-$t '$got' page faults, rusage '$truth'"
		all=$((all + ${truth:-0}))
	done
	n=$(awk -v p="pid=$busy" '$1 == "thread" && $4 == p' "$q" | wc -l)
	[ "$n" -eq 0 ] && ok "$tag: the busy process on the host ($busy) is absent" ||
		fail "$tag: $n threads of the busy process on the host"
	n=$(awk -v a="pid=$also" '$1 == "thread" && $4 != a { print $4 }' "$q" |
		sort -u | tr '\n' ' ')
	[ "$n" = "pid=$host " ] && ok "$tag: one process, the container's ($host)" ||
		fail "$tag: processes $n, not only pid=$host: $(grep '^thread' "$q" | head -5)"
	n=$(awk '$1 == "thread" { for (i = 1; i <= NF; i++) if ($i ~ /^samples=/) {
		sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$q")
	ok "$tag: $n samples in all"
	# Symbols of a binary the host does not have at that path.
	under=$(awk '$1 == "through" && $2 == "touch_pages" {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) {
			sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$q")
	# touch_pages makes each thread's 6000 faults; the rest of a thread's
	# count (its stack, libc) is a few dozen.
	# The process has exited by the time the profile is built, and the host
	# has no $IN: only the file kept open while it lived can be read.
	within "${under:-x}" "$all" 2 &&
		ok "$tag: touch_pages is named, ${under} of the threads' $all page faults under it" ||
		fail "$tag: touch_pages holds '$under' page faults of $all: $("$EVPROF" report \
			"$TMP/$tag.json.gz" 2>&1 | grep -m3 ' wl_faults')"
	# The container's own libc (a copy: another inode than the host's file
	# at that path): its start_thread holds the threads.
	node "$TOOLS/fxquery.mjs" "$TMP/$tag.json.gz" --through start_thread >"$q.libc"
	under=$(awk '$1 == "through" && $2 == "start_thread" {
		for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/) {
			sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$q.libc")
	within "${under:-x}" "$all" 2 &&
		ok "$tag: the container's libc is named, ${under} page faults under start_thread" ||
		fail "$tag: start_thread holds '$under' page faults of $all: $("$EVPROF" report \
			"$TMP/$tag.json.gz" 2>&1 | grep -m3 ' libc.so.6+0x')"
}

nm "$WL" | grep -q ' [tT] touch_pages$' && ok "nm: touch_pages is in $WL" ||
	fail "nm: no touch_pages in $WL"

# podman run -d ... with the workload; its container id on stdout.
PODMAN=(podman run -d --runtime runc --cgroup-manager cgroupfs --network none
	--ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
# Options go before --rootfs: its path takes the image's place, and the words
# after it are the command.
podman_start() {
	local id
	id=$("${PODMAN[@]}" --rootfs "$ROOTFS" "$IN" "${ARGS[@]}" 2>"$TMP/podman.err") || {
		echo "podman: $(grep -v '^$' "$TMP/podman.err" | tail -1)"
		return 1
	}
	echo "$id"
}

podman_part() {
	local id host cg tag why
	command -v podman >/dev/null || {
		skip "no podman here (scripts/deps.sh installs it)"
		return 1
	}
	command -v runc >/dev/null || {
		skip "no runc here (scripts/deps.sh installs it)"
		return 1
	}
	for tag in podman-cgroup podman-pid; do
		id=$(podman_start) || {
			skip "podman cannot run a container here: $id"
			return 1
		}
		ctrs+=("$id") # removed at exit
		host=$(podman inspect --format '{{.State.Pid}}' "$id")
		cg=$(cgroup_of "$host")
		[ -n "$cg" ] && [ "$cg" != / ] || {
			fail "$tag: container $id (host pid $host) has no cgroup of its own: '$cg'"
			return 0
		}
		ok "$tag: container ${id:0:12} runs, pid 1 is host pid $host, cgroup $cg" \
			"(podman says $(podman inspect --format '{{.State.CgroupPath}}' "$id"))"
		if [ $tag = podman-cgroup ]; then
			"$EVPROF" record -a --cgroup "$cg" -e cpu-clock,page-faults \
				-o "$TMP/$tag.json.gz" -- podman wait "$id" \
				>/dev/null 2>"$TMP/$tag.err" ||
				fail "record $tag: $(tail -3 "$TMP/$tag.err")"
		else
			"$EVPROF" record -p "1@$host" -e cpu-clock,page-faults \
				-o "$TMP/$tag.json.gz" >/dev/null 2>"$TMP/$tag.err" ||
				fail "record $tag: $(tail -3 "$TMP/$tag.err")"
			grep -q "pid 1 of the pid namespace /proc/$host/ns/pid is pid $host here" \
				"$TMP/$tag.err" && ok "$tag: -p 1@$host resolves to $host" ||
				fail "$tag: $(head -3 "$TMP/$tag.err")"
		fi
		podman wait "$id" >/dev/null
		podman logs "$id" >"$TMP/$tag.log" 2>&1
		check "$tag" "$host" "$TMP/$tag.log"
	done
	return 0
}

# The fallback: pid 1 of a new pid namespace, in a new mount namespace
# chrooted into the same root file system, in a cgroup of its own.
unshare_part() {
	local tag host outer
	CG=$mnt/evprof-container-$$
	mkdir "$CG" || {
		skip "cannot make a cgroup under $mnt"
		return
	}
	for tag in unshare-cgroup unshare-pid; do
		sh -c "echo \$\$ > $CG/cgroup.procs && exec unshare --pid --mount --fork \
			--root '$ROOTFS' $IN ${ARGS[*]}" >"$TMP/$tag.log" 2>&1 &
		outer=$!
		host=$(child_of "$outer")
		[ -n "$host" ] || {
			skip "unshare --pid --mount --fork started nothing here: $(tail -1 "$TMP/$tag.log")"
			return
		}
		ok "$tag: pid 1 is host pid $host, cgroup $(cgroup_of "$host")"
		if [ $tag = unshare-cgroup ]; then
			"$EVPROF" record -a --cgroup "$CG" -e cpu-clock,page-faults \
				-o "$TMP/$tag.json.gz" -- sh -c "while kill -0 $outer 2>/dev/null; do sleep 0.05; done" \
				>/dev/null 2>"$TMP/$tag.err" ||
				fail "record $tag: $(tail -3 "$TMP/$tag.err")"
		else
			"$EVPROF" record -p "1@$host" -e cpu-clock,page-faults \
				-o "$TMP/$tag.json.gz" >/dev/null 2>"$TMP/$tag.err" ||
				fail "record $tag: $(tail -3 "$TMP/$tag.err")"
		fi
		wait "$outer"
		check "$tag" "$host" "$TMP/$tag.log" "$outer"
	done
}

# evprof itself in a podman container (a root file system of evprof and
# the libraries ldd names): in the container's own pid namespace its info
# says so; given the host's namespaces, capabilities, tracefs and no
# seccomp filter, it says it has them and records the busy process on the
# host under its host pid; with the runtime's seccomp filter, where that
# refuses CPU-wide events, its advice names the filter.
inside_part() {
	local root=$TMP/evroot f out=$TMP/out n
	mkdir -p "$root/usr/bin" "$root/proc" "$root/dev" "$root/sys" "$root/tmp" "$out"
	cp "$EVPROF" "$root/usr/bin/evprof"
	for f in $(ldd "$EVPROF" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$f")"
		cp -L "$f" "$root$f"
	done
	local run=(podman run --rm --runtime runc --cgroup-manager cgroupfs
		--network none --ulimit nofile=1024:1024 --ulimit nproc=4096:4096)
	local host=(--pid=host --cgroupns=host
		--cap-add PERFMON,SYSLOG,SYS_PTRACE,DAC_READ_SEARCH,IPC_LOCK,BPF
		-v /sys/kernel/tracing:/sys/kernel/tracing -v "$out:/out")
	timeout 120 "${run[@]}" --rootfs "$root" /usr/bin/evprof info >"$TMP/in.own" 2>&1
	grep -q "^namespaces: *a container's (a pid namespace of its own" "$TMP/in.own" &&
		grep -q -- "--pid=host" "$TMP/in.own" &&
		ok "inside: in its own pid namespace, info says so and gives --pid=host" ||
		fail "inside, own pid namespace: $(grep -E '^(namespaces|Error)|^  - ' "$TMP/in.own")"
	timeout 120 "${run[@]}" "${host[@]}" --security-opt seccomp=unconfined \
		--rootfs "$root" /usr/bin/evprof info >"$TMP/in.host" 2>&1
	grep -q "^namespaces: *the host's pid and cgroup namespaces" "$TMP/in.host" &&
		grep -q "^tracefs: *readable" "$TMP/in.host" &&
		ok "inside, given the host's view: info says it has it" ||
		fail "inside, host's view: $(grep -E '^(namespaces|tracefs|Error)|^  - ' "$TMP/in.host")"
	timeout 120 "${run[@]}" "${host[@]}" --security-opt seccomp=unconfined \
		--rootfs "$root" /usr/bin/evprof record -a -e cpu-clock --duration 1 \
		-o /out/a.json.gz >"$TMP/in.rec" 2>&1 ||
		fail "inside: record -a: $(tail -3 "$TMP/in.rec")"
	"$EVPROF" report --per-thread "$out/a.json.gz" >"$TMP/in.rep" 2>/dev/null
	n=$(awk -v p="pid=$busy" '$1 == "==" && $4 == p' "$TMP/in.rep" | wc -l)
	[ "$n" -ge 1 ] && ok "inside: record -a names the busy process on the host by its host pid $busy" ||
		fail "inside: no thread of pid $busy: $(grep '^==' "$TMP/in.rep" | head -5)"
	timeout 120 "${run[@]}" "${host[@]}" --rootfs "$root" /usr/bin/evprof info \
		>"$TMP/in.sec" 2>&1
	if grep -qE '^  system_wide +no' "$TMP/in.sec"; then
		grep -q "a seccomp filter is on" "$TMP/in.sec" &&
			ok "inside, the runtime's seccomp filter refuses perf_event_open: advice names it" ||
			fail "inside, seccomp: $(grep -E '^  - |system_wide' "$TMP/in.sec")"
	else
		ok "inside: this runtime's seccomp filter allows CPU-wide events"
	fi
}

if [ "${EVPROF_TEST_NO_PODMAN:-}" = 1 ]; then
	skip "the podman part: EVPROF_TEST_NO_PODMAN=1"
	unshare_part
elif ! podman_part; then
	unshare_part
else
	inside_part
fi
finish
