#!/usr/bin/env bash
# evprof import against the workloads' own truth: perf.data files made
# here by Linux perf (plain, -z, pipe mode, a leader-sampled group, DWARF
# stacks, a file perf did not finish, a corrupt one). Each thread's samples
# must be the file's own, as perf script counts them, and its faults as the
# workload measures them (getrusage(RUSAGE_THREAD)), not perf's report: the
# kernel's page-fault event counts a fault each time it is taken, a retried
# one (a signal or lock contention under load) more than once where rusage
# counts it once: seen 3086 against 3004 in a clean-clone run.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

if ! command -v perf >/dev/null; then
	skip "Linux perf is not installed (scripts/deps.sh: linux-perf)"
	finish
fi

q() { # FILE [--through FUNC]
	node "$TOOLS/fxquery.mjs" "$@"
}

# thread_value QUERY TID FIELD: the thread line's FIELD=value.
thread_value() {
	awk -v t="tid=$2" -v f="$3" '$1 == "thread" && $3 == t {
		for (i = 1; i <= NF; i++) if (index($i, f "=") == 1) {
			sub(/.*=/, "", $i); print $i } }' "$1"
}

# Each faulter's page-fault samples and weights against the file's records
# and its rusage.
check_faults() { # LABEL ERRFILE PROFILE DATA
	local label=$1 err=$2 prof=$3 t tid truth n w thr inf
	q "$prof" --through touch_pages >"$TMP/q" ||
		{ fail "$label: fxquery failed"; return; }
	perf script -i "$4" -F tid 2>/dev/null | sort | uniq -c >"$TMP/tids"
	for t in 0 1; do
		tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) .*/\1/p" "$err")
		truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$err")
		n=$(thread_value "$TMP/q" "$tid" samples)
		w=$(thread_value "$TMP/q" "$tid" page-faults)
		thr=$(awk -v t="tid=$tid" '$1 == "through" && $3 == t {
			for (i = 1; i <= NF; i++) if ($i ~ /^samples=/) {
				sub(/.*=/, "", $i); print $i } }' "$TMP/q")
		inf=$(awk -v t="$tid" '$2 == t { print $1 }' "$TMP/tids")
		if [ -n "$truth" ] && [ -n "$n" ] && [ "$n" = "$inf" ] &&
			within "$n" "$truth" 5 && [ "$w" = "$n" ]; then
			ok "$label: faulter-$t $n samples (weight $w) = the file's $inf ~ rusage $truth"
		else
			fail "$label: faulter-$t samples '$n' weight '$w' vs the file's '$inf', rusage '$truth'"
		fi
		if [ -n "$thr" ] && [ "$((thr * 2))" -gt "$n" ]; then
			ok "$label: faulter-$t: $thr samples on stacks through touch_pages"
		else
			fail "$label: faulter-$t: only '$thr' of '$n' through touch_pages"
		fi
	done
}

# 1. perf samples every fault (-c 1), with frame-pointer callchains.
perf record -q -e page-faults -c 1 -g -o "$TMP/pf.data" -- "$WL" 3000 0 2 \
	2>"$TMP/pf.err" >/dev/null || fail "perf record: $(cat "$TMP/pf.err")"
"$EVPROF" import -o "$TMP/pf.json.gz" -o "$TMP/pf.folded" \
	-o "$TMP/pf.pb.gz" "$TMP/pf.data" 2>"$TMP/imp" ||
	fail "import: $(cat "$TMP/imp")"
grep -q "imported [0-9]* samples of 1 event" "$TMP/imp" &&
	ok "closing line: $(cat "$TMP/imp")" || fail "no closing line"
check_faults plain "$TMP/pf.err" "$TMP/pf.json.gz" "$TMP/pf.data"
[ -s "$TMP/pf.folded" ] && [ -s "$TMP/pf.pb.gz" ] &&
	ok "every -o written" || fail "folded or pprof output missing"
node "$TOOLS/fxcheck.mjs" "$TMP/pf.json.gz" >"$TMP/check" 2>&1 &&
	ok "Firefox profile passes the structural check" ||
	fail "structural check: $(cat "$TMP/check")"
tid=$(sed -n 's/^thread faulter-0 tid=\([0-9]*\) .*/\1/p' "$TMP/pf.err")
truth=$(perf script -i "$TMP/pf.data" -F tid 2>/dev/null | awk -v t="$tid" '$1 == t' | wc -l)
got=$(awk '$1 ~ /^faulter-0;/ { s += $NF } END { print s + 0 }' "$TMP/pf.folded")
[ "$got" = "$truth" ] && [ "$got" -gt 0 ] && ok "folded weights $got = the file's $truth" ||
	fail "folded weights '$got' vs the file's '$truth'"
