#!/usr/bin/env node
// SPDX-License-Identifier: MIT
//
// Structural checker for Firefox Profiler processed profiles (the shared
// table layout, preprocessedProfileVersion 60+), as evprof writes them.
// The profiler's own loader validates nothing (a frame pointing at func 77
// loads silently), so tests run this next to it.
//
// Usage: node fxcheck.mjs PROFILE.json[.gz]...
// Exits 0 when every file is consistent, 1 listing the problems, 2 on usage
// or read errors. No dependencies beyond node itself.

import { readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';

const MAX_REPORTS = 60;

function load(path) {
  let buf = readFileSync(path);
  if (buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b) {
    buf = gunzipSync(buf);
  }
  return JSON.parse(buf.toString('utf8'));
}

function check(profile) {
  const problems = [];
  const bad = (msg) => {
    if (problems.length < MAX_REPORTS) problems.push(msg);
    else if (problems.length === MAX_REPORTS) problems.push('... (more)');
  };
  const isInt = (v) => Number.isInteger(v);
  const inRange = (v, n) => isInt(v) && v >= 0 && v < n;

  // Every array column of table has table.length entries.
  const columns = (where, table, required) => {
    if (!table || typeof table !== 'object') {
      bad(`${where}: missing table`);
      return false;
    }
    if (!isInt(table.length) || table.length < 0) {
      bad(`${where}.length: not a non-negative integer`);
      return false;
    }
    for (const col of required) {
      if (!Array.isArray(table[col])) bad(`${where}.${col}: missing column`);
    }
    for (const [key, col] of Object.entries(table)) {
      if (Array.isArray(col) && col.length !== table.length) {
        bad(`${where}.${key}: ${col.length} entries, length is ${table.length}`);
      }
    }
    return true;
  };
  // Checks each value of column col with ok(value, index).
  const each = (where, table, col, ok, what) => {
    const arr = table && table[col];
    if (!Array.isArray(arr)) return;
    for (let i = 0; i < arr.length; i++) {
      if (!ok(arr[i], i)) {
        bad(`${where}.${col}[${i}] = ${JSON.stringify(arr[i])}: ${what}`);
      }
    }
  };

  const meta = profile.meta;
  if (!meta || typeof meta !== 'object') {
    bad('meta: missing');
    return problems;
  }
  const version = meta.preprocessedProfileVersion;
  if (!isInt(version)) bad('meta.preprocessedProfileVersion: not a number');
  if (!(typeof meta.interval === 'number' && meta.interval > 0)) {
    bad('meta.interval: not a positive number');
  }
  if (typeof meta.startTime !== 'number') bad('meta.startTime: not a number');
  const categories = Array.isArray(meta.categories) ? meta.categories : [];
  if (!categories.some((c) => c && c.color === 'grey')) {
    bad('meta.categories: no grey (default) category');
  }
  categories.forEach((c, i) => {
    if (!c || typeof c.name !== 'string' || !Array.isArray(c.subcategories) ||
        c.subcategories.length === 0) {
      bad(`meta.categories[${i}]: needs a name and a default subcategory`);
    }
  });

  const libs = Array.isArray(profile.libs) ? profile.libs : [];
  if (!Array.isArray(profile.libs)) bad('libs: not an array');
  libs.forEach((lib, i) => {
    for (const key of ['name', 'path', 'debugName', 'debugPath', 'breakpadId']) {
      if (typeof lib[key] !== 'string') bad(`libs[${i}].${key}: not a string`);
    }
    if (lib.codeId !== null && lib.codeId !== undefined &&
        !/^[0-9a-f]*$/.test(lib.codeId)) {
      bad(`libs[${i}].codeId: not lowercase hex`);
    }
    if (!/^[0-9A-F]{33}$/.test(lib.breakpadId)) {
      bad(`libs[${i}].breakpadId: not 33 uppercase hex digits`);
    }
  });

  const shared = profile.shared;
  if (!shared || typeof shared !== 'object') {
    bad('shared: missing (tables moved there in version 60)');
    return problems;
  }
  const strings = shared.stringArray;
  if (!Array.isArray(strings)) bad('shared.stringArray: not an array');
  const nStrings = Array.isArray(strings) ? strings.length : 0;
  (strings || []).forEach((s, i) => {
    if (typeof s !== 'string') bad(`shared.stringArray[${i}]: not a string`);
  });
  const isString = (v) => inRange(v, nStrings);

  const stack = shared.stackTable;
  const frame = shared.frameTable;
  const func = shared.funcTable;
  const res = shared.resourceTable;
  const syms = shared.nativeSymbols;
  const sources = shared.sources;
  const stackOk = columns('stackTable', stack, ['frame']);
  const frameOk = columns('frameTable', frame,
    ['address', 'inlineDepth', 'category', 'subcategory', 'func',
      'nativeSymbol', 'line', 'column']);
  const funcOk = columns('funcTable', func,
    ['name', 'isJS', 'relevantForJS', 'resource']);
  const resOk = columns('resourceTable', res, ['name', 'type']);
  const symsOk = columns('nativeSymbols', syms,
    ['libIndex', 'address', 'name', 'functionSize']);
  if (sources !== undefined) columns('sources', sources, ['filename']);
  if (shared.sourceLocationTable !== undefined) {
    columns('sourceLocationTable', shared.sourceLocationTable, []);
  }
  const nStacks = stackOk ? stack.length : 0;
  const nFrames = frameOk ? frame.length : 0;
  const nFuncs = funcOk ? func.length : 0;
  const nRes = resOk ? res.length : 0;
  const nSyms = symsOk ? syms.length : 0;
  const nSources = sources && isInt(sources.length) ? sources.length : 0;

  if (stackOk) {
    each('stackTable', stack, 'frame', (v) => inRange(v, nFrames),
      'frame index out of range');
    if (Array.isArray(stack.prefixOffset)) {
      each('stackTable', stack, 'prefixOffset', (v, i) => isInt(v) && v >= 0 && v <= i,
        'prefixOffset must be 0 (root) or k in 1..i (parent i - k)');
    } else if (Array.isArray(stack.prefix)) {
      each('stackTable', stack, 'prefix', (v, i) => v === null || (isInt(v) && v >= 0 && v < i),
        'prefix must be null or an earlier stack');
    } else {
      bad('stackTable: neither prefixOffset nor prefix');
    }
    if (version >= 66 && !Array.isArray(stack.prefixOffset)) {
      bad('stackTable.prefixOffset: required from version 66');
    }
  }
  if (frameOk) {
    each('frameTable', frame, 'func', (v) => inRange(v, nFuncs), 'func index out of range');
    each('frameTable', frame, 'address', (v) => isInt(v) && v >= -1, 'address must be an integer >= -1');
    each('frameTable', frame, 'inlineDepth', (v) => isInt(v) && v >= 0, 'inlineDepth must be >= 0');
    each('frameTable', frame, 'category', (v) => v === null || inRange(v, categories.length),
      'category out of range');
    each('frameTable', frame, 'subcategory', (v, i) => {
      if (v === null) return true;
      const c = categories[frame.category[i]];
      return c && inRange(v, c.subcategories.length);
    }, 'subcategory out of range of its category');
    each('frameTable', frame, 'nativeSymbol', (v) => v === null || inRange(v, nSyms),
      'nativeSymbol out of range');
    each('frameTable', frame, 'line', (v) => v === null || (isInt(v) && v > 0), 'line must be null or > 0');
    if (Array.isArray(frame.lib)) {
      each('frameTable', frame, 'lib', (v) => v === -1 || inRange(v, libs.length), 'lib out of range');
    }
  }
  if (funcOk) {
    each('funcTable', func, 'name', isString, 'name is not a string index');
    each('funcTable', func, 'resource', (v) => v === -1 || inRange(v, nRes), 'resource out of range');
    each('funcTable', func, 'isJS', (v) => typeof v === 'boolean', 'not a boolean');
    if (Array.isArray(func.source)) {
      each('funcTable', func, 'source', (v) => v === null || inRange(v, nSources), 'source out of range');
    }
  }
  if (resOk) {
    each('resourceTable', res, 'name', isString, 'name is not a string index');
    if (Array.isArray(res.lib)) {
      each('resourceTable', res, 'lib', (v) => v === null || inRange(v, libs.length), 'lib out of range');
    } else if (version < 70) {
      bad('resourceTable.lib: required before version 70');
    }
  }
  if (symsOk) {
    each('nativeSymbols', syms, 'libIndex', (v) => inRange(v, libs.length), 'libIndex out of range');
    each('nativeSymbols', syms, 'name', isString, 'name is not a string index');
    each('nativeSymbols', syms, 'address', (v) => isInt(v) && v >= 0, 'address must be >= 0');
  }
  if (sources && Array.isArray(sources.filename)) {
    each('sources', sources, 'filename', isString, 'filename is not a string index');
  }

  const schemas = new Set();
  if (!Array.isArray(meta.markerSchema)) bad('meta.markerSchema: not an array');
  (meta.markerSchema || []).forEach((sc, i) => {
    if (!sc || typeof sc.name !== 'string' || !Array.isArray(sc.display) || !Array.isArray(sc.fields)) {
      bad(`meta.markerSchema[${i}]: needs a name, display and fields`);
    } else {
      schemas.add(sc.name);
    }
  });
  if (!Array.isArray(profile.threads)) {
    bad('threads: not an array');
    return problems;
  }
  profile.threads.forEach((th, t) => {
    const where = `threads[${t}]`;
    if (typeof th.name !== 'string') bad(`${where}.name: not a string`);
    for (const key of ['pid', 'tid']) {
      if (typeof th[key] !== 'string' && typeof th[key] !== 'number') {
        bad(`${where}.${key}: missing`);
      }
    }
    if (typeof th.isMainThread !== 'boolean') bad(`${where}.isMainThread: not a boolean`);
    if (typeof th.processStartupTime !== 'number') bad(`${where}.processStartupTime: not a number`);
    if (typeof th.registerTime !== 'number') bad(`${where}.registerTime: not a number`);
    for (const key of ['processShutdownTime', 'unregisterTime']) {
      if (th[key] !== null && typeof th[key] !== 'number') bad(`${where}.${key}: not a number or null`);
    }
    const s = th.samples;
    const sw = `${where}.samples`;
    if (columns(sw, s, ['stack'])) {
      if (!['samples', 'tracing-ms', 'bytes'].includes(s.weightType)) {
        bad(`${sw}.weightType: ${JSON.stringify(s.weightType)} is not samples, tracing-ms or bytes`);
      }
      each(sw, s, 'stack', (v) => v === null || inRange(v, nStacks), 'stack out of range');
      const times = s.time || s.timeDeltas;
      if (!Array.isArray(times)) {
        bad(`${sw}: neither time nor timeDeltas`);
      } else {
        let t0 = -Infinity;
        let acc = 0;
        for (let i = 0; i < times.length; i++) {
          if (typeof times[i] !== 'number') {
            bad(`${sw}: time ${i} is not a number`);
            break;
          }
          acc = s.time ? times[i] : acc + times[i];
          // timeDeltas of 0 are fine; a negative delta is a step back.
          if (acc < t0 || (s.timeDeltas && i > 0 && times[i] < 0)) {
            bad(`${sw}: time decreases at sample ${i}`);
            break;
          }
          t0 = acc;
        }
      }
      if (s.weight !== null && s.weight !== undefined) {
        if (!Array.isArray(s.weight)) bad(`${sw}.weight: not an array or null`);
        else each(sw, s, 'weight', (v) => typeof v === 'number', 'weight is not a number');
      }
      if (s.threadCPUDelta !== undefined) {
        if (!Array.isArray(s.threadCPUDelta)) bad(`${sw}.threadCPUDelta: not an array`);
        else each(sw, s, 'threadCPUDelta', (v) => v === null || (typeof v === 'number' && v >= 0),
          'CPU delta must be null or >= 0');
        if (!meta.sampleUnits || !meta.sampleUnits.threadCPUDelta) {
          bad('meta.sampleUnits.threadCPUDelta: missing while samples have threadCPUDelta');
        }
      }
      const deltas = s.samplyEventDeltas;
      if (deltas !== undefined) {
        if (!deltas || typeof deltas !== 'object' || Array.isArray(deltas)) {
          bad(`${sw}.samplyEventDeltas: not an object`);
        } else {
          for (const [name, col] of Object.entries(deltas)) {
            if (!Array.isArray(col) || col.length !== s.length) {
              bad(`${sw}.samplyEventDeltas[${JSON.stringify(name)}]: not an array of length ${s.length}`);
              continue;
            }
            col.forEach((v, i) => {
              if (v !== null && !(typeof v === 'number' && v >= 0)) {
                bad(`${sw}.samplyEventDeltas[${JSON.stringify(name)}][${i}] = ${JSON.stringify(v)}: not null or >= 0`);
              }
            });
          }
        }
      }
    }
    const m = th.markers;
    if (columns(`${where}.markers`, m, ['name', 'startTime', 'endTime', 'phase', 'category', 'data'])) {
      each(`${where}.markers`, m, 'name', isString, 'name is not a string index');
      each(`${where}.markers`, m, 'category', (v) => inRange(v, categories.length), 'category out of range');
      each(`${where}.markers`, m, 'phase', (v) => [0, 1, 2, 3].includes(v), 'phase is not 0..3');
      each(`${where}.markers`, m, 'endTime', (v, i) => m.phase[i] !== 1 ||
        (typeof v === 'number' && typeof m.startTime[i] === 'number' && v >= m.startTime[i]),
        'an interval must end at or after its start');
      each(`${where}.markers`, m, 'data', (d) => {
        if (d === null) return true;
        if (d.type !== undefined && !schemas.has(d.type)) return false;
        return !d.cause || d.cause.stack === null || inRange(d.cause.stack, nStacks);
      }, 'data.type has no marker schema, or data.cause.stack is out of range');
    }
  });
  if (!Array.isArray(profile.counters) && profile.counters !== undefined) {
    bad('counters: not an array');
  }
  checkCounters(profile, bad);
  return problems;
}

// Counters in the layout of src/types/profile.ts (RawCounter): from
// version 62 on, each needs its display config (63: with tooltipRows),
// which the loader derives only for older files.
const GRAPH_COLORS = ['blue', 'green', 'grey', 'ink', 'magenta', 'orange',
  'purple', 'red', 'teal', 'yellow'];
const TOOLTIP_SOURCES = ['count', 'rate', 'cpu-ratio', 'accumulated',
  'count-range', 'selection-total', 'selection-rate', 'committed-range-total',
  'sample-number'];
function checkCounters(profile, bad) {
  const version = profile.meta.preprocessedProfileVersion;
  const pids = new Set(profile.threads.map((t) => String(t.pid)));
  (profile.counters || []).forEach((c, i) => {
    const where = `counters[${i}]`;
    for (const key of ['name', 'category', 'description']) {
      if (typeof c[key] !== 'string') bad(`${where}.${key}: not a string`);
    }
    if (!pids.has(String(c.pid))) bad(`${where}.pid: ${c.pid} is no thread's pid`);
    const main = profile.threads[c.mainThreadIndex];
    if (!main) bad(`${where}.mainThreadIndex: out of range`);
    else if (String(main.pid) !== String(c.pid)) bad(`${where}.mainThreadIndex: a thread of another process`);
    const s = c.samples;
    if (!s || !Number.isInteger(s.length)) {
      bad(`${where}.samples: missing`);
    } else {
      const times = s.time || s.timeDeltas;
      if (!Array.isArray(times) || times.length !== s.length) bad(`${where}.samples: time or timeDeltas of length ${s.length} missing`);
      if (!Array.isArray(s.count) || s.count.length !== s.length) bad(`${where}.samples.count: not an array of length ${s.length}`);
      else if (!s.count.every((v) => typeof v === 'number')) bad(`${where}.samples.count: not all numbers`);
      if (s.time) {
        for (let k = 1; k < s.time.length; k++) {
          if (s.time[k] < s.time[k - 1]) { bad(`${where}.samples.time: decreases at ${k}`); break; }
        }
      }
    }
    const d = c.display;
    if (version < 62 && d === undefined) return;
    if (!d || typeof d !== 'object') {
      bad(`${where}.display: required from version 62`);
      return;
    }
    if (!['line-rate', 'line-accumulated'].includes(d.graphType)) bad(`${where}.display.graphType: ${JSON.stringify(d.graphType)}`);
    if (typeof d.unit !== 'string') bad(`${where}.display.unit: not a string`);
    if (!GRAPH_COLORS.includes(d.color)) bad(`${where}.display.color: ${JSON.stringify(d.color)} is not a graph colour`);
    if (d.markerSchemaLocation !== null && typeof d.markerSchemaLocation !== 'string') bad(`${where}.display.markerSchemaLocation: not null or a string`);
    if (typeof d.sortWeight !== 'number') bad(`${where}.display.sortWeight: not a number`);
    if (typeof d.label !== 'string') bad(`${where}.display.label: not a string`);
    if (!Array.isArray(d.tooltipRows)) {
      if (version >= 63) bad(`${where}.display.tooltipRows: required from version 63`);
      return;
    }
    d.tooltipRows.forEach((r, k) => {
      if (r.type === 'separator') return;
      if (r.type !== 'value' || !TOOLTIP_SOURCES.includes(r.source) || typeof r.label !== 'string' ||
          !r.format || !['bytes', 'bytes-per-second', 'percent', 'number'].includes(r.format.unit)) {
        bad(`${where}.display.tooltipRows[${k}]: not a separator or a value row`);
      }
    });
  });
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: fxcheck.mjs PROFILE.json[.gz]...');
  process.exit(2);
}
let failed = false;
for (const path of files) {
  let profile;
  try {
    profile = load(path);
  } catch (e) {
    console.error(`${path}: cannot read: ${e.message}`);
    process.exit(2);
  }
  const problems = check(profile);
  if (problems.length) {
    failed = true;
    console.error(`${path}: ${problems.length} problem(s):`);
    for (const p of problems) console.error(`  ${p}`);
  } else {
    const n = profile.threads.reduce((a, t) => a + t.samples.length, 0);
    console.log(`${path}: ok (${profile.threads.length} threads, ${n} samples, ` +
      `${profile.shared.stackTable.length} stacks)`);
  }
}
process.exit(failed ? 1 : 0);
