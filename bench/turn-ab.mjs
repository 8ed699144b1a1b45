/**
 * The text turn of several builds of vagent in the same run: did a change make the turn slower?
 * Ratios from `npm run bench` minutes or days apart mostly measure the host (on a shared 2-core
 * machine its load, and its disk's fdatasync, come and go); this one measures them side by side.
 *
 *   node bench/turn-ab.mjs DIR [DIR…]   (each DIR a built checkout: `npm run build` there; for an
 *                                        older commit, `git worktree add ../old <sha>` and build it)
 *
 * Each DIR's daemon (a fresh state dir, its example agents, 200 open sessions) gets the turn route
 * (e) of bench/sessions.mjs — the FAQ layer, cached audio, a unique Idempotency-Key per request —
 * and all of them, POST /bare (b) and, with BENCH_AB_DURABLE=1, the durable write alone (g) of
 * bench/durable-server.mjs (this checkout's, with the rows the first DIR's turn stored), run in
 * alternating slices (lib/http.mjs measureAlternating): each route once in each position when the
 * rounds are as many as the routes. Printed per route: req/s, ratio to (b), p50, worst slice p99,
 * server CPU per response (µs/req, the figure least disturbed by other load).
 *
 * With BENCH_SMOKE=1 and no DIR it measures this checkout for a second per slice (bench/smoke.mjs).
 * Environment: BENCH_AB_ROUNDS (as many as routes), BENCH_AB_SLICE_S (3), BENCH_CONNECTIONS (50),
 * BENCH_AB_DURABLE (off).
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { readDatabase } from './lib/db.mjs';
import { measureAlternating, warmUp } from './lib/http.mjs';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { numEnv } from './lib/report.mjs';
import { api, turnRoute as routeOfTurns, untilAgentAudio } from './lib/vagent.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CONNECTIONS = numEnv('BENCH_CONNECTIONS', 50);
const SMOKE = process.env.BENCH_SMOKE === '1';
const SLICE_S = numEnv('BENCH_AB_SLICE_S', SMOKE ? 1 : 3);
const TURN_SESSIONS = SMOKE ? 20 : 200;
const TRUNK_BODY = JSON.stringify({
  address: 'sip.example-carrier.in',
  name: 'bench',
  numbers: ['+912240001234'],
  auth: { username: 'acme', password: 'Zq7-bench-s3cret-pa55word' },
});
const TURN_BODY = JSON.stringify({ text: 'what are your fees?' });

// The smoke run (BENCH_SMOKE=1, bench/smoke.mjs) measures this checkout alone, briefly, with the durable write.
const dirs = process.argv.slice(2).map((d) => path.resolve(d));
if (dirs.length === 0 && SMOKE) dirs.push(ROOT);
if (dirs.length === 0) {
  process.stderr.write('usage: node bench/turn-ab.mjs DIR [DIR…]  (each a built vagent checkout)\n');
  process.exit(2);
}

/** `vagent admin …` of the checkout `dir`, parsed. */
function admin(dir, stateDir, ...args) {
  const r = spawnSync(process.execPath, ['bin/vagent', 'admin', ...args, '--state-dir', stateDir, '--json'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${dir}: vagent admin ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Starts `dir`'s daemon, waits for its clips, opens the sessions; its turn route and state dir. */
async function turnRoute(dir) {
  const stateDir = makeTempDir('vagent-bench-ab-state-');
  const daemon = await startServer({
    name: `vagent serve (${dir})`,
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: dir,
    env: { ...process.env, VAGENT_LOG_LEVEL: 'warn', XDG_CONFIG_HOME: makeTempDir('vagent-bench-ab-profile-') },
    stream: 'stderr',
    timeoutMs: 60_000,
  });
  const key = admin(dir, stateDir, 'key', 'create', '--tenant', 'default').key;
  for (const agent of (await api(daemon.url, key, 'GET', '/v1/agents')).data) {
    await untilAgentAudio(daemon.url, key, agent.id);
  }
  const ids = [];
  for (let i = 0; i < TURN_SESSIONS; i++) {
    ids.push((await api(daemon.url, key, 'POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', customer_name: 'Bench' })).session_id);
  }
  const prefix = `bench-ab-${crypto.randomBytes(6).toString('hex')}`;
  const route = routeOfTurns({ title: `(e) turn, ${path.basename(dir)}`, url: daemon.url, pid: daemon.pid, key, ids, prefix });
  return { route, database: path.join(stateDir, 'vagent.db') };
}

/** The rows the newest turn in `database` stored, as bench/durable-server.mjs reads them. */
function turnRows(database) {
  return readDatabase(database, (db) => {
    const row = db.prepare('SELECT body, body_z FROM idempotency WHERE key LIKE ? ORDER BY seq DESC LIMIT 1').get('bench-ab-%');
    // Every column: an older checkout's table has no cost_micro (migration 15).
    const newest = db.prepare('SELECT * FROM session_turns ORDER BY seq DESC LIMIT 1').get();
    const turn = newest && { data: newest.data, engine: newest.engine, metrics: newest.metrics, cost_micro: newest.cost_micro ?? 0 };
    return { body: row.body ?? zlib.inflateRawSync(row.body_z).toString('utf8'), ...turn };
  });
}

async function main() {
  const bare = await startServer({ name: 'bare-server', args: ['bench/bare-server.mjs'], cwd: ROOT, stream: 'stdout' });
  const routes = [
    {
      title: '(b) POST /bare',
      url: bare.url,
      pid: bare.pid,
      path: '/bare',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: TRUNK_BODY,
    },
  ];
  let firstDatabase = null;
  for (const dir of dirs) {
    const { route, database } = await turnRoute(dir);
    await warmUp(route, { seconds: 2, connections: CONNECTIONS });
    firstDatabase ??= database;
    routes.push(route);
  }
  if (process.env.BENCH_AB_DURABLE || SMOKE) {
    const dir = makeTempDir('vagent-bench-ab-durable-');
    const rowsFile = path.join(dir, 'turn-rows.json');
    fs.writeFileSync(rowsFile, JSON.stringify(turnRows(firstDatabase)));
    const durable = await startServer({
      name: 'durable-server',
      args: ['bench/durable-server.mjs', '0', rowsFile, dir],
      cwd: ROOT,
      stream: 'stdout',
    });
    let n = 0;
    const prefix = `bench-ab-durable-${crypto.randomBytes(4).toString('hex')}`;
    routes.push({
      title: "(g) a turn's durable write alone",
      url: durable.url,
      pid: durable.pid,
      path: '/durable',
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: TURN_BODY,
      requests: [
        {
          setupRequest(req) {
            n += 1;
            req.headers['Idempotency-Key'] = `${prefix}-${n}`;
            return req;
          },
        },
      ],
    });
  }
  await warmUp(routes[0], { seconds: 2, connections: CONNECTIONS });
  const rounds = numEnv('BENCH_AB_ROUNDS', routes.length);
  process.stderr.write(`bench: ${routes.length} routes in alternating slices, ${rounds} rounds of ${SLICE_S} s each\n`);
  const result = await measureAlternating(routes, { rounds, sliceS: SLICE_S, connections: CONNECTIONS });
  const base = result.routes[0].requests_per_s;
  for (const r of result.routes) {
    const bad = r.non_2xx + r.errors + r.timeouts;
    console.log(
      `${r.title.padEnd(36)} ${r.requests_per_s.toFixed(0).padStart(7)} req/s  ${((100 * r.requests_per_s) / base).toFixed(1).padStart(5)}%` +
        `  p50 ${r.latency_p50_ms} ms  p99 ${r.latency_p99_ms} ms  ${r.server_us_per_request ?? 'n/a'} µs/req` +
        `${bad > 0 ? `  ${bad} FAILED (figures not comparable)` : ''}`,
    );
  }
}

try {
  await main();
} finally {
  await cleanup();
}
