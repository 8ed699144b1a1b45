/**
 * Growth bench: does vagent stay as fast after months of use? `npm run bench` runs
 * it after bench/run.mjs; alone: `node bench/growth.mjs` after `npm run build`. About 4
 * minutes on 2 cores with the defaults (the generation takes ~45 s of it per 200k sessions); it
 * needs ~1.6 GB of temp space per 200k sessions, removed at the end.
 *
 * Two state dirs, each served by a real daemon (`vagent serve` from dist, a child process):
 *   small  a fresh store: the example agents, a dozen template sessions (below), and, while
 *          the lists are measured, as many open calls (4 turns each) as the big store has, so
 *          that both in-progress lists answer the same rows (ended before the calls: opened
 *          today, unlike most of the big store's, each would weigh on the budget check);
 *   big    the same, grown to BENCH_GROWTH_SESSIONS sessions (≥ 200,000 by default) by a
 *          generator that copies the template sessions' rows through vagent's own store
 *          (bench/lib/growth-store.mjs): spread over the last 60 days (today's share since
 *          local midnight, a few thousand at the defaults), 4 turns each with speech-recognition
 *          costs, 7 in 10 a prepared outbound call, ended but for one in 2,000, with the
 *          idempotency rows keyed requests leave for the last 24 hours; the spend ledger's
 *          triggers keep the ledger as in the daemon.
 * Template sessions: driven through each daemon's API while it is fresh — prepared calls of
 * ag_emi_reminder and ag_clinic_booking sessions with distinct customers, 4 turns each, keyed
 * requests, ended (2 left open). Their dynamic clips are synthesised by the daemon's own speech
 * engine: the audio they add is the dynamic audio a session with distinct values costs.
 *
 * Then, small vs big, in one run:
 *   start-up    spawn of `vagent serve` → its "listening" line (then /v1/health answers), median
 *               of BENCH_GROWTH_STARTS starts each, alternating;
 *   list        GET /v1/calls?status=in_progress (tenant default: the few open calls among all);
 *   calls       POST /v1/calls prepare-only, a unique Idempotency-Key per request, four routes:
 *               small and big × tenant `default` with a daily budget set (₹1,000,000: never
 *               reached; the check and reservation run in full) and tenant `nobudget` (no budget,
 *               the same agent), twice:
 *               calls + /end  each call followed by POST /v1/sessions/{id}/end on the same
 *                             connection, so the day's open calls stay near the connection
 *                             count, as when calls end (the rate counts both responses);
 *               left open     prepare-only calls that are never ended, as in run.mjs (f): the
 *                             day's open calls grow by thousands; each holds its reservation in
 *                             the spend ledger (migration 10), so the budget check should not
 *                             notice them, and this shows whether it does;
 *   RSS         VmRSS and peak (VmHWM) of each daemon after that load;
 *   disk        DB bytes (vagent.db + WAL) per session, audio-cache bytes (du of
 *               <state-dir>/audio) per session, and the dynamic audio one template session added.
 * The list and the four call routes are measured in alternating slices (BENCH_PAIRED_ROUNDS
 * rounds of BENCH_PAIRED_SLICE_S seconds per route, after a BENCH_WARMUP_S warm-up each; see
 * measureAlternating in bench/lib/http.mjs), so load elsewhere on the host falls on all alike.
 * Targets, each within 20%: calls with a budget vs without (small and big), big vs small
 * (calls with and without a budget, the in-progress list, start-up). They are reported
 * (PASS / BELOW TARGET), never enforced: the exit code is 0 unless the bench itself fails.
 * Results go to bench/results/latest.json under "growth" (other keys, run.mjs's, are kept).
 *
 * Environment: BENCH_GROWTH_SESSIONS (200000: sessions of the big store), BENCH_GROWTH_DAYS (60),
 * BENCH_GROWTH_OPEN_EVERY (2000: one session in this many left open), BENCH_GROWTH_STARTS (5),
 * BENCH_GROWTH_TEMPLATE_CALLS (8), BENCH_GROWTH_TEMPLATE_BOOKINGS (4), and as in run.mjs
 * BENCH_CONNECTIONS (50), BENCH_WARMUP_S (2), BENCH_PAIRED_ROUNDS (4), BENCH_PAIRED_SLICE_S (3),
 * BENCH_VAGENT_LOG_LEVEL (warn). BENCH_SMOKE=1 (bench/smoke.mjs): 2,000 sessions, 3 templates, 1 start
 * each, 10 connections, no warm-up, 1 round of 1 s; no target judged, a failed request fails the
 * run; results in bench/results/smoke/.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { readDatabase } from './lib/db.mjs';
import { driveTemplates, endSessions, generateSessions, openCalls } from './lib/growth-store.mjs';
import { measureAlternating, warmUp, idempotencyKeys } from './lib/http.mjs';
import { cleanup, makeTempDir, peakRssMiB, startServer } from './lib/procs.mjs';
import { fixed, median, table } from './lib/stats.mjs';
import { waitForAllAudio } from './sessions.mjs';
import { CALL_BODY, invalid, judged, loud, numEnv, resultsFile, smokeOr, warnings } from './lib/report.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = resultsFile('latest.json');
const run = promisify(execFile);

const SESSIONS = numEnv('BENCH_GROWTH_SESSIONS', smokeOr(2000, 200_000));
const DAYS = Math.max(1, numEnv('BENCH_GROWTH_DAYS', 60));
const OPEN_EVERY = Math.max(1, numEnv('BENCH_GROWTH_OPEN_EVERY', 2000));
const STARTS = Math.max(1, numEnv('BENCH_GROWTH_STARTS', smokeOr(1, 5)));
const TEMPLATE_CALLS = numEnv('BENCH_GROWTH_TEMPLATE_CALLS', smokeOr(2, 8));
const TEMPLATE_BOOKINGS = numEnv('BENCH_GROWTH_TEMPLATE_BOOKINGS', smokeOr(1, 4));
const TEMPLATE_OPEN = 2;
const CONNECTIONS = numEnv('BENCH_CONNECTIONS', smokeOr(10, 50));
const WARMUP_S = numEnv('BENCH_WARMUP_S', smokeOr(0, 2));
const ROUNDS = Math.max(1, numEnv('BENCH_PAIRED_ROUNDS', smokeOr(1, 4)));
const SLICE_S = numEnv('BENCH_PAIRED_SLICE_S', smokeOr(1, 3));
const LOG_LEVEL = process.env.BENCH_VAGENT_LOG_LEVEL || 'warn';
/** Rupees a day: far above what the bench spends, so the check runs in full and never refuses. */
const BUDGET_INR = 1_000_000;
const IDEMPOTENCY_RETENTION_H = 24;
const WITHIN = 0.2;

