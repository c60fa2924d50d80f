#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""skips.py JUNIT BUILD

Lists every test that a ctest run (ctest --output-junit JUNIT) skipped,
each with its reason: the "SKIP: " line of its output. Fails when a skip
is not allowed for BUILD (normal, asan, nobpf) by tests/skips.allow, or
gives no reason.
"""
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET

ALLOW = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                     "tests", "skips.allow")


def rules():
    """(builds, reason regex, test patterns) of each allow-list line."""
    out = []
    with open(ALLOW, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 3 or not all(parts):
                sys.exit(f"{ALLOW}:{n}: want BUILDS | REASON | TESTS")
            out.append((parts[0].split(","), re.compile(parts[1]),
                        parts[2].split()))
    return out


def reason(output):
    for line in (output or "").splitlines():
        m = re.search(r"SKIP: (.*)", line)
        if m:
            return m.group(1).strip()
    return None


def allowed(build, name, why, allow):
    return why is not None and any(
        build in builds and why_re.search(why) and
        any(fnmatch.fnmatchcase(name, t) for t in tests)
        for builds, why_re, tests in allow)


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: skips.py JUNIT BUILD")
    junit, build = sys.argv[1:]
    allow = rules()
    cases = list(ET.parse(junit).getroot().iter("testcase"))
    skipped = [(tc.get("name"), reason(tc.findtext("system-out")),
                tc.find("skipped")) for tc in cases
               if tc.get("status") == "notrun"]
    print(f"skips of the {build} build: {len(skipped)} of {len(cases)} tests")
    bad = 0
    for name, why, tag in skipped:
        ok = allowed(build, name, why, allow)
        bad += not ok
        if why is None:
            why = "no SKIP: line (ctest: %s)" % (
                tag.get("message") if tag is not None else "not run")
        print(f"  {name}: {why}{'' if ok else '  <- NOT ALLOWED'}")
    if bad:
        print(f"skips.py: {bad} skip(s) of the {build} build not allowed by "
              "tests/skips.allow", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
