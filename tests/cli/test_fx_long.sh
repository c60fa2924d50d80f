#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# The Firefox output of one long thread (150,000 samples, tests/tools/
# fx_long.py: its columns larger than the memory the writer keeps for
# them, its gzip longer than the compressor's chunks in flight) is the
# same, byte for byte, as the build before the writer kept less of it in
# memory wrote (commit b195aa0), but for the zero sample each counter now
# starts with (the SHA-256 sum below, checked to differ from b195aa0's
# output in that sample alone; not the .json.gz's, whose bytes are
# ISA-L's, which may pick other code for another CPU); the
# .json.gz unpacks to the .json; and the Firefox
# Profiler's loader reads it with every sample and every page fault the
# generator put in (computed here from its formula).
. "$(dirname "$0")/lib.sh"
TOOLS="$SRCDIR/tests/tools"
want_json=c4d7b211778f9dbfde312e5415e40de6780a805137e4505ffd71ef13eda61fa8

if ! command -v python3 >/dev/null || ! command -v sha256sum >/dev/null; then
	skip "no python3 or sha256sum to make and check the profile"
	finish
fi
n=150000
python3 "$TOOLS/fx_long.py" "$n" "$TMP/in.json"
for o in json json.gz; do
	"$EVPROF" report -o "$TMP/out.$o" "$TMP/in.json" 2>"$TMP/err" ||
		fail "report -o out.$o: $(tail -2 "$TMP/err")"
done
got=$(sha256sum <"$TMP/out.json" | cut -d' ' -f1)
[ "$got" = "$want_json" ] && ok ".json as before" ||
	fail ".json changed: sha256 $got"
gzip -dc "$TMP/out.json.gz" | cmp -s - "$TMP/out.json" &&
	ok ".json.gz unpacks to the .json" ||
	fail ".json.gz does not unpack to the .json"

faults=$(awk -v n="$n" 'BEGIN { for (i = 3; i < n; i += 4) s += 1 + i % 5; print s }')
rc=0
FXLOAD_TOTALS=1 bash "$TOOLS/fxload.sh" "$TMP/out.json.gz" \
	"loader-total t-0 $n wl" "loader-total t-1 $faults wl page-faults (count)" \
	>"$TMP/load" 2>&1 || rc=$?
case $rc in
0) ok "the Firefox Profiler loads $n samples and $faults page faults" ;;
77) skip "no Firefox Profiler loader: $(tail -1 "$TMP/load")" ;;
*) fail "Firefox Profiler: $(grep -i "missing\|error" "$TMP/load" | head -3)" ;;
esac
finish
