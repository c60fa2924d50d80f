#!/usr/bin/env bash
# Each counter where its events happened: wl_burst's threads take all
# their page faults in touch_pages() and none in spin_for(), where they
# spend 40 times as long, and count both themselves (getrusage around
# every call). Attributed by its own samples, page-faults must land on
# touch_pages (>= 97%) and not on spin_for (<= 2%) at every period, each
# thread's total within 0.5% of its rusage, in task and cpu mode, without
# one THROTTLE. Riding along on cpu-clock's samples (--attribution ride)
# the same faults go mostly to spin_for: the check that fails without
# own attribution. And the sampling event is a counter too: -e
# page-faults alone gives each thread's faults. The same with the BPF
# engine where it can run (per CPU, each counter's own samples told apart
# in the kernel by their attach cookie).
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_burst

# value KEY FILE-OF-LINE: KEY=N's N on the line given.
value() {
	tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"
}

# shares LABEL FILE ERR [ride]: per burst thread of
# the recording FILE (its stderr ERR), page-faults vs rusage and where.
shares() {
	local label=$1 f=$2 err=$3 want=${4:-} line tid truth tot touch spin
	node "$TOOLS/fxquery.mjs" "$f" --through touch_pages >"$TMP/qt" &&
		node "$TOOLS/fxquery.mjs" "$f" --through spin_for >"$TMP/qs" ||
		{ fail "$label: cannot read $f"; return; }
	for t in 0 1; do
		line=$(grep "^thread burst-$t " "$err")
		tid=$(value tid "$line")
		truth=$(value faults "$line")
		tot=$(value page-faults "$(grep "^thread burst-$t tid=$tid " "$TMP/qt")")
		touch=$(value page-faults "$(grep "^through touch_pages tid=$tid " "$TMP/qt")")
		spin=$(value page-faults "$(grep "^through spin_for tid=$tid " "$TMP/qs")")
		if [ -n "$tot" ] && within "$tot" "$truth" 0.5; then
			ok "$label burst-$t: $tot page faults, rusage $truth"
		else
			fail "$label burst-$t: '$tot' page faults, rusage '$truth'"
			continue
		fi
		if [ "$want" = ride ]; then
			awk -v s="$spin" -v t="$tot" 'BEGIN { exit !(s > t / 2) }' &&
				ok "$label burst-$t: riding along, $spin of $tot on spin_for" ||
				fail "$label burst-$t: riding along, only '$spin' of $tot on spin_for"
			continue
		fi
		awk -v a="$touch" -v b="$spin" -v t="$tot" \
			'BEGIN { exit !(a >= 0.97 * t && b <= 0.02 * t) }' &&
			ok "$label burst-$t: $touch through touch_pages, $spin through spin_for" ||
			fail "$label burst-$t: '$touch' through touch_pages, '$spin' through spin_for, of $tot"
	done
	if grep -q "throttled" "$err"; then
		fail "$label: $(grep throttled "$err")"
	fi
}

# record LABEL ARGS... -- WL ARGS: one recording into $TMP/LABEL.json.gz.
record() {
	local label=$1
	shift
	"$EVPROF" record -o "$TMP/$label.json.gz" "$@" >"$TMP/$label.out" \
		2>"$TMP/$label.err" ||
		fail "$label: record failed: $(tail -3 "$TMP/$label.err")"
}

cpu=$(first_cpu)
for mode in task cpu; do
	for p in "" /period=1/ /period=16/ /period=256/; do
		label=$mode${p//[\/=]/}
		record "$label" --mode "$mode" -e "cpu-clock,page-faults$p" -F 2000 \
			-- "$WL" 2 150 100 2000
		shares "$label" "$TMP/$label.json.gz" "$TMP/$label.err"
	done
done
# Both threads on one CPU: a per-CPU period spans them.
record cpu-one --mode cpu -e cpu-clock,page-faults -F 2000 \
	-- "$WL" 2 150 100 2000 "$cpu"
shares cpu-one "$TMP/cpu-one.json.gz" "$TMP/cpu-one.err"
record ride --attribution ride -e cpu-clock,page-faults -F 2000 \
	-- "$WL" 2 150 100 2000
shares ride "$TMP/ride.json.gz" "$TMP/ride.err" ride

# The sampling event alone is a counter, in every output.
record alone -e page-faults -o "$TMP/alone.pb.gz" -- "$WL" 2 100 100 500
shares alone "$TMP/alone.json.gz" "$TMP/alone.err"
if "$EVPROF" report --sort page-faults -n 3 "$TMP/alone.pb.gz" >"$TMP/rep" 2>&1; then
	grep -q "touch_pages" "$TMP/rep" &&
		ok "pprof output weighs by page-faults: $(grep -m1 touch_pages "$TMP/rep" | tr -s ' ')" ||
		fail "report of the pprof output lacks touch_pages: $(head -12 "$TMP/rep")"
else
	fail "report --sort page-faults of the pprof output: $(cat "$TMP/rep")"
fi
grep -q "samples of page-faults" "$TMP/alone.err" &&
	ok "closing line names the sampler" ||
	fail "closing line: $(tail -2 "$TMP/alone.err")"

# The BPF engine sums in the kernel: the same truths, the same periods,
# both threads on one CPU, riding along, the sampling event alone.
if bpf_engine; then
	for p in "" /period=1/ /period=16/ /period=256/; do
		label=bpf${p//[\/=]/}
		record "$label" --engine bpf -e "cpu-clock,page-faults$p" -F 2000 \
			-- "$WL" 2 150 100 2000
		shares "$label" "$TMP/$label.json.gz" "$TMP/$label.err"
	done
	record bpf-one --engine bpf -e cpu-clock,page-faults -F 2000 \
		-- "$WL" 2 150 100 2000 "$cpu"
	shares bpf-one "$TMP/bpf-one.json.gz" "$TMP/bpf-one.err"
	record bpf-ride --engine bpf --attribution ride \
		-e cpu-clock,page-faults -F 2000 -- "$WL" 2 150 100 2000
	shares bpf-ride "$TMP/bpf-ride.json.gz" "$TMP/bpf-ride.err" ride
	record bpf-alone --engine bpf -e page-faults -- "$WL" 2 100 100 500
	shares bpf-alone "$TMP/bpf-alone.json.gz" "$TMP/bpf-alone.err"
	grep -q "of counters on their own" "$TMP/bpf.err" &&
		! grep -q "(+0 of counters on their own)" "$TMP/bpf.err" &&
		ok "bpf: $(grep -o '[0-9]* samples (+[0-9]* of counters on their own)' "$TMP/bpf.err")" ||
		fail "bpf: no counter sampled on its own: $(grep 'engine bpf' "$TMP/bpf.err")"
fi
finish
