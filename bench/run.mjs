/**
 * `npm run bench` (after a build): vagent's throughput and CLI start-up, reported as ratios to
 * baselines measured in the same run on the same machine (absolute figures on a 2-core host,
 * where autocannon and the server compete for CPU, mean little on their own).
 *
 * HTTP (autocannon, 50 connections, ~2 s warm-up then ~10 s measured per route; each server in
 * its own child process):
 *   (a) GET  /bare        bare fastify 5 (bench/bare-server.mjs)
 *   (b) POST /bare        same, echoing the trunk body used in (c)
 *   (c) POST /v1/trunks   the real daemon, a unique Idempotency-Key per request
 *   (d) GET  /v1/trunks   the real daemon, a tenant with 20 trunks
 *   (e) POST /v1/sessions/{id}/turn  (bench/sessions.mjs: FAQ layer, cached audio, 200 sessions)
 *   (g) POST /durable    reference: bare fastify doing a turn's durable write and nothing else
 *       (bench/durable-server.mjs: the rows a turn of (e) stored, written through vagent's
 *       store, group commit and WAL sync, unique keys) — the ceiling of the turn ratio
 *   (f) POST /v1/calls   prepare-only (a session of ag_emi_reminder, its opening from the audio
 *       cache, a call record), a unique Idempotency-Key per request; run last, since every call
 *       leaves an open session behind that would inflate the 10,000-session RSS figure
 *   calls = (f)/(b) and its p99, reported without a target; turn ceiling = (g)/(b) and
 *   turn of ceiling = (e)/(g), without targets;
 *   create = (c)/(b), target ≥ 20%;  list = (d)/(a), target ≥ 50%;  turn = (e)/(b), target ≥ 25%,
 *   p99 < 20 ms (of the single run of (e)). Then the daemon's RSS with 10,000 open sessions
 *   (< 300 MiB) and the cache-hit percentage of reply clips over a scripted booking (≥ 80%).
 * The three target ratios and the turn ceiling come from alternating slices: right after a
 * route's single run, it and its baseline are measured in turn, 4 rounds of 3 s (base, route /
 * route, base / …), so that load elsewhere on the host — on a virtual machine, the hypervisor
 * taking CPU, which comes and goes over minutes — falls on both alike. The ratio of the single
 * runs, minutes apart, is reported beside it. Paired routes also run back to back — a, d, b, c.
 * CLI: `node bin/vagent trunk list` (5 trunks) vs `node -e 0`, medians, target ≤ 4×.
 * Also the daemon's peak RSS (VmHWM), versions and CPU. Writes bench/results/latest.json.
 * Targets are reported (PASS / BELOW TARGET), never enforced: the exit code is 0 unless the
 * bench itself fails. `npm run bench` then runs bench/growth.mjs (a store grown to 200,000
 * sessions against a fresh one, ~4 minutes more; see its header), which adds its figures to
 * latest.json under "growth".
 *
 * Environment: BENCH_DURATION_S (10), BENCH_WARMUP_S (min(2, duration)), BENCH_CONNECTIONS (50),
 * BENCH_PAIRED_ROUNDS (4), BENCH_PAIRED_SLICE_S (3), BENCH_CLI_RUNS (20), BENCH_WAIT_QUIET_S (0;
 * wait up to that long for other processes to leave the CPU idle before starting — a busy host
 * is reported either way, per run as "other CPU" and, on a virtual machine, "steal").
 * For investigating: BENCH_VAGENT_LOG_LEVEL (warn), BENCH_DAEMON_NODE_ARGS (e.g. "--cpu-prof
 * --cpu-prof-dir=/tmp/vagent-prof"; the daemon is stopped with SIGTERM so the profile is written).
 * BENCH_SMOKE=1 (bench/smoke.mjs): 1 s runs with no warm-up, 10 connections, 1 alternating round of
 * 1 s, 2 CLI runs, 300 open sessions; no target judged, a failed request fails the run; results in
 * bench/results/smoke/.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { measureCliStartup } from './lib/cli-startup.mjs';
import { readDatabase } from './lib/db.mjs';
import { hostBusyCores } from './lib/cpu.mjs';
import { OPEN_SESSIONS, benchSessions, waitForAllAudio } from './sessions.mjs';
import { measure, measurePaired, idempotencyKeys } from './lib/http.mjs';
import { cleanup, makeTempDir, peakRssMiB, startServer } from './lib/procs.mjs';
import { fixed, table } from './lib/stats.mjs';
import { CALL_BODY, SMOKE, invalid, judged, loud, numEnv, resultsFile, smokeOr, warnings } from './lib/report.mjs';
import { admin, api } from './lib/vagent.mjs';

const LOAD_AT_START = os.loadavg().map((x) => Math.round(x * 100) / 100);
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = resultsFile('latest.json');

const DURATION_S = numEnv('BENCH_DURATION_S', smokeOr(1, 10));
const WARMUP_S = numEnv('BENCH_WARMUP_S', smokeOr(0, Math.min(2, DURATION_S)));
const CONNECTIONS = numEnv('BENCH_CONNECTIONS', smokeOr(10, 50));
const CLI_RUNS = numEnv('BENCH_CLI_RUNS', smokeOr(2, 20));
const WAIT_QUIET_S = numEnv('BENCH_WAIT_QUIET_S', 0);
const LOG_LEVEL = process.env.BENCH_VAGENT_LOG_LEVEL || 'warn';
const DAEMON_NODE_ARGS = (process.env.BENCH_DAEMON_NODE_ARGS ?? '').split(/\s+/).filter(Boolean);
const TARGETS = { create: 0.2, list: 0.5, cli: 4, turn: 0.25, turn_p99_ms: 20, rss_10k_mib: 300, cache_hit_percent: 80 };
const LIST_TRUNKS = 20;
const CLI_TRUNKS = 5;
const NOISY_CORES = 0.25;
const PAIRED_ROUNDS = numEnv('BENCH_PAIRED_ROUNDS', smokeOr(1, 4));
const PAIRED_SLICE_S = numEnv('BENCH_PAIRED_SLICE_S', smokeOr(1, 3));

const TRUNK_BODY = JSON.stringify({
  address: 'sip.example-carrier.in',
  name: 'bench',
  numbers: ['+912240001234'],
  auth: { username: 'acme', password: 'Zq7-bench-s3cret-pa55word' },
});

/** Creates `n` trunks in the tenant of `key` and checks that it lists exactly `n`. */
async function seedTrunks(url, key, n) {
  for (let i = 0; i < n; i++) {
    await api(url, key, 'POST', '/v1/trunks', {
      address: `sip${i}.example-carrier.in`,
      name: `seed ${i}`,
      numbers: [`+9122400${String(10000 + i)}`],
      auth: { username: 'acme', password: `seed-password-${i}` },
    });
  }
  const listed = await api(url, key, 'GET', '/v1/trunks');
  if (listed.data.length !== n) throw new Error(`seeded ${n} trunks but the tenant lists ${listed.data.length}`);
}

