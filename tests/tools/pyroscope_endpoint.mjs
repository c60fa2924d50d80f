// SPDX-License-Identifier: MIT
// A stand-in for Grafana Pyroscope's POST /ingest on 127.0.0.1, for tests
// where no real Pyroscope can run. It reads requests as Pyroscope 2026-08
// does (grafana/pyroscope pkg/ingester/pyroscope/ingest_handler.go,
// pkg/og/convert/pprof/profile.go, api/model/labelset,
// pkg/model/pprofsplit) with code of its own: node's multipart parser,
// zlib and the pprof-format package decode the body, never evprof.
//
//   node pyroscope_endpoint.mjs --port-file F --log L [--port N]
//        [--mode ok|500:N|429:N:SECS|400|hang] [--series-limit N]
//        [--listen-after-ms MS] [--tls-cert PEM --tls-key PEM]
//        [--script PHASE,PHASE,...]
//
// --script plays timed phases from its start, each MODE@SECS (the last
// one without @SECS lasts until the end): MODE is ok, 500 (every request
// answered 500), 429:SECS (429 with Retry-After: SECS), 400, hang (never
// answered) or down (not listening: connections refused, open ones cut;
// it listens again on the same port after). It needs --port when it
// starts down. Each request's log line has its phase's index; each phase
// entered logs {t_ms, enter: INDEX, mode}.
//
// It writes its port to F once listening, and one JSON line per request
// to L: {t_ms, status, name, labels, from, until, sampleRate, spyName,
// format, auth, tenant, sampleTypes, stConfig, totals, series}.
// series: one entry per distinct label set after Pyroscope's split of the
// samples (series labels + string sample labels), with value totals.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import zlib from 'node:zlib';
import { Profile } from 'pprof-format';

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : def;
};
const portFile = opt('--port-file');
const logFile = opt('--log');
const mode = opt('--mode', 'ok');
const seriesLimit = Number(opt('--series-limit', '1000'));
const listenAfter = Number(opt('--listen-after-ms', '0'));
const phases = (opt('--script', '') || '').split(',').filter((x) => x)
  .map((x) => { const [m, secs] = x.split('@'); return { m, secs: secs === undefined ? Infinity : Number(secs) }; });
const t0 = Date.now();
// The scripted phase now: its index and mode.
function phaseNow() {
  let end = t0;
  for (let i = 0; i < phases.length; i++) {
    end += phases[i].secs * 1000;
    if (Date.now() < end) return [i, phases[i].m];
  }
  return [phases.length - 1, phases[phases.length - 1].m];
}
let requests = 0;
const activeSeries = new Set();

// Pyroscope's error body (pkg/util/http ErrorWithStatus). Answers are
// built first and sent after the request is logged, so that a client that
// got its answer (and a test that then stops this server) finds the log.
function fail(res, status, code, message) {
  res.answer = { status, body: JSON.stringify({ code, message }) + '\n',
    headers: { 'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff' } };
  return status;
}

// labelset.Parse: APP{k=v,...}, no escapes; service name chars checked.
function parseName(name) {
  if (name === null) name = '';
  const brace = name.indexOf('{');
  const app = (brace < 0 ? name : name.slice(0, brace)).trim();
  if (!app) throw new Error('service name is required');
  for (const ch of app)
    if (!/[A-Za-z0-9_.\-/]/.test(ch))
      throw new Error(`invalid service name: ${app}: character is not allowed: "${ch}"`);
  const labels = { __name__: app };
  if (brace >= 0) {
    const end = name.indexOf('}', brace);
    const body = name.slice(brace + 1, end < 0 ? undefined : end);
    for (const kv of body.split(',')) {
      if (!kv) continue;
      const eq = kv.indexOf('=');
      if (eq < 0) continue; // the parser drops a key without '='
      const k = kv.slice(0, eq).trim();
      if (k === '__name__') throw new Error(`label name is reserved: ${k}`);
      labels[k] = kv.slice(eq + 1).trim();
    }
  }
  return labels;
}

const str = (p, i) => p.stringTable.strings[Number(i)];

// RawProfile.metricName: "wall", else the first sample type (or its
// display-name) naming cpu, memory, mutex, block, goroutines.
function metricName(p, stc) {
  let st = '';
  for (const t of p.sampleType) if (str(p, t.type) === 'wall') return 'wall';
  for (const t of p.sampleType) {
    st = str(p, t.type);
    const c = stc[st];
    if (c && c['display-name']) st = c['display-name'];
    if (st.includes('cpu')) return 'process_cpu';
    if (st.includes('alloc_') || st.includes('inuse_') || st === 'space' || st === 'objects') return 'memory';
    if (st.includes('mutex_')) return 'mutex';
    if (st.includes('block_')) return 'block';
    if (st.includes('goroutines')) return 'goroutines';
  }
  return st;
}

