/**
 * Session benchmarks for `npm run bench` (run.mjs calls {@link benchSessions}):
 *
 *   (e) POST /v1/sessions/{id}/turn — the rule layer (an FAQ question, so the state stays put)
 *       with every clip served from the audio cache, a unique Idempotency-Key per request,
 *       spread over 200 open sessions; ratio to (b) POST /bare, target ≥ 25% (measured in
 *       alternating slices right after the single run, see run.mjs); p99 < 20 ms.
 *   RSS of the daemon with 10,000 open sessions (VmRSS, 15 s after the last one opened, and
 *   right after), target < 300 MiB. (The smoke mode, BENCH_SMOKE=1: 300 sessions, 20 for (e),
 *   no settling.)
 *   Cache-hit percentage of reply clips over a scripted clinic booking, target ≥ 80%.
 *   The rows one bench turn wrote (its stored response, its turn-log row), for the reference
 *   route (g) of bench/durable-server.mjs.
 */
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { readDatabase } from './lib/db.mjs';
import { measure } from './lib/http.mjs';
import { smokeOr } from './lib/report.mjs';
import { api as call, rssMiB as rssMiBExact, turnRoute as routeOfTurns } from './lib/vagent.mjs';

/** Sessions open for the RSS figure (a few hundred in the smoke mode, see lib/report.mjs). */
export const OPEN_SESSIONS = smokeOr(300, 10_000);
/** Sessions the turn load of (e) is spread over. */
const TURN_SESSIONS = smokeOr(20, 200);
/** How long the RSS is left to settle after the last session opened, ms. */
const SETTLE_MS = smokeOr(0, 15_000);

/** Resident memory of `pid`, whole MiB. */
const rssMiB = (pid) => {
  const m = rssMiBExact(pid);
  return m === null ? null : Math.round(m);
};

const BOOKING = [
  'My name is Priya Sharma',
  'yes',
  'tomorrow',
  'yes',
  'half past ten in the morning',
  'yes',
  'nine eight seven six five four three two one zero',
  'yes',
  'fever and cough',
  'thank you',
];

async function openMany(url, key, n, concurrency) {
  const ids = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next += 1;
        const s = await call(url, key, 'POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', customer_name: 'Bench' });
        ids.push(s.session_id);
      }
    }),
  );
  return ids;
}

/** Waits until the agent's static clips are synthesised (pre-synthesis runs after start-up). */
export async function waitForAudio(url, key, agentId, timeoutMs = 120_000) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const a = await call(url, key, 'GET', `/v1/agents/${agentId}`);
    if (a.audio.ready + a.audio.failed >= a.audio.total) return a.audio;
    if (Date.now() > until) throw new Error(`pre-synthesis of ${agentId} did not finish: ${JSON.stringify(a.audio)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Waits until every agent of the key's tenant has its static clips, so that no background
 * synthesis competes with the measurements. */
export async function waitForAllAudio(url, key) {
  const agents = await call(url, key, 'GET', '/v1/agents');
  for (const a of agents.data) await waitForAudio(url, key, a.id);
}

/**
 * What the last turn of the run under `keyPrefix` stored (read-only, beside the running daemon):
 * its response as kept for replay, and its turn-log row.
 * @returns {{body: string, data: string, engine: string, metrics: string}}
 */
function lastTurnRows(database, keyPrefix) {
  return readDatabase(database, (db) => {
    const row = db
      .prepare('SELECT body, body_z FROM idempotency WHERE key >= ? AND key < ? ORDER BY seq DESC LIMIT 1')
      .get(`${keyPrefix}-`, `${keyPrefix}.`);
    // A body over 512 bytes is stored deflated (body_z), as src/store/repos/idempotency.ts does.
    const idem = row && { body: row.body ?? (row.body_z ? zlib.inflateRawSync(row.body_z).toString('utf8') : null) };
    // Every column: an older checkout's table has no cost_micro (migration 15).
    const newest = db.prepare('SELECT * FROM session_turns ORDER BY seq DESC LIMIT 1').get();
    const turn = newest && { data: newest.data, engine: newest.engine, metrics: newest.metrics, cost_micro: newest.cost_micro ?? 0 };
    if (!idem?.body || !turn) throw new Error("the turn benchmark left no stored turn in the daemon's database");
    return { body: idem.body, ...turn };
  });
}

/**
 * @param {{url: string, pid: number}} daemon
 * @param {string} key API key of tenant default
 * @param {object} common autocannon options (connections, durationS, warmupS)
 * @param {string} database the daemon's database file (read once, read-only)
 * @param {(turnRoute: object) => Promise<unknown>} [afterTurn] runs right after (e), before the
 *        10,000 sessions open, with (e)'s route options (for a paired measurement); its result
 *        is returned as `afterTurn`
 */
export async function benchSessions(daemon, key, common, database, afterTurn) {
  const audio = await waitForAudio(daemon.url, key, 'ag_clinic_booking');

  // Cache-hit percentage over a scripted booking.
  const booking = await call(daemon.url, key, 'POST', '/v1/sessions', {
    agent_id: 'ag_clinic_booking',
    context: { now: '2026-11-21T10:00:00+05:30' },
  });
  for (const text of BOOKING) await call(daemon.url, key, 'POST', `/v1/sessions/${booking.session_id}/turn`, { text });
  const detail = await call(daemon.url, key, 'GET', `/v1/sessions/${booking.session_id}`);

  // Turn throughput over 200 sessions.
  const ids = await openMany(daemon.url, key, TURN_SESSIONS, 10);
  const keyPrefix = `bench-turn-${crypto.randomBytes(6).toString('hex')}`;
  const turnRoute = routeOfTurns({
    title: '(e) POST /v1/sessions/{id}/turn (FAQ layer, cached audio)',
    url: daemon.url,
    pid: daemon.pid,
    key,
    ids,
    prefix: keyPrefix,
  });
  const turn = await measure({ ...common, ...turnRoute });
  const paired = afterTurn ? await afterTurn(turnRoute) : undefined;

  const turnRows = lastTurnRows(database, keyPrefix);

  // RSS with 10,000 open sessions.
  const rssBefore = rssMiB(daemon.pid);
  await openMany(daemon.url, key, OPEN_SESSIONS - ids.length - 1, 20);
  const rss10kNow = rssMiB(daemon.pid);
  // V8 returns memory after an allocation burst once the process is quiet (its memory reducer);
  // the settled figure is what 10,000 idle open sessions hold.
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const rss10k = rssMiB(daemon.pid);

  return {
    audio,
    turn,
    afterTurn: paired,
    turnRows,
    booking_cache_hit_percent: detail.cache_hit_percent,
    booking_turns: detail.turns.length,
    rss_mib_before_10k_sessions: rssBefore,
    rss_mib_10k_sessions_right_after_opening: rss10kNow,
    rss_mib_10k_sessions: rss10k,
  };
}
