#!/usr/bin/env bash
# Symbols of binaries that only a container has, after it has exited (issue 32
# item 3): evprof copies each such image into its cache by GNU build id while
# the process runs, as perf record fills ~/.debug.
#
# The "container" is an unshare --mount --fork chrooted into a root file
# system the test builds, holding N copies of wl_faults at paths the host
# lacks, each with a build id of its own (patched here), and sh to start
# them all at once; each waits a second before its faults, so that evprof
# reads its mapping records while it lives. Every process has exited when
# the profile is built, and /proc/PID/root and map_files are gone with it.
#  1. One recording of all N (N > 256, the number of files evprof kept open
#     before): touch_pages must hold half its thread's faults or more in
#     every process; the cache must hold the N images.
#  2. Without a cache (EVPROF_DEBUG_CACHE empty: a read-only root), files
#     are kept open as before, and passing that bound is said on stderr.
#  3. The BPF engine, 10 copies: the same, its mappings read from the
#     same records.
#  4. A later run: perf record --buildid-mmap of the last copy in a new
#     container, imported by evprof once the container has exited. The
#     host has no file at that path; only the cache filled by run 1 holds
#     the image. With that cache touch_pages is named; with an empty one it
#     is not (the control: nothing else names it).
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults
DIR=/opt/evprof-img
N=300
PAGES=64

[ "$(id -u)" -eq 0 ] || {
	echo "SKIP: unshare --mount needs root"
	exit 77
}
[ -e "$DIR" ] && {
	echo "SKIP: $DIR exists on this host; the test needs a path only the container has"
	exit 77
}
ROOTFS=$TMP/rootfs
mkdir -p "$ROOTFS$DIR" "$ROOTFS/bin" "$ROOTFS/proc" "$ROOTFS/tmp" "$ROOTFS/dev"
# sh gives jobs run with & /dev/null as their stdin.
mknod -m 666 "$ROOTFS/dev/null" c 1 3 || fail "mknod $ROOTFS/dev/null"
cp -L /bin/sh "$ROOTFS/bin/sh"
for f in $(ldd "$WL" /bin/sh | grep -o "/[^ :]*" | sort -u); do
	mkdir -p "$ROOTFS$(dirname "$f")"
	cp -L "$f" "$ROOTFS$f"
