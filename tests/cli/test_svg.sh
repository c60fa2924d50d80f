#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# -o x.svg: a flame graph. wl_funcs faults A pages in fault_a and B in
# fault_b (its truth); recorded with page-faults as the weight, the SVG
# (parsed as XML) must give each function its page faults within 2% of the
# truth in its frames' tooltips, draw each frame as wide as its share of
# the root's, stack every frame on its parent, and say the weight; report
# -o x.svg writes the same graph from the pprof file.
. "$(dirname "$0")/lib.sh"
A=6000
B=2000

"$EVPROF" record -e cpu-clock,page-faults --weight page-faults \
	-o "$TMP/r.svg" -o "$TMP/r.pb.gz" -- "$FIXTURES/wl_funcs" $A $B \
	>/dev/null 2>"$TMP/err" || { fail "record: $(cat "$TMP/err")"; finish; }
"$EVPROF" report -o "$TMP/p.svg" --weight page-faults "$TMP/r.pb.gz" ||
	fail "report -o p.svg"

# Per function: the sum of its frames' weights (from <title>), the sum of
# their widths over the root's, and the frames not within their parent.
svg_sums() { # SVG
	python3 - "$1" <<'PY'
import re, sys, xml.etree.ElementTree as ET
ns = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
sub = "".join(t.text or "" for t in root.iter(ns + "text"))
boxes = []
for g in root.iter(ns + "g"):
    m = re.match(r"(.*) \((\d+), [\d.]+%\)$", g.find(ns + "title").text)
    r = g.find(ns + "rect")
    boxes.append((m.group(1), int(m.group(2)), float(r.get("x")),
                  float(r.get("width")), float(r.get("y"))))
allw = [b for b in boxes if b[0] == "all"][0]
# A frame one row above another (y - 16) lies within one of that row.
rows = {}
for b in boxes:
    rows.setdefault(b[4], []).append(b)
orphans = sum(1 for b in boxes if b[0] != "all" and not any(
    p[2] - 0.02 <= b[2] and b[2] + b[3] <= p[2] + p[3] + 0.03
    for p in rows.get(b[4] + 16, [])))
out = {"total": allw[1], "orphans": orphans, "weight": "page-faults" in sub}
for f in ("fault_a", "fault_b"):
    out[f] = sum(b[1] for b in boxes if b[0] == f)
    out[f + "_share"] = sum(b[3] for b in boxes if b[0] == f) / allw[3]
print(" ".join(f"{k}={v}" for k, v in out.items()))
PY
}
for svg in r.svg p.svg; do
	s=$(svg_sums "$TMP/$svg") || { fail "$svg: not an SVG that parses: $(head -c 300 "$TMP/$svg")"; continue; }
	declare -A v=()
	for kv in $s; do v[${kv%%=*}]=${kv#*=}; done
	for f in a b; do
		truth=$([ $f = a ] && echo $A || echo $B)
		got=${v[fault_$f]}
		within "$got" "$truth" 2 &&
			ok "$svg: fault_$f $got page faults in its tooltips, truth $truth pages" ||
			fail "$svg: fault_$f '$got' page faults, truth $truth pages"
		share=$(awk -v a="$got" -v t="${v[total]}" 'BEGIN { print a / t }')
		within "${v[fault_${f}_share]}" "$share" 1 &&
			ok "$svg: fault_$f is ${v[fault_${f}_share]} of the width, $share of the weight" ||
			fail "$svg: fault_$f is '${v[fault_${f}_share]}' of the width, $share of the weight"
	done
	[ "${v[orphans]}" = 0 ] && ok "$svg: every frame lies on its parent" ||
		fail "$svg: ${v[orphans]} frames outside any frame below them"
	[ "${v[weight]}" = True ] && ok "$svg: says its weight" ||
		fail "$svg: no 'page-faults' in its text"
done
finish
