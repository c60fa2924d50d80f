#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# evprof import against perf.data files other people recorded (other perf
# versions and architectures: tests/data/perfdata/README.md says where each
# came from) and what their projects assert about them
# (tests/data/perfdata/expected). Every file imports in bounded time with
# status 0, or is refused with one message naming an offset.
. "$(dirname "$0")/lib.sh"
DATA=$SRCDIR/tests/data/perfdata

# leaf_sums FOLDED: "leaf weight" per distinct leaf frame.
leaf_sums() {
	awk '{ w = $NF; $NF = ""; sub(/ $/, ""); n = split($0, f, ";")
		s[f[n]] += w } END { for (l in s) print l, s[l] }' "$1"
}

# import FILE WEIGHT: the folded profile weighed by WEIGHT in $TMP/out,
# stderr in $TMP/err. Status: evprof's (124: it hung).
import() {
	local w=()
	[ -n "$2" ] && w=(-w "$2")
	timeout 120 "$EVPROF" import "${w[@]}" -o "$TMP/out.folded" \
		"$DATA/$1" 2>"$TMP/err" >/dev/null
}

check() { # FILE KIND ARGS...
	local f=$1 kind=$2 n got st
	shift 2
	case $kind in
	samples | samples\>=)
		import "$f" ""
		st=$?
		got=$(sed -n 's/.*imported \([0-9]*\) samples.*/\1/p' "$TMP/err")
		if [ "$st" -ne 0 ] || [ -z "$got" ]; then
			fail "$f: status $st: $(cat "$TMP/err")"
		elif [ "$kind" = samples ] && [ "$got" != "$1" ]; then
			fail "$f: $got samples, its source says $1"
		elif [ "$got" -lt "$1" ]; then
			fail "$f: $got samples, its source says at least $1"
		else
			ok "$f: $got samples (source: $kind $1)"
		fi
		;;
	period)
		import "$f" "$1" || { fail "$f -w $1: $(cat "$TMP/err")"; return; }
		got=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/out.folded")
		if [ "$got" = "$2" ]; then
			ok "$f: $1 periods sum to $got (source: $2)"
		else
			fail "$f: $1 periods sum to $got, its source says $2"
		fi
		;;
	holds)
		import "$f" "$1" || { fail "$f -w $1: $(cat "$TMP/err")"; return; }
		got=$(leaf_sums "$TMP/out.folded" | awk -v d="$2" \
			-v lo=$(($3)) -v hi=$(($4)) '
			index($1, d "+0x") == 1 {
				h = tolower(substr($1, length(d) + 4)); o = 0
				for (i = 1; i <= length(h); i++)
					o = o * 16 + index("0123456789abcdef",
							   substr(h, i, 1)) - 1
				if (o >= lo && o < hi) s += $2 }
			END { print s + 0 }')
		if [ "$got" = "$5" ]; then
			ok "$f: $1 in $2+$3..$4 weighs $got (source: $5)"
		else
			fail "$f: $1 in $2+$3..$4 weighs $got, its source says $5"
		fi
		;;
	kleaves)
		import "$f" "" || { fail "$f: $(cat "$TMP/err")"; return; }
		leaf_sums "$TMP/out.folded" |
			sed -n 's/^\[kernel\.kallsyms\]+\(0x[0-9a-f]*\)_\[k\] /\1 /p' |
			sort >"$TMP/got"
		grep -v '^#' "$DATA/$2" | sort >"$TMP/want"
		n=$(awk '{ s += $2 } END { print s + 0 }' "$TMP/got")
		if [ "$n" = "$1" ] && cmp -s "$TMP/got" "$TMP/want"; then
			ok "$f: $n kernel samples on $(wc -l <"$TMP/got") leaves as its golden has them"
		else
			fail "$f: $n kernel samples (source: $1); leaves differ: $(diff "$TMP/want" "$TMP/got" | head -5 | tr '\n' ' ')"
		fi
		;;
	refused)
		import "$f" ""
		st=$?
		n=$(wc -l <"$TMP/err")
		if [ "$st" -ne 1 ] || [ "$n" -ne 1 ] ||
			! grep -q "at offset 0x[0-9a-f]*" "$TMP/err"; then
			fail "$f: status $st, $n line(s): $(cat "$TMP/err")"
		else
			ok "$f refused: $(cat "$TMP/err")"
		fi
		;;
	*) fail "expected: unknown check '$kind' for $f" ;;
	esac
}

while read -r f kind args; do
	case $f in '#'* | '') continue ;; esac
	# shellcheck disable=SC2086 # the check's arguments, split
	check "$f" "$kind" $args
done <"$DATA/expected"

# Every copied file has a check, so none is left out silently.
for p in "$DATA"/*; do
	f=${p##*/}
	case $f in README.md | expected | *.kleaves) continue ;; esac
	grep -q "^$f " "$DATA/expected" || fail "$f: no check in expected"
done

# Formats perf wrote that evprof does not read: one message, an offset.
printf 'PERFFILE\x68\0\0\0\0\0\0\0' >"$TMP/v1.data"
head -c 104 /dev/zero >>"$TMP/v1.data"
printf '2ELIFREP\0\0\0\0\0\0\0\x10' >"$TMP/be.data"
for f in v1.data be.data; do
	timeout 60 "$EVPROF" import -o "$TMP/x.folded" "$TMP/$f" 2>"$TMP/err"
	st=$?
	if [ "$st" -eq 1 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] &&
		grep -q "at offset 0x0" "$TMP/err"; then
		ok "$f refused: $(cat "$TMP/err")"
	else
		fail "$f: status $st: $(cat "$TMP/err")"
	fi
done
finish
