#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# evprof view and the page, in a real browser: Debian's chromium, headless,
# driven by playwright-core (tests/tools/view.mjs). wl_funcs faults A pages
# in fault_a() and B pages in fault_b(); the recording's split of
# page-faults between them (evprof report's totals) must be the split the
# page draws (frame widths within 1%) after the weight is switched to
# page-faults, for the page that record writes and for pages made from
# every format evprof writes (.json.gz, .pb.gz, folded). The offline page
# makes no network request (interception aborts and lists every request
# beyond the file); evprof view serves the same page on 127.0.0.1; with a
# base profile the page colours the functions that grew red and those that
# shrank blue, titled with both files; clicking a frame brings back the
# small paths drawn inside it. A page fits a 1400x900 window: a graph 150
# frames deep leaves its roots and the table's first rows in sight, and a
# 300-character C++ name is cut to one line, whole in its title.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
A=20000
B=10000

command -v node >/dev/null 2>&1 || { echo "SKIP: node missing"; exit 77; }
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] ||
	{ echo "SKIP: no chromium (Debian: apt-get install chromium)"; exit 77; }
if ! "$EVPROF" view -o "$TMP/none.html" /dev/null 2>"$TMP/avail" &&
	grep -q "built without its page" "$TMP/avail"; then
	echo "SKIP: $(cat "$TMP/avail")"
	exit 77
fi
if [ ! -d "$TOOLS/node_modules/playwright-core" ]; then
	(
		flock 9
		[ -d "$TOOLS/node_modules/playwright-core" ] ||
			npm ci --prefix "$TOOLS" --no-audit --no-fund \
				--loglevel=error >&2
	) 9>"$TOOLS/.install.lock"
	[ -d "$TOOLS/node_modules/playwright-core" ] ||
		{ echo "SKIP: npm ci --prefix $TOOLS failed"; exit 77; }
fi

# view.mjs ARGS... > JSON; jq-less reading through node.
browse() {
	node "$TOOLS/view.mjs" "$@" >"$TMP/b.json" 2>"$TMP/b.err" ||
		{ cat "$TMP/b.err" >&2; return 1; }
}
field() { # EXPR over the last browse's JSON, as JS
	node -e "const d = JSON.parse(require('fs').readFileSync('$TMP/b.json'));
		const v = $1; console.log(typeof v === 'string' ? v : JSON.stringify(v))"
}

# The recorded totals of page-faults: "<fault_a> <fault_b> <all>".
recorded() { # PROFILE
	"$EVPROF" report -s page-faults -n 0 "$1" | awk '
		$1 == "total:" { for (i = 2; i <= NF; i++)
			if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); all = $i } }
		/^by total/ { on = 1 }
		on && $NF == "[wl_funcs]" && $(NF - 1) == "fault_a" { a = $4 }
		on && $NF == "[wl_funcs]" && $(NF - 1) == "fault_b" { b = $4 }
		END { print a + 0, b + 0, all + 0 }'
}

# 1. One recording; the page straight from record, and every format.
"$EVPROF" record -e cpu-clock,page-faults -o "$TMP/r.json.gz" -o "$TMP/r.pb.gz" \
	-o "$TMP/r.html" -- "$FIXTURES/wl_funcs" $A $B >/dev/null 2>"$TMP/err" ||
	{ fail "record: $(cat "$TMP/err")"; finish; }
read -r ra rb rall <<<"$(recorded "$TMP/r.pb.gz")"
for f in a b; do
	got=$([ $f = a ] && echo "$ra" || echo "$rb")
	truth=$([ $f = a ] && echo $A || echo $B)
	within "$got" "$truth" 2 && ok "recorded fault_$f: $got page faults, truth $truth pages" ||
		fail "recorded fault_$f: $got page faults, truth $truth pages"
done
# A folded file weighed by page-faults: its counts come back as samples.
"$EVPROF" report -o "$TMP/r.folded" --weight page-faults "$TMP/r.pb.gz" ||
	fail "report -o r.folded"
for src in r.json.gz r.pb.gz r.folded; do
	"$EVPROF" view -o "$TMP/$src.html" "$TMP/$src" 2>"$TMP/err" ||
		fail "view -o from $src: $(cat "$TMP/err")"
done