/** Trunks of `tenantId` in the daemon's database, read beside the running daemon. */
function countTrunks(database, tenantId) {
  return readDatabase(database, (db) => db.prepare('SELECT count(*) FROM trunks WHERE tenant_id = ?').pluck().get(tenantId));
}

function checkClean(r) {
  if (r.non_2xx > 0 || r.errors > 0 || r.timeouts > 0) {
    invalid(
      `${r.title}: ${r.non_2xx} non-2xx responses (status codes ${JSON.stringify(r.status_codes)}), ` +
        `${r.errors} errors, ${r.timeouts} timeouts. Its figures are NOT comparable.`,
    );
  }
  return r;
}

function fsTypeOf(dir) {
  const names = {
    0xef53: 'ext4',
    0x01021994: 'tmpfs',
    0x58465342: 'xfs',
    0x9123683e: 'btrfs',
    0x794c7630: 'overlayfs',
    0x2fc12fc1: 'zfs',
  };
  try {
    const t = fs.statfsSync(dir).type;
    return names[t] ?? `0x${t.toString(16)}`;
  } catch {
    return null;
  }
}

function gitRevision() {
  const rev = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (rev.status !== 0) return null;
  const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src'], { cwd: ROOT, encoding: 'utf8' });
  return rev.stdout.trim() + (dirty.stdout.trim() ? ' (src/ modified)' : '');
}

const verdict = (pass) => judged(pass);
const pct = (x) => `${fixed(x * 100, 1)}%`;

