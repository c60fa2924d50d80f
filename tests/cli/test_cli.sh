#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The habits of a command-line tool: --version names the version the
# build declares, the source revision and the same kernel features as
# `info`; `help CMD` is `CMD --help`; the installed man pages render and
# carry every option of --help; bash completion completes commands and
# options.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$EVPROF")
cmds="record report stat info"

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
"$EVPROF" info >"$TMP/info"
sed -n '/^kernel features:/,/^$/p' "$TMP/info" | sed '/^$/d' >"$TMP/fi"
sed -n '/^kernel features:/,$p' "$TMP/v" >"$TMP/fv"
if [ -s "$TMP/fi" ] && cmp -s "$TMP/fi" "$TMP/fv"; then
	ok "--version and info report the same $(($(wc -l <"$TMP/fi") - 1)) features"
else
	fail "--version and info disagree on features"
	diff "$TMP/fi" "$TMP/fv" >&2
fi

# 2. help CMD == CMD --help
for c in $cmds; do
	"$EVPROF" help "$c" >"$TMP/h1" && "$EVPROF" "$c" --help >"$TMP/h2" &&
		cmp -s "$TMP/h1" "$TMP/h2" && [ -s "$TMP/h1" ] &&
		ok "help $c" || fail "help $c differs from $c --help"
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
	' _ "$comp")
	[ "$got" = "record
--format
--per-thread" ] && ok "completion: record, --format, --per-thread" ||
		fail "completion gave: $got"
else
	fail "no bash completion installed"
fi
finish
