#!/usr/bin/env bash
# evprof inside a container says what it is missing. Each case takes one
# thing away with unshare, as a container runtime does, and checks that
# info names it and its fix, and that record -a says it too: a pid
# namespace of its own (the kernel gives the tasks outside it pid 0), a
# /proc of another pid namespace, a cgroup namespace of its own, tracefs,
# kernel BTF (the BPF engine).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: new namespaces and mounts need root"
	exit 77
}
unshare --pid --fork --mount-proc true 2>"$TMP/u" || {
	echo "SKIP: unshare cannot make a pid namespace here: $(cat "$TMP/u")"
	exit 77
}

# has FILE TEXT WHAT: ok when FILE holds TEXT (fixed string).
has() {
	grep -qF -- "$2" "$1" && ok "$3" || fail "$3: no '$2' in: $(grep -E '^(namespaces|tracefs)|^  - ' "$1")"
}
hasnt() {
	grep -qF -- "$2" "$1" && fail "$3: '$2' in: $(grep -F -- "$2" "$1")" || ok "$3"
}

unshare --pid --fork --mount-proc "$EVPROF" info >"$TMP/pid" 2>&1
has "$TMP/pid" "namespaces:           a container's (a pid namespace of its own)" \
	"own pid namespace: info says so"
has "$TMP/pid" "--pid=host, Kubernetes hostPID: true" "own pid namespace: info gives the fix"
hasnt "$TMP/pid" "/proc belongs to another" "own pid namespace with its own /proc: /proc matches"

unshare --pid --fork "$EVPROF" info >"$TMP/proc" 2>&1
has "$TMP/proc" "/proc of another pid namespace)" "/proc of the parent namespace: info says so"
has "$TMP/proc" "/proc belongs to another pid namespace than evprof's" \
	"/proc of the parent namespace: advice"

# A cgroup namespace of its own, rooted at a cgroup of its own, with
# cgroup2 mounted in it, as a pod has it: the mount shows its subtree
# alone. Bound in beside it, the node's hierarchy (a DaemonSet's hostPath)
# gives the whole view back.
mnt=$(cgroup_mount v2)
pod=$mnt/evprof-confined-$$
if [ -n "$mnt" ] && mkdir "$pod"; then
	mkdir "$TMP/node"
	own_cgroup() { # ARGS of info's run: the node's hierarchy bound or not
		sh -c 'echo $$ > "$1/cgroup.procs" && exec unshare --cgroup --mount --propagation private sh -c "$2" sh "$3" "$4" "$5" "$6"' \
			sh "$pod" '
			mnt=$1 node=$2 bind=$3 evprof=$4
			[ "$bind" = 1 ] && mount --bind "$mnt" "$node.tmp"
			umount "$mnt" && mount -t cgroup2 none "$mnt" || exit 1
			if [ "$bind" = 1 ]; then
				mount --bind "$node.tmp" "$node" && umount "$node.tmp"
			fi
			exec "$evprof" info' "$mnt" "$TMP/node" "$1" "$EVPROF"
	}
	mkdir "$TMP/node.tmp"
	own_cgroup 0 >"$TMP/cg" 2>&1
	has "$TMP/cg" "a cgroup namespace of its own" "own cgroup namespace: info says so"
	has "$TMP/cg" "--cgroupns=host" "own cgroup namespace: info gives the fix"
	hasnt "$TMP/cg" "a pid namespace of its own" "own cgroup namespace alone: the pid namespace is not blamed"
	own_cgroup 1 >"$TMP/cgnode" 2>&1
	has "$TMP/cgnode" "cgroups:              v2 at $TMP/node " \
		"own cgroup namespace, the node's hierarchy bound in: info resolves there"
	hasnt "$TMP/cgnode" "--cgroupns=host" "and it asks for no more"
	rmdir "$pod"
else
	skip "no cgroup2 mounted here, or no cgroup can be made in it"
fi

# tracefs and BTF hidden under empty mounts in a mount namespace.
unshare --mount sh -c '
	for d in /sys/kernel/tracing /sys/kernel/debug/tracing /sys/kernel/btf; do
		[ -d "$d" ] && mount -t tmpfs none "$d"
	done
	exec "$1" info' sh "$EVPROF" >"$TMP/fs" 2>&1
has "$TMP/fs" "tracefs:              not readable" "no tracefs: info says so"
has "$TMP/fs" "without tracefs, task exits are not sampled" "no tracefs: advice"
hasnt "$TMP/fs" "evprof: unknown event" "no tracefs: info prints no parser error"
if bpf_engine; then
	grep -qE '^  bpf +no +no kernel BTF' "$TMP/fs" &&
		ok "no BTF: the BPF engine is said to be unavailable, and why" ||
		fail "no BTF: $(grep -E '^  bpf ' "$TMP/fs")"
fi

# record -a in its own pid namespace: said at the start, and true: a busy
# loop outside leaves no sample, one inside (wl_loop's looper-0) does.
sh -c 'while :; do :; done' &
loop=$!
unshare --pid --fork --mount-proc sh -c '"$1" 1 1 2>/dev/null & exec "$2" record -a \
	-e cpu-clock --duration 0.5 -o "$3"' sh "$FIXTURES/wl_loop" "$EVPROF" \
	"$TMP/a.folded" >/dev/null 2>"$TMP/rec" ||
	fail "record -a in its own pid namespace: $(tail -3 "$TMP/rec")"
kill "$loop"
n=$(awk '/^looper-0;/ { s += $NF } END { print s + 0 }' "$TMP/a.folded" 2>/dev/null)
[ "${n:-0}" -gt 0 ] && ok "record -a in its own pid namespace: $n samples of the loop inside" ||
	fail "record -a in its own pid namespace: no sample of the loop inside: $(head -3 "$TMP/a.folded" 2>&1)"
has "$TMP/rec" "evprof: evprof runs in a pid namespace of its own" \
	"record -a in its own pid namespace says so"
n=$(awk '/^sh;/ { s += $NF } END { print s + 0 }' "$TMP/a.folded" 2>/dev/null)
[ "${n:-0}" -eq 0 ] && ok "and it is true: the loop outside (sh) left no sample" ||
	fail "$n samples of the loop outside: $(grep '^sh;' "$TMP/a.folded" | head -3)"
# Given the host's: none of this is said (where the test itself runs in
# the host's namespaces; a test inside a container cannot tell).
"$EVPROF" info >"$TMP/host" 2>&1
if grep -q "^namespaces:           the host's" "$TMP/host"; then
	hasnt "$TMP/host" "evprof runs in a" "in the host's namespaces no confinement is said"
else
	skip "this test itself runs in a container: $(grep '^namespaces' "$TMP/host")"
fi
finish
