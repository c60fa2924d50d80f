#!/usr/bin/env bash
# pprof output and evprof report against independent readers: go tool pprof
# (Google's own parser and CheckValid), a node script over the Firefox JSON,
# awk over folded stacks; page faults per thread against each thread's
# rusage. One recording is written in every format at once.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

if ! command -v go >/dev/null 2>&1; then
	echo "SKIP: go is not installed (Debian golang-go; scripts/deps.sh)"
	exit 77
fi
command -v node >/dev/null 2>&1 || { echo "SKIP: node missing"; exit 77; }
export HOME=${HOME:-$TMP} GOCACHE=$TMP/gocache
pprof() { go tool pprof -symbolize=none "$@"; }

# pprof must read it: -raw and -top, exit 0 and some output.
pprof_reads() { # FILE
	if pprof -raw "$1" >"$TMP/raw" 2>"$TMP/perr" &&
		pprof -top "$1" >"$TMP/top" 2>>"$TMP/perr" &&
		grep -q '^Samples:' "$TMP/raw" && grep -q 'flat%' "$TMP/top"; then
		ok "go tool pprof -raw and -top read $(basename "$1")"
	else
		fail "go tool pprof cannot read $1: $(head -5 "$TMP/perr")"
	fi
}

# 1. One recording, every format.
"$EVPROF" record -e cycles,page-faults,context-switches -o "$TMP/r.json.gz" \
	-o "$TMP/r.pb.gz" -o "$TMP/r.folded" -- "$WL" 6000 0 2 100 \
	>/dev/null 2>"$TMP/err" || fail "record: $(cat "$TMP/err")"
for f in r.json.gz r.pb.gz r.folded; do
	[ -s "$TMP/$f" ] && ok "$f written" || fail "$f missing"
done
pprof_reads "$TMP/r.pb.gz"
grep -q 'page-faults/count' "$TMP/raw" && grep -q 'cpu/nanoseconds' "$TMP/raw" &&
	grep -q 'samples/count' "$TMP/raw" &&
	grep -q 'context-switches/count' "$TMP/raw" &&
	ok "sample types: samples, cpu, one per counter" ||
	fail "sample types: $(grep -A1 '^Samples:' "$TMP/raw")"
grep -q 'cpu/nanoseconds\[dflt\]' "$TMP/raw" && ok "default sample type cpu" ||
	fail "default sample type is not cpu"
grep -qE 'thread:\[faulter-0\]' "$TMP/raw" && grep -qE 'pid:\[[0-9]+\] tid:\[[0-9]+\]' "$TMP/raw" &&
	ok "labels thread, pid, tid" || fail "labels missing"
# The build id of the workload, as readelf sees it.
bid=$(readelf -n "$WL" | sed -n 's/.*Build ID: //p')
grep -qE "^[0-9]+: .* $WL $bid \[FN\]" "$TMP/raw" &&
	ok "mapping $(basename "$WL") carries build id $bid, has_functions" ||
	fail "no mapping with build id $bid"
grep -q 'touch_pages .*wl_faults.c:[0-9]' "$TMP/raw" &&
	ok "locations name functions with file:line" || fail "no touch_pages file:line"
# The function's start line, against the source itself.
decl=$(grep -n 'void touch_pages(' "$SRCDIR/tests/fixtures/wl_faults.c" | cut -d: -f1)
grep -q "touch_pages .*wl_faults.c:[0-9]* s=$decl\$" "$TMP/raw" &&
	ok "function start line $decl" || fail "touch_pages start line is not s=$decl"