const say = (m) => process.stderr.write(`growth: ${m}\n`);

/** `node bin/vagent …` (async, so two stores can be prepared at once); parsed `--json` output. */
async function vagent(args, env) {
  try {
    const { stdout } = await run(process.execPath, ['bin/vagent', ...args, '--json'], { cwd: ROOT, env, maxBuffer: 16 << 20 });
    return JSON.parse(stdout);
  } catch (err) {
    throw new Error(`vagent ${args.join(' ')} failed: ${err.stderr ?? err.message}`);
  }
}

/** Bytes of the files under `dir` (their sizes, as `du -b` counts them), 0 when it is missing. */
function treeBytes(dir) {
  let total = 0;
  let entries;
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) total += treeBytes(p);
    else if (e.isFile()) total += fs.statSync(p).size;
  }
  return total;
}

/** vagent.db + its WAL, bytes. */
function dbBytes(stateDir) {
  const size = (f) => {
    try {
      return fs.statSync(f).size;
    } catch {
      return 0;
    }
  };
  const db = path.join(stateDir, 'vagent.db');
  return { db: size(db), wal: size(`${db}-wal`) };
}

/** Local midnight of today in Asia/Kolkata (the default timezone, which has no daylight saving), epoch s. */
function dayStart() {
  const now = Date.now() / 1000;
  return Math.floor((now + 19_800) / 86_400) * 86_400 - 19_800;
}

function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

/** Waits until the audio cache stops growing for `quietMs` (sessions synthesise their texts after opening). */
async function audioSettled(dir, quietMs = 1500, timeoutMs = 60_000) {
  let last = treeBytes(dir);
  let since = Date.now();
  for (const until = Date.now() + timeoutMs; Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = treeBytes(dir);
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) return now;
  }
  return last;
}

