#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The habits of a command-line tool: --version names the version the
# build declares, the source revision and kernel features that agree with
# the running kernel; `help CMD` lists each command's options; the installed man pages render and
# carry every option of --help; bash completion completes commands and
# options; options parse as getopt_long does.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$EVPROF")
cmds="record report diff import view stat info"

# 1. --version
"$EVPROF" --version >"$TMP/v" || fail "--version exit status"
want=$(sed -n 's/^project(evprof VERSION \([0-9.]*\).*/\1/p' "$SRCDIR/CMakeLists.txt")
if head -1 "$TMP/v" | grep -q "^evprof $want ("; then
	ok "version $want: $(head -1 "$TMP/v")"
else
	fail "--version '$(head -1 "$TMP/v")' lacks $want"
fi
if head -1 "$TMP/v" | grep -qE '\(([0-9a-f]{7,}(-dirty)?|unknown)\)$'; then
	ok "source revision named"
else
	fail "no source revision in '$(head -1 "$TMP/v")'"
fi
grep -q "^built with: elfutils [0-9]" "$TMP/v" && ok "libraries listed" ||
	fail "no library versions: $(cat "$TMP/v")"
# The kernel features it names agree with the kernel it runs on: inherit
# with PERF_SAMPLE_READ exists from Linux 6.12.
kv=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
want=$([ "$kv" -ge 6012 ] && echo yes || echo no)
if grep -qE "^  inherit\+sample_read +$want " "$TMP/v"; then
	ok "--version: inherit+sample_read $want on Linux $(uname -r)"
else
	fail "--version: inherit+sample_read is not '$want' on $(uname -r)"
fi

# 2. help CMD lists the options each command takes (written out here).
declare -A opts=(
	[record]="--events --freq --count --call-graph --output --format --weight --mode --duration --pid --all-cpus --include-idle --off-cpu"
	[stat]="--events --interval --per-thread --pid --all-cpus"
	[report]="--sort --top --per-thread --output --weight"
	[diff]="--normalize --weight --limit --output"
	[import]="--output --format --weight --symfs --no-inline"
	[view]="--output --port --no-open --weight --base"
	[info]=""
)
for c in $cmds; do
	"$EVPROF" help "$c" >"$TMP/h1" || { fail "help $c"; continue; }
	missing=
	for o in ${opts[$c]}; do
		grep -qF -- "$o" "$TMP/h1" || missing="$missing $o"
	done
	[ -s "$TMP/h1" ] && [ -z "$missing" ] && ok "help $c lists its options" ||
		fail "help $c lacks$missing"
done

# 3. Installed man pages carry every option of --help.
cmake --install "$BUILD" --prefix "$TMP/inst" >/dev/null 2>&1 ||
	fail "cmake --install"