# 2. Each thread's page faults through -tagfocus, against rusage.
for t in 0 1; do
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
	got=$(pprof -tags -sample_index=page-faults -tagfocus=thread=faulter-$t \
		"$TMP/r.pb.gz" 2>/dev/null |
		awk -v n="faulter-$t" '$NF == n { v = $1 } END { printf "%d", v }')
	if [ -n "$truth" ] && within "$got" "$truth" 2; then
		ok "pprof tagfocus faulter-$t: $got page faults, rusage $truth"
	else
		fail "pprof tagfocus faulter-$t: '$got' vs rusage '$truth'"
	fi
	rep=$("$EVPROF" report --per-thread -s page-faults "$TMP/r.pb.gz" |
		awk -v n="faulter-$t" '$1 == "==" && $3 == n { on = 1; next }
			on && $1 == "total:" { for (i = 2; i <= NF; i++)
				if ($i ~ /^page-faults=/) { sub(/.*=/, "", $i); print $i }
			on = 0 }')
	[ -n "$rep" ] && within "$rep" "$truth" 2 &&
		ok "report --per-thread faulter-$t: $rep" ||
		fail "report --per-thread faulter-$t: '$rep' vs '$truth'"
done

# 3. Per-function self and total of every column agree exactly.
# Each reader prints "COLUMN FUNC SELF TOTAL" lines, TOTAL != 0, sorted.
from_pprof() { # COLUMN
	pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
		-sample_index="$1" "$TMP/r.pb.gz" 2>/dev/null |
		awk -v c="$1" 'on { n = $6; for (i = 7; i <= NF; i++) n = n " " $i
				sub(/ \(inline\)$/, "", n)
				if ($4 != 0) print c, n, $1, $4 }
			$1 == "flat" { on = 1 }'
}
from_folded() { # COLUMN FILE
	awk -v c="$1" '{ n = split($0, w, " "); v = w[n]; s = substr($0, 1, length($0) - length(v) - 1)
		k = split(s, f, ";"); delete seen
		for (i = 2; i <= k; i++) { sub(/_\[k\]$/, "", f[i])
			if (!(f[i] in seen)) { seen[f[i]] = 1; tot[f[i]] += v } }
		self[f[k]] += v }
		END { for (x in tot) if (tot[x] != 0) print c, x, self[x] + 0, tot[x] }' "$2"
}
from_report() { # COLUMN FILE
	"$EVPROF" report -n 0 -s "$1" "$2" |
		awk -v c="$1" '$1 == "self%" { if (on) exit; on = 1
				for (i = 1; i <= NF; i++) if ($i == "function") col = i
				next }
			on && NF > 4 { self[$col] += $2; tot[$col] += $4 }
			END { for (x in tot) if (tot[x] != 0) print c, x, self[x], tot[x] }'
}
node "$TOOLS/fxfuncs.mjs" "$TMP/r.json.gz" | sort >"$TMP/fx.all" ||
	fail "fxfuncs failed"
for col in samples page-faults context-switches; do
	grep "^$col " "$TMP/fx.all" >"$TMP/fx" || true
	from_pprof "$col" | sort >"$TMP/pp"
	from_report "$col" "$TMP/r.pb.gz" | sort >"$TMP/rp"
	from_report "$col" "$TMP/r.json.gz" | sort >"$TMP/rf"
	if [ "$col" = samples ]; then
		from_folded "$col" "$TMP/r.folded" | sort >"$TMP/fo"
	else
		"$EVPROF" report -o "$TMP/c.folded" --weight "$col" "$TMP/r.json.gz" ||
			fail "convert to folded"
		from_folded "$col" "$TMP/c.folded" | sort >"$TMP/fo"
	fi
	n=$(wc -l <"$TMP/fx")
	# Counters attributed by their own samples sit in few functions.
	[ "$n" -ge "$([ "$col" = samples ] && echo 5 || echo 3)" ] ||
		fail "$col: only $n functions from the Firefox output"
	for x in pp rp rf fo; do
		if cmp -s "$TMP/fx" "$TMP/$x"; then
			ok "$col: $n functions agree exactly (firefox = $x)"
		else
			fail "$col: firefox vs $x differ: $(diff "$TMP/fx" "$TMP/$x" | head -6)"
		fi
	done
done