done
# N copies, copy i with build id i in its first 4 bytes.
python3 - "$WL" "$ROOTFS$DIR" "$N" <<'EOF' || fail "cannot patch build ids of $WL"
import os, struct, sys
src, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = bytearray(open(src, "rb").read())
shoff, = struct.unpack_from("<Q", b, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", b, 0x3a)
def sh(i):
    return struct.unpack_from("<IIQQQQ", b, shoff + i * shentsize)
stroff = sh(shstrndx)[4]
for i in range(shnum):
    name, typ, _, _, off, size = sh(i)
    if b[stroff + name:].split(b"\0", 1)[0] == b".note.gnu.build-id":
        namesz, descsz, _ = struct.unpack_from("<III", b, off)
        desc = off + 12 + (namesz + 3) // 4 * 4
        break
else:
    sys.exit("no .note.gnu.build-id")
for k in range(n):
    struct.pack_into("<I", b, desc, k)
    with open("%s/wl_%03d" % (out, k), "wb") as f:
        f.write(b)
    os.chmod("%s/wl_%03d" % (out, k), 0o755)
EOF
ids=$(for f in "$ROOTFS$DIR"/wl_*; do
	readelf -n "$f" | sed -n 's/.*Build ID: //p'
done | sort -u | wc -l)
[ "$ids" -eq "$N" ] && ok "$N copies of wl_faults, $ids build ids" ||
	fail "$N copies but $ids distinct build ids"

# run TAG [GLOB [RECORD OPTION...]]: records the processes of the copies
# GLOB names (all of them), started at once in one container, each waiting
# a second before its faults so that evprof meets it alive, into
# $TMP/TAG.json.gz.
run() {
	local tag=$1 glob=${2:-wl_*}
	shift $(($# < 2 ? $# : 2))
	"$EVPROF" record "$@" -e page-faults/period=8/ -o "$TMP/$tag.json.gz" -- \
		unshare --mount --fork --root "$ROOTFS" /bin/sh -c \
		"for f in $DIR/$glob; do \$f $PAGES 0 1 1000 & done; wait" \
		>"$TMP/$tag.out" 2>"$TMP/$tag.err" || fail "record $tag: $(head -5 "$TMP/$tag.err")"
}

# named TAG: how many processes have half the faults of their faulter
# thread or more under touch_pages (touch_pages makes PAGES of its
# PAGES + a few dozen).
named() {
	node "$TOOLS/fxquery.mjs" "$TMP/$1.json.gz" --through touch_pages >"$TMP/$1.q" ||
		fail "$1: fxquery: $(tail -3 "$TMP/$1.q")"
	awk '
		function pf(   i) { for (i = 1; i <= NF; i++) if ($i ~ /^page-faults=/)
			return substr($i, 13) + 0; return 0 }
		$1 == "thread" && $2 == "faulter-0" {
			for (i = 1; i <= NF; i++) if ($i ~ /^process=/) proc[$3] = $i
			all[$3] = pf() }
		$1 == "through" { under[$3] = pf() }
		END { for (t in all) if (all[t] > 0 && 2 * under[t] >= all[t])
				seen[proc[t]] = 1
			for (p in seen) n++; print n + 0 }' "$TMP/$1.q"
}

export HOME=$TMP/home # no ~/.debug nor ~/.cache of the host's
export EVPROF_DEBUG_CACHE=$TMP/cache
run many
got=$(named many)
procs=$(awk '$1 == "thread" && $2 == "faulter-0"' "$TMP/many.q" | wc -l)
[ "$procs" -eq "$N" ] && ok "many: $procs faulter threads recorded" ||
	fail "many: $procs faulter threads recorded, not $N"
[ "$got" -eq "$N" ] &&
	ok "many: touch_pages named in all $got processes, each binary only in the container and exited" ||
	fail "many: touch_pages named in $got of $N processes: $(grep -m3 'symbols' "$TMP/many.err")"
# The copies' build ids end as wl_faults' own does.
TAIL=$(readelf -n "$WL" | sed -n 's/.*Build ID: ........//p')
images=$(ls "$TMP/cache" | grep -c "^........$TAIL\.elf$")
[ "$images" -eq "$N" ] && ok "many: the cache holds the $images images" ||
	fail "many: the cache holds $images images of the copies, not $N: $(ls "$TMP/cache" | head -5)"

EVPROF_DEBUG_CACHE= run nocache
grep -q "container images kept open and no image cache" "$TMP/nocache.err" &&
	ok "nocache: the bound on open files is said: $(grep -m1 'kept open' "$TMP/nocache.err")" ||
	fail "nocache: nothing said about the files past the bound: $(tail -3 "$TMP/nocache.err")"
got=$(named nocache)
[ "$got" -gt 0 ] && ok "nocache: touch_pages named in $got of $N processes through open files" ||
	fail "nocache: touch_pages named in no process"

# The BPF engine reads mappings from the same records: 10 copies.
if bpf_engine; then
	EVPROF_DEBUG_CACHE=$TMP/bpf-cache run bpf 'wl_00?' --engine bpf
	got=$(named bpf)
	[ "$got" -eq 10 ] && ok "bpf: touch_pages named in all $got processes" ||
		fail "bpf: touch_pages named in $got of 10 processes"
	images=$(ls "$TMP/bpf-cache" | grep -c "^0[0-9]000000$TAIL\.elf$")
	[ "$images" -ge 10 ] && ok "bpf: the cache holds the $images images" ||
		fail "bpf: the cache holds $images images of the copies, not 10"
fi

# Run 4: a later recording that only the cache can name.
LAST=$(printf "wl_%03d" $((N - 1)))
if ! command -v perf >/dev/null; then
	skip "no perf here: the later run reads a perf.data file"
elif ! perf record -q -N -B --buildid-mmap -e page-faults -c 1 -g -o "$TMP/p.data" -- \
	unshare --mount --fork --root "$ROOTFS" "$DIR/$LAST" 3000 0 1 0 \
	>/dev/null 2>"$TMP/perf.err"; then
	skip "perf record --buildid-mmap fails here: $(tail -1 "$TMP/perf.err")"
else
	for c in cache empty; do
		EVPROF_DEBUG_CACHE=$TMP/$c "$EVPROF" import -o "$TMP/imp-$c.json.gz" \
			"$TMP/p.data" 2>"$TMP/imp-$c.err" ||
			fail "import ($c): $(tail -3 "$TMP/imp-$c.err")"
	done
	truth=$(sed -n 's/^thread faulter-0 tid=[0-9]* faults=//p' "$TMP/perf.err")
	for c in cache empty; do
		node "$TOOLS/fxquery.mjs" "$TMP/imp-$c.json.gz" --through touch_pages >"$TMP/imp-$c.q"
		under=$(awk '$1 == "through" { for (i = 1; i <= NF; i++)
			if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); s += $i } }
			END { print s + 0 }' "$TMP/imp-$c.q")
		eval "under_$c=$under"
	done
	# touch_pages makes 3000 of the thread's faults; the rest are a few dozen.
	within "$under_cache" "${truth:-0}" 3 &&
		ok "later run: $LAST named from the cache, $under_cache of its thread's $truth faults under touch_pages" ||
		fail "later run: touch_pages holds '$under_cache' of $truth faults: $(grep -m3 "$LAST" "$TMP/imp-cache.err")"
	[ "$under_empty" -eq 0 ] &&
		ok "later run, empty cache: touch_pages unnamed (nothing but the cache has $DIR/$LAST)" ||
		fail "later run, empty cache: touch_pages holds $under_empty faults"
fi
finish
