// Measures the idempotency bodies vagent stores (docs/api-decisions.md "Idempotency"): bytes of
// typical responses (POST /v1/sessions, a turn, POST /v1/calls, POST /v1/trunks) and what
// deflate-raw and brotli make of them, with the cost per body. Run after `npm run build`: node bench/idempotency-bodies.mjs
// (BENCH_SMOKE=1, bench/smoke.mjs: 1 run of 50 calls per body, 500 rows).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { SettingsSchema } from '../dist/config/schema.js';
import { buildApp } from '../dist/http/app.js';
import { openRuntime } from '../dist/daemon/runtime.js';
import { AudioCache } from '../dist/adapters/speech/cache.js';
import { FakeSynthesizer } from '../dist/adapters/speech/fake.js';
import { SpeechService } from '../dist/adapters/speech/synthesis.js';
import crypto from 'node:crypto';
import { smokeOr } from './lib/report.mjs';

/** Timing runs per body (the best is kept) and calls per run; rows of the whole-row comparison. */
const RUNS = smokeOr(1, 7);
const ROUNDS = smokeOr(50, 1000);
const ROWS = smokeOr(500, 20_000);

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-bodies-'));
const settings = SettingsSchema.parse({ state_dir: dir, log_level: 'silent' });
// Speech on (a fake synthesiser, the real cache): replies carry their clips' audio URLs, as in production.
const speech = new SpeechService(
  new FakeSynthesizer({ mode: 'ok', msPerChar: 0 }),
  new AudioCache(path.join(dir, 'audio'), crypto.randomBytes(32)),
  { timeoutMs: 5000 },
);
const runtime = openRuntime(settings, { speech, audioBaseUrl: () => 'https://vagent.example.in' });
const app = await buildApp({
  services: runtime.services,
  bodyLimitBytes: settings.body_limit_bytes,
  logger: false,
  version: 'bench',
  checkResponses: false,
});
await app.ready();
const key = runtime.services.tenants.createKey('default').key;
let n = 0;
const call = async (method, url, payload) => {
  const res = await app.inject({
    method,
    url,
    headers: { authorization: `Bearer ${key}`, 'idempotency-key': `k${n++}` },
    payload,
  });
  if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
  return res;
};
const bodies = {};
const s = await call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
bodies['POST /v1/sessions'] = s.body;
const sid = s.json().session_id;
bodies['POST turn (name)'] = (await call('POST', `/v1/sessions/${sid}/turn`, { text: 'My name is Priya Sharma' })).body;
bodies['POST turn (yes)'] = (await call('POST', `/v1/sessions/${sid}/turn`, { text: 'yes' })).body;
bodies['POST /v1/calls'] = (
  await call('POST', '/v1/calls', {
    agent_id: 'ag_emi_reminder',
    to: '+919876543210',
    customer_name: 'Ravi Kumar',
    context: { emi_amount: '12500', due_date: 'the 5th', loan_last4: '4321' },
  })
).body;
bodies['POST /v1/trunks'] = (
  await call('POST', '/v1/trunks', { address: 'sip.example-carrier.in', name: 'Mumbai PRI', numbers: ['+912240001234'] })
).body;
const stored = runtime.services.repos.store.db.prepare('SELECT body FROM idempotency').pluck().all();
if (stored.length !== Object.keys(bodies).length)
  throw new Error(`expected ${Object.keys(bodies).length} stored bodies, found ${stored.length}`);

/** µs per call of fn(body): the best of 7 runs of 1,000 (the machine is shared; the best run is the least disturbed). */
function perBody(fn, body, rounds = ROUNDS) {
  for (let i = 0; i < Math.min(200, rounds); i++) fn(body);
  let best = Infinity;
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < rounds; i++) fn(body);
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / rounds / 1000);
  }
  return best;
}
const methods = {
  'deflateRaw l1': (b) => zlib.deflateRawSync(b, { level: 1 }),
  'deflateRaw l6': (b) => zlib.deflateRawSync(b, { level: 6 }),
  'brotli q4': (b) =>
    zlib.brotliCompressSync(b, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length },
    }),
  'brotli q5': (b) =>
    zlib.brotliCompressSync(b, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: b.length },
    }),
};
const inflate = {
  'deflateRaw l1': zlib.inflateRawSync,
  'deflateRaw l6': zlib.inflateRawSync,
  'brotli q4': zlib.brotliDecompressSync,
  'brotli q5': zlib.brotliDecompressSync,
};
console.log('body'.padEnd(22), 'bytes'.padStart(6), ...Object.keys(methods).map((m) => `${m}: bytes ratio µs-in µs-out`.padStart(40)));
for (const [name, text] of Object.entries(bodies)) {
  const buf = Buffer.from(text);
  const cols = Object.entries(methods).map(([m, fn]) => {
    const z = fn(buf);
    if (inflate[m](z).toString() !== text) throw new Error('round trip');
    return `${z.length} ${(buf.length / z.length).toFixed(2)}x ${perBody(fn, buf).toFixed(1)} ${perBody(inflate[m], z).toFixed(1)}`.padStart(
      40,
    );
  });
  console.log(name.padEnd(22), String(buf.length).padStart(6), ...cols);
}

// Whole rows: 20,000 idempotency rows (500 in the smoke mode) with these bodies in turn (the mix of a session's life:
// open, two turns), stored plain vs deflated, in a table shaped like the real one.
const Database = (await import('better-sqlite3')).default;
const mix = [bodies['POST /v1/sessions'], bodies['POST turn (name)'], bodies['POST turn (yes)']];
for (const mode of ['plain text', 'deflateRaw l6 blob']) {
  const file = path.join(dir, `rows-${mode.replace(/\W+/g, '-')}.db`);
  const db = new Database(file);
  db.exec(`CREATE TABLE idempotency (seq INTEGER PRIMARY KEY, tenant_id TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
    state TEXT NOT NULL, status INTEGER, body TEXT, body_z BLOB, created_at REAL NOT NULL, UNIQUE (tenant_id, key)) STRICT;
    CREATE INDEX idempotency_created ON idempotency(created_at);`);
  const ins = db.prepare(
    'INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, body_z, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const body = mix[i % 3];
      const z = mode === 'plain text' ? null : zlib.deflateRawSync(body, { level: 6 });
      ins.run('default', crypto.randomUUID(), crypto.randomBytes(32).toString('hex'), 'done', 201, z ? null : body, z, 1.7e9 + i);
    }
  })();
  const bytes = db.pragma('page_count', { simple: true }) * db.pragma('page_size', { simple: true });
  console.log(`${mode}: ${(bytes / ROWS).toFixed(0)} bytes per row (whole file / rows)`);
  db.close();
}
await app.close();
runtime.close();
fs.rmSync(dir, { recursive: true, force: true });