# 4. Sorting by a counter puts the faulting code first.
"$EVPROF" report -n 0 -s page-faults "$TMP/r.json.gz" >"$TMP/rep"
"$EVPROF" report -n 0 "$TMP/r.json.gz" >"$TMP/repcpu"
rank() { # FUNC FILE TABLE: row in table 1 (by self) or 2 (by total)
	awk -v f="$1" -v want="$3" '$1 == "self%" { t++; r = 0; next }
		t == want && NF > 4 { r++; for (i = 1; i <= NF; i++)
			if ($i == f) { print r; exit } }' "$2"
}
# By total, the workload's own code: touch_pages (the faulting loop) before
# settle (the CPU loop, which only carries the last faults' deltas).
tp=$(rank touch_pages "$TMP/rep" 2)
st=$(rank settle "$TMP/rep" 2)
tpp=$(awk '$1 == "self%" { t++; next } t == 2 && $NF == "[wl_faults]" &&
	$(NF-1) == "touch_pages" { sub(/%/, "", $3); print int($3); exit }' "$TMP/rep")
if [ -n "$tp" ] && [ -n "$st" ] && [ "$tp" -lt "$st" ] && [ "${tpp:-0}" -ge 70 ]; then
	ok "--sort page-faults: touch_pages row $tp ($tpp% of faults), settle row $st"
else
	fail "--sort page-faults order: touch_pages '$tp' ($tpp%), settle '$st'"
fi
# The default sort is by CPU time. Which function has most depends on the
# host's speed (settle spins 30 ms; a slow host's 6000 page faults can
# take longer), so the truth is go tool pprof's own ranking of the same
# recording by flat cpu: report's first row is one of pprof's (ties).
firstcpu=$(awk '$1 == "self%" { for (i = 1; i <= NF; i++) if ($i == "function") c = i
	getline; print $c; exit }' "$TMP/repcpu")
pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 \
	-sample_index=cpu "$TMP/r.pb.gz" 2>/dev/null |
	awk 'on { n = $6; for (i = 7; i <= NF; i++) n = n " " $i
			sub(/ \(inline\)$/, "", n)
			if (top == "") top = $1
			if ($1 == top) print n }
		$1 == "flat" { on = 1 }' >"$TMP/cputop"
if grep -q '^# evprof report: .*sorted by cpu-ms' "$TMP/repcpu" &&
	[ -n "$firstcpu" ] && grep -qxF "$firstcpu" "$TMP/cputop"; then
	ok "default sort (CPU): $firstcpu first, as pprof ranks by cpu"
else
	fail "default sort: '$firstcpu' first, pprof ranks first: $(tr '\n' ' ' <"$TMP/cputop")"
fi
grep -q 'page-faults/cpu-s' "$TMP/rep" && ok "faults per CPU second column" ||
	fail "no page-faults/cpu-s ratio"

# 5. Every pprof the tests write reads; conversions keep start lines, build
# ids and the --weight default type.
"$EVPROF" record -e cpu-clock,page-faults -g none -o "$TMP/flat.pb.gz" \
	-- "$WL" 500 0 >/dev/null 2>&1 || fail "record -g none"
pprof_reads "$TMP/flat.pb.gz"
"$EVPROF" report -o "$TMP/conv.pb.gz" --weight page-faults "$TMP/r.json.gz" ||
	fail "convert to pprof"
pprof_reads "$TMP/conv.pb.gz"
grep -q "touch_pages .*wl_faults.c:[0-9]* s=$decl\$" "$TMP/raw" &&
	ok "start line kept through the Firefox file" || fail "start line lost in conversion"
grep -q 'page-faults/count\[dflt\]' "$TMP/raw" && ok "--weight picks the default type" ||
	fail "default type not page-faults"
# The build id survives both readers (codeId hex, mapping build_id hex),
# against readelf's.
grep -qE "^[0-9]+: .* $WL $bid \[FN\]" "$TMP/raw" &&
	ok "build id kept through the Firefox file" || fail "build id lost from the Firefox file"
"$EVPROF" report -o "$TMP/pp2.pb.gz" "$TMP/r.pb.gz" || fail "convert pprof to pprof"
pprof_reads "$TMP/pp2.pb.gz"
grep -qE "^[0-9]+: .* $WL $bid \[FN\]" "$TMP/raw" &&
	ok "build id kept through the pprof reader" || fail "build id lost by the pprof reader"
"$EVPROF" report -s nosuch "$TMP/r.pb.gz" >/dev/null 2>"$TMP/e"
[ $? -eq 1 ] && grep -q "no counter named 'nosuch'" "$TMP/e" &&
	ok "unknown --sort counter refused" || fail "unknown sort: $(cat "$TMP/e")"
