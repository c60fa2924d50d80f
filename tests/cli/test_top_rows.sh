#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# Functions, not addresses: in the top 10 of report (by self and by total)
# for xz -9, sort --parallel=2 and python3 (Debian's builds, stripped), no
# two rows are one function. Each row in a binary is placed in the
# function around it by the binary's own CFI, as readelf dumps it: an
# unnamed row LIB+0xA by A, which must start its FDE; a named one by its
# address from nm (dynamic symbols too). Two rows in one FDE fail. A
# binary whose unnamed rows hold 10% or more gets a line saying how to get
# its symbols, with the -dbgsym of the package dpkg says owns it.
. "$(dirname "$0")/lib.sh"

for t in readelf nm ldd; do
	command -v $t >/dev/null || { skip "no $t"; finish; }
done

# check LABEL PROGRAM ARGS...: records the command, checks report's top 10
check() {
	local label=$1 bin rows
	shift
	bin=$(command -v "$1") || { skip "$label: no $1"; return; }
	"$EVPROF" record -o "$TMP/p.pb.gz" -- "$@" >/dev/null 2>"$TMP/err" ||
		{ fail "$label: record failed: $(tail -3 "$TMP/err")"; return; }
	"$EVPROF" report -n 10 "$TMP/p.pb.gz" >"$TMP/rep" 2>/dev/null ||
		{ fail "$label: report failed"; return; }
	# The binary and its libraries, by the name report gives them.
	{
		readlink -f "$bin"
		ldd "$bin" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
			xargs -r readlink -f
	} >"$TMP/files"
	# "TABLE NAME<tab>LIB" per row: the name follows as many values as
	# the header has columns before "function [lib]".
	awk '/^by (self|total)/ { t = $2; getline; k = NF - 2; next }
		t && NF == 0 { t = "" }
		t { s = $(k + 1); for (i = k + 2; i < NF; i++) s = s " " $i
			l = substr($NF, 2, length($NF) - 2); print t, s "\t" l }' \
		"$TMP/rep" >"$TMP/rows"
	rows=$(wc -l <"$TMP/rows")
	[ "$rows" -ge 10 ] || { fail "$label: $rows rows in report's two tables"; return; }
	# Each row's key: LIB@FDE-start for a row in one of the files, else
	# LIB@NAME; and "bad" for an unnamed row not at its FDE's start.
	python3 - "$TMP/rows" "$TMP/files" >"$TMP/keys" <<'PY'
import bisect, os, re, subprocess, sys
files = {os.path.basename(f): f for f in open(sys.argv[2]).read().split()}
fdes, syms = {}, {}
def fde_start(path, a):
    if path not in fdes:
        out = subprocess.run(["readelf", "--debug-dump=frames", path],
                             capture_output=True, text=True).stdout
        fdes[path] = sorted((int(s, 16), int(e, 16)) for s, e in
                            re.findall(r" FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", out))
    f = fdes[path]
    i = bisect.bisect_right(f, (a, 1 << 64)) - 1
    return f[i][0] if i >= 0 and f[i][0] <= a < f[i][1] else None
def sym(path, name):
    if path not in syms:
        syms[path] = {}
        for opt in ([], ["-D"]):
            out = subprocess.run(["nm", "--defined-only", *opt, path],
                                 capture_output=True, text=True).stdout
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3:
                    syms[path].setdefault(p[2], int(p[0], 16))
    return syms[path].get(name)
for line in open(sys.argv[1]):
    head, lib = line.rstrip("\n").split("\t")
    table, name = head.split(" ", 1)
    key, path = lib + "@" + name, files.get(lib)
    unnamed = name.startswith(lib + "+0x")
    a = int(name[len(lib) + 3:], 16) if unnamed else sym(path, name) if path else None
    s = fde_start(path, a) if path and a is not None else None
    if unnamed and s != a:
        print("bad", name, "in the FDE at", "-" if s is None else hex(s))
    if s is not None:
        key = "%s@0x%x" % (lib, s)
    print(table, key, name)
PY
	bad=$(grep "^bad " "$TMP/keys" | sort -u | paste -sd, -)
	[ -z "$bad" ] || fail "$label: not a function's start: $bad"
	dup=$(awk '$1 != "bad" { k = $1 " " $2; if (k in first) print $3 " and " first[k]
		else first[k] = $3 }' "$TMP/keys")
	unnamed=$(awk '$1 != "bad" && $3 ~ /\+0x/' "$TMP/keys" | wc -l)
	if [ -z "$dup" ]; then
		ok "$label: report's top 10 by self and by total: $rows rows, $unnamed unnamed, each a function of its own"
	else
		fail "$label: rows of one function: $dup"
	fi
	# A binary whose unnamed rows hold 10% or more by self gets a line
	# of how to get its symbols, naming the package dpkg says owns it.
	while read -r lib; do
		line=$(grep "/$lib without symbols" "$TMP/err")
		path=$(sed -n 's/.* is in \(\/.*\) without symbols.*/\1/p' <<<"$line")
		if [ -z "$path" ]; then
			fail "$label: no line of symbols for $lib"
			continue
		fi
		command -v dpkg >/dev/null || { ok "$label: $line"; continue; }
		pkg=$({ dpkg -S "$path" || dpkg -S "${path#/usr}"; } 2>/dev/null |
			sed -n '1s/[:,].*//p')
		[[ -n $pkg && $line == *"install $pkg-dbgsym "* ]] &&
			ok "$label: $lib: install $pkg-dbgsym ($(grep -o '[0-9.]*% of the CPU time' <<<"$line"))" ||
			fail "$label: dpkg says $lib is of '$pkg': $line"
	done < <(awk '/^by self/ { t = 1; getline; next } t && NF == 0 { exit }
		t { l = substr($NF, 2, length($NF) - 2)
			if (index($(NF-1), l "+0x") == 1) s[l] += $1 }
		END { for (l in s) if (s[l] >= 10) print l }' "$TMP/rep")
}

awk 'BEGIN { srand(1); for (i = 0; i < 200000; i++) printf "%d\n", rand() * 1e9 }' \
	>"$TMP/input"
check "xz -9" xz -9 -T1 -c "$TMP/input"
check "sort --parallel=2" sort --parallel=2 -o "$TMP/sorted" "$TMP/input"
if [ -x /usr/bin/python3 ]; then
	check python3 /usr/bin/python3 -c 'x = 0
for i in range(3000000): x += i * i'
else
	skip "python3: no /usr/bin/python3"
fi
finish