check_page() { # PAGE WEIGHT [TITLE]
	local page=$1 w=$2 title=${3:-} name
	name=$(basename "$page")
	browse "$page" --offline --weight "$w" --funcs fault_a,fault_b ||
		{ fail "$name: the browser run failed"; return; }
	[ "$(field 'd.requests.length + d.errors.length')" = 0 ] &&
		ok "$name: no network request, no error" ||
		fail "$name: requests $(field d.requests), errors $(field d.errors)"
	if [ -n "$title" ]; then
		[ "$(field 'd.title + "|" + d.heading')" = "$title|$title" ] &&
			ok "$name: titled $title" ||
			fail "$name: titled '$(field d.title)', heading '$(field d.heading)'"
	fi
	field 'd.text' | grep -q fault_a && field 'd.text' | grep -q fault_b &&
		field 'd.frames' | grep -q '"touch"' &&
		ok "$name names fault_a, fault_b and touch" ||
		fail "$name: hot functions missing: $(field d.frames)"
	for f in a b; do
		local want=$([ $f = a ] && echo "$ra" || echo "$rb")
		local share=$(field "d.widths.fault_$f / d.widths.all")
		local rec=$(awk -v x="$want" -v t="$rall" 'BEGIN { print x / t }')
		within "$share" "$rec" 1 &&
			ok "$name: fault_$f is $share of the width, recorded $rec of $w" ||
			fail "$name: fault_$f is '$share' of the width, recorded $rec"
	done
}
check_page "$TMP/r.html" page-faults
check_page "$TMP/r.json.gz.html" page-faults r.json.gz
check_page "$TMP/r.pb.gz.html" page-faults r.pb.gz
check_page "$TMP/r.folded.html" samples r.folded

# 2. The counter names, a ratio's colours and legend, a thread filter.
browse "$TMP/r.html" --offline --colour "page-faults per ms" --thread "fault-b (" \
	--funcs fault_a,fault_b || fail "colour and thread: browser run"
field 'd.weights' | grep -q '"page-faults"' && field 'd.weights' | grep -q '"cpu"' &&
	ok "weights: $(field d.weights)" || fail "weights: $(field d.weights)"
field 'd.legend' | grep -q "page-faults per ms of cpu" &&
	ok "legend: $(field d.legend)" || fail "legend: '$(field d.legend)'"
[ "$(field 'd.widths.fault_a === undefined && d.widths.fault_b > 0')" = true ] &&
	ok "thread fault-b shows fault_b only" || fail "thread filter: $(field d.widths)"

# 3. evprof view serves the page on 127.0.0.1.
"$EVPROF" view --no-open "$TMP/r.pb.gz" >"$TMP/serve.out" 2>&1 &
srv=$!
for _ in $(seq 100); do
	url=$(grep -o 'http://127.0.0.1:[0-9]*/' "$TMP/serve.out")
	[ -n "$url" ] && break
	sleep 0.1
done
if [ -z "$url" ]; then
	fail "view printed no URL: $(cat "$TMP/serve.out")"
