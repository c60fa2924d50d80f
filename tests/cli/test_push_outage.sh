#!/usr/bin/env bash
# evprof record --continuous --push through every way a push can fail, in
# one run of ~95 s: the local Pyroscope stand-in (pyroscope_endpoint.mjs
# --script) is down at the start, then answers, answers 500, 429 with
# Retry-After, 400, goes down for 4 s and comes back on the same port,
# then never answers for 60 s, then answers again. Windows of 2 s are
# also written with --output-dir (Firefox: every sample's time).
#
# Against the workload's own truth (tests/fixtures/wl_stall.c: a busy
# thread's rusage page faults, and every stretch it did not run, read off
# CLOCK_MONOTONIC each loop iteration) and what the endpoint logged:
# - no crash; the closing line says 0 lost records and samples;
# - sampling never paused: between two consecutive samples of the busy
#   thread at most 2 periods pass beyond the time the thread itself saw
#   it was not running (+ 2 ms of slack for timer and wake-up latency);
# - windows kept being written every ~2 s through the 60 s hang;
# - every window written was, at the endpoint, accepted (its page faults
#   equal to its file's), rejected once (400) or never seen (dropped), and
#   the push line's sent/rejected/dropped counts are those numbers;
# - windows queued while the endpoint was down or failing were sent when
#   it came back; drops happened only in the hang, whose 30 windows
#   overflow EVPROF_PUSH_QUEUE=4;
# - the windows' page faults sum to the thread's rusage within 0.5%.
. "$(dirname "$0")/lib.sh"
TOOLS=$SRCDIR/tests/tools
EP=$TOOLS/pyroscope_endpoint.mjs

need_push

# A bad queue length is refused before recording.
EVPROF_PUSH_QUEUE=0 "$EVPROF" record --push http://127.0.0.1:1 -- true \
	2>"$TMP/q.err"
[ $? -ne 0 ] && grep -q "EVPROF_PUSH_QUEUE takes" "$TMP/q.err" &&
	ok "EVPROF_PUSH_QUEUE=0 refused" || fail "EVPROF_PUSH_QUEUE=0: $(cat "$TMP/q.err")"

FREQ=1000
INTERVAL=2
QUEUE=4
RA=2
# Phases MODE@SECS from the endpoint's start (their indexes are in the
# checks below); after each failure an ok phase long enough for the
# back-off to find it (0.5 s doubling: after 4 s down, 3.5 + 4 s).
SCRIPT="down@3,ok@2,500@3,ok@3,429:$RA@2,ok@3,400@3,ok@2,down@4,ok@6,hang@60,ok"
SECS=95

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
node "$EP" --port "$port" --log "$TMP/ep.log" --script "$SCRIPT" \
	2>"$TMP/ep.err" &
ep=$!
trap 'kill "$ep" 2>/dev/null; rm -rf "$TMP"' EXIT
sleep 0.3
EVPROF_PUSH_QUEUE=$QUEUE "$EVPROF" record --continuous \
	--interval "$INTERVAL" --output-dir "$TMP/w" --format firefox \
	-F "$FREQ" -e cpu-clock,page-faults --push "http://127.0.0.1:$port" \
	--tag service_name=outage -- "$FIXTURES/wl_stall" "$SECS" \
	"$TMP/stalls" >/dev/null 2>"$TMP/err"
status=$?
kill "$ep"
wait "$ep" 2>/dev/null

# Pushes that fail make the exit status 1; a signal would be 128+N.
[ "$status" -eq 1 ] && ok "exit 1 (some windows rejected or dropped), no crash" ||
	fail "exit $status: $(tail -5 "$TMP/err")"
grep -q "lost 0 records (0 LOST records), 0 samples" "$TMP/err" &&
	ok "0 lost records and samples" ||
	fail "lost: $(grep lost "$TMP/err")"
grep -q "retrying" "$TMP/err" && ok "retries said" ||
	fail "no retry message: $(tail -5 "$TMP/err")"

python3 - "$TMP" "$FREQ" "$INTERVAL" "$QUEUE" "$RA" <<'EOF'
import bisect, glob, gzip, json, re, sys

tmp, freq, interval, queue, ra = sys.argv[1], int(sys.argv[2]), \
    float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
period_ms = 1000.0 / freq
SLACK_MS = 2.0
DOWN0, E500, E429, E400, DOWN, HANG = 0, 2, 4, 6, 8, 10  # script indexes
fails = 0


def ok(msg):
    print(f"ok: {msg}")


def fail(msg):
    global fails
    fails += 1
    print(f"FAIL: {msg}", file=sys.stderr)


err = open(f"{tmp}/err").read()
m = re.search(r"thread staller tid=\d+ faults=(\d+) start_ns=(\d+) "
              r"end_ns=(\d+) max_stall_ns=(\d+) stalls=(\d+)", err)
