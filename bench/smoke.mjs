/**
 * `npm run bench:smoke` (after a build; CI runs it after `npm test`): every bench script once,
 * in its smoke mode (`BENCH_SMOKE=1`, see bench/lib/report.mjs): tiny durations and counts, so
 * each runs end to end in seconds. No target is judged and no figure means anything: the smoke
 * shows that each bench still runs, so that `npm run bench` is not found broken only when
 * someone needs its figures. A script that exits non-zero (or overruns its time limit) fails
 * the smoke: exit 1, after the others ran.
 *
 * Every `bench/*.mjs` must be a script run here or a part of one (PARTS): a new bench script
 * that is not added here fails the smoke.
 *
 * Usage: node bench/smoke.mjs [script.mjs …]   (default: all of SCRIPTS, in order)
 * Environment: BENCH_SMOKE_TIMEOUT_S (300: per script).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { numEnv } from './lib/report.mjs';
import { fixed, table } from './lib/stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BENCH = path.join(ROOT, 'bench');
const TIMEOUT_S = numEnv('BENCH_SMOKE_TIMEOUT_S', 300);

/** The bench scripts, in the order `npm run bench` runs its own, then the others. */
const SCRIPTS = [
  'run.mjs',
  'growth.mjs',
  'media.mjs',
  'media-livekit.mjs',
  'media-rtf.mjs',
  'vad.mjs',
  'idempotency-bodies.mjs',
  'idempotency-space.mjs',
  'turn-ab.mjs',
  'events.mjs',
  'webhooks.mjs',
  'recording.mjs',
  'dashboard.mjs',
  'extraction.mjs',
  'llm.mjs',
  'llm-stream.mjs',
];
/** Files of bench/ that are not scripts of their own, and what runs them. */
const PARTS = {
  'sessions.mjs': 'run.mjs, for (e) and the open-sessions RSS',
  'bare-server.mjs': 'run.mjs, the server of (a) and (b)',
  'durable-server.mjs': 'run.mjs, the server of (g)',
  'smoke.mjs': 'this runner',
};

const unknown = fs.readdirSync(BENCH).filter((f) => f.endsWith('.mjs') && !SCRIPTS.includes(f) && !(f in PARTS));
const asked = process.argv.slice(2).map((a) => path.basename(a));
const wrong = asked.filter((a) => !SCRIPTS.includes(a));
if (wrong.length > 0) {
  process.stderr.write(`bench/smoke: not a bench script: ${wrong.join(', ')} (scripts: ${SCRIPTS.join(', ')})\n`);
  process.exit(2);
}

const rows = [];
let failed = unknown.length > 0;
for (const script of asked.length > 0 ? asked : SCRIPTS) {
  process.stderr.write(`\n=== bench/smoke: ${script} ===\n`);
  const started = Date.now();
  const r = spawnSync(process.execPath, [path.join(BENCH, script)], {
    cwd: ROOT,
    env: { ...process.env, BENCH_SMOKE: '1' },
    stdio: 'inherit',
    timeout: TIMEOUT_S * 1000,
    killSignal: 'SIGTERM',
  });
  const seconds = (Date.now() - started) / 1000;
  const outcome =
    r.error?.code === 'ETIMEDOUT'
      ? `FAILED: over ${TIMEOUT_S} s`
      : r.status === 0
        ? 'ok'
        : `FAILED: ${r.signal ? `signal ${r.signal}` : `exit ${r.status}`}`;
  if (outcome !== 'ok') failed = true;
  rows.push([script, fixed(seconds, 1), outcome]);
}

const out = ['', 'bench smoke (BENCH_SMOKE=1: tiny runs, no target judged)', table(['script', 'seconds', 'outcome'], rows)];
const total = rows.reduce((n, r) => n + Number(r[1]), 0);
out.push(`  total ${fixed(total, 0)} s`);
if (unknown.length > 0) {
  out.push(
    '',
    `FAILED: bench/${unknown.join(', bench/')} ${unknown.length === 1 ? 'is' : 'are'} neither a smoke-tested script nor a known part of one: add to SCRIPTS (with a smoke mode) or PARTS in bench/smoke.mjs`,
  );
}
console.log(out.join('\n'));
process.exitCode = failed ? 1 : 0;