function serve(store, profileDir) {
  return startServer({
    name: `vagent serve (${store.name})`,
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', store.dir],
    cwd: ROOT,
    env: { ...process.env, VAGENT_LOG_LEVEL: LOG_LEVEL, XDG_CONFIG_HOME: profileDir },
    stream: 'stderr',
    timeoutMs: 120_000,
  });
}

/**
 * A fresh store: daemon started, tenants and keys, the budget, the agent of tenant `nobudget`,
 * the template sessions; then the daemon stops.
 */
async function prepareStore(store, profileDir, seed) {
  const daemon = await serve(store, profileDir);
  const admin = (...args) => vagent(['admin', ...args, '--state-dir', store.dir], process.env);
  store.keys = { default: (await admin('key', 'create', '--tenant', 'default')).key };
  await admin('tenant', 'create', 'nobudget');
  store.keys.nobudget = (await admin('key', 'create', '--tenant', 'nobudget')).key;
  await admin('tenant', 'set', 'default', '--budget-inr', String(BUDGET_INR));
  await waitForAllAudio(daemon.url, store.keys.default);
  await vagent(['agent', 'apply', '-f', path.join(ROOT, 'config', 'agents', 'ag_emi_reminder.yaml')], {
    ...process.env,
    VAGENT_URL: daemon.url,
    VAGENT_API_KEY: store.keys.nobudget,
    XDG_CONFIG_HOME: profileDir,
  });
  const audioDir = path.join(store.dir, 'audio');
  const audioBefore = await audioSettled(audioDir);
  store.templates = await driveTemplates(daemon.url, store.keys.default, path.join(store.dir, 'vagent.db'), {
    calls: TEMPLATE_CALLS,
    bookings: TEMPLATE_BOOKINGS,
    open: TEMPLATE_OPEN,
    seed,
  });
  const audioAfter = await audioSettled(audioDir);
  store.audio = {
    static_bytes: audioBefore,
    template_dynamic_bytes: audioAfter - audioBefore,
    template_sessions: store.templates.length,
  };
  await daemon.stop();
}