const DEFAULT_STC = { samples: { 'display-name': 'cpu', units: 'samples', sampled: true } };

// SampleTypeConfig: json.Unmarshal into map[string]*SampleTypeConfig.
function parseStConfig(text) {
  const v = JSON.parse(text);
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('json: cannot unmarshal into map');
  const types = { units: 'string', 'display-name': 'string', aggregation: 'string', cumulative: 'boolean', sampled: 'boolean' };
  for (const [k, c] of Object.entries(v)) {
    if (c === null) continue;
    if (typeof c !== 'object' || Array.isArray(c)) throw new Error(`json: cannot unmarshal ${k}`);
    for (const [f, t] of Object.entries(types))
      if (f in c && typeof c[f] !== t) throw new Error(`json: cannot unmarshal ${f} of ${k}`);
  }
  return v;
}

// pprofsplit.VisitSampleSeries: group samples by their labels, add string
// sample labels the series lacks, merge groups of equal label sets.
function split(p, seriesLabels) {
  const out = new Map();
  for (const s of p.sample) {
    const ls = { ...seriesLabels };
    for (const l of s.label) {
      const k = str(p, l.key);
      if (k === 'trace_id' || k === 'span_id' || k === 'profile_id') continue;
      if (Number(l.str) <= 0 || (k in ls && ls[k] !== '')) continue;
      ls[k] = str(p, l.str);
    }
    const key = JSON.stringify(Object.keys(ls).sort().map((k) => [k, ls[k]]));
    if (!out.has(key)) out.set(key, { labels: ls, totals: p.sampleType.map(() => 0) });
    s.value.forEach((v, i) => { out.get(key).totals[i] += Number(v); });
  }
  return [...out.values()];
}

async function ingest(req, res, body, rec) {
  const url = new URL(req.url, 'http://x');
  const q = url.searchParams;
  let labels;
  try {
    labels = parseName(q.get('name'));
  } catch (e) {
    return fail(res, 400, 'invalid_argument', `name: ${e.message}`);
  }
  Object.assign(rec, { name: q.get('name'), from: q.get('from'), until: q.get('until'),
    sampleRate: q.get('sampleRate'), spyName: q.get('spyName') || 'unknown',
    format: q.get('format'), auth: req.headers.authorization || null,
    tenant: req.headers['x-scope-orgid'] || null });
  const ct = req.headers['content-type'] || '';
  const format = q.get('format');
  // readInputRawDataFromRequest: format= wins over the Content-Type.
  let raw, stc = null;
  if (format === 'pprof') {
    raw = body;
  } else if (['trie', 'tree', 'lines', 'jfr', 'speedscope'].includes(format) || !ct.includes('multipart/form-data')) {
    return fail(res, 422, 'unknown', `this test endpoint only reads pprof, not format=${format} content-type=${ct}`);
  } else {
    let form;
    try {
      form = await new Response(body, { headers: { 'content-type': ct } }).formData();
    } catch (e) {
      return fail(res, 422, 'unknown', `parsing IngestInput-pprof failed failed to parse pprof /ingest multipart form ${e.message}`);
    }
    if (form.get('prev_profile'))
      return fail(res, 422, 'unknown', 'unsupported client version');
    const prof = form.get('profile');
    raw = prof ? Buffer.from(await prof.arrayBuffer()) : Buffer.alloc(0);
    const st = form.get('sample_type_config');
    if (st) {
      try {
        stc = parseStConfig(typeof st === 'string' ? st : await st.text());
      } catch (e) {
        return fail(res, 422, 'unknown', `parsing IngestInput-pprof failed failed to parse pprof /ingest multipart form ${e.message}`);
      }
    }
  }
  rec.stConfig = stc;
  if (raw.length === 0) return 200; // an empty profile is accepted, no series
  let p;
  try {
    const bytes = raw[0] === 0x1f && raw[1] === 0x8b ? zlib.gunzipSync(raw) : raw;
    p = Profile.decode(bytes);
  } catch (e) {
    return fail(res, 422, 'invalid_argument', `parsing IngestInput-pprof failed ${e.message}`);
  }
  const stcEff = stc || DEFAULT_STC;
  const series = { __name__: metricName(p, stcEff), __delta__: 'false', pyroscope_spy: rec.spyName };
  if (!('service_name' in labels)) series.service_name = labels.__name__;
  for (const [k, v] of Object.entries(labels)) if (!k.startsWith('__')) series[k] = v;
  rec.sampleTypes = p.sampleType.map((t) => `${str(p, t.type)}/${str(p, t.unit)}`);
  const groups = split(p, series);
  rec.series = groups;
  rec.totals = p.sampleType.map((_, i) => groups.reduce((a, g) => a + g.totals[i], 0));
  if (groups.some((g) => Object.keys(g.labels).length > 30))
    return fail(res, 400, 'invalid_argument', 'profile series labels exceed the limit of 30');
  const fresh = groups.map((g) => JSON.stringify(g.labels)).filter((k) => !activeSeries.has(k));
  if (activeSeries.size + fresh.length > seriesLimit)
    return fail(res, 429, 'resource_exhausted', `Maximum active series limit exceeded (${activeSeries.size + fresh.length}/${seriesLimit}), reduce the number of active streams (reduce labels or reduce label values), or contact your administrator to see if the limit can be increased`);
  fresh.forEach((k) => activeSeries.add(k));
  return 200;
}

