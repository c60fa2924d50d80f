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
			fail "$label burst-$t: '$tot' page faults, rusage '$truth'; $(grep -E 'lost|named another|unsampled' "$err" | cut -c1-160 | tr '\n' ' ')"
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

# record LABEL ARGS... -- WL ARGS: one recording into $TMP/LABEL.json.gz
# (once more when the kernel lost records: unlost).
record() {
	local label=$1
	shift
	unlost "$TMP/$label.err" "$EVPROF" record -o "$TMP/$label.json.gz" "$@" \
		>"$TMP/$label.out" ||
		fail "$label: record failed: $(tail -3 "$TMP/$label.err")"
}

cpu=$(first_cpu)
for mode in task cpu; do
	for p in "" /period=1/ /period=16/ /period=256/; do # "": 64
		label=$mode${p//[\/=]/}
		# A sample at every fault: fewer of them, for slow readers (ASan).
		rounds=150
		[ "$p" != /period=1/ ] || rounds=50
		record "$label" --mode "$mode" -e "cpu-clock,page-faults$p" -F 2000 \
			-- "$WL" 2 "$rounds" 100 2000
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

# Every reader weighs page-faults by its own samples. The Firefox
# Profiler's loader: each thread's page-faults track sums what the thread
# counted.
if FXLOAD_TOTALS=1 bash "$TOOLS/fxload.sh" "$TMP/task.json.gz" >"$TMP/load" 2>&1; then
	node "$TOOLS/fxquery.mjs" "$TMP/task.json.gz" >"$TMP/q"
	for t in 0 1; do
		want=$(value page-faults "$(grep "^thread burst-$t " "$TMP/q")")
		got=$(awk -v n="burst-$t" '$1 == "loader-total" && $4 == n &&
			$5 == "page-faults" { print $3 }' "$TMP/load")
		[ -n "$want" ] && [ "$got" = "$want" ] &&
			ok "the profiler's loader: burst-$t page-faults track $got" ||
			fail "the profiler's loader: burst-$t page-faults track '$got', file '$want'"
	done
else
	[ $? -eq 77 ] && skip "no Firefox Profiler loader" ||
		fail "loader: $(tail -3 "$TMP/load")"
fi
# diff per counter: from riding along to own samples, page faults move
# from spin_for to touch_pages.
"$EVPROF" diff -n 0 -w page-faults "$TMP/ride.json.gz" "$TMP/task.json.gz" \
	>"$TMP/diff" 2>&1 || fail "diff: $(cat "$TMP/diff")"
moved=$(awk '/^by self/ { on = 1; getline; for (i = 1; i <= NF; i++)
		if ($i == "page-faults:diff") c = i; next }
	on && /^$/ { on = 0 }
	on && ($(NF - 1) == "touch_pages" || $(NF - 1) == "spin_for") {
		printf "%s=%s ", $(NF - 1), $c }' "$TMP/diff")
case $moved in
*touch_pages=+[0-9]*spin_for=-[0-9]* | *spin_for=-[0-9]*touch_pages=+[0-9]*)
	ok "diff ride -> own by page-faults: $moved" ;;
*) fail "diff ride -> own by page-faults: '$moved'" ;;
esac
# The page in a real browser, weighed by page-faults.
if [ -x "${CHROMIUM:-/usr/bin/chromium}" ] &&
	[ -d "$TOOLS/node_modules/playwright-core" ] &&
	"$EVPROF" view -o "$TMP/task.html" "$TMP/task.json.gz" 2>/dev/null; then
	if node "$TOOLS/view.mjs" "$TMP/task.html" --offline --weight page-faults \
		--funcs touch_pages,spin_for >"$TMP/b.json" 2>"$TMP/b.err"; then
		shares_px=$(node -e "const w = JSON.parse(require('fs').readFileSync(
			'$TMP/b.json')).widths; console.log((w.touch_pages || 0) / w.all,
			(w.spin_for || 0) / w.all)")
		awk -v t="${shares_px% *}" -v s="${shares_px#* }" \
			'BEGIN { exit !(t >= 0.97 && s <= 0.02) }' &&
			ok "the page by page-faults: touch_pages, spin_for shares $shares_px" ||
			fail "the page by page-faults: touch_pages, spin_for shares '$shares_px'"
	else
		fail "view.mjs: $(tail -3 "$TMP/b.err")"
	fi
else
	skip "no browser, its driver or the page here"
fi
# Windows of a continuous recording: each window's counts where they
# happened, summed over the windows (pprof files, read by report).
"$EVPROF" record --continuous --interval 0.2 --output-dir "$TMP/w" \
	-e cpu-clock,page-faults -F 2000 -- "$WL" 2 150 100 2000 \
	>/dev/null 2>"$TMP/cont.err" || fail "continuous: $(tail -3 "$TMP/cont.err")"
for f in "$TMP"/w/*.pb.gz; do
	"$EVPROF" report -s page-faults -n 0 "$f" | awk '
		$1 == "total:" { for (i = 2; i <= NF; i++)
			if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); all = $i } }
		/^by total/ { on = 1 }
		on && $(NF - 1) == "touch_pages" { t = $4 }
		on && $(NF - 1) == "spin_for" { s = $4 }
		END { print all + 0, t + 0, s + 0 }'
done | awk '{ a += $1; t += $2; s += $3; n++ }
	END { print n, a, t, s }' >"$TMP/cont"
read -r nwin all touch spin <"$TMP/cont"
truth=$(sed -n 's/^thread burst-[01] .* touch=\([0-9]*\).*/\1/p' "$TMP/cont.err" |
	awk '{ s += $1 } END { print s + 0 }')
if [ "$nwin" -ge 2 ] && within "$touch" "$truth" 0.5 &&
	awk -v s="$spin" -v a="$all" 'BEGIN { exit !(s <= 0.02 * a) }'; then
	ok "$nwin windows: $touch page faults through touch_pages (its own count $truth), $spin through spin_for, of $all"
else
	fail "$nwin windows: '$touch' through touch_pages (its own count $truth), '$spin' through spin_for, of '$all'"
fi

# A rate the kernel refuses (a frequency above its maximum sample rate, a
# period with the top bit set): that counter rides along, said on stderr
# and in the profile, and the recording is whole.
for term in freq=1000000000 period=0x8000000000000000; do
	record "bad-${term%%=*}" -e "cpu-clock,page-faults/$term/" \
		-- "$WL" 2 50 100 500
	err=$TMP/bad-${term%%=*}.err
	grep -q "page-faults cannot sample on its own (.*): its counts ride on cpu-clock's samples" "$err" &&
		ok "page-faults/$term/: said it rides along" ||
		fail "page-faults/$term/: no note: $(tail -3 "$err")"
	node "$TOOLS/fxquery.mjs" "$TMP/bad-${term%%=*}.json.gz" >"$TMP/q"
	grep -q "^meta page-faults cannot sample on its own" "$TMP/q" &&
		ok "page-faults/$term/: the note is in the profile" ||
		fail "page-faults/$term/: no note in the profile"
	line=$(grep "^thread burst-0 " "$err")
	got=$(value page-faults "$(grep "^thread burst-0 tid=$(value tid "$line") " "$TMP/q")")
	[ -n "$got" ] && within "$got" "$(value faults "$line")" 0.5 &&
		ok "page-faults/$term/: burst-0 $got page faults, rusage $(value faults "$line")" ||
		fail "page-faults/$term/: burst-0 '$got' page faults, rusage $(value faults "$line")"
done

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
