#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A Firefox profile of one long thread: N samples 0.2 ms apart (5 kHz)
over a few stacks, with CPU deltas and a page-fault counter, the way evprof
writes them. Usage: fx_long.py N OUT.json (deterministic: same N, same
bytes)."""
import json
import sys

n = int(sys.argv[1])
funcs = ["main", "work", "heavy", "spin", "light", "asm_exc_page_fault",
         "handle_mm_fault"]
strings = ["wl"] + funcs
# stacks: main; main>work; work>heavy; heavy>spin; work>light;
# light>asm_exc_page_fault; asm_exc_page_fault>handle_mm_fault
prefix = [None, 0, 1, 2, 1, 4, 5]
nf = len(funcs)
shared = {
    "stringArray": strings,
    "stackTable": {"length": nf, "frame": list(range(nf)),
                   "prefix": prefix, "category": [1] * nf,
                   "subcategory": [0] * nf},
    "frameTable": {"length": nf, "address": [0x1000 + 16 * i for i in range(nf)],
                   "inlineDepth": [0] * nf, "category": [1] * nf,
                   "subcategory": [0] * nf, "func": list(range(nf)),
                   "nativeSymbol": [None] * nf, "innerWindowID": [0] * nf,
                   "implementation": [None] * nf, "line": [None] * nf,
                   "column": [None] * nf},
    "funcTable": {"length": nf, "name": list(range(1, nf + 1)),
                  "isJS": [False] * nf, "relevantForJS": [False] * nf,
                  "resource": [0] * nf, "fileName": [None] * nf,
                  "lineNumber": [None] * nf, "columnNumber": [None] * nf},
    "resourceTable": {"length": 1, "lib": [0], "name": [0], "host": [None],
                      "type": [1]},
    "nativeSymbols": {"length": 0, "libIndex": [], "address": [],
                      "name": [], "functionSize": []},
}
leaves = [3, 3, 4, 6]
samples = {
    "length": n, "weightType": "samples",
    "stack": [leaves[i % 4] for i in range(n)],
    "timeDeltas": [0.2] * n, "weight": None,
    "threadCPUDelta": [200.0 + i % 7 for i in range(n)],
    "samplyEventDeltas": {"page-faults": [i % 4 == 3 and 1 + i % 5 or 0
                                          for i in range(n)]},
}
end = 0.2 * n + 1
thread = {
    "name": "wl", "isMainThread": True, "processType": "default",
    "processName": "wl", "pid": "100", "tid": "100",
    "processStartupTime": 0, "processShutdownTime": end,
    "registerTime": 0, "unregisterTime": end, "pausedRanges": [],
    "showMarkersInTimeline": False, "samples": samples,
    "markers": {"length": 0, "name": [], "startTime": [], "endTime": [],
                "phase": [], "category": [], "data": []},
}
meta = {
    "version": 24, "preprocessedProfileVersion": 66, "interval": 0.2,
    "startTime": 1700000000000.0, "processType": 0, "product": "wl",
    "symbolicated": True, "pausedRanges": [],
    "categories": [{"name": "Other", "color": "grey", "subcategories": ["Other"]},
                   {"name": "User", "color": "yellow", "subcategories": ["Other"]}],
    "sampleUnits": {"time": "ms", "eventDelay": "ms", "threadCPUDelta": "\u00b5s"},
    "markerSchema": [], "evprofCounters": ["page-faults"],
}
libs = [{"name": "wl", "path": "/usr/bin/wl", "debugName": "wl",
         "debugPath": "/usr/bin/wl", "breakpadId": "0" * 33, "arch": "x86_64",
         "start": 0, "end": 0x10000, "offset": 0}]
doc = {"meta": meta, "libs": libs, "shared": shared, "threads": [thread],
       "pages": [], "profilerOverhead": [], "counters": []}
with open(sys.argv[2], "w") as f:
    json.dump(doc, f, separators=(",", ":"))