push = re.search(r"push: (\d+) profiles sent \(\d+ bytes\), (\d+) rejected, "
                 r"(\d+) dropped, (\d+) retries, (\d+) left unsent", err)
if not m or not push:
    print(f"FAIL: no truth or push line: {err[-600:]}", file=sys.stderr)
    sys.exit(1)
truth, t_start, t_end, max_stall = (int(m.group(i)) for i in (1, 2, 3, 4))
sent, rejected, dropped, retries, unsent = (int(x) for x in push.groups())

# Windows: start (wall ms, mono ns), the busy thread's samples (mono ms)
# and the page faults of every thread.
wins = []
samples = []
for f in sorted(glob.glob(f"{tmp}/w/evprof-*.json.gz")):
    p = json.load(gzip.open(f))
    meta = p["meta"]
    w = {"wall_ms": meta["startTime"],
         "mono_ms": meta["startTimeAsClockMonotonicNanosecondsSinceBoot"] / 1e6,
         "faults": 0, "busy": 0, "from": str(int(meta["startTime"] // 1000))}
    for t in p["threads"]:
        if "evprofCounter" in t:
            continue
        s = t["samples"]
        # null: a sample without a page-fault delta (cpu-clock's own).
        pf = [v or 0 for v in s.get("samplyEventDeltas", {}).get("page-faults", [])]
        w["faults"] += sum(pf)
        if t["name"] == "staller":
            w["busy"] += sum(pf)
            at = w["mono_ms"]
            # Weight 0: a page-fault sample, no sample of time.
            weight = s.get("weight") or [1] * len(s["timeDeltas"])
            for d, wt in zip(s["timeDeltas"], weight):
                at += d
                if wt:
                    samples.append(at)
    wins.append(w)
wins.sort(key=lambda w: w["wall_ms"])
nwin = len(wins)

log = [json.loads(l) for l in open(f"{tmp}/ep.log")]
enter = {r["enter"]: r["t_ms"] for r in log if "enter" in r}
reqs = [r for r in log if "enter" not in r]
hang_from, hang_to = enter.get(HANG, 0), enter.get(HANG + 1, 0)

# 1. Sampling never paused beyond the thread's own stalls.
stalls = [tuple(int(x) / 1e6 for x in l.split()) for l in open(f"{tmp}/stalls")]
starts = [s for s, _ in stalls]
cum = [0.0]
for s, e in stalls:
    cum.append(cum[-1] + e - s)


def stalled(a, b):
    """ms of [a, b] inside the thread's stalls (sorted, disjoint)."""
    def upto(t):
        i = bisect.bisect_right(starts, t)
        if i == 0:
            return 0.0
        s, e = stalls[i - 1]
        return cum[i - 1] + min(t, e) - s
    return upto(b) - upto(a)


# Its stalls are known from its loop's start to its end: the gaps there.
samples.sort()
loop = [t for t in samples if t_start / 1e6 <= t <= t_end / 1e6]
pts = [t_start / 1e6] + loop + [t_end / 1e6]
worst, at = max(((b - a) - stalled(a, b), a) for a, b in zip(pts, pts[1:]))
max_gap = max(b - a for a, b in zip(pts, pts[1:]))
allowed = 2 * period_ms + SLACK_MS
msg = (f"{len(loop)} samples of the busy thread's loop over {nwin} windows: "
       f"longest gap {max_gap:.1f} ms (its own longest stall "
       f"{max_stall / 1e6:.1f} ms); beyond its stalls at most {worst:.2f} ms "
       f"<= 2 x {period_ms:g} + {SLACK_MS:g} ms")
if len(loop) > 1000 and worst <= allowed:
    ok(msg)
else:
    fail(f"{msg}: exceeded {at - t_start / 1e6:.1f} ms into its loop")
dups = len(samples) - len(set(samples))
ok("no sample in two windows") if not dups else fail(f"{dups} samples twice")

# 2. Windows on time, the hang included: a window every ~interval.
steps = [(b["mono_ms"] - a["mono_ms"], a["wall_ms"]) for a, b in zip(wins, wins[1:])]
in_hang = [w for w in wins if hang_from <= w["wall_ms"] < hang_to]
worst_step = max(s for s, _ in steps)
hang_step = max([s for s, t in steps if hang_from <= t < hang_to] or [0])
if (worst_step <= (interval + 2) * 1000 and
        len(in_hang) >= 60 / interval - 3):
    ok(f"{len(in_hang)} windows started during the 60 s hang, at most "
       f"{hang_step:.0f} ms apart (whole run: {worst_step:.0f} ms, "
       f"--interval {interval:g} s)")
else:
    fail(f"windows late: step {worst_step:.0f} ms, {len(in_hang)} in the hang")

# 3. Every window accepted, rejected or dropped, as the push line says.
by_from = {}
for r in reqs:
    by_from.setdefault(r.get("from"), []).append(r)
acc, rej, drop = [], [], []
for w in wins:
    st = [r["status"] for r in by_from.get(w["from"], [])]
    (acc if 200 in st else rej if 400 in st else drop).append((w, st))
strays = set(by_from) - {w["from"] for w in wins}
if strays:
    fail(f"requests for windows never written: {sorted(strays)}")
if len(wins) == len({w["from"] for w in wins}):
    ok(f"{nwin} windows, each its own from= second")
else:
    fail("two windows share a from= second")
if (len(acc), len(rej), len(drop), 0) == (sent, rejected, dropped, unsent):
    ok(f"push line matches the endpoint: {sent} sent, {rejected} rejected, "
       f"{dropped} dropped, {unsent} unsent ({retries} retries)")
else:
    fail(f"push line {sent}/{rejected}/{dropped}/{unsent} vs endpoint "
         f"{len(acc)} accepted, {len(rej)} rejected, {len(drop)} never seen")
twice = [w["from"] for w, st in acc if st.count(200) > 1] + \
        [w["from"] for w, st in rej if st.count(400) > 1 or 200 in st]
ok("no window accepted or rejected twice") if not twice else \
    fail(f"windows answered twice: {twice}")
bad = [(w["from"], w["faults"], r["totals"][r["sampleTypes"].index("page-faults/count")])
       for w, _ in acc for r in by_from[w["from"]] if r["status"] == 200
       and r["totals"][r["sampleTypes"].index("page-faults/count")] != w["faults"]]
ok(f"each of the {len(acc)} accepted pushes holds its window's page faults "
   f"exactly") if not bad else fail(f"pushed faults differ (from, file, pushed): {bad}")
if rejected >= 1 and all(all(r.get("phase") == E400 for r in by_from[w["from"]]
                             if r["status"] == 400) for w, _ in rej):
    ok(f"{rejected} windows rejected, all by the 400 phase, never retried")
else:
    fail(f"rejected: {[(w['from'], st) for w, st in rej]}")
if dropped >= 60 / interval - (queue + 1) - 3 and \
        all(enter[DOWN] <= w["wall_ms"] < hang_to for w, _ in drop):
    ok(f"{dropped} windows dropped, all queued during the hang (queue of "
       f"{queue})")
else:
    fail(f"dropped: {[w['wall_ms'] for w, _ in drop]}, hang "
         f"{hang_from}..{hang_to}")

# 4. Queued windows sent when the endpoint came back: every window
# answered 500, 429 or left hanging was accepted later; windows queued
# while it was down were sent once it listened again.
for ph, what in ((E500, "500"), (E429, "429"), (HANG, "60 s hang")):
    hit = {r["from"] for r in reqs if r.get("phase") == ph}
    lost = [f for f in hit if 200 not in [r["status"] for r in by_from[f]]]
    if hit and not lost:
        ok(f"{what}: the {len(hit)} windows it held back were all sent after")
    else:
        fail(f"{what}: windows {sorted(hit)}, never accepted: {lost}")
for ph, what in ((DOWN0, "down at start"), (DOWN, "down mid-run")):
    back = enter[ph + 1]
    late = [w for w, st in acc if w["wall_ms"] < back and
            min(r["t_ms"] for r in by_from[w["from"]]) >= back]
    if late:
        ok(f"{what}: {len(late)} windows queued while it was down sent "
           f"when it listened again")
    else:
        fail(f"{what}: nothing queued was sent after it")
# Retry-After: no request within RA s after a 429.
t429 = [r["t_ms"] for r in reqs if r["status"] == 429]
early = [b - a for a in t429 for b in (r["t_ms"] for r in reqs)
         if a < b < a + ra * 1000 - 100]
ok(f"{len(t429)} answers 429: nothing sent in the {ra:g} s of Retry-After") \
    if t429 and not early else fail(f"429 at {t429}, requests after {early} ms")

# 5. The windows hold the busy thread's page faults (the thread's alone:
# the main thread's few hundred are not in the truth).
total = sum(w["busy"] for w in wins)
if truth and abs(total - truth) <= truth * 0.005:
    ok(f"windows' page faults {total} within 0.5% of rusage {truth} "
       f"(pushed {sum(w['busy'] for w, _ in acc)} in {len(acc)} windows)")
else:
    fail(f"windows' page faults {total} vs rusage {truth}")
sys.exit(1 if fails else 0)
EOF
[ $? -eq 0 ] || fail "see above"
finish