"$EVPROF" report "$TMP/pf.pb.gz" >"$TMP/rep" 2>&1 &&
	grep -q touch_pages "$TMP/rep" && ok "evprof report reads the import" ||
	fail "report: $(head -5 "$TMP/rep")"

# 1b. A longer file (over 65536 samples): built in parts as it streams.
#     perf may lose some of these under load (its ring overflows): each
#     thread's samples then equal the records the file holds for it, as
#     perf script counts them; with none lost, the rusage truth as well.
perf record -q -m 1024 -e page-faults -c 1 -g -o "$TMP/long.data" -- \
	"$WL" 60000 0 2 2>"$TMP/long.err" >/dev/null ||
	fail "perf record: $(cat "$TMP/long.err")"
"$EVPROF" import -o "$TMP/long.folded" "$TMP/long.data" 2>"$TMP/imp" ||
	fail "import: $(cat "$TMP/imp")"
perf script -i "$TMP/long.data" -F tid 2>/dev/null | sort | uniq -c \
	>"$TMP/long.tids"
lost=$(perf report -i "$TMP/long.data" --stdio 2>/dev/null |
	sed -n 's/^# Total Lost Samples: //p')
for t in 0 1; do
	tid=$(sed -n "s/^thread faulter-$t tid=\([0-9]*\) .*/\1/p" "$TMP/long.err")
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/long.err")
	inf=$(awk -v t="$tid" '$2 == t { print $1 }' "$TMP/long.tids")
	got=$(awk -v p="faulter-$t;" 'index($1, p) == 1 { s += $NF }
		END { print s + 0 }' "$TMP/long.folded")
	[ -n "$inf" ] && [ "$got" = "$inf" ] &&
		ok "long: faulter-$t $got samples = the file's $inf (perf lost ${lost:-?})" ||
		fail "long: faulter-$t $got samples vs the file's '$inf'"
	if [ "${lost:-1}" = 0 ]; then
		within "$got" "$truth" 1 && ok "long: faulter-$t ~ rusage $truth" ||
			fail "long: faulter-$t $got vs rusage $truth"
	fi
done

# 2. Compressed (-z): one zstd stream over many records.
perf record -q -z -e page-faults -c 1 -g -o "$TMP/z.data" -- "$WL" 3000 0 2 \
	2>"$TMP/z.err" >/dev/null || fail "perf record -z: $(cat "$TMP/z.err")"
"$EVPROF" import -o "$TMP/z.json.gz" "$TMP/z.data" 2>"$TMP/imp" ||
	fail "import -z: $(cat "$TMP/imp")"
check_faults zstd "$TMP/z.err" "$TMP/z.json.gz" "$TMP/z.data"

# 3. Pipe mode, straight from perf's stdout.
perf record -q -e page-faults -c 1 -g -o - -- "$WL" 3000 0 2 \
	2>"$TMP/p.err" | tee "$TMP/p.data" |
	"$EVPROF" import -o "$TMP/p.json.gz" - 2>"$TMP/imp" ||
	fail "pipe import: $(cat "$TMP/imp")"
grep -q "(pipe mode)" "$TMP/imp" && ok "pipe mode recognised" ||
	fail "pipe mode not said: $(cat "$TMP/imp")"
check_faults pipe "$TMP/p.err" "$TMP/p.json.gz" "$TMP/p.data"

# 4. Leader sampling with group reads: perf 6.1 turns inherit off, so only
#    the main thread is recorded; its page-fault deltas vs its own count.
perf record -q -e '{cpu-clock,page-faults}:S' -o "$TMP/g.data" -- \
	"$FIXTURES/wl_mainfaults" 20000 2>"$TMP/g.err" >/dev/null ||
	fail "perf record group: $(cat "$TMP/g.err")"
"$EVPROF" import -o "$TMP/g.json.gz" "$TMP/g.data" 2>"$TMP/imp" ||
	fail "group import: $(cat "$TMP/imp")"
q "$TMP/g.json.gz" >"$TMP/q"
tid=$(sed -n 's/^main tid=\([0-9]*\) .*/\1/p' "$TMP/g.err")
truth=$(sed -n 's/^main tid=[0-9]* faults=//p' "$TMP/g.err")
got=$(thread_value "$TMP/q" "$tid" page-faults)
if [ -n "$got" ] && [ -n "$truth" ] && within "$got" "$truth" 1; then
	ok "group: main thread page-fault deltas $got ~ rusage $truth"
else
	fail "group: main thread deltas '$got' vs rusage '$truth'"
fi
inherit=$(perf evlist -v -i "$TMP/g.data" 2>/dev/null | grep -c 'inherit = 1')
if [ "$inherit" -eq 0 ]; then
	grep -q "^meta counters: group reads without inherit.*child threads were not recorded" \
		"$TMP/q" && ok "group: the no-inherit note" ||
		fail "group: no note on child threads: $(grep ^meta "$TMP/q")"
else
	grep -q "^meta counters: per-thread deltas of group reads of inherited" \
		"$TMP/q" && ok "group: the inherit note" ||
		fail "group: no inherit note: $(grep ^meta "$TMP/q")"
fi
cpu=$(thread_value "$TMP/q" "$tid" cpu_us)
[ -n "$cpu" ] && [ "$cpu" -ge 20000 ] &&
	ok "group: cpu-clock deltas give $cpu us of CPU (>= the 30 ms spin - slack)" ||
	fail "group: cpu_us '$cpu'"

# 5. DWARF user stacks, unwound by evprof's unwinder: a workload built
#    without frame pointers, whose CPU time is all in main > deep_a >
#    deep_b > deep_hot.
perf record -q --call-graph dwarf -e cpu-clock -F 1000 -o "$TMP/d.data" -- \
	"$FIXTURES/wl_nofp" 0.3 >/dev/null 2>"$TMP/d.err" ||
	fail "perf record dwarf: $(cat "$TMP/d.err")"
"$EVPROF" import -o "$TMP/d.folded" -o "$TMP/d.json.gz" "$TMP/d.data" \
	2>"$TMP/imp" || fail "dwarf import: $(cat "$TMP/imp")"
hot=$(awk '/deep_hot/ { s += $NF } END { print s + 0 }' "$TMP/d.folded")
path=$(awk '/main;deep_a;deep_b;deep_hot/ { s += $NF } END { print s + 0 }' \
	"$TMP/d.folded")
if [ "$hot" -gt 50 ] && [ "$((path * 10))" -ge "$((hot * 9))" ]; then
	ok "dwarf: $path of $hot deep_hot samples unwound to main;deep_a;deep_b"
else
	fail "dwarf: only '$path' of '$hot' deep_hot samples unwound"
fi
q "$TMP/d.json.gz" | grep -q "^meta call graph: dwarf.* [1-9][0-9]* stacks unwound" &&
	ok "dwarf: unwinding note" || fail "dwarf: no unwinding note"

# 6. A file perf did not finish (killed): data size 0 in the header, the
#    last record cut in half.
cp "$TMP/pf.data" "$TMP/t.data"
printf '\0\0\0\0\0\0\0\0' | dd of="$TMP/t.data" bs=1 seek=48 conv=notrunc \
	status=none
size=$(stat -c %s "$TMP/pf.data")
truncate -s $((size / 2 + 3)) "$TMP/t.data"
"$EVPROF" import -o "$TMP/t.json.gz" "$TMP/t.data" 2>"$TMP/imp" ||
	fail "truncated import: $(cat "$TMP/imp")"
grep -q "(truncated file)" "$TMP/imp" && ok "truncated file said" ||
	fail "truncation not said: $(cat "$TMP/imp")"
q "$TMP/t.json.gz" >"$TMP/q"
grep -q "^meta the file is truncated" "$TMP/q" && ok "truncation note" ||
	fail "no truncation note"
n=$(awk '$1 == "thread" { for (i = 1; i <= NF; i++) if ($i ~ /^samples=/) {
	sub(/.*=/, "", $i); s += $i } } END { print s + 0 }' "$TMP/q")
