#!/usr/bin/env bash
# speedscope output, checked with speedscope's own schema and app: one
# profile per thread and column (CPU time and each counter), each
# page-faults profile's total the thread's own rusage count; the app opens
# on the heaviest profile of the weight (here a faulter's, not the main
# thread's profile 0).
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
WL=$FIXTURES/wl_faults

# Two faulting threads and the main thread: 3 threads, 3 columns.
"$EVPROF" record -e cpu-clock,page-faults,context-switches \
	-o "$TMP/a.speedscope.json" -o "$TMP/a.json.gz" \
	-- "$WL" 4000 0 2 100 >/dev/null 2>"$TMP/err" ||
	fail "record: $(tail -3 "$TMP/err")"
bash "$TOOLS/ensure.sh" >"$TMP/ss" 2>&1 &&
	node "$TOOLS/speedscope_check.mjs" "$TMP/a.speedscope.json" >"$TMP/ss" 2>&1
status=$?
[ "$status" -eq 77 ] && {
	echo "SKIP: $(cat "$TMP/ss")"
	exit 77
}
[ "$status" -eq 0 ] && ok "valid against speedscope's schema, loaded in its app" ||
	fail "speedscope check: $(cat "$TMP/ss")"
n=$(sed -n 's/^listed //p' "$TMP/ss")
[ "$n" = 9 ] && ok "the app lists 9 profiles (3 threads x cpu, 2 counters)" ||
	fail "the app lists '$n' profiles: $(cat "$TMP/ss")"
heaviest() { # FILE COLUMN: the index of that column's heaviest profile
	node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
let at = -1, best = -1;
d.profiles.forEach((p, i) => {
  const s = p.weights.reduce((a, v) => a + v, 0);
  if (p.name.endsWith(" " + process.argv[2]) && s > best) { best = s; at = i; }
});
console.log(at);' "$1" "$2"
}
want=$(heaviest "$TMP/a.speedscope.json" cpu)
active=$(sed -n 's/^active //p' "$TMP/ss")
[ "$want" -gt 0 ] && [ "$active" = "$want" ] &&
	ok "the app opens on profile $active, the heaviest cpu profile" ||
	fail "the app opens on profile '$active', the heaviest cpu profile is $want"
for t in 0 1; do
	truth=$(sed -n "s/^thread faulter-$t tid=[0-9]* faults=//p" "$TMP/err")
	got=$(awk -F '\t' -v n="faulter-$t" '$1 ~ "^profile " n " \\(tid" &&
		$1 ~ / page-faults$/ { gsub(/,/, "", $2); print $2 }' "$TMP/ss")
	if [ -n "$got" ] && within "$got" "$truth" 0.5; then
		ok "faulter-$t page-faults profile weighs $got ~ rusage $truth"
	else
		fail "faulter-$t page-faults profile '$got' vs rusage '$truth'"
	fi
	grep -q "^profile faulter-$t (tid [0-9]*) cpu	" "$TMP/ss" &&
		ok "faulter-$t has a cpu profile" || fail "no faulter-$t cpu profile"
done

# --format picks it for any name; report converts to it by name, the
# same page-fault total.
"$EVPROF" record --format speedscope -e cpu-clock,page-faults \
	-o "$TMP/b.out" -- "$WL" 100 0 1 0 >/dev/null 2>"$TMP/err" ||
	fail "record --format speedscope: $(tail -3 "$TMP/err")"
node "$TOOLS/speedscope_check.mjs" --schema-only "$TMP/b.out" >"$TMP/b" 2>&1 &&
	ok "--format speedscope writes a valid file" ||
	fail "--format speedscope: $(cat "$TMP/b")"
"$EVPROF" report -o "$TMP/c.speedscope.json" "$TMP/a.json.gz" 2>"$TMP/err" ||
	fail "report -o: $(cat "$TMP/err")"
sum() { # FILE COLUMN: the weights of every profile of that column
	node -e '
const d = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
let s = 0;
for (const p of d.profiles)
  if (p.name.endsWith(" " + process.argv[2])) s += p.weights.reduce((a, v) => a + v, 0);
console.log(s);' "$1" "$2"
}
a=$(sum "$TMP/a.speedscope.json" page-faults)
c=$(sum "$TMP/c.speedscope.json" page-faults)
[ "$a" -gt 0 ] && [ "$a" = "$c" ] &&
	ok "report -o .speedscope.json: the same $c page faults" ||
	fail "converted page faults $c vs recorded $a"
node "$TOOLS/speedscope_check.mjs" --schema-only "$TMP/c.speedscope.json" \
	>/dev/null 2>&1 && ok "converted file valid" || fail "converted file invalid"
"$EVPROF" report --weight page-faults -o "$TMP/f.speedscope.json" \
	"$TMP/a.json.gz" 2>"$TMP/err" || fail "report --weight: $(cat "$TMP/err")"
want=$(heaviest "$TMP/f.speedscope.json" page-faults)
active=$(node -p 'require(process.argv[1]).activeProfileIndex' "$TMP/f.speedscope.json")
[ "$want" -gt 0 ] && [ "$active" = "$want" ] &&
	ok "--weight page-faults: activeProfileIndex $active, the heaviest" ||
	fail "--weight page-faults: activeProfileIndex '$active', the heaviest $want"
"$EVPROF" report --weight no-such -o "$TMP/d.speedscope.json" \
	"$TMP/a.json.gz" 2>"$TMP/err"
[ $? -ne 0 ] && grep -q "no-such" "$TMP/err" &&
	ok "an unknown --weight is refused by name" ||
	fail "unknown --weight: $(cat "$TMP/err")"
finish
