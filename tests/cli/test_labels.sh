#!/usr/bin/env bash
# Who ran it (issue 32 item 2): a workload in a Kubernetes-style cgroup
# this test makes (kubepods.slice/kubepods-burstable.slice/
# kubepods-burstable-pod<UID with _>.slice/cri-containerd-<64 hex>.scope)
# carries its cgroup, container id (64 hex), pod UID (with dashes) and QoS
# class as pprof sample labels, its container's 12 hex digits in the
# Firefox file's process name and on the page, and all of them on the
# report --per-thread headers; a process outside the cgroup has none of
# them. Twice: -a --cgroup on a cgroup made before recording (named by
# the walk of the mount at start), and a plain record whose command makes
# its cgroup while recorded (named by a CGROUP record, or with the BPF
# engine by walking the mount again) and, after forking a child that
# stays outside and running a while outside, moves itself there: its
# thread is labelled with its latest sample's cgroup. Both with each
# engine: the ring's samples carry their cgroup, the BPF programs take it
# at each sample (the BPF part skipped where that engine cannot run).
# Decoded with
# pprof-format and JSON.parse (tests/tools/labels.mjs), never evprof.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_loop

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: making a cgroup needs root"
	exit 77
}
mnt=$(cgroup_mount v2)
[ -n "$mnt" ] || {
	echo "SKIP: no cgroup2 mounted here"
	exit 77
}
"$EVPROF" info | grep -q "^  sample_cgroup *yes" || {
	echo "SKIP: this kernel has no PERF_SAMPLE_CGROUP (Linux 5.7)"
	exit 77
}
uid=$(cat /proc/sys/kernel/random/uuid)
uid2=$(cat /proc/sys/kernel/random/uuid)
uid3=$(cat /proc/sys/kernel/random/uuid)
id=$(echo "evprof $$ one" | sha256sum | cut -c1-64)
id2=$(echo "evprof $$ two" | sha256sum | cut -c1-64)
id3=$(echo "evprof $$ three" | sha256sum | cut -c1-64)
top=evprof-labels-$$
# pod POD_UID CONTAINER_ID: the path from the hierarchy's root.
pod() {
	echo "/$top/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod${1//-/_}.slice/cri-containerd-$2.scope"
}
CG=$(pod "$uid" "$id")
# Made while recorded: by the ring's run, by the BPF engine's.
CG2=$(pod "$uid2" "$id2")
CG3=$(pod "$uid3" "$id3")
mkdir -p "$mnt$CG" || {
	echo "SKIP: cannot make a cgroup under $mnt"
	exit 77
}
cleanup() {
	local d
	wait 2>/dev/null
	for d in "$CG" "$CG2" "$CG3"; do
		while [ "$d" != "/$top" ] && [ "$d" != / ]; do
			rmdir "$mnt$d" 2>/dev/null
			d=${d%/*}
		done
	done
	rmdir "$mnt/$top" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# check TAG PID CGROUP ID UID: the labels, names and headers of PID.
check() {
	local tag=$1 pid=$2 cg=$3 cid=$4 puid=$5 n bad
	node "$TOOLS/labels.mjs" "$TMP/$tag.pb.gz" >"$TMP/$tag.labels" ||
		fail "$tag: labels.mjs failed"
	node "$TOOLS/labels.mjs" "$TMP/$tag.json.gz" >"$TMP/$tag.threads" ||
		fail "$tag: labels.mjs on the Firefox file failed"
	n=$(awk -v p="pid=$pid" '{ for (i = 3; i <= NF; i++) if ($i == p) {
		sub(/samples=/, "", $2); s += $2 } } END { print s + 0 }' "$TMP/$tag.labels")
	bad=$(grep " pid=$pid " "$TMP/$tag.labels" | while read -r l; do
		for w in "cgroup=$cg" "container_id=$cid" "pod_uid=$puid" \
			"qos_class=burstable"; do
			case " $l " in *" $w "*) ;; *) echo "$l lacks $w" ;; esac
		done
	done | head -1)
	[ "$n" -gt 0 ] && [ -z "$bad" ] &&
		ok "$tag: pprof: $n samples of pid $pid, each labelled container_id=${cid:0:12}... pod_uid=$puid qos_class=burstable" ||
		fail "$tag: pprof: $n samples of pid $pid; ${bad:-}; $(head -3 "$TMP/$tag.labels")"
	n=$(grep -c "^thread tid=[0-9]* pid=$pid process=.* \[container ${cid:0:12}\]$" "$TMP/$tag.threads")
	[ "$n" -gt 0 ] && [ "$n" -eq "$(grep -c " pid=$pid " "$TMP/$tag.threads")" ] &&
		ok "$tag: Firefox: $n threads of pid $pid named [container ${cid:0:12}]" ||
		fail "$tag: Firefox: $(grep " pid=$pid " "$TMP/$tag.threads" | head -2)"
	"$EVPROF" report --per-thread "$TMP/$tag.pb.gz" >"$TMP/$tag.rep" 2>&1
	n=$(grep -c "^== thread .* pid=$pid tid=[0-9]* cgroup=$cg container=${cid:0:12} runtime=containerd pod_uid=$puid qos_class=burstable$" "$TMP/$tag.rep")
	[ "$n" -gt 0 ] && ok "$tag: report --per-thread: $n headers with the container" ||
		fail "$tag: report: $(grep "^== thread .* pid=$pid " "$TMP/$tag.rep" | head -2)"
	grep -q "\"who\":\"container ${cid:0:12}\"" "$TMP/$tag.html" &&
		ok "$tag: the page names the container" ||
		fail "$tag: the page: $(grep -o '"who":"[^"]*"' "$TMP/$tag.html" | head -2)"
}

# About 0.1-0.5 s of a shell's CPU time.
spin="i=0; while [ \$i -lt 100000 ]; do i=\$((i + 1)); done"

# both TAG CGROUP_MADE_WHILE_RECORDED ID UID ARGS...: the two recordings
# with ARGS (an engine), their files tagged TAG-a and TAG-t.
both() {
	local tag=$1 made=$2 cid=$3 puid=$4 out n bad
	shift 4
	# -a --cgroup: the workload moved into the cgroup made before recording.
	"$EVPROF" record -a -G "$CG" -e cpu-clock "$@" -o "$TMP/$tag-a.pb.gz" \
		-o "$TMP/$tag-a.json.gz" -o "$TMP/$tag-a.html" \
		-- sh -c "echo \$\$ > $mnt$CG/cgroup.procs && echo \$\$ > $TMP/$tag-a.pid && exec $WL 1 1" \
		>/dev/null 2>"$TMP/$tag-a.err" || fail "$tag-a: record -a -G: $(tail -3 "$TMP/$tag-a.err")"
	check "$tag-a" "$(cat "$TMP/$tag-a.pid")" "$CG" "$id" "$uid"
	n=$(grep -v " container_id=$id " "$TMP/$tag-a.labels" | wc -l)
	[ "$n" -eq 0 ] && ok "$tag-a: every sample in the cgroup" ||
		fail "$tag-a: $n label sets without the container: $(grep -v " container_id=$id " "$TMP/$tag-a.labels" | head -2)"

	# A plain record: the command makes its cgroup while recorded, leaves
	# a child outside, spins, then moves itself in, spins again and execs
	# the workload: its thread was sampled in both cgroups, and is
	# labelled with the later one.
	"$EVPROF" record -e cpu-clock "$@" -o "$TMP/$tag-t.pb.gz" \
		-o "$TMP/$tag-t.json.gz" -o "$TMP/$tag-t.html" \
		-- sh -c "$WL 1 1 & echo \$! > $TMP/$tag-out.pid; $spin; mkdir -p $mnt$made && echo \$\$ > $mnt$made/cgroup.procs && $spin && echo \$\$ > $TMP/$tag-t.pid && exec $WL 1 1" \
		>/dev/null 2>"$TMP/$tag-t.err" || fail "$tag-t: record: $(tail -3 "$TMP/$tag-t.err")"
	check "$tag-t" "$(cat "$TMP/$tag-t.pid")" "$made" "$cid" "$puid"
	out=$(cat "$TMP/$tag-out.pid")
	n=$(grep -c " pid=$out " "$TMP/$tag-t.labels")
	bad=$(grep " pid=$out " "$TMP/$tag-t.labels" | grep -e container_id= -e pod_uid= -e qos_class= | head -1)
	[ "$n" -gt 0 ] && [ -z "$bad" ] &&
		ok "$tag-t: the child outside ($out): $n label sets, none with a container, pod or QoS class" ||
		fail "$tag-t: the child outside ($out): $n label sets; $bad"
	grep " pid=$out " "$TMP/$tag-t.threads" | grep -q "\[container" &&
		fail "$tag-t: the child outside named as a container: $(grep " pid=$out " "$TMP/$tag-t.threads" | head -1)" ||
		ok "$tag-t: the child outside is named without a container"
}

both ring "$CG2" "$id2" "$uid2"
bpf_engine && both bpf "$CG3" "$id3" "$uid3" --engine bpf

# evprof in a pod, as the DaemonSet runs it: in a cgroup namespace of its
# own rooted at its pod's cgroup, cgroup2 mounted there (the pod's view of
# its own subtree), the node's hierarchy bound in beside it (hostPath). The
# workload, in a container's cgroup outside the pod made before recording,
# is named by its whole path: the start walk takes the mount that sees the
# most.
POD=/$top/evprof-pod
mkdir -p "$mnt$POD" "$TMP/node" "$TMP/node.tmp"
sh -c "echo \$\$ > $mnt$CG/cgroup.procs && echo \$\$ > $TMP/pod.pid && exec $WL 3 1" \
	>/dev/null 2>&1 &
for _ in $(seq 50); do [ -s "$TMP/pod.pid" ] && break; sleep 0.1; done
sh -c 'echo $$ > "$1/cgroup.procs" && exec unshare --cgroup --mount --propagation private sh -c "
	mount --bind $2 $3.tmp && umount $2 && mount -t cgroup2 none $2 &&
	mount --bind $3.tmp $3 && umount $3.tmp &&
	exec $4 record -a -e cpu-clock --duration 1 -o $5.pb.gz -o $5.json.gz -o $5.html"' \
	sh "$mnt$POD" "$mnt" "$TMP/node" "$EVPROF" "$TMP/pod" >/dev/null 2>"$TMP/pod.err" ||
	fail "pod: record -a: $(tail -3 "$TMP/pod.err")"
wait
check pod "$(cat "$TMP/pod.pid")" "$CG" "$id" "$uid"
rmdir "$mnt$POD"

# Pushes: the labels only when asked (ids change at every restart, each a
# new series), never pid or tid.
"$EVPROF" record --push http://127.0.0.1:1 --push-label container_id,pid -- true \
	>/dev/null 2>"$TMP/pl.err"
[ $? -eq 2 ] && grep -q "push-label takes .*not 'pid'" "$TMP/pl.err" &&
	ok "--push-label pid refused: $(head -1 "$TMP/pl.err")" ||
	fail "--push-label pid: $(cat "$TMP/pl.err")"
if bash "$TOOLS/ensure.sh" >/dev/null 2>&1 &&
	! "$EVPROF" record --push http://127.0.0.1:1 -- true 2>&1 | grep -q "without libcurl"; then
	# push TAG ARGS...: the series labels of one push, sorted.
	push() {
		local tag=$1 port
		shift
		rm -f "$TMP/$tag.port"
		node "$TOOLS/pyroscope_endpoint.mjs" --port-file "$TMP/$tag.port" \
			--log "$TMP/$tag.log" 2>/dev/null &
		local ep=$!
		for _ in $(seq 100); do [ -s "$TMP/$tag.port" ] && break; sleep 0.1; done
		port=$(cat "$TMP/$tag.port")
		"$EVPROF" record -e cpu-clock --push "http://127.0.0.1:$port" "$@" \
			-o "$TMP/$tag.pb.gz" -- sh -c "echo \$\$ > $mnt$CG/cgroup.procs && exec $WL 1 1" \
			>/dev/null 2>"$TMP/$tag.err" || fail "push $tag: $(tail -2 "$TMP/$tag.err")"
		kill "$ep" 2>/dev/null
		wait "$ep" 2>/dev/null
		python3 -c 'import json, sys
for l in open(sys.argv[1]):
    for g in json.loads(l).get("series", []):
        print(" ".join(sorted(k + "=" + v for k, v in g["labels"].items())))' "$TMP/$tag.log"
	}
	got=$(push pl --push-label container_id,pod_uid | grep "process_name=wl_loop")
	case " $got " in
	*" container_id=$id "*" pod_uid=$uid "*)
		case $got in
		*cgroup=* | *qos_class=* | *" pid="* | *" tid="*)
			fail "pushed labels not asked for: $got" ;;
		*) ok "--push-label container_id,pod_uid: the series has both, nothing else of the thread's" ;;
		esac ;;
	*) fail "--push-label: series '$got'" ;;
	esac
	got=$(push pn | grep "process_name=wl_loop")
	case $got in
	"") fail "no series of wl_loop pushed: $(head -c 300 "$TMP/pn.log")" ;;
	*cgroup=* | *container_id=* | *pod_uid=* | *qos_class=*)
		fail "cgroup labels pushed unasked: $got" ;;
	*) ok "without --push-label no cgroup label is pushed" ;;
	esac
else
	skip "pushes: no libcurl or no Node.js packages"
fi
finish