all=$(q "$TMP/pf.json.gz" | awk '$1 == "thread" { for (i = 1; i <= NF; i++)
	if ($i ~ /^samples=/) { sub(/.*=/, "", $i); s += $i } } END { print s + 0 }')
[ "$n" -gt 0 ] && [ "$n" -lt "$all" ] &&
	ok "truncated: $n of $all samples read" ||
	fail "truncated: '$n' samples of '$all'"

# 7. A corrupt record: one error line naming the offset, exit 1.
cp "$TMP/pf.data" "$TMP/bad.data"
off=$(od -An -t u8 -j 40 -N 8 "$TMP/pf.data" | tr -d ' ')
printf '\4\0' | dd of="$TMP/bad.data" bs=1 seek=$((off + 6)) conv=notrunc \
	status=none
"$EVPROF" import -o "$TMP/bad.json.gz" "$TMP/bad.data" 2>"$TMP/imp"
status=$?
if [ "$status" -eq 1 ] && [ "$(wc -l <"$TMP/imp")" -eq 1 ] &&
	grep -q "record of size 4 at offset 0x$(printf %x "$off")" "$TMP/imp"; then
	ok "corrupt file: $(cat "$TMP/imp")"
else
	fail "corrupt file: status $status: $(cat "$TMP/imp")"