else
	ok "view serves $url"
	browse "$url" --weight page-faults --funcs fault_a,fault_b &&
		[ "$(field 'd.requests.length + d.errors.length')" = 0 ] &&
		within "$(field 'd.widths.fault_a / d.widths.all')" \
			"$(awk -v x="$ra" -v t="$rall" 'BEGIN { print x / t }')" 1 &&
		ok "the served page draws the recorded split" ||
		fail "served page: $(cat "$TMP/b.json" | head -c 400)"
	port=${url#http://127.0.0.1:}
	port=${port%/}
	# Another name for this host (DNS rebinding) gets no profile.
	exec 3<>"/dev/tcp/127.0.0.1/$port"
	printf 'GET / HTTP/1.1\r\nHost: evil.example:%s\r\n\r\n' "$port" >&3
	head -1 <&3 | grep -q "403" && ok "a foreign Host header gets 403" ||
		fail "a foreign Host header was served"
	exec 3<&-
fi
kill "$srv" 2>/dev/null
wait "$srv" 2>/dev/null

# 4. Differential: a second run with the split the other way round.
"$EVPROF" record -e cpu-clock,page-faults -o "$TMP/s.pb.gz" -- \
	"$FIXTURES/wl_funcs" $B $A >/dev/null 2>"$TMP/err" ||
	fail "second record: $(cat "$TMP/err")"
"$EVPROF" view --base "$TMP/r.pb.gz" -o "$TMP/d.html" "$TMP/s.pb.gz" ||
	fail "view --base"
"$EVPROF" diff -o "$TMP/d2.html" "$TMP/r.pb.gz" "$TMP/s.pb.gz" 2>"$TMP/err" ||
	fail "diff -o .html: $(cat "$TMP/err")"
rgb() { field "d.fills.$1" | tr -dc '0-9,' ; }
for page in d.html d2.html; do
	browse "$TMP/$page" --offline --weight page-faults --funcs fault_a,fault_b ||
		fail "$page: browser run"
	# fault_a went from 2/3 to 1/3 of the faults: blue; fault_b the reverse.
	IFS=, read -r ar ag abl <<<"$(rgb fault_a)"
	IFS=, read -r br bg bbl <<<"$(rgb fault_b)"
	[ -n "$abl" ] && [ "$abl" -gt "$ar" ] && [ "$br" -gt "$bbl" ] &&
		ok "$page: fault_a shrank (blue rgb($ar,$ag,$abl)), fault_b grew (red rgb($br,$bg,$bbl))" ||
		fail "$page colours: fault_a $(field d.fills.fault_a), fault_b $(field d.fills.fault_b)"
	field 'd.legend' | grep -q "grew" && ok "$page legend: $(field d.legend)" ||
		fail "$page legend: '$(field d.legend)'"
	want="evprof diff: r.pb.gz vs s.pb.gz"
	[ "$(field 'd.title + "|" + d.heading')" = "$want|$want" ] &&
		ok "$page: titled $want" ||
		fail "$page: titled '$(field d.title)', heading '$(field d.heading)'"
done

# 5. Small call paths are drawn inside their callers, and come back when
# a frame above them is clicked: the frame fills the chart, with more
# children drawn than before. A synthetic profile (bench/view_profile.c)
# has many such paths.
"$(dirname "$EVPROF")/bench_view_profile" "$TMP/syn.pb.gz" 50000 5000 &&
	"$EVPROF" view -o "$TMP/syn.html" "$TMP/syn.pb.gz" ||
	fail "synthetic profile"
browse "$TMP/syn.html" --offline --zoom || fail "zoom: browser run"
[ "$(field 'd.zoom.after > d.zoom.before && d.zoom.width === d.zoom.chart')" = true ] &&
	ok "zoom into $(field d.zoom.name): $(field d.zoom.before) -> $(field d.zoom.after) children drawn" ||
	fail "zoom: $(field d.zoom) $(field d.errors)"

# 6. A page that fits: 150 frames deep (2 700 px of graph), and a C++ name
# of 300 characters in the table.
long=
while [ ${#long} -lt 290 ]; do
	long+="ns::Tmpl<std::vector<int, std::allocator<int> > >::"
done
long="${long:0:290}::run(int)"
{
	printf 'deep;main'
	for i in $(seq 150); do printf ';d%d' "$i"; done
	printf ';%s 500\n' "$long"
	printf 'deep;main;work_b 300\ndeep;main;work_c 200\n'
} >"$TMP/deep.folded"
"$EVPROF" view -o "$TMP/deep.html" "$TMP/deep.folded" || fail "view deep.folded"
browse "$TMP/deep.html" --offline --layout --width 1400 --height 900 ||
	fail "layout: browser run"
[ "$(field 'd.layout.frames.length >= 3 && d.layout.frames.every((f) =>
	f.top >= 0 && f.bottom <= d.layout.vh)')" = true ] &&
	ok "1400x900: the graph's roots in sight" ||
	fail "1400x900: roots at $(field d.layout.frames)"
[ "$(field 'd.layout.rows.length === 3 && d.layout.rows.every((r) =>
	r.top >= 0 && r.bottom <= d.layout.vh)')" = true ] &&
	ok "1400x900: the table's first 3 rows in sight" ||
	fail "1400x900: table rows at $(field d.layout.rows)"
[ "$(field 'd.layout.cells.every((c) => c.lines === 1) && d.layout.scroll_w <= d.layout.vw')" = true ] &&
	ok "1400 px: every row one line, the page as wide as the window" ||
	fail "1400 px: lines $(field 'd.layout.cells.map((c) => c.lines)'), width $(field d.layout.scroll_w)"
[ "$(field "d.layout.cells.some((c) => c.title === '$long' && c.text === c.title)")" = true ] &&
	ok "the ${#long}-character name whole in its title" ||
	fail "the long name's title: $(field 'd.layout.cells.map((c) => c.title)')"

# 7. Bad input: one message, no page.
echo "not a profile" >"$TMP/bad"
if "$EVPROF" view -o "$TMP/bad.html" "$TMP/bad" 2>"$TMP/err"; then
	fail "view accepted garbage"
else
	grep -q "cannot read $TMP/bad" "$TMP/err" && [ ! -e "$TMP/bad.html" ] &&
		ok "garbage: $(head -1 "$TMP/err")" || fail "garbage: $(cat "$TMP/err")"
fi
"$EVPROF" view -o "$TMP/x.html" --weight nosuch "$TMP/r.pb.gz" 2>"$TMP/err" &&
	fail "--weight nosuch accepted" ||
	{ grep -q "no counter named 'nosuch'" "$TMP/err" && ok "--weight nosuch refused"; } ||
	fail "--weight nosuch: $(cat "$TMP/err")"
finish
