#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Checks contrib/k8s/daemonset.yaml: what docs/fleet.md ("On Kubernetes")
says of it. hostPID; only the capabilities of contrib/evprof.service, all
others dropped, no privileged mode or escalation, a read-only root; every
hostPath from a known list and mounted read-only; the writable paths evprof
needs on volumes; requests and limits for CPU and memory, requests within
limits; the selector matching the template's labels; tolerations for
every node; a continuous, pushing, system-wide command whose $(VARS) are
defined. Then it breaks copies of the manifest, one field each, and wants
each copy refused, so that a check that cannot fail fails the test.

usage: daemonset.py SRCDIR"""
import copy
import re
import sys

import yaml

# What evprof reads that a container's own /sys and /proc lack.
HOST_PATHS = {"/sys/kernel/tracing", "/sys/fs/cgroup"}
# Paths evprof writes under a read-only root: the debug cache and spills.
WRITABLE = {"EVPROF_DEBUG_CACHE": None, "TMPDIR": "/var/tmp"}


def service_caps(srcdir):
    """AmbientCapabilities= of the systemd unit, without CAP_."""
    with open(f"{srcdir}/contrib/evprof.service") as f:
        for line in f:
            if line.startswith("AmbientCapabilities="):
                return {c.removeprefix("CAP_") for c in line.split("=", 1)[1].split()}
    raise SystemExit("contrib/evprof.service has no AmbientCapabilities=")


def cpu(q):
    q = str(q)
    return float(q[:-1]) / 1000 if q.endswith("m") else float(q)


def mem(q):
    units = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "K": 1e3, "M": 1e6, "G": 1e9}
    m = re.fullmatch(r"([0-9.]+)([KMG]i?)?", str(q))
    if not m:
        raise ValueError(f"memory quantity {q!r}")
    return float(m.group(1)) * units.get(m.group(2), 1)


def problems(ds, caps):
    """Every way DS departs from what the docs promise (empty: none)."""
    out = []

    def want(cond, what):
        if not cond:
            out.append(what)

    want(ds.get("apiVersion") == "apps/v1" and ds.get("kind") == "DaemonSet",
         "not an apps/v1 DaemonSet")
    spec = ds.get("spec") or {}
    tmpl = spec.get("template") or {}
    labels = (tmpl.get("metadata") or {}).get("labels") or {}
    sel = (spec.get("selector") or {}).get("matchLabels") or {}
    want(sel, "the selector has no matchLabels")
    want(all(labels.get(k) == v for k, v in sel.items()),
         f"selector {sel} does not match the template's labels {labels}")
    want(not (spec.get("selector") or {}).get("matchExpressions"),
         "matchExpressions: the check knows matchLabels only")
    pod = tmpl.get("spec") or {}
    want(pod.get("hostPID") is True, "hostPID is not true")
    want(not pod.get("hostNetwork") and not pod.get("hostIPC"),
         "hostNetwork or hostIPC: evprof needs neither")
    want(any(t.get("operator") == "Exists" and "key" not in t
             for t in pod.get("tolerations") or []),
         "no toleration of every taint: some nodes go unprofiled")
    vols = {v.get("name"): v for v in pod.get("volumes") or []}
    ctrs = pod.get("containers") or []
    want(len(ctrs) == 1, "not one container")
    mounted = set()
    for c in ctrs:
        name = c.get("name")
        sc = c.get("securityContext") or {}
        want(sc.get("privileged") in (None, False), f"{name}: privileged")
        want(sc.get("allowPrivilegeEscalation") is False,
             f"{name}: allowPrivilegeEscalation is not false")
        want(sc.get("readOnlyRootFilesystem") is True,
             f"{name}: the root filesystem is writable")
        want((sc.get("seccompProfile") or {}).get("type") == "RuntimeDefault",
             f"{name}: seccomp is not RuntimeDefault")
        cap = sc.get("capabilities") or {}
        want(cap.get("drop") == ["ALL"], f"{name}: does not drop ALL capabilities")
        add = cap.get("add") or []
        want(len(add) == len(set(add)) and set(add) == caps,
             f"{name}: adds {sorted(add)}, the service {sorted(caps)}")
        res = c.get("resources") or {}
        for kind, parse in (("cpu", cpu), ("memory", mem)):
            r = (res.get("requests") or {}).get(kind)
            lim = (res.get("limits") or {}).get(kind)
            want(r is not None and lim is not None,
                 f"{name}: no {kind} request or limit")
            if r is not None and lim is not None:
                try:
                    want(0 < parse(r) <= parse(lim),
                         f"{name}: {kind} request {r} over its limit {lim}")
                except ValueError as e:
                    out.append(f"{name}: {e}")
        paths = {}
        for m in c.get("volumeMounts") or []:
            v = vols.get(m.get("name"))
            want(v is not None, f"{name}: mounts {m.get('name')}, no such volume")
            if v is None:
                continue
            mounted.add(m.get("name"))
            paths[m.get("mountPath")] = v
            if "hostPath" in v:
                want(m.get("readOnly") is True,
                     f"{name}: hostPath {v['hostPath'].get('path')} mounted writable")
        env = {e.get("name"): e.get("value") for e in c.get("env") or []}
        for var, default in WRITABLE.items():
            p = env.get(var, default)
            want(p is not None and "emptyDir" in (paths.get(p) or {}),
                 f"{name}: {var} ({p}) is not on an emptyDir")
        args = c.get("args") or []
        for a in ("record", "-a", "--continuous", "--push"):
            want(a in args, f"{name}: the command lacks {a}")
        for ref in re.findall(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", " ".join(args)):
            want(ref in env, f"{name}: $({ref}) is not in env")
    host = set()
    for n, v in vols.items():
        if "hostPath" in v:
            host.add(v["hostPath"].get("path"))
            want(v["hostPath"].get("path") in HOST_PATHS,
                 f"hostPath {v['hostPath'].get('path')}: not one evprof needs")
        want(n in mounted, f"volume {n} is not mounted")
    for p in sorted(HOST_PATHS - host):
        want(False, f"hostPath {p} is not mounted: evprof needs it")
    return out


def mutations(ds):
    """(what, broken copy) pairs: each must be refused."""
    def c():
        return copy.deepcopy(ds)

    def ctr(d):
        return d["spec"]["template"]["spec"]["containers"][0]

    out = []
    d = c(); d["spec"]["template"]["spec"]["hostPID"] = False
    out.append(("hostPID false", d))
    d = c(); ctr(d)["securityContext"]["capabilities"]["add"].append("SYS_ADMIN")
    out.append(("SYS_ADMIN added", d))
    d = c(); ctr(d)["securityContext"]["capabilities"]["add"].pop()
    out.append(("a capability missing", d))
    d = c(); ctr(d)["securityContext"]["capabilities"]["drop"] = []
    out.append(("nothing dropped", d))
    d = c(); ctr(d)["securityContext"]["privileged"] = True
    out.append(("privileged", d))
    d = c(); ctr(d)["securityContext"]["readOnlyRootFilesystem"] = False
    out.append(("writable root", d))
    d = c()
    for m in ctr(d)["volumeMounts"]:
        m.pop("readOnly", None)
    out.append(("hostPath mounted writable", d))
    d = c(); d["spec"]["template"]["spec"]["volumes"].append(
        {"name": "root", "hostPath": {"path": "/"}})
    ctr(d)["volumeMounts"].append({"name": "root", "mountPath": "/host", "readOnly": True})
    out.append(("the host's / mounted", d))
    d = c(); d["spec"]["template"]["spec"]["volumes"] = [
        v for v in d["spec"]["template"]["spec"]["volumes"] if v["name"] != "cgroup"]
    ctr(d)["volumeMounts"] = [m for m in ctr(d)["volumeMounts"] if m["name"] != "cgroup"]
    out.append(("no node cgroups", d))
    d = c(); del ctr(d)["resources"]["limits"]["memory"]
    out.append(("no memory limit", d))
    d = c(); ctr(d)["resources"]["requests"]["cpu"] = "2"
    out.append(("CPU request over its limit", d))
    d = c(); d["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] = "other"
    out.append(("selector not matching", d))
    d = c(); d["spec"]["template"]["spec"]["tolerations"] = []
    out.append(("no tolerations", d))
    d = c(); ctr(d)["args"].remove("--continuous")
    out.append(("not continuous", d))
    d = c(); ctr(d)["env"] = [e for e in ctr(d)["env"] if e["name"] != "NODE_NAME"]
    out.append(("an undefined $(VAR)", d))
    d = c(); ctr(d)["volumeMounts"] = [m for m in ctr(d)["volumeMounts"]
                                       if m["mountPath"] != "/var/tmp"]
    out.append(("no writable spill directory", d))
    return out


def main():
    srcdir = sys.argv[1] if len(sys.argv) > 1 else "."
    with open(f"{srcdir}/contrib/k8s/daemonset.yaml") as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    if len(docs) != 1:
        raise SystemExit(f"FAIL: {len(docs)} documents, wanted the DaemonSet alone")
    ds = docs[0]
    caps = service_caps(srcdir)
    bad = problems(ds, caps)
    for b in bad:
        print(f"FAIL: daemonset.yaml: {b}")
    if not bad:
        print(f"ok: daemonset.yaml: hostPID, capabilities {sorted(caps)}, "
              "read-only hostPaths, requests and limits, selector")
    missed = [what for what, d in mutations(ds) if not problems(d, caps)]
    for what in missed:
        print(f"FAIL: a copy with {what} passes the checks")
    if not missed:
        print(f"ok: {len(mutations(ds))} broken copies refused")
    sys.exit(1 if bad or missed else 0)


if __name__ == "__main__":
    main()