fi

# 8. Binaries by build id: moved under a --symfs root, replaced by another
#    binary at the recorded path, or found in perf's build-id cache. HOME
#    is a scratch one, so that no earlier recording's cache answers.
H=$TMP/home
mkdir -p "$H" "$TMP/bin" "$TMP/symfs$TMP/bin"
cp "$WL" "$TMP/bin/wl"
HOME=$H perf record -N -q -e page-faults -c 1 -g -o "$TMP/s.data" -- \
	"$TMP/bin/wl" 2000 0 1 >/dev/null 2>"$TMP/s.err" ||
	fail "perf record: $(cat "$TMP/s.err")"
mv "$TMP/bin/wl" "$TMP/symfs$TMP/bin/wl"
HOME=$H "$EVPROF" import -o "$TMP/s1.json.gz" -o "$TMP/s1.folded" \
	"$TMP/s.data" 2>/dev/null || fail "import without the binary failed"
q "$TMP/s1.json.gz" | grep -q "^meta binary not found: $TMP/bin/wl (build id [0-9a-f]*)" &&
	! grep -q ';touch_pages' "$TMP/s1.folded" &&
	ok "binary moved away: a note, its frames unnamed" ||
	fail "binary moved away: $(q "$TMP/s1.json.gz" | grep ^meta)"
HOME=$H "$EVPROF" import --symfs "$TMP/symfs" -o "$TMP/s2.folded" \
	"$TMP/s.data" 2>/dev/null && grep -q ';touch_pages' "$TMP/s2.folded" &&
	ok "--symfs finds it by its recorded path" || fail "--symfs: no touch_pages"
cp "$FIXTURES/wl_mainfaults" "$TMP/bin/wl"
HOME=$H "$EVPROF" import -o "$TMP/s3.json.gz" -o "$TMP/s3.folded" \
	"$TMP/s.data" 2>/dev/null || fail "import with another binary failed"
q "$TMP/s3.json.gz" | grep -q "^meta binary $TMP/bin/wl differs from the one recorded" &&
	! grep -qE ';(touch_pages|settle|main)( |;)' "$TMP/s3.folded" &&
	ok "another binary at the path: a note, never its symbols" ||
	fail "another binary: $(q "$TMP/s3.json.gz" | grep ^meta)"
mkdir -p "$TMP/bin2"
cp "$WL" "$TMP/bin2/wl"
HOME=$H perf record -q -e page-faults -c 1 -g -o "$TMP/c.data" -- \
	"$TMP/bin2/wl" 2000 0 1 >/dev/null 2>"$TMP/s.err" ||
	fail "perf record: $(cat "$TMP/s.err")"
rm "$TMP/bin2/wl"
HOME=$H "$EVPROF" import -o "$TMP/c.folded" "$TMP/c.data" 2>/dev/null &&
	grep -q ';touch_pages' "$TMP/c.folded" &&
	ok "a deleted binary found in perf's build-id cache" ||
	fail "build-id cache: no touch_pages"