async function main() {
  const cpus = os.cpus();
  const noisy = (h) => h !== null && (h.busy > NOISY_CORES || h.steal > NOISY_CORES);
  let before = await hostBusyCores(1000);
  for (const until = Date.now() + WAIT_QUIET_S * 1000; noisy(before) && Date.now() < until;) {
    before = await hostBusyCores(1000);
  }
  if (noisy(before)) {
    process.stderr.write(
      `bench: note: the host is already busy (${before.busy} cores in use by other processes, ` +
        `${before.steal} cores taken by the hypervisor)\n`,
    );
  }
  const stateDir = makeTempDir('vagent-bench-state-');
  const profileDir = makeTempDir('vagent-bench-profile-'); // XDG_CONFIG_HOME: no user profile or keychain lookups

  process.stderr.write(`bench: starting servers (runs of ${DURATION_S} s after ${WARMUP_S} s warm-up, ${CONNECTIONS} connections)\n`);
  const bare = await startServer({ name: 'bare-server', args: ['bench/bare-server.mjs'], cwd: ROOT, stream: 'stdout' });
  const daemon = await startServer({
    name: 'vagent serve',
    args: [...DAEMON_NODE_ARGS, 'bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: ROOT,
    env: { ...process.env, VAGENT_LOG_LEVEL: LOG_LEVEL, XDG_CONFIG_HOME: profileDir },
    stream: 'stderr',
  });
  const version = /^vagent (\S+) listening/.exec(daemon.banner)?.[1] ?? null;

  // Creates go to "default" (thousands of trunks by the end); the list and CLI runs use their
  // own tenants so they always see exactly 20 and 5 trunks whatever ran before.
  const createKey = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  admin(stateDir, 'tenant', 'create', 'bench-list');
  admin(stateDir, 'tenant', 'create', 'bench-cli');
  const listKey = admin(stateDir, 'key', 'create', '--tenant', 'bench-list').key;
  const cliKey = admin(stateDir, 'key', 'create', '--tenant', 'bench-cli').key;
  // The daemon synthesises the example agents' clips after start-up: let it finish first.
  process.stderr.write("bench: waiting for the example agents' pre-synthesis\n");
  await waitForAllAudio(daemon.url, createKey);
  await seedTrunks(daemon.url, listKey, LIST_TRUNKS);
  await seedTrunks(daemon.url, cliKey, CLI_TRUNKS);

  const common = { connections: CONNECTIONS, durationS: DURATION_S, warmupS: WARMUP_S };
  const json = { 'content-type': 'application/json' };
  const keys = idempotencyKeys('bench');
  const uniqueKeys = keys.requests;
  const http = {};

  const routes = {
    a: { title: '(a) GET /bare (fastify)', url: bare.url, pid: bare.pid, path: '/bare' },
    b: {
      title: '(b) POST /bare (fastify echo)',
      url: bare.url,
      pid: bare.pid,
      path: '/bare',
      method: 'POST',
      headers: json,
      body: TRUNK_BODY,
    },
    c: {
      title: '(c) POST /v1/trunks (unique keys)',
      url: daemon.url,
      pid: daemon.pid,
      path: '/v1/trunks',
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${createKey}` },
      body: TRUNK_BODY,
      requests: uniqueKeys('trunk'),
    },
    d: {
      title: `(d) GET /v1/trunks (${LIST_TRUNKS} trunks)`,
      url: daemon.url,
      pid: daemon.pid,
      path: '/v1/trunks',
      headers: { authorization: `Bearer ${listKey}` },
    },
  };
  /** The ratio of route `other` to `base` from alternating slices (see measurePaired). */
  const pairedRatio = async (base, other) => {
    process.stderr.write(
      `bench: ${other.title.slice(0, 3)}/${base.title.slice(0, 3)} paired, ${PAIRED_ROUNDS} rounds of ${PAIRED_SLICE_S} s each\n`,
    );
    const p = await measurePaired(base, other, { rounds: PAIRED_ROUNDS, sliceS: PAIRED_SLICE_S, connections: CONNECTIONS });
    checkClean(p.base);
    checkClean(p.other);
    return p;
  };
  const paired = {};

  process.stderr.write('bench: (a) GET /bare\n');
  http.bare_get = checkClean(await measure({ ...common, ...routes.a }));
  process.stderr.write('bench: (d) GET /v1/trunks\n');
  http.trunk_list = checkClean(await measure({ ...common, ...routes.d }));
  paired.list = await pairedRatio(routes.a, routes.d);
  process.stderr.write('bench: (b) POST /bare\n');
  http.bare_post = checkClean(await measure({ ...common, ...routes.b }));
  process.stderr.write('bench: (c) POST /v1/trunks\n');
  http.trunk_create = checkClean(await measure({ ...common, ...routes.c }));
  paired.create = await pairedRatio(routes.b, routes.c);
  process.stderr.write(`bench: CLI start-up (${CLI_RUNS} runs each, alternating)\n`);
  const cli = measureCliStartup({
    cwd: ROOT,
    env: { ...process.env, VAGENT_URL: daemon.url, VAGENT_API_KEY: cliKey, XDG_CONFIG_HOME: profileDir },
    runs: CLI_RUNS,
    expectTrunks: CLI_TRUNKS,
  });

  const memory = { daemon_peak_rss_mib: peakRssMiB(daemon.pid), bare_server_peak_rss_mib: peakRssMiB(bare.pid) };

  // Every 2xx must be a new trunk: a replayed key would show as fewer trunks than 2xx responses
  // (requests still in flight when autocannon stops are committed but not counted, so ≥). The
  // count is read from the database file, not listed through the daemon: a list of tens of
  // thousands of trunks (the spec's list is not paginated, and the daemon caches its body)
  // would stay in the daemon's memory and inflate the RSS figures measured later.
  const created = countTrunks(path.join(stateDir, 'vagent.db'), 'default');
  const counted = http.trunk_create.total_2xx + http.trunk_create.warmup_2xx + paired.create.other.total_2xx;
  http.trunk_create.trunks_in_tenant = created;
  if (created < counted) invalid(`(c) counted ${counted} 2xx creates but the tenant has only ${created} trunks: keys were replayed`);
  process.stderr.write(`bench: (e) POST /v1/sessions/{id}/turn, then ${OPEN_SESSIONS.toLocaleString('en')} open sessions\n`);
  const sessions = await benchSessions(daemon, createKey, common, path.join(stateDir, 'vagent.db'), (turnRoute) =>
    pairedRatio(routes.b, turnRoute),
  );
  http.turn = checkClean(sessions.turn);
  paired.turn = sessions.afterTurn;
  delete sessions.turn;
  delete sessions.afterTurn;

  process.stderr.write("bench: (g) POST /durable (a turn's durable write alone)\n");
  const durableDir = makeTempDir('vagent-bench-durable-');
  const rowsFile = path.join(durableDir, 'turn-rows.json');
  fs.writeFileSync(rowsFile, JSON.stringify(sessions.turnRows));
  sessions.turn_rows_bytes = Object.fromEntries(
    Object.entries(sessions.turnRows)
      .filter(([, v]) => typeof v === 'string')
      .map(([k, v]) => [k, Buffer.byteLength(v)]),
  );
  delete sessions.turnRows;
  const durable = await startServer({
    name: 'durable-server',
    args: ['bench/durable-server.mjs', '0', rowsFile, durableDir],
    cwd: ROOT,
    stream: 'stdout',
  });
  const durableRoute = {
    title: "(g) POST /durable (a turn's durable write alone)",
    url: durable.url,
    pid: durable.pid,
    path: '/durable',
    method: 'POST',
    headers: json,
    body: JSON.stringify({ text: 'what are your fees?' }),
    requests: uniqueKeys('durable'),
  };
  http.turn_durable_write = checkClean(await measure({ ...common, ...durableRoute }));
  paired.turn_ceiling = await pairedRatio(routes.b, durableRoute);
  await durable.stop();
  memory.daemon_rss_10k_sessions_mib = sessions.rss_mib_10k_sessions;
  memory.daemon_rss_10k_sessions_right_after_opening_mib = sessions.rss_mib_10k_sessions_right_after_opening;

  process.stderr.write('bench: (f) POST /v1/calls (prepare-only)\n');
  http.call_prepare = checkClean(
    await measure({
      ...common,
      title: '(f) POST /v1/calls (prepare-only, unique keys)',
      url: daemon.url,
      pid: daemon.pid,
      path: '/v1/calls',
      method: 'POST',
      headers: { ...json, authorization: `Bearer ${createKey}` },
      body: CALL_BODY,
      requests: uniqueKeys('call'),
    }),
  );

  if (daemon.out.count > 0) {
    loud(`the daemon wrote ${daemon.out.count} log lines at level ${LOG_LEVEL}; last ones:\n${daemon.out.lines.slice(-5).join('\n')}`);
  }

  /** A ratio from alternating slices, with the ratio of the two single runs beside it. */
  const pairedFigure = (pair, route, base, of) => ({
    value: pair.ratio,
    single_runs: route.requests_per_s / base.requests_per_s,
    of: `${of}, alternating slices`,
  });
  const ratios = {
    create: { ...pairedFigure(paired.create, http.trunk_create, http.bare_post, '(c)/(b)'), target_min: TARGETS.create },
    list: { ...pairedFigure(paired.list, http.trunk_list, http.bare_get, '(d)/(a)'), target_min: TARGETS.list },
    cli: { value: cli.ratio_of_medians, target_max: TARGETS.cli, of: 'median(vagent trunk list)/median(node -e 0)' },
    turn: { ...pairedFigure(paired.turn, http.turn, http.bare_post, '(e)/(b)'), target_min: TARGETS.turn },
    turn_p99_ms: { value: http.turn.latency_p99_ms, target_max: TARGETS.turn_p99_ms, of: 'p99 of (e)' },
    turn_ceiling: pairedFigure(paired.turn_ceiling, http.turn_durable_write, http.bare_post, '(g)/(b)'),
    // Both paired against (b): the quotient of the two paired ratios.
    turn_of_ceiling: {
      value: paired.turn.ratio / paired.turn_ceiling.ratio,
      single_runs: http.turn.requests_per_s / http.turn_durable_write.requests_per_s,
      of: '(e)/(g), from the paired ratios of each against (b)',
    },
    call_prepare: { value: http.call_prepare.requests_per_s / http.bare_post.requests_per_s, of: '(f)/(b)' },
    call_prepare_p99_ms: {
      value: http.call_prepare.latency_p99_ms,
      bare_p99_ms: http.bare_post.latency_p99_ms,
      of: 'p99 of (f) vs p99 of (b)',
    },
    rss_10k_sessions_mib: {
      value: sessions.rss_mib_10k_sessions,
      target_max: TARGETS.rss_10k_mib,
      of: `VmRSS with ${OPEN_SESSIONS.toLocaleString('en')} open sessions`,
    },
    cache_hit_percent: {
      value: sessions.booking_cache_hit_percent,
      target_min: TARGETS.cache_hit_percent,
      of: 'reply clips from the cache, scripted booking',
    },
  };
  ratios.turn.pass = ratios.turn.value >= TARGETS.turn;
  ratios.turn_p99_ms.pass = ratios.turn_p99_ms.value < TARGETS.turn_p99_ms;
  ratios.rss_10k_sessions_mib.pass = ratios.rss_10k_sessions_mib.value < TARGETS.rss_10k_mib;
  ratios.cache_hit_percent.pass = ratios.cache_hit_percent.value >= TARGETS.cache_hit_percent;
  ratios.create.pass = ratios.create.value >= TARGETS.create;
  ratios.list.pass = ratios.list.value >= TARGETS.list;
  ratios.cli.pass = ratios.cli.value <= TARGETS.cli;

  const meta = {
    date: new Date().toISOString(),
    vagent_version: version,
    git: gitRevision(),
    node_version: process.version,
    platform: `${os.platform()} ${os.arch()} ${os.release()}`,
    cpu_count: cpus.length,
    cpu_model: cpus[0]?.model?.trim() ?? null,
    total_memory_mib: Math.round(os.totalmem() / 2 ** 20),
    host_busy_cores_before_start: before?.busy ?? null,
    host_steal_cores_before_start: before?.steal ?? null,
    load_average_at_start: LOAD_AT_START,
    load_average_at_end: os.loadavg().map((x) => Math.round(x * 100) / 100),
    state_dir_filesystem: fsTypeOf(stateDir),
    duration_s: DURATION_S,
    warmup_s: WARMUP_S,
    connections: CONNECTIONS,
    paired_rounds: PAIRED_ROUNDS,
    paired_slice_s: PAIRED_SLICE_S,
    cli_runs: CLI_RUNS,
    daemon_log_level: LOG_LEVEL,
    daemon_node_args: DAEMON_NODE_ARGS,
  };

  report({ meta, http, paired, ratios, cli, memory });
  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(RESULTS, `${JSON.stringify({ meta, http, paired, ratios, cli, memory, sessions, warnings }, null, 2)}\n`);
  console.log(`\nWrote ${path.relative(ROOT, RESULTS)}`);
}

function report({ meta, http, paired, ratios, cli, memory }) {
  const out = [];
  out.push('', `vagent ${meta.vagent_version} benchmark — ${meta.date}${meta.git ? `, git ${meta.git}` : ''}`);
  out.push(`node ${meta.node_version}, ${meta.platform}, ${meta.cpu_count} × ${meta.cpu_model}, ${meta.total_memory_mib} MiB RAM`);
  out.push(
    `state dir on ${meta.state_dir_filesystem ?? 'unknown fs'}; daemon log level ${meta.daemon_log_level}; ` +
      `host busy before start: ${fixed(meta.host_busy_cores_before_start, 2)} cores, ` +
      `stolen ${fixed(meta.host_steal_cores_before_start, 2)}` +
      `${meta.daemon_node_args.length ? `; daemon node args ${meta.daemon_node_args.join(' ')}` : ''}`,
  );
  out.push(`HTTP: ${meta.connections} connections, ${meta.warmup_s} s warm-up + ${meta.duration_s} s measured per route`, '');

  const row = (r) => [
    r.title,
    fixed(r.requests_per_s, 0),
    fixed(r.latency_p50_ms, 0),
    fixed(r.latency_p99_ms, 0),
    String(r.non_2xx),
    fixed(r.cpu?.server_cores, 2),
    fixed(r.cpu?.server_us_per_request, 0),
    fixed(r.cpu?.bench_cores, 2),
    fixed(r.cpu?.other_cores, 2),
    fixed(r.cpu?.steal_cores, 2),
  ];
  out.push(
    table(
      ['HTTP throughput', 'req/s (mean)', 'p50 ms', 'p99 ms', 'non-2xx', 'server CPU', 'µs/req', 'bench CPU', 'other CPU', 'steal'],
      [http.bare_get, http.bare_post, http.trunk_create, http.trunk_list, http.turn, http.turn_durable_write, http.call_prepare].map(row),
    ),
  );
  out.push(
    '  (latencies in whole ms, as autocannon records them; CPU in cores during the measured run;',
    '   µs/req = server CPU time per response, the figure least disturbed by other load on the host;',
    "   other CPU = the rest of this machine, kernel threads writing the server's files included;",
    '   steal = CPU time the hypervisor took from this virtual machine)',
    '',
  );

  const pairRow = (name, p) => [
    name,
    fixed(p.base.requests_per_s, 0),
    fixed(p.other.requests_per_s, 0),
    pct(p.ratio),
    fixed(p.base.steal_cores, 2),
    fixed(p.other.steal_cores, 2),
  ];
  out.push(
    table(
      [
        `Alternating slices (${meta.paired_rounds} rounds of ${meta.paired_slice_s} s each)`,
        'base req/s',
        'route req/s',
        'ratio',
        'steal base',
        'steal route',
      ],
      [
        pairRow('create (c) against (b)', paired.create),
        pairRow('list   (d) against (a)', paired.list),
        pairRow('turn   (e) against (b)', paired.turn),
        pairRow('ceiling (g) against (b)', paired.turn_ceiling),
      ],
    ),
  );
  out.push(
    '  (each pair measured base, route / route, base / … so that load on the host, which comes and goes',
    '   over minutes, falls on both alike: the target ratios below are these; the single runs above',
    '   are minutes apart and are shown beside them)',
    '',
  );

  out.push(
    table(
      ['Target', 'ratio', 'single runs', 'target', 'verdict'],
      [
        [
          `create = (c)/(b)`,
          pct(ratios.create.value),
          pct(ratios.create.single_runs),
          `≥ ${pct(ratios.create.target_min)}`,
          verdict(ratios.create.pass),
        ],
        [
          `list   = (d)/(a)`,
          pct(ratios.list.value),
          pct(ratios.list.single_runs),
          `≥ ${pct(ratios.list.target_min)}`,
          verdict(ratios.list.pass),
        ],
        [`CLI    = vagent / node`, `${fixed(ratios.cli.value, 2)}×`, '', `≤ ${ratios.cli.target_max}×`, verdict(ratios.cli.pass)],
        [
          `turn   = (e)/(b)`,
          pct(ratios.turn.value),
          pct(ratios.turn.single_runs),
          `≥ ${pct(ratios.turn.target_min)}`,
          verdict(ratios.turn.pass),
        ],
        [
          `turn p99 (e)`,
          `${fixed(ratios.turn_p99_ms.value, 0)} ms`,
          '',
          `< ${ratios.turn_p99_ms.target_max} ms`,
          verdict(ratios.turn_p99_ms.pass),
        ],
        [
          `turn ceiling = (g)/(b)`,
          pct(ratios.turn_ceiling.value),
          pct(ratios.turn_ceiling.single_runs),
          '(none)',
          "a turn's durable write alone",
        ],
        [`turn of ceiling = (e)/(g)`, pct(ratios.turn_of_ceiling.value), pct(ratios.turn_of_ceiling.single_runs), '(none)', ''],
        [
          `RSS, ${OPEN_SESSIONS.toLocaleString('en')} open sessions`,
          `${fixed(ratios.rss_10k_sessions_mib.value, 0)} MiB`,
          '',
          `< ${ratios.rss_10k_sessions_mib.target_max} MiB`,
          verdict(ratios.rss_10k_sessions_mib.pass),
        ],
        [
          `cache hits, scripted booking`,
          `${fixed(ratios.cache_hit_percent.value, 1)}%`,
          '',
          `≥ ${ratios.cache_hit_percent.target_min}%`,
          verdict(ratios.cache_hit_percent.pass),
        ],
        [`calls  = (f)/(b)`, pct(ratios.call_prepare.value), '', '(none)', ''],
        [
          `calls p99 (f) vs (b)`,
          `${fixed(ratios.call_prepare_p99_ms.value, 0)} ms vs ${fixed(ratios.call_prepare_p99_ms.bare_p99_ms, 0)} ms`,
          '',
          '(none)',
          '',
        ],
      ],
    ),
    '',
  );

  out.push(
    table(
      [`CLI start-up (${cli.vagent.runs} runs each, alternating)`, 'median ms', 'p90 ms', 'min ms'],
      [cli.baseline, cli.vagent].map((c) => [c.command, fixed(c.median_ms, 1), fixed(c.p90_ms, 1), fixed(c.min_ms, 1)]),
    ),
    '',
  );

  out.push(
    table(
      ['Memory', 'MiB'],
      [
        ['vagent daemon peak RSS (VmHWM)', fixed(memory.daemon_peak_rss_mib, 1)],
        ['bare fastify peak RSS (VmHWM)', fixed(memory.bare_server_peak_rss_mib, 1)],
        [
          `daemon RSS, ${OPEN_SESSIONS.toLocaleString('en')} open sessions, right after opening`,
          fixed(memory.daemon_rss_10k_sessions_right_after_opening_mib, 1),
        ],
        [
          `daemon RSS, ${OPEN_SESSIONS.toLocaleString('en')} open sessions, ${SMOKE ? 'not settled' : '15 s later'}`,
          fixed(memory.daemon_rss_10k_sessions_mib, 1),
        ],
      ],
    ),
  );
  const runs = Object.values(http);
  const busy = runs.filter((r) => (r.cpu?.other_cores ?? 0) > NOISY_CORES);
  if (busy.length) {
    out.push(
      '',
      `NOTE: other processes used > ${NOISY_CORES} core during ${busy.map((r) => r.title.slice(0, 3)).join(', ')} ` +
        '(see "other CPU"): a noisy host skews the ratios; rerun when it is quiet.',
    );
  }
  const stolen = runs.filter((r) => (r.cpu?.steal_cores ?? 0) > NOISY_CORES);
  if (stolen.length) {
    out.push(
      '',
      `NOTE: the hypervisor took > ${NOISY_CORES} core from this machine during ${stolen.map((r) => r.title.slice(0, 3)).join(', ')} ` +
        '(see "steal"): the host under it is busy and the ratios are skewed; rerun when it is quiet.',
    );
  }
  if (warnings.length) out.push('', `!!! ${warnings.length} warning(s) above: some figures are not valid.`);
  console.log(out.join('\n'));
}

try {
  await main();
} catch (err) {
  process.stderr.write(`bench failed: ${err?.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
