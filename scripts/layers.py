#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks the shape of src/ against a build: scripts/layers.py BUILD_DIR

1. Layers: an object of a folder of src/lib uses no symbol defined only in
   a folder it may not use (src/lib/CMakeLists.txt names them; the build
   writes them to BUILD_DIR/layers.txt). The include paths already refuse a
   header from above; this catches a prototype written by hand.
2. Loops: no two files of src/ depend on each other in a loop (file A uses
   a symbol that B alone defines, and B, through any path, one of A's).
3. Giants: no file of src/lib over 1000 lines, no function of src/ over 120.
4. Interfaces: a file includes another folder's header only through that
   folder's own, <folder>/<folder>.h, which says what it offers above.

Exits 1 and says what is wrong, file by file; 0 when all holds.
"""
import os
import re
import subprocess
import sys

MAX_FILE_LINES = 1000
MAX_FUNC_LINES = 120


def die(msg):
    print(f"layers.py: {msg}", file=sys.stderr)
    sys.exit(2)


def read_layers(build):
    path = os.path.join(build, "layers.txt")
    try:
        text = open(path).read()
    except OSError as e:
        die(f"{path}: {e.strerror} (configure the build first)")
    uses, objects = {}, {}
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        if name.endswith(" objects"):
            objects[name[: -len(" objects")]] = rest.split()
        elif name:
            uses[name] = set(rest.split())
    return uses, objects


def cli_objects(build):
    objs = []
    for root, _, files in os.walk(os.path.join(build, "CMakeFiles", "evprof.dir")):
        objs += [os.path.join(root, f) for f in files if f.endswith(".o")]
    if not objs:
        die(f"no objects of the command under {build}/CMakeFiles/evprof.dir (build it first)")
    return objs


def source_of(obj):
    """src/lib/session/cut.c for .../evprof_session.dir/session/cut.c.o"""
    parts = obj.split(os.sep)
    name = parts[-1][: -len(".o")]
    for i, p in enumerate(parts):
        if p == "evprof.dir":
            return "/".join(parts[i + 1 : -1] + [name])
        if p.startswith("evprof_") and p.endswith(".dir"):
            rel = parts[i + 1 : -1] + [name]
            if rel[0] != "__":
                return "src/lib/" + "/".join(rel)
    return os.path.basename(name)


def symbols(obj):
    out = subprocess.run(["nm", obj], capture_output=True, text=True)
    if out.returncode:
        die(f"nm {obj}: {out.stderr.strip()}")
    defined, used = set(), set()
    for line in out.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] in "TDBRVWG":
            defined.add(f[2])
        elif len(f) == 2 and f[0] == "U":
            used.add(f[1])
    return defined, used


def loops(deps):
    """Strongly connected components of more than one file (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(deps.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(deps):
        if v not in index:
            visit(v)
    return out


def long_functions(path):
    """Functions in the kernel's style: the body opens with '{' alone in
    column 0 and closes with '}' in column 0."""
    lines = open(path, errors="replace").read().split("\n")
    found, start, name = [], None, None
    for i, line in enumerate(lines):
        if line == "{" and i > 0:
            start = i
            j = i - 1
            while j > 0 and not re.search(r"\w+\s*\(", lines[j]):
                j -= 1
            m = re.findall(r"(\w+)\s*\(", lines[j])
            name = m[0] if m else "?"
        elif line.startswith("}") and start is not None:
            n = i - start + 1
            if n > MAX_FUNC_LINES:
                found.append((name, start + 1, n))
            start = None
    return found


def main():
    if len(sys.argv) != 2:
        die("usage: scripts/layers.py BUILD_DIR")
    build = sys.argv[1]
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    uses, objects = read_layers(build)
    errors = []

    folder_of, defs, used = {}, {}, {}
    for layer, objs in objects.items():
        for o in objs:
            s = source_of(o)
            folder_of[s] = layer
            d, u = symbols(o)
            defs[s], used[s] = d, u
    for o in cli_objects(build):
        s = source_of(o)
        folder_of[s] = "cli"
        defs[s], used[s] = symbols(o)

    where = {}
    for s, d in defs.items():
        for sym in d:
            where.setdefault(sym, set()).add(s)

    deps = {}
    for s, u in used.items():
        for sym in u:
            for t in where.get(sym, ()):
                if t == s:
                    continue
                deps.setdefault(s, set()).add(t)
                a, b = folder_of[s], folder_of[t]
                if a == "cli" or a == b or b in uses.get(a, ()):
                    continue
                errors.append(
                    f"{s} ({a}) uses {sym}, defined in {t} ({b}), a folder "
                    f"{a} may not use (it may use: {' '.join(sorted(uses[a])) or 'none'})"
                )

    for comp in loops(deps):
        errors.append("files that depend on each other in a loop: " + " ".join(comp))

    inc = re.compile(r'^#include "(%s)/(\w+)\.h"' % "|".join(objects), re.M)
    for root, _, files in os.walk(os.path.join(src, "src", "lib")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, os.path.join(src, "src", "lib"))
            mine = rel.split(os.sep)[0] if os.sep in rel else None
            for m in inc.finditer(open(path, errors="replace").read()):
                if m.group(1) != mine and m.group(2) != m.group(1):
                    errors.append(
                        f"src/lib/{rel}: includes \"{m.group(1)}/{m.group(2)}.h\": "
                        f"from another folder, only \"{m.group(1)}/{m.group(1)}.h\""
                    )

    for root, _, files in os.walk(os.path.join(src, "src")):
        for f in sorted(files):
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(root, f)
            rel = os.path.relpath(path, src)
            n = sum(1 for _ in open(path, errors="replace"))
            if rel.startswith("src/lib/") and n > MAX_FILE_LINES:
                errors.append(f"{rel}: {n} lines, over {MAX_FILE_LINES}")
            if f.endswith(".c"):
                for name, line, size in long_functions(path):
                    errors.append(f"{rel}:{line}: {name}() is {size} lines, over {MAX_FUNC_LINES}")

    for e in sorted(set(errors)):
        print(e)
    if errors:
        print(f"layers.py: {len(set(errors))} problems", file=sys.stderr)
        return 1
    print(f"layers.py: {len(defs)} files in {len(objects)} layers and the command: "
          "layers kept, includes through each folder's own header, no loops, no file over "
          f"{MAX_FILE_LINES} lines, no function over {MAX_FUNC_LINES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
