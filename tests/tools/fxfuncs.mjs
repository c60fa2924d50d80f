// Per-function totals from a Firefox Profiler processed profile (.json or
// .json.gz) written by evprof, computed independently of evprof's reader:
//   COLUMN FUNC SELF TOTAL
// for COLUMN "samples" (sample weights) and every samplyEventDeltas event,
// only where TOTAL is not 0. SELF counts the leaf frame's function, TOTAL
// every function on the stack once per sample; functions are named.
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

let buf = readFileSync(process.argv[2]);
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);
const p = JSON.parse(buf.toString('utf8'));
const sh = p.shared;
const funcName = (frame) => sh.stringArray[sh.funcTable.name[sh.frameTable.func[frame]]];

const names = []; // per stack: leaf name and the set of names on it
for (let i = 0; i < sh.stackTable.length; i++) {
  const k = sh.stackTable.prefixOffset[i];
  const own = funcName(sh.stackTable.frame[i]);
  const set = new Set(k === 0 ? [] : names[i - k].set);
  set.add(own);
  names.push({ leaf: own, set });
}

const sums = new Map(); // column -> name -> [self, total]
const add = (col, name, self, total) => {
  if (!sums.has(col)) sums.set(col, new Map());
  const m = sums.get(col);
  const v = m.get(name) || [0n, 0n];
  m.set(name, [v[0] + self, v[1] + total]);
};
for (const t of p.threads) {
  const s = t.samples;
  if (t.evprofCounter !== undefined) continue; // its thread's deltas again
  const ev = s.samplyEventDeltas || {};
  for (let i = 0; i < s.length; i++) {
    if (s.stack[i] === null) continue;
    const st = names[s.stack[i]];
    const vals = [['samples', BigInt(s.weight ? s.weight[i] : 1)]];
    for (const e of Object.keys(ev)) vals.push([e, BigInt(ev[e][i] ?? 0)]);
    for (const [col, v] of vals) {
      for (const n of st.set) add(col, n, n === st.leaf ? v : 0n, v);
    }
  }
}
for (const [col, m] of sums)
  for (const [name, [self, total]] of m)
    if (total !== 0n) console.log(`${col} ${name} ${self} ${total}`);