for c in $cmds; do
	page=$(MANPATH="$TMP/inst/share/man" MANPAGER=cat MANWIDTH=100 \
		man "evprof-$c" 2>/dev/null)
	if [ -z "$page" ]; then
		fail "man evprof-$c does not render"
		continue
	fi
	missing=
	for o in $("$EVPROF" help "$c" | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "$o" <<<"$page" || missing="$missing $o"
	done
	[ -z "$missing" ] && ok "man evprof-$c has every option of --help" ||
		fail "man evprof-$c lacks$missing"
done
MANPATH="$TMP/inst/share/man" MANPAGER=cat man evprof 2>/dev/null |
	grep -q "evprof-record" && ok "man evprof lists the commands" ||
	fail "man evprof"

# 4. Bash completion, as installed.
comp="$TMP/inst/share/bash-completion/completions/evprof"
if [ -f "$comp" ]; then
	got=$(PATH="$BUILD:$PATH" bash -c '
		. "$1"
		COMP_WORDS=(evprof rec); COMP_CWORD=1; _evprof; echo "${COMPREPLY[*]}"
		COMP_WORDS=(evprof record --form); COMP_CWORD=2; _evprof; echo "${COMPREPLY[*]}"
		COMP_WORDS=(evprof stat --per); COMP_CWORD=2; _evprof; echo "${COMPREPLY[*]}"
		COMP_WORDS=(evprof diff --norm); COMP_CWORD=2; _evprof; echo "${COMPREPLY[*]}"
		COMP_WORDS=(evprof help di); COMP_CWORD=2; _evprof; echo "${COMPREPLY[*]}"
	' _ "$comp")
	[ "$got" = "record
--format
--per-thread
--normalize
diff" ] && ok "completion: record, --format, --per-thread, diff --normalize, help diff" ||
		fail "completion gave: $got"
else
	fail "no bash completion installed"
fi

# 5. Options as getopt_long parses them from each command's table; what
# it refuses, in one line that points at --help.
for c in $cmds; do
	[ "$c" = info ] && continue # takes no options
	"$EVPROF" "$c" --bogus x >"$TMP/o" 2>"$TMP/e"
	rc=$?
	[ $rc = 2 ] && [ ! -s "$TMP/o" ] && [ "$(wc -l <"$TMP/e")" = 1 ] &&
		grep -qx "evprof $c: unknown option '--bogus'; 'evprof $c --help' lists the options" "$TMP/e" &&
		ok "$c --bogus: refused in one line, exit 2" ||
		fail "$c --bogus: exit $rc, $(head -3 "$TMP/e")"
done
# A misspelt option is named; a value missing is said.
"$EVPROF" record --ouput x.json -- true >"$TMP/o" 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -qx "evprof record: unknown option '--ouput' (did you mean '--output'?); 'evprof record --help' lists the options" "$TMP/e" &&
	ok "record --ouput: did you mean --output" ||
	fail "record --ouput: exit $rc, $(head -1 "$TMP/e")"
"$EVPROF" report --sort 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -qx "evprof report: --sort needs a value; 'evprof report --help' lists the options" "$TMP/e" &&
	ok "report --sort: needs a value" ||
	fail "report --sort: exit $rc, $(head -1 "$TMP/e")"
# An abbreviation that fits several names lists them in the table's order.
"$EVPROF" record --p 1 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -qx "evprof record: '--p' could be --pid --push --push-label --push-wait" "$TMP/e" &&
	ok "record --p: ambiguous, --pid --push --push-label --push-wait" ||
	fail "record --p: exit $rc, $(head -1 "$TMP/e")"
# A misspelt event is named, and a --weight that names no event is
# refused before the command runs (it would create the file).
"$EVPROF" record -e cpu-clock,pagefaults -o "$TMP/w.pb.gz" -- true 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -q "unknown event 'pagefaults' (did you mean 'page-faults'?)" "$TMP/e" &&
	ok "record -e pagefaults: did you mean page-faults" ||
	fail "record -e pagefaults: exit $rc, $(head -1 "$TMP/e")"
"$EVPROF" record -e cpu-clock,page-faults --weight pagefaults \
	-o "$TMP/w.pb.gz" -- touch "$TMP/ran" 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/ran" ] &&
	grep -q "^evprof: --weight pagefaults: no such event in this recording (-e cpu-clock,page-faults); did you mean 'page-faults'?$" "$TMP/e" &&
	ok "record --weight pagefaults: refused before the command ran" ||
	fail "record --weight pagefaults: exit $rc, ran: $([ -e "$TMP/ran" ] && echo yes || echo no), $(head -1 "$TMP/e")"
# An event left out of -e is named with the -e that would record it; an
# off-CPU weight without --off-cpu says so.
"$EVPROF" record -e cpu-clock --weight page-faults -o "$TMP/w.pb.gz" -- true 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -q "^evprof: --weight page-faults: not an event of this recording: add it (-e cpu-clock,page-faults)$" "$TMP/e" &&
	ok "record --weight page-faults without it: add it to -e" ||
	fail "record --weight page-faults without it: exit $rc, $(cat "$TMP/e")"
"$EVPROF" record -e cpu-clock --weight off-cpu -o "$TMP/w.pb.gz" -- true 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && grep -q "^evprof: --weight off-cpu: a weight of --off-cpu recordings: add --off-cpu$" "$TMP/e" &&
	ok "record --weight off-cpu without --off-cpu: add --off-cpu" ||
	fail "record --weight off-cpu: exit $rc, $(cat "$TMP/e")"
# -o names a format, or --format does, or it is refused before the
# command runs; "-" is stdout; report says what it reads.
"$EVPROF" record -e cpu-clock -o "$TMP/p.png" -- touch "$TMP/ran2" 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && [ ! -e "$TMP/ran2" ] && [ ! -e "$TMP/p.png" ] &&
	grep -q "^evprof: -o $TMP/p.png: no format of that name: .json\[.gz\]" "$TMP/e" &&
	ok "record -o p.png: refused before the command ran" ||
	fail "record -o p.png: exit $rc, $(head -1 "$TMP/e")"
if "$EVPROF" record -e cpu-clock -o - -- true >"$TMP/stdout.json" 2>"$TMP/e"; then
	head -c 9 "$TMP/stdout.json" | grep -q '^{"meta":' && [ ! -e ./- ] &&
		ok "record -o -: Firefox JSON on stdout" ||
		fail "record -o -: stdout starts '$(head -c 20 "$TMP/stdout.json")'"
	# Appended to what the shell opened; a link's file written, the
	# link kept.
	echo first >"$TMP/log"
	"$EVPROF" record -e cpu-clock -o - -- true >>"$TMP/log" 2>"$TMP/e"
	[ "$(head -1 "$TMP/log")" = first ] && grep -q '{"meta":' "$TMP/log" &&
		ok "record -o - >>log: appended" ||
		fail "record -o - >>log: $(head -c 40 "$TMP/log")"
	"$EVPROF" record -e cpu-clock -o "$TMP/two.json.gz" -o "$TMP/two.pb.gz" \
		-- true 2>"$TMP/e"
	grep -q "; wrote $TMP/two.json.gz, $TMP/two.pb.gz$" "$TMP/e" &&
		ok "record -o A -o B: the closing line names both" ||
		fail "record -o A -o B: $(grep wrote "$TMP/e")"
	echo old >"$TMP/target.json"
	ln -s "$TMP/target.json" "$TMP/link.json"
	"$EVPROF" record -e cpu-clock -o "$TMP/link.json" -- true 2>"$TMP/e"
	[ -L "$TMP/link.json" ] && head -c 9 "$TMP/target.json" | grep -q '^{"meta":' &&
		ok "record -o link.json: its file written, the link kept" ||
		fail "record -o link.json: link $([ -L "$TMP/link.json" ] && echo kept || echo replaced), target '$(head -c 20 "$TMP/target.json")'"
	"$EVPROF" record -e cpu-clock --format folded -o "$TMP/p.svg" -- true \
		2>"$TMP/e" && [ -s "$TMP/p.svg" ] || [ -e "$TMP/p.svg" ] &&
		ok "record --format folded -o p.svg: written" ||
		fail "record --format folded -o p.svg: $(head -1 "$TMP/e")"
else
	skip "record cannot run here: $(head -1 "$TMP/e")"
fi
echo '{"shared":{},"profiles":[]}' >"$TMP/p.speedscope.json"
"$EVPROF" report "$TMP/p.speedscope.json" >/dev/null 2>"$TMP/e"
rc=$?
[ $rc = 1 ] && grep -q "(speedscope and SVG files are written for their viewers, not read back) (report reads Firefox Profiler JSON, pprof and folded stacks, gzip'd or not)$" "$TMP/e" &&
	ok "report of a speedscope file: says it is one, and what it reads" ||
	fail "report of a speedscope file: exit $rc, $(head -1 "$TMP/e")"
# Options go in order: a bad value ends before a later --help.
"$EVPROF" record -F 0 -h true >"$TMP/o" 2>"$TMP/e"
rc=$?
[ $rc = 2 ] && [ ! -s "$TMP/o" ] &&
	[ "$(cat "$TMP/e")" = "evprof: -F needs a positive frequency" ] &&
	ok "record -F 0 -h: the bad -F first, exit 2" ||
	fail "record -F 0 -h: exit $rc, $(head -1 "$TMP/e")"
# record and stat stop at the command: what follows is its own (where
# they can count here at all).
if ! "$EVPROF" record -e cpu-clock -o "$TMP/r.folded" -- true 2>"$TMP/e"; then
	skip "record cannot run here: $(head -1 "$TMP/e")"
elif "$EVPROF" record -e cpu-clock -o "$TMP/r.folded" sh -c 'exit 3' -F 0 \
	2>"$TMP/e"; [ $? = 3 ]; then
	ok "record CMD -c ... -F 0: the command's options (its exit 3)"
else
	fail "record CMD -c ... -F 0: $(head -1 "$TMP/e")"
fi
if ! "$EVPROF" stat -e task-clock -- true >/dev/null 2>"$TMP/e"; then
	skip "stat cannot run here: $(head -1 "$TMP/e")"
elif "$EVPROF" stat -e task-clock sh -c 'exit 4' -I 1 >/dev/null \
	2>"$TMP/e"; [ $? = 4 ]; then
	ok "stat CMD -c ... -I 1: the command's options (its exit 4)"
else
	fail "stat CMD -c ... -I 1: $(head -1 "$TMP/e")"
fi
finish