// Failure modes answer before reading the profile, as a proxy would.
function scripted(res, rec) {
  if (phases.length) {
    const [i, pm] = phaseNow();
    const [m, secs] = pm.split(':');
    rec.phase = i;
    if (m === 'hang') return 'hang';
    if (m === '400' || m === '500') return fail(res, Number(m), m === '400' ? 'invalid_argument' : 'unknown', `scripted ${m}`);
    if (m === '429') {
      fail(res, 429, 'resource_exhausted', 'rate limited (scripted)');
      res.answer.headers['Retry-After'] = secs;
      return 429;
    }
    return 0; // ok; a request that came in just before "down" is answered
  }
  const [m, n, secs] = mode.split(':');
  if (m === 'hang') return 'hang';
  if (m === '400') return fail(res, 400, 'invalid_argument', 'name: invalid service name');
  if (m === '500' && requests <= Number(n)) return fail(res, 500, 'unknown', 'internal error (scripted)');
  if (m === '429' && requests <= Number(n)) {
    fail(res, 429, 'resource_exhausted', 'rate limited (scripted)');
    res.answer.headers['Retry-After'] = secs;
    return 429;
  }
  return 0;
}

const tlsCert = opt('--tls-cert');
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    requests++;
    const rec = { t_ms: Date.now(), method: req.method, path: new URL(req.url, 'http://x').pathname };
    let status;
    if (req.method !== 'POST' || rec.path !== '/ingest') {
      status = fail(res, 404, 'unimplemented', '404 page not found');
    } else {
      // Which window, even when the answer is scripted.
      const q = new URL(req.url, 'http://x').searchParams;
      Object.assign(rec, { from: q.get('from'), until: q.get('until') });
      status = scripted(res, rec);
      if (status === 'hang') {
        rec.status = 'hang';
        fs.appendFileSync(logFile, JSON.stringify(rec) + '\n');
        return; // never answers; the client must give up
      }
      if (!status) status = await ingest(req, res, Buffer.concat(chunks), rec);
    }
    rec.status = status;
    rec.bodyBytes = Buffer.concat(chunks).length;
    fs.appendFileSync(logFile, JSON.stringify(rec) + '\n');
    const a = res.answer || { status, body: '', headers: {} };
    res.writeHead(a.status, a.headers);
    res.end(a.body);
  });
};
const server = tlsCert
  ? https.createServer({ cert: fs.readFileSync(tlsCert), key: fs.readFileSync(opt('--tls-key')) }, handler)
  : http.createServer(handler);

let port = Number(opt('--port', '0'));
const listen = () => server.listen(port, '127.0.0.1', () => {
  port = server.address().port;
  if (portFile) fs.writeFileSync(portFile, String(port));
});
if (!phases.length) {
  setTimeout(listen, listenAfter);
} else {
  // Down phases close the listening socket and every connection (curl
  // keeps one alive), then listen again on the same port.
  let at = 0, down = false;
  const enter = (i) => {
    const m = phases[i].m;
    fs.appendFileSync(logFile, JSON.stringify({ t_ms: Date.now(), enter: i, mode: m }) + '\n');
    if (m === 'down' && !down) {
      down = true;
      if (server.listening) server.close();
      server.closeAllConnections();
    } else if (m !== 'down' && down) {
      down = false;
      listen();
    }
  };
  fs.appendFileSync(logFile, JSON.stringify({ t_ms: t0, enter: 0, mode: phases[0].m }) + '\n');
  if (phases[0].m === 'down') down = true; else listen();
  for (let i = 1; i < phases.length; i++) {
    at += phases[i - 1].secs * 1000;
    setTimeout(() => enter(i), t0 + at - Date.now());
  }
}