"$EVPROF" report -s pagefaults "$TMP/r.pb.gz" >/dev/null 2>"$TMP/e"
[ $? -eq 1 ] && grep -q "no counter named 'pagefaults' in $TMP/r.pb.gz; did you mean 'page-faults'? (it has samples, cpu, .*page-faults" "$TMP/e" &&
	ok "a misspelt --sort: did you mean, and the list" || fail "misspelt sort: $(cat "$TMP/e")"
# Without -o, --weight sorts the table.
"$EVPROF" report --weight page-faults "$TMP/r.pb.gz" 2>/dev/null | head -1 >"$TMP/h"
grep -q "sorted by page-faults" "$TMP/h" && ok "report --weight without -o sorts by it" ||
	fail "report --weight: $(cat "$TMP/h")"
# Hand-built pprof bytes (fuzz corpus): one location, lines g:9 inlined
# into f (x.c:3), 7 samples. Inline frames are functions of their own.
hm=$SRCDIR/fuzz/corpus/profile/pprof-inline-handmade
"$EVPROF" report -n 0 -s samples "$hm" >"$TMP/hm"
awk '$1 == "self%" { t++; next } t == 1 && $NF == "[?]" { print $(NF-1), $2, $4 }' \
	"$TMP/hm" | sort | tr '\n' ' ' >"$TMP/hmr"
[ "$(cat "$TMP/hmr")" = "f 0 7 g 7 7 " ] && ok "hand-built inline pprof: g self 7, f total 7" ||
	fail "hand-built inline pprof read as: $(cat "$TMP/hmr")"
"$EVPROF" report -o "$TMP/hm.pb.gz" "$hm" && pprof -raw "$TMP/hm.pb.gz" >"$TMP/hmraw" 2>&1
grep -A1 -E '^ +1: .* g :9' "$TMP/hmraw" | grep -q 'f x.c:3' &&
	ok "written back: one location, lines g:9 then f x.c:3" ||
	fail "inline lines written as: $(sed -n '/^Locations/,$p' "$TMP/hmraw")"
# A missing output directory is a write error, not a missing counter.
"$EVPROF" report -o "$TMP/nodir/x.folded" "$TMP/r.pb.gz" 2>"$TMP/e"
[ $? -eq 1 ] && grep -q "cannot write $TMP/nodir/x.folded" "$TMP/e" &&
	! grep -q "no counter" "$TMP/e" && ok "missing output directory reported as such" ||
	fail "missing output directory: $(cat "$TMP/e")"
# With --weight naming no counter, that is what is said, with -o too.
"$EVPROF" report -o "$TMP/nodir/x.folded" --weight nosuch "$TMP/r.pb.gz" 2>"$TMP/e"
[ $? -eq 1 ] && grep -q "no counter named 'nosuch'" "$TMP/e" &&
	ok "unknown --weight named: $(cat "$TMP/e")" || fail "unknown --weight: $(cat "$TMP/e")"
# gzip members concatenated are one file (gzip(1), RFC 1952): every
# member's stacks count.
head -n 3 "$TMP/r.folded" | gzip >"$TMP/two.folded.gz"
tail -n +4 "$TMP/r.folded" | gzip >>"$TMP/two.folded.gz"
"$EVPROF" report -n 0 -s samples "$TMP/r.folded" >"$TMP/one" 2>&1
"$EVPROF" report -n 0 -s samples "$TMP/two.folded.gz" >"$TMP/two" 2>&1
[ "$(wc -l <"$TMP/r.folded")" -gt 3 ] && cmp -s "$TMP/one" "$TMP/two" &&
	ok "concatenated gzip members read whole" ||
	fail "concatenated gzip: $(diff "$TMP/one" "$TMP/two" | head -5)"
printf 'not a profile' >"$TMP/bad.pb.gz"
"$EVPROF" report "$TMP/bad.pb.gz" >/dev/null 2>"$TMP/e"
[ $? -eq 1 ] && ok "garbage input refused: $(cat "$TMP/e")" || fail "garbage accepted"
finish
