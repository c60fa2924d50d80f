// SPDX-License-Identifier: MIT
// Who ran it, as a test reads it back with code of its own (the
// pprof-format package, JSON.parse), never evprof:
//   node labels.mjs FILE.pb.gz  one line per distinct label set:
//     labels samples=N KEY=VALUE ...   (string and number labels, sorted)
//   node labels.mjs FILE.json.gz  one line per thread of a Firefox file:
//     thread tid=T pid=P process=PROCESS NAME
import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { Profile } from 'pprof-format';

const file = process.argv[2];
let buf = readFileSync(file);
if (buf[0] === 0x1f && buf[1] === 0x8b) buf = gunzipSync(buf);

if (file.includes('.pb')) {
  const p = Profile.decode(buf);
  const str = (i) => p.stringTable.strings[Number(i)];
  const sets = new Map();
  for (const s of p.sample) {
    const kv = s.label
      .map((l) => `${str(l.key)}=${l.str ? str(l.str) : String(l.num)}`)
      .sort()
      .join(' ');
    sets.set(kv, (sets.get(kv) || 0) + Number(s.value[0]));
  }
  for (const [kv, n] of sets) console.log(`labels samples=${n} ${kv}`);
} else {
  const p = JSON.parse(buf.toString('utf8'));
  for (const t of p.threads)
    console.log(`thread tid=${t.tid} pid=${t.pid} process=${t.processName}`);
}