/** Starts the store's daemon; resolves with it and the ms from spawn to its listening line and to /v1/health answering. */
async function timedStart(store, profileDir) {
  const t0 = process.hrtime.bigint();
  const daemon = await serve(store, profileDir);
  const listening = Number(process.hrtime.bigint() - t0) / 1e6;
  for (;;) {
    const res = await fetch(`${daemon.url}/v1/health`).catch(() => null);
    if (res?.ok) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const health = Number(process.hrtime.bigint() - t0) / 1e6;
  return { daemon, listening_ms: listening, health_ms: health };
}

function checkClean(r) {
  if (r.non_2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    invalid(`${r.title}: ${r.non_2xx} non-2xx responses, ${r.errors} errors, ${r.timeouts} timeouts. Its figures are NOT comparable.`);
  }
  return r;
}

function gitRevision() {
  return new Promise((resolve) => {
    execFile('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT }, (err, out) => resolve(err ? null : out.trim()));
  });
}

const verdict = (pass) => judged(pass);
const pct = (x) => `${fixed(x * 100, 1)}%`;
const mib = (b) => b / 2 ** 20;

async function main() {
  const started = Date.now();
  const profileDir = makeTempDir('vagent-growth-profile-');
  const small = { name: 'small', dir: makeTempDir('vagent-growth-small-') };
  const big = { name: 'big', dir: makeTempDir('vagent-growth-big-') };

  say(`preparing two fresh stores (example agents, ${TEMPLATE_CALLS + TEMPLATE_BOOKINGS} template sessions each)`);
  await Promise.all([prepareStore(small, profileDir, 0), prepareStore(big, profileDir, 7)]);

  const toAdd = Math.max(0, SESSIONS - big.templates.length);
  say(`generating ${toAdd} sessions in the big store`);
  const generated = await generateSessions({
    database: path.join(big.dir, 'vagent.db'),
    templates: big.templates,
    n: toAdd,
    days: DAYS,
    openEvery: OPEN_EVERY,
    retentionH: IDEMPOTENCY_RETENTION_H,
    progress: (done) => {
      if (done % 50_000 < 2000 || done === toAdd) say(`  ${done} / ${toAdd}`);
    },
  });
  say(
    `generated ${generated.sessions} sessions in ${fixed(generated.seconds, 1)} s (${fixed(generated.sessions / generated.seconds, 0)}/s)`,
  );
  const counts = (store) =>
    readDatabase(path.join(store.dir, 'vagent.db'), (db) => ({
      sessions: db.prepare('SELECT count(*) FROM sessions').pluck().get(),
      turns: db.prepare('SELECT count(*) FROM session_turns').pluck().get(),
      calls: db.prepare('SELECT count(*) FROM calls').pluck().get(),
      open_sessions: db.prepare("SELECT count(*) FROM sessions WHERE status = 'open'").pluck().get(),
      idempotency_rows: db.prepare('SELECT count(*) FROM idempotency').pluck().get(),
    }));
  const bigDbAtRest = dbBytes(big.dir);

  say(`start-up: ${STARTS} starts of each store, alternating`);
  const starts = { small: [], big: [] };
  for (let i = 0; i < STARTS; i++) {
    for (const store of i % 2 === 0 ? [small, big] : [big, small]) {
      const s = await timedStart(store, profileDir);
      starts[store.name].push({ listening_ms: s.listening_ms, health_ms: s.health_ms });
      await s.daemon.stop();
    }
  }
  for (const store of [small, big]) {
    store.daemon = (await timedStart(store, profileDir)).daemon;
    await waitForAllAudio(store.daemon.url, store.keys.default);
    store.rss_after_start_mib = rssMiB(store.daemon.pid);
  }

  const json = { 'content-type': 'application/json' };
  const keys = idempotencyKeys('growth');
  const uniqueKeys = keys.requests;
  const listRoute = (store) => ({
    title: `GET /v1/calls?status=in_progress (${store.name})`,
    url: store.daemon.url,
    pid: store.daemon.pid,
    path: '/v1/calls?status=in_progress',
    headers: { authorization: `Bearer ${store.keys.default}` },
  });
  const callRoute = (store, budget) => ({
    title: `POST /v1/calls (${store.name}, ${budget ? 'budget' : 'no budget'})`,
    url: store.daemon.url,
    pid: store.daemon.pid,
    path: '/v1/calls',
    method: 'POST',
    body: CALL_BODY,
    headers: { ...json, authorization: `Bearer ${store.keys[budget ? 'default' : 'nobudget']}` },
    requests: uniqueKeys(`${store.name}-${budget ? 'b' : 'n'}`),
  });
  /** The same call, then `/end` of its session on the same connection: open calls stay at the connection count. */
  const callEndRoute = (store, budget) => {
    const r = callRoute(store, budget);
    const tag = `${store.name}-${budget ? 'B' : 'N'}`;
    return {
      ...r,
      title: `POST /v1/calls + /end (${store.name}, ${budget ? 'budget' : 'no budget'})`,
      requests: [
        {
          setupRequest(req) {
            req.headers['Idempotency-Key'] = keys.next(tag);
            return req;
          },
          onResponse(status, body, context) {
            context.session = status === 201 ? JSON.parse(body).session_id : null;
          },
        },
        {
          setupRequest(req, context) {
            if (!context.session) return null; // the call failed (counted): start over with a new call
            req.path = `/v1/sessions/${context.session}/end`;
            req.body = '{}';
            req.headers['Idempotency-Key'] = keys.next(tag);
            return req;
          },
        },
      ],
    };
  };
  const opts = { rounds: ROUNDS, sliceS: SLICE_S, connections: CONNECTIONS };
  const openInBudgetTenant = (store) =>
    readDatabase(path.join(store.dir, 'vagent.db'), (db) =>
      db.prepare("SELECT count(*) FROM sessions WHERE tenant_id = 'default' AND status = 'open'").pluck().get(),
    );

  // For the list, the small store gets as many open calls as the big one (at most 1,000), so that
  // the lists differ in the store's size only: the in-progress list builds a row for each open
  // call. They are ended after it: opened today, unlike most of the big store's, each would be
  // read by the small store's budget checks.
  const bigOpen = openInBudgetTenant(big);
  const extraOpen = await openCalls(
    small.daemon.url,
    small.keys.default,
    CALL_BODY,
    Math.max(0, Math.min(1000, bigOpen) - openInBudgetTenant(small)),
  );
  small.rows = counts(small);
  big.rows = counts(big);

  say(`GET /v1/calls?status=in_progress, small and big: ${ROUNDS} rounds of ${SLICE_S} s each`);
  const lists = [listRoute(small), listRoute(big)];
  for (const r of lists) await warmUp(r, { seconds: WARMUP_S, connections: CONNECTIONS });
  const listed = await measureAlternating(lists, opts);
  listed.routes.forEach(checkClean);
  // What the list answered (one page), read once per store.
  for (const store of [small, big]) {
    const res = await fetch(`${store.daemon.url}/v1/calls?status=in_progress`, {
      headers: { authorization: `Bearer ${store.keys.default}` },
    });
    store.in_progress_page = (await res.json()).data.length;
  }
  await endSessions(small.daemon.url, small.keys.default, extraOpen);
  const openToday = (store) =>
    readDatabase(path.join(store.dir, 'vagent.db'), (db) =>
      db
        .prepare("SELECT count(*) FROM sessions WHERE tenant_id = 'default' AND status = 'open' AND created_at >= ?")
        .pluck()
        .get(dayStart()),
    );

  const openBefore = { small: openToday(small), big: openToday(big) };
  say(`POST /v1/calls then /end, small and big × budget and none: ${ROUNDS} rounds of ${SLICE_S} s per route`);
  const endedRoutes = [callEndRoute(small, false), callEndRoute(small, true), callEndRoute(big, false), callEndRoute(big, true)];
  for (const r of endedRoutes) await warmUp(r, { seconds: WARMUP_S, connections: CONNECTIONS });
  const ended = await measureAlternating(endedRoutes, opts);
  ended.routes.forEach(checkClean);
  const openBetween = { small: openToday(small), big: openToday(big) };

  say(`POST /v1/calls (prepare-only, left open), small and big × budget and none: ${ROUNDS} rounds of ${SLICE_S} s per route`);
  const callRoutes = [callRoute(small, false), callRoute(small, true), callRoute(big, false), callRoute(big, true)];
  for (const r of callRoutes) await warmUp(r, { seconds: WARMUP_S, connections: CONNECTIONS });
  const called = await measureAlternating(callRoutes, opts);
  called.routes.forEach(checkClean);
  const openAfter = { small: openToday(small), big: openToday(big) };

  for (const store of [small, big]) {
    store.rss_after_load_mib = rssMiB(store.daemon.pid);
    store.peak_rss_mib = peakRssMiB(store.daemon.pid);
    if (store.daemon.out.count > 0)
      loud(
        `the ${store.name} daemon wrote ${store.daemon.out.count} log lines; last ones:\n${store.daemon.out.lines.slice(-5).join('\n')}`,
      );
  }
  for (const store of [small, big]) {
    await store.daemon.stop();
    store.rows_at_end = counts(store);
    store.db_bytes = dbBytes(store.dir);
    store.audio.bytes = treeBytes(path.join(store.dir, 'audio'));
  }

  const [smallList, bigList] = listed.routes;
  const startMedian = (name) => median(starts[name].map((s) => s.listening_ms));
  const ratio = (value, of, min, max) => ({
    value,
    of,
    ...(min !== undefined ? { target_min: min } : {}),
    ...(max !== undefined ? { target_max: max } : {}),
    pass: (min === undefined || value >= min) && (max === undefined || value <= max),
  });
  const callRatios = (tag, label, [sNo, sBudget, bNo, bBudget]) => ({
    [`${tag}_budget_vs_none_small`]: ratio(sBudget.requests_per_s / sNo.requests_per_s, `${label} small: budget / none`, 1 - WITHIN),
    [`${tag}_budget_vs_none_big`]: ratio(bBudget.requests_per_s / bNo.requests_per_s, `${label} big: budget / none`, 1 - WITHIN),
    [`${tag}_big_vs_small_budget`]: ratio(bBudget.requests_per_s / sBudget.requests_per_s, `${label} budget: big / small`, 1 - WITHIN),
    [`${tag}_big_vs_small_none`]: ratio(bNo.requests_per_s / sNo.requests_per_s, `${label} none: big / small`, 1 - WITHIN),
  });
  const ratios = {
    ...callRatios('calls_ended', 'calls + /end,', ended.routes),
    ...callRatios('calls', 'calls left open,', called.routes),
    list_in_progress_big_vs_small: ratio(
      bigList.requests_per_s / smallList.requests_per_s,
      'GET /v1/calls?status=in_progress: big / small',
      1 - WITHIN,
    ),
    startup_big_vs_small: ratio(
      startMedian('big') / startMedian('small'),
      'start-up (median spawn → listening): big / small',
      undefined,
      1 + WITHIN,
    ),
    rss_after_load_big_vs_small: {
      value: big.rss_after_load_mib / small.rss_after_load_mib,
      of: 'VmRSS after the call load: big / small',
    },
  };
  const bigSessions = big.rows_at_end.sessions;
  const disk = {
    big_sessions: bigSessions,
    big_db_bytes_per_session_at_rest: (bigDbAtRest.db + bigDbAtRest.wal) / big.rows.sessions,
    big_db_bytes_per_session_at_end: (big.db_bytes.db + big.db_bytes.wal) / bigSessions,
    big_db_bytes_at_end: big.db_bytes,
    big_audio_bytes: big.audio.bytes,
    big_audio_bytes_per_session: big.audio.bytes / bigSessions,
    small_audio_bytes: small.audio.bytes,
    dynamic_audio_bytes_per_template_session:
      (small.audio.template_dynamic_bytes + big.audio.template_dynamic_bytes) /
      (small.audio.template_sessions + big.audio.template_sessions),
    static_audio_bytes: big.audio.static_bytes,
  };
  const result = {
    meta: {
      date: new Date().toISOString(),
      git: await gitRevision(),
      node_version: process.version,
      cpu_count: os.cpus().length,
      sessions_target: SESSIONS,
      days: DAYS,
      open_every: OPEN_EVERY,
      starts: STARTS,
      connections: CONNECTIONS,
      warmup_s: WARMUP_S,
      rounds: ROUNDS,
      slice_s: SLICE_S,
      budget_inr: BUDGET_INR,
      seconds: Math.round((Date.now() - started) / 1000),
    },
    generated,
    stores: Object.fromEntries(
      [small, big].map((s) => [
        s.name,
        {
          rows_before_load: s.rows,
          rows_at_end: s.rows_at_end,
          db_bytes_at_end: s.db_bytes,
          audio: s.audio,
          in_progress_page: s.in_progress_page,
          rss_after_start_mib: s.rss_after_start_mib,
          rss_after_load_mib: s.rss_after_load_mib,
          peak_rss_mib: s.peak_rss_mib,
        },
      ]),
    ),
    startup: { small: starts.small, big: starts.big, small_median_ms: startMedian('small'), big_median_ms: startMedian('big') },
    http: { list: listed, calls_then_end: ended, calls_left_open: called },
    open_today_in_budget_tenant: {
      before_calls: openBefore,
      after_calls_then_end: openBetween,
      after_calls_left_open: openAfter,
    },
    disk,
    ratios,
    warnings,
  };
  report(result);
  let all = {};
  try {
    all = JSON.parse(fs.readFileSync(RESULTS, 'utf8'));
  } catch {
    /* none yet */
  }
  all.growth = result;
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(RESULTS, `${JSON.stringify(all, null, 2)}\n`);
  console.log(`\nWrote "growth" into ${path.relative(ROOT, RESULTS)}`);
}

function report(r) {
  const { small, big } = r.stores;
  const out = [];
  out.push('', `vagent growth bench — ${r.meta.date}${r.meta.git ? `, git ${r.meta.git}` : ''}; ${r.meta.seconds} s`);
  out.push(
    `big store: ${big.rows_before_load.sessions} sessions (${r.generated.today} today, ${big.rows_before_load.open_sessions} open), ` +
      `${big.rows_before_load.turns} turns, ${big.rows_before_load.calls} calls, ${big.rows_before_load.idempotency_rows} idempotency rows; ` +
      `generated in ${fixed(r.generated.seconds, 1)} s. small store: ${small.rows_before_load.sessions} sessions (${small.rows_before_load.open_sessions} open ` +
      `while the lists are measured). In-progress page: ${small.in_progress_page} / ${big.in_progress_page} rows.`,
  );
  out.push(
    `HTTP: ${r.meta.connections} connections, ${r.meta.warmup_s} s warm-up per route, then ${r.meta.rounds} rounds of ${r.meta.slice_s} s per route, alternating`,
    '',
  );
  const row = (x) => [
    x.title,
    fixed(x.requests_per_s, 0),
    fixed(x.latency_p50_ms, 0),
    fixed(x.latency_p99_ms, 0),
    String(x.non_2xx + x.errors + x.timeouts),
    fixed(x.server_us_per_request, 0),
    fixed(x.other_cores, 2),
    fixed(x.steal_cores, 2),
  ];
  out.push(
    table(
      ['Route', 'req/s', 'p50 ms', 'p99 ms', 'failed', 'µs/req', 'other CPU', 'steal'],
      [...r.http.list.routes, ...r.http.calls_then_end.routes, ...r.http.calls_left_open.routes].map(row),
    ),
  );
  const o = r.open_today_in_budget_tenant;
  out.push(
    "  (p50: median of the slices' p50; p99: the worst slice's; µs/req: daemon CPU per response; other CPU: the",
    '   rest of the host in cores, the bench and the daemon left out — above 0.25 the figures are skewed; a call + /end',
    '   route counts both responses. Open sessions of the budget tenant opened today, small / big: before the calls',
    `   ${o.before_calls.small} / ${o.before_calls.big}, after calls + /end ${o.after_calls_then_end.small} / ${o.after_calls_then_end.big}, ` +
      `after calls left open ${o.after_calls_left_open.small} / ${o.after_calls_left_open.big}: what each open call holds is in the spend ledger)`,
    '',
  );
  const target = (x) =>
    x.target_min !== undefined ? `≥ ${pct(x.target_min)}` : x.target_max !== undefined ? `≤ ${pct(x.target_max)}` : '(none)';
  out.push(
    table(
      ['Ratio', 'value', 'target', 'verdict'],
      Object.values(r.ratios).map((x) => [x.of, pct(x.value), target(x), x.pass === undefined ? '' : verdict(x.pass)]),
    ),
    '',
  );
  out.push(
    table(
      ['Start-up (spawn → listening)', 'median ms', 'samples ms', 'then /v1/health ms'],
      ['small', 'big'].map((n) => [
        n,
        fixed(r.startup[`${n}_median_ms`], 0),
        r.startup[n].map((s) => fixed(s.listening_ms, 0)).join(', '),
        r.startup[n].map((s) => fixed(s.health_ms, 0)).join(', '),
      ]),
    ),
    '',
  );
  out.push(
    table(
      ['Memory (MiB)', 'small', 'big'],
      [
        ['RSS after start-up', fixed(small.rss_after_start_mib, 1), fixed(big.rss_after_start_mib, 1)],
        ['RSS after the call load', fixed(small.rss_after_load_mib, 1), fixed(big.rss_after_load_mib, 1)],
        ['peak RSS (VmHWM)', fixed(small.peak_rss_mib, 1), fixed(big.peak_rss_mib, 1)],
      ],
    ),
    '',
  );
  const d = r.disk;
  out.push(
    table(
      ['Disk', 'value'],
      [
        ['big: DB bytes per session (db + WAL, as generated)', fixed(d.big_db_bytes_per_session_at_rest, 0)],
        ['big: audio-cache bytes per session (du of audio / sessions)', fixed(d.big_audio_bytes_per_session, 0)],
        ['audio cache: static clips of the example agents, MiB', fixed(mib(d.static_audio_bytes), 1)],
        ['audio cache: big / small at the end, MiB', `${fixed(mib(d.big_audio_bytes), 1)} / ${fixed(mib(d.small_audio_bytes), 1)}`],
        ['dynamic audio per session with distinct values (templates), KiB', fixed(d.dynamic_audio_bytes_per_template_session / 1024, 0)],
      ],
    ),
  );
  out.push(
    "  (the generator copies rows, not clips: the big store's audio is what its templates and the bench's calls made;",
    '   a session with distinct customer values adds the dynamic audio above unless the cache evicts it)',
  );
  if (r.warnings.length) out.push('', `!!! ${r.warnings.length} warning(s) above: some figures are not valid.`);
  console.log(out.join('\n'));
}

try {
  await main();
} catch (err) {
  process.stderr.write(`growth bench failed: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
