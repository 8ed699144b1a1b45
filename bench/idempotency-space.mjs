// What the idempotency purge and the space reclaim cost on a large table.
// Builds a state database with ROWS expired idempotency records (bodies deflated as the store
// keeps them), then reports: one purge batch of 1,000 rows (p50 / max, ms) against the old
// single DELETE of every expired row; one reclaim step (incremental_vacuum of 256 pages); and
// the VACUUM that converts a database without auto-vacuum (ms per MiB).
// Run after `npm run build`: node bench/idempotency-space.mjs [rows, default 200000; 3000 with
// BENCH_SMOKE=1 (bench/smoke.mjs), which also reclaims down to no free page]
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openRepos } from '../dist/store/index.js';
import { reclaimFreePages } from '../dist/store/space.js';
import { smokeOr } from './lib/report.mjs';

const ROWS = Number(process.argv[2] ?? smokeOr(3000, 200_000));
/** Free pages the reclaim leaves (the daemon's default; none in the smoke mode, whose table is small). */
const RECLAIM_THRESHOLD_PAGES = smokeOr(0, 1024);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-space-'));
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
const body = (i) =>
  JSON.stringify({
    session_id: `se_${i}`,
    reply: 'Thank you. Which day suits you for the appointment?',
    clips: Array.from({ length: 3 }, () => ({
      audio_url: `https://vagent.example.in/v1/audio/${crypto.randomBytes(32).toString('hex')}.wav`,
      text: 'Which day suits you?',
    })),
  });

function build(file) {
  const repos = openRepos(file);
  const old = Date.now() / 1000 - 48 * 3600;
  repos.store.writeNow(() => {
    for (let i = 0; i < ROWS; i++)
      repos.idempotency.put('default', crypto.randomUUID(), crypto.randomBytes(32).toString('hex'), 201, body(i), old);
  });
  repos.store.db.pragma('wal_checkpoint(TRUNCATE)');
  return repos;
}

// 1. The old purge: every expired row in one statement (the write lock held throughout).
let repos = build(path.join(dir, 'a.db'));
let t0 = process.hrtime.bigint();
repos.store.db.prepare('DELETE FROM idempotency WHERE created_at < ?').run(Date.now() / 1000 - 24 * 3600);
const single = ms(t0);
repos.store.close();

// 2. The batched purge: 1,000 rows per transaction, each timed from its start to its commit.
repos = build(path.join(dir, 'b.db'));
const sizeMiB = fs.statSync(path.join(dir, 'b.db')).size / 2 ** 20;
const batches = [];
const inside = [];
const cutoff = Date.now() / 1000 - 24 * 3600;
for (;;) {
  t0 = process.hrtime.bigint();
  const n = await repos.store.write(
    () => {
      const s = process.hrtime.bigint();
      const deleted = repos.idempotency.purgeBatch(cutoff, 1000);
      inside.push(ms(s));
      return deleted;
    },
    { savepoint: false },
  );
  batches.push(ms(t0));
  if (n < 1000) break;
}
// 3. The reclaim, 256 pages per step.
const steps = [];
const real = repos.store.write.bind(repos.store);
repos.store.write = (fn, o) => {
  const s = process.hrtime.bigint();
  return real(fn, o).finally(() => steps.push(ms(s)));
};
const r = await reclaimFreePages(repos.store, { thresholdPages: RECLAIM_THRESHOLD_PAGES, stepPages: 256 });
repos.store.write = real;
repos.store.close();

// 4. The conversion of a database without auto-vacuum (as migration 9 and `vagent admin db vacuum` run it).
repos = build(path.join(dir, 'c.db'));
repos.store.db.pragma('auto_vacuum = NONE');
repos.store.db.exec('VACUUM');
const convMiB = fs.statSync(path.join(dir, 'c.db')).size / 2 ** 20;
t0 = process.hrtime.bigint();
repos.store.db.pragma('auto_vacuum = INCREMENTAL');
repos.store.db.exec('VACUUM');
repos.store.db.pragma('wal_checkpoint(TRUNCATE)');
const conv = ms(t0);
repos.store.close();

console.log(`idempotency table: ${ROWS} expired rows, ${sizeMiB.toFixed(0)} MiB`);
console.log(`purge, one DELETE of all (before):   ${single.toFixed(0)} ms with the write lock held`);
console.log(
  `purge, batches of 1,000 (now):       ${batches.length} batches; the DELETE holds the event loop p50 ${pct(inside, 0.5).toFixed(1)} ms, max ${Math.max(...inside).toFixed(1)} ms; ` +
    `with commit and WAL sync p50 ${pct(batches, 0.5).toFixed(1)} ms, max ${Math.max(...batches).toFixed(1)} ms`,
);
console.log(
  `reclaim, 256 pages a step:           ${r.steps} steps (${r.freeBefore} → ${r.freeAfter} free pages)` +
    (steps.length
      ? `, p50 ${pct(steps, 0.5).toFixed(1)} ms, max ${Math.max(...steps).toFixed(1)} ms`
      : `: none needed, ${RECLAIM_THRESHOLD_PAGES} free pages or fewer`),
);
console.log(
  `conversion VACUUM:                   ${convMiB.toFixed(0)} MiB in ${conv.toFixed(0)} ms (${(conv / convMiB).toFixed(1)} ms per MiB)`,
);
fs.rmSync(dir, { recursive: true, force: true });