# 9. perf record --buildid-mmap (the default of newer perf): the kernel
#    map is an MMAP2 with the kernel's build id and the file has no build
#    id section. Kernel frames are named as perf names them (this boot),
#    and with the build id made another one, shown as offsets from _text.
if perf record --buildid-mmap -q -e page-faults -c 1 -g -o "$TMP/bm.data" \
	-- "$WL" 3000 0 2 >/dev/null 2>"$TMP/bm.err"; then
	"$EVPROF" import -o "$TMP/bm.json.gz" -o "$TMP/bm.folded" \
		"$TMP/bm.data" 2>"$TMP/imp" || fail "--buildid-mmap: $(cat "$TMP/imp")"
	check_faults buildid-mmap "$TMP/bm.err" "$TMP/bm.json.gz" "$TMP/bm.data"
	q "$TMP/bm.json.gz" | grep -q "^meta the file records no build ids" &&
		fail "--buildid-mmap: the 'no build ids' note" ||
		ok "--buildid-mmap: MMAP2 build ids count as recorded"
	# perf's own name for the kernel function most samples pass through.
	ksym=$(perf script -F ip,sym,dso -i "$TMP/bm.data" 2>/dev/null | awk '
		NF == 0 { for (k in seen) n[k]++; delete seen; next }
		$NF == "([kernel.kallsyms])" { seen[$2] = 1 }
		END { for (k in seen) n[k]++
			for (k in n) if (n[k] > best) { best = n[k]; top = k }
			print top }')
	abs=$(grep -c '\[kernel\.kallsyms\]+0xffff' "$TMP/bm.folded")
	if [ -n "$ksym" ] && [ "$ksym" != "[unknown]" ]; then
		grep -q ";${ksym}_\[k\]" "$TMP/bm.folded" && [ "$abs" -eq 0 ] &&
			ok "--buildid-mmap: kernel frames named ($ksym, as perf)" ||
			fail "--buildid-mmap: no '$ksym' kernel frame ($abs absolute)"
	fi
	# The kernel MMAP2's build id (after its size byte and 3 reserved
	# bytes) changed: another kernel.
	kmap=$(perf script -D -i "$TMP/bm.data" 2>/dev/null |
		sed -n 's/^[0-9]* \(0x[0-9a-f]*\) .*PERF_RECORD_MMAP2 -1\/0:.*\[kernel\.kallsyms\].*/\1/p' |
		head -1)
	cp "$TMP/bm.data" "$TMP/bm2.data"
	printf '\377\377\377\377' | dd of="$TMP/bm2.data" bs=1 \
		seek=$((kmap + 44)) conv=notrunc status=none
	"$EVPROF" import -o "$TMP/bm2.json.gz" -o "$TMP/bm2.folded" \
		"$TMP/bm2.data" 2>"$TMP/imp" || fail "--buildid-mmap: $(cat "$TMP/imp")"
	# Offsets (below 4 GiB: 0x and at most 8 digits) vs addresses.
	rel=$(grep -o '\[kernel\.kallsyms\]+0x[0-9a-f]*' "$TMP/bm2.folded" |
		awk -F+ '{ if (length($2) <= 10) r++; else a++ }
			END { print r + 0, a + 0 }')
	if [ -n "$kmap" ] && [ "${rel% *}" -gt 0 ] && [ "${rel#* }" -eq 0 ] &&
		q "$TMP/bm2.json.gz" | grep -q "^meta kernel frames are not named: the file comes from another kernel.*offset from _text"; then
		ok "--buildid-mmap, other kernel: ${rel% *} frames as offsets from _text"
	else
		fail "--buildid-mmap, other kernel: (offsets, absolute) '$rel' at '$kmap'"
	fi
else
	skip "--buildid-mmap: this perf lacks it ($(head -1 "$TMP/bm.err"))"
fi

# 10. Options: an unknown format or weight, a missing file, help.
"$EVPROF" import --weight nosuch -o "$TMP/w.folded" "$TMP/pf.data" \
	2>"$TMP/imp" && fail "unknown weight accepted" ||
	grep -q "no event named 'nosuch'" "$TMP/imp" && ok "unknown weight said" ||
	fail "unknown weight: $(cat "$TMP/imp")"
"$EVPROF" import "$TMP/nosuch.data" 2>"$TMP/imp" && fail "missing file ok" ||
	grep -q "cannot open" "$TMP/imp" && ok "missing file said" ||
	fail "missing file: $(cat "$TMP/imp")"
"$EVPROF" import --format nosuch "$TMP/pf.data" 2>"$TMP/imp" &&
	fail "unknown format accepted" ||
	grep -q "unknown format 'nosuch' (firefox, folded, pprof, speedscope or svg;.*\.html" \
		"$TMP/imp" && ok "unknown format: every format named" ||
	fail "unknown format: $(cat "$TMP/imp")"
"$EVPROF" import --format speedscope -o "$TMP/ss.out" "$TMP/pf.data" \
	2>/dev/null && grep -q '"\$schema":"https://www.speedscope.app' "$TMP/ss.out" &&
	ok "--format speedscope" || fail "--format speedscope"
"$EVPROF" help import | grep -q -- "--symfs" && ok "help lists --symfs" ||
	fail "help import"

finish
