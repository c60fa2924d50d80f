// Reads a Firefox Profiler processed profile (.json or .json.gz) written by
// evprof and prints, per thread, what the tests compare with truth:
//   thread NAME tid=T pid=P samples=N cpu_us=C EVENT=SUM ... process=PNAME
//   through FUNC EVENT=SUM samples=N   (with --through FUNC: deltas and
//                                       samples whose stack contains FUNC)
//   meta NOTE                          (each meta.evprofNotes entry)
//   counter-track tid=T EVENT=SUM samples=N
//                                      (a per-counter track: its weights)
//   counter EVENT pid=P samples=N sum=S  (each entry of profile.counters)
//   waits tid=T NAME=MS NAME-n=N ... inside=K outside=L
//                                      (a thread with wait markers: their
//                                       ms and number per name, K of its
//                                       own samples more than 20 us inside
//                                       one, L markers outside its life)
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const args = process.argv.slice(2);
const file = args[0];
const through = args.indexOf('--through') >= 0 ? args[args.indexOf('--through') + 1] : null;
let buf = readFileSync(file);
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);
const p = JSON.parse(buf.toString('utf8'));
const sh = p.shared;
const str = (i) => sh.stringArray[i];
const funcName = (frame) => str(sh.funcTable.name[sh.frameTable.func[frame]]);

// Function names on the path of each stack, computed once.
const names = [];
for (let i = 0; i < sh.stackTable.length; i++) {
  const k = sh.stackTable.prefixOffset[i];
  const parent = k === 0 ? null : i - k;
  const own = funcName(sh.stackTable.frame[i]);
  names.push(parent === null ? [own] : names[parent].concat([own]));
}

for (const note of (p.meta.evprofNotes || [])) console.log(`meta ${note}`);
for (const c of (p.counters || [])) {
  const sum = c.samples.count.reduce((a, v) => a + v, 0);
  console.log(`counter ${c.name} pid=${c.pid} samples=${c.samples.length} sum=${sum}`);
}
for (const t of p.threads) {
  const s = t.samples;
  if (t.evprofCounter !== undefined) {
    const sum = s.weight.reduce((a, v) => a + v, 0);
    console.log(`counter-track tid=${t.tid} ${t.evprofCounter}=${sum} samples=${s.length}`);
    continue;
  }
  const ev = s.samplyEventDeltas || {};
  const sums = {};
  const thr = {};
  let thrSamples = 0;
  for (const e of Object.keys(ev)) { sums[e] = 0; thr[e] = 0; }
  let cpu = 0;
  for (let i = 0; i < s.length; i++) {
    if (s.threadCPUDelta && s.threadCPUDelta[i] !== null) cpu += s.threadCPUDelta[i];
    const hit = through && s.stack[i] !== null && names[s.stack[i]].includes(through);
    if (hit) thrSamples++;
    for (const e of Object.keys(ev)) {
      const v = ev[e][i];
      if (v === null) continue;
      sums[e] += v;
      if (hit) thr[e] += v;
    }
  }
  waits(t);
  const evs = Object.keys(ev).map((e) => `${e}=${sums[e]}`).join(' ');
  console.log(`thread ${t.name} tid=${t.tid} pid=${t.pid} samples=${s.length} cpu_us=${Math.round(cpu)} ${evs} process=${t.processName}`);
  if (through) {
    const te = Object.keys(ev).map((e) => `${e}=${thr[e]}`).join(' ');
    console.log(`through ${through} tid=${t.tid} samples=${thrSamples} ${te}`);
  }
}

// The thread's interval markers (evprof's waits) against its own samples.
function waits(t) {
  const m = t.markers;
  if (!m || !m.length) return;
  const ms = {};
  const n = {};
  const iv = [];
  let outside = 0;
  const end = t.unregisterTime === null ? Infinity : t.unregisterTime;
  for (let i = 0; i < m.length; i++) {
    if (m.phase[i] !== 1) continue;
    const name = str(m.name[i]);
    ms[name] = (ms[name] || 0) + (m.endTime[i] - m.startTime[i]);
    n[name] = (n[name] || 0) + 1;
    iv.push([m.startTime[i], m.endTime[i]]);
    if (m.startTime[i] < t.registerTime - 0.001 || m.endTime[i] > end + 0.001) outside++;
  }
  iv.sort((a, b) => a[0] - b[0]);
  // Own samples strictly inside a wait (20 us in from both ends).
  let inside = 0;
  let time = 0;
  let k = 0;
  for (let i = 0; i < t.samples.length; i++) {
    time = t.samples.time ? t.samples.time[i] : time + t.samples.timeDeltas[i];
    while (k < iv.length && iv[k][1] < time) k++;
    for (let j = k; j < iv.length && iv[j][0] < time; j++) {
      if (time > iv[j][0] + 0.02 && time < iv[j][1] - 0.02) { inside++; break; }
    }
  }
  const parts = Object.keys(ms).sort().map((k2) => `${k2}=${ms[k2].toFixed(3)} ${k2}-n=${n[k2]}`);
  console.log(`waits tid=${t.tid} ${parts.join(' ')} inside=${inside} outside=${outside}`);
}
