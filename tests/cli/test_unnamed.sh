#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# A frame inside a mapping but without a symbol is LIB+0xSTART in folded and
# report output, START the function's first address by its CFI (the FDE
# that covers it), as `addr2line -e LIB` takes it: wl_funcs built PIE and
# non-PIE, stripped, recorded; the hottest unnamed frame resolves with
# addr2line on the unstripped build to one of wl_funcs' functions, and
# every unnamed row of report starts at a function's st_value there (or a
# PLT section's start), one row per function. Record and report say how to get its symbols.
. "$(dirname "$0")/lib.sh"

command -v addr2line >/dev/null || { skip "no addr2line"; finish; }
for pie in -pie -no-pie; do
	bin="$TMP/wlf$pie"
	cc -O1 -g -fno-omit-frame-pointer -fno-inline -pthread -fPIE $pie \
		"$SRCDIR/tests/fixtures/wl_funcs.c" -o "$bin" ||
		{ fail "$pie: cannot build"; continue; }
	cp "$bin" "$bin.stripped"
	strip --strip-all "$bin.stripped"
	"$EVPROF" record -e cpu-clock -F 4000 -o "$TMP/u.folded" -- \
		"$bin.stripped" 20000 10000 >/dev/null 2>"$TMP/err" ||
		{ fail "$pie: record: $(cat "$TMP/err")"; continue; }
	name=$(basename "$bin.stripped")
	# The leaf of the heaviest stack in the stripped binary.
	frame=$(awk '{ print $NF, $1 }' "$TMP/u.folded" | sort -rn |
		awk -v n="$name+0x" '{ k = split($2, f, ";"); for (i = k; i > 0; i--)
			if (index(f[i], n) == 1) { print f[i]; exit } }')
	if [ -z "$frame" ]; then
		fail "$pie: no $name+0x... frame in $(head -3 "$TMP/u.folded")"
		continue
	fi
	fn=$(addr2line -f -e "$bin" "${frame#"$name"+}" | head -1)
	case $fn in
	spin | touch | fault_a | fault_b)
		ok "$pie: $frame is $fn (addr2line -e $(basename "$bin"))" ;;
	*) fail "$pie: $frame resolves to '$fn' with addr2line" ;;
	esac
	# st_value of every function of the unstripped build, as numbers
	# and the PLT sections, one FDE each and no symbol (a sample may land
	# in a stub on its way to libc)
	{
		nm "$bin" | awk '$2 ~ /^[Tt]$/ { print $1, $3 }'
		readelf -SW "$bin" | sed 's/^ *\[ *[0-9]*\]//' |
			awk '$1 ~ /^\.plt/ { print $3, $1 }'
	} | while read -r a f; do echo "$(printf %x $((16#$a))) $f"; done >"$TMP/syms"
	"$EVPROF" record -e cpu-clock -o "$TMP/u.pb.gz" -- "$bin.stripped" 2000 1000 \
		>/dev/null 2>"$TMP/err" ||
		{ fail "$pie: record for report: $(cat "$TMP/err")"; continue; }
	"$EVPROF" report --top 0 "$TMP/u.pb.gz" >"$TMP/rep"
	grep -o " $name+0x[0-9a-f]* \[$name\]" "$TMP/rep" | sort -u |
		sed 's/.*+0x\([0-9a-f]*\) .*/\1/' >"$TMP/starts"
	# Each start: the function whose st_value it is, or "-".
	while read -r a; do
		awk -v a="$(printf %x $((16#$a)))" '$1 == a { f = $2 }
			END { print (f ? f : "-") }' "$TMP/syms"
	done <"$TMP/starts" >"$TMP/funcs"
	rows=$(wc -l <"$TMP/starts")
	if [ "$rows" -gt 0 ] && ! grep -qx -- "-" "$TMP/funcs" &&
		[ "$(sort -u "$TMP/funcs" | wc -l)" -eq "$rows" ]; then
		ok "$pie: report's $rows unnamed rows each start a function: $(paste -sd, "$TMP/funcs")"
	else
		fail "$pie: report's unnamed rows $(paste -sd, "$TMP/starts") are $(paste -sd, "$TMP/funcs")"
	fi
	# Record and report say where its symbols go: the debug file of its
	# build id (readelf's), as no package owns it; nothing of the build
	# with symbols.
	id=$(readelf -n "$bin.stripped" | sed -n 's/^ *Build ID: //p')
	[ -n "$id" ] || { skip "$pie: cc gave no build id"; continue; }
	"$EVPROF" report "$TMP/u.pb.gz" >/dev/null 2>"$TMP/rerr"
	# the unnamed rows' self%, summed: the share the line should say
	pct=$(awk -v n="$name+0x" '/^by self/ { t = 1; next } /^by total/ { t = 0 }
		t && index($NF, "[") == 1 && index($(NF-1), n) == 1 { s += $1 }
		END { print s + 0 }' "$TMP/rep")
	for f in err rerr; do
		line=$(grep "is in $bin.stripped without symbols" "$TMP/$f")
		share=$(sed -n 's/^evprof: \([0-9.]*\)% of the CPU time is in .*/\1/p' <<<"$line")
		if [ -n "$share" ] && within "$share" "$pct" 2 &&
			[[ $line == *"put its debug file at /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]] &&
			[[ $line != *dbgsym* ]]; then
			ok "$pie: $f: $share% (report's rows $pct%) and its build id's debug file"
		else
			fail "$pie: $f: '$line' (report's unnamed rows: $pct%, build id $id)"
		fi
	done
	# Without the debug cache: the answers it would keep of this build
	# (by build id) would name the stripped one's functions next time.
	EVPROF_DEBUG_CACHE= "$EVPROF" record -e cpu-clock -o "$TMP/s.pb.gz" \
		-- "$bin" 2000 1000 >/dev/null 2>"$TMP/err"
	"$EVPROF" report "$TMP/s.pb.gz" >/dev/null 2>>"$TMP/err"
	grep -q "without symbols" "$TMP/err" &&
		fail "$pie: with symbols: $(grep "without symbols" "$TMP/err")" ||
		ok "$pie: with symbols: no line of symbols"
done
finish
