/**
 * One HTTP throughput measurement with autocannon's programmatic API: a warm-up run whose
 * figures are thrown away, then the measured run against the same route with the same
 * options. Reports mean requests/s (autocannon's per-second samples), p50/p99 latency in ms
 * (autocannon records latency of 2xx responses only, in whole ms), non-2xx, errors and
 * timeouts, and where the CPU went during the measured run (see cpu.mjs).
 */
import crypto from 'node:crypto';
import autocannon from 'autocannon';
import { cpuSince, cpuSnapshot } from './cpu.mjs';

function run(opts) {
  return new Promise((resolve, reject) => {
    autocannon(opts, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/**
 * @param {object} o
 * @param {string} o.title      label in the report
 * @param {string} o.url        server base URL
 * @param {number} o.pid        server process id (CPU accounting)
 * @param {number} o.connections
 * @param {number} o.durationS  measured run
 * @param {number} o.warmupS    warm-up run before it (0 for none)
 * @param {object[]} [o.requests] autocannon `requests` (for setupRequest hooks)
 * @returns summary object (see summarise)
 */
export async function measure({
  title,
  url,
  pid,
  connections,
  durationS,
  warmupS,
  method = 'GET',
  path = '/',
  headers = {},
  body,
  requests,
}) {
  const base = cannonOptions({ url, connections, method, path, headers, body, requests });
  let warmup = null;
  if (warmupS > 0) warmup = await run({ ...base, title: `${title} (warm-up)`, duration: warmupS });
  const before = cpuSnapshot(pid);
  const result = await run({ ...base, title, duration: durationS });
  const cpu = cpuSince(before);
  const summary = summarise(title, result);
  // Server CPU per response: far less sensitive to a busy host than requests/s.
  if (cpu) cpu.server_us_per_request = Math.round((cpu.server_cores * 1e6) / summary.requests_per_s);
  return { ...summary, warmup_2xx: warmup ? warmup['2xx'] : 0, cpu };
}

/** autocannon options for one route (see {@link measure}). */
function cannonOptions({ url, connections, method = 'GET', path = '/', headers = {}, body, requests }) {
  const o = { url: url + path, connections, method, headers, timeout: 30 };
  if (body !== undefined) o.body = body;
  if (requests !== undefined) o.requests = requests;
  return o;
}

/**
 * The throughput of `other` as a ratio to `base` (say a route and the bare route it is judged
 * against), with the two measured in alternating slices — base, other / other, base / … over
 * `rounds` rounds of `sliceS` seconds each — so that load elsewhere on the host, which comes
 * and goes over minutes (a neighbour's build, a busy hypervisor), falls on both alike. Each
 * side's rate is its 2xx responses over its measured seconds. Both routes should be warm.
 *
 * @param {object} base   route options as for {@link measure} (title, url, pid, method, path, …)
 * @param {object} other  the same for the route judged
 * @param {{rounds: number, sliceS: number, connections: number}} o
 * @returns {{rounds: number, slice_s: number, base: object, other: object, ratio: number}} where
 *          base and other are the summaries {@link measureAlternating} gives (total_2xx,
 *          seconds, requests_per_s, errors, latencies, steal_cores, …)
 */
export async function measurePaired(base, other, { rounds, sliceS, connections }) {
  // Two routes alternating, each round starting one later, is base, other / other, base / …
  const {
    routes: [b, o],
  } = await measureAlternating([base, other], { rounds, sliceS, connections });
  return { rounds, slice_s: sliceS, base: b, other: o, ratio: o.requests_per_s / b.requests_per_s };
}

function summarise(title, r) {
  const statuses = Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  return {
    title,
    requests_per_s: r.requests.average,
    requests_per_s_stddev: r.requests.stddev,
    latency_p50_ms: r.latency.p50,
    latency_p99_ms: r.latency.p99,
    latency_mean_ms: r.latency.average,
    latency_max_ms: r.latency.max,
    total_2xx: r['2xx'],
    non_2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    status_codes: statuses,
    duration_s: r.duration,
    connections: r.connections,
  };
}

/**
 * Throughput of several routes measured in alternating slices (the many-route form of
 * {@link measurePaired}): `rounds` rounds of `sliceS` seconds per route, each round starting
 * one route later than the one before (round r runs routes r, r+1, … modulo their count), so
 * that with as many rounds as routes each route runs once in each position, and load elsewhere
 * on the host falls on all alike. Routes should be warm.
 *
 * @param {object[]} routes route options as for {@link measure} (title, url, pid, method, path, …)
 * @param {{rounds: number, sliceS: number, connections: number}} o
 * @returns {{rounds: number, slice_s: number, routes: object[]}} one summary per route, in the
 *          order given: {title, total_2xx, seconds, requests_per_s, non_2xx, errors, timeouts,
 *          latency_p50_ms (median of its slices' p50), latency_p99_ms (worst of its slices'
 *          p99), server_us_per_request (server CPU per 2xx response, null without /proc),
 *          steal_cores and other_cores (means over its slices, null without /proc; see cpu.mjs)}
 */
export async function measureAlternating(routes, { rounds, sliceS, connections }) {
  const sides = routes.map((r) => ({
    route: r,
    options: cannonOptions({ ...r, connections }),
    total: {
      title: r.title,
      total_2xx: 0,
      seconds: 0,
      non_2xx: 0,
      errors: 0,
      timeouts: 0,
      steal: 0,
      other: 0,
      serverS: 0,
      cpuKnown: true,
      p50: [],
      p99: [],
    },
  }));
  for (let i = 0; i < rounds; i++) {
    for (let j = 0; j < sides.length; j++) {
      const side = sides[(i + j) % sides.length];
      const before = cpuSnapshot(side.route.pid);
      const r = await run({ ...side.options, title: `${side.route.title} (alternating slice)`, duration: sliceS });
      const cpu = cpuSince(before);
      const t = side.total;
      t.total_2xx += r['2xx'];
      t.seconds += r.duration;
      t.non_2xx += r.non2xx;
      t.errors += r.errors;
      t.timeouts += r.timeouts;
      t.p50.push(r.latency.p50);
      t.p99.push(r.latency.p99);
      if (cpu) {
        t.steal += cpu.steal_cores * r.duration;
        t.other += cpu.other_cores * r.duration;
        t.serverS += cpu.server_cores * r.duration;
      } else {
        t.cpuKnown = false;
      }
    }
  }
  const summaries = sides.map(({ total: { steal, other, serverS, cpuKnown, p50, p99, ...t } }) => ({
    ...t,
    requests_per_s: t.total_2xx / t.seconds,
    latency_p50_ms: [...p50].sort((a, b) => a - b)[p50.length >> 1],
    latency_p99_ms: Math.max(...p99),
    server_us_per_request: cpuKnown && t.total_2xx > 0 ? Math.round((serverS * 1e6) / t.total_2xx) : null,
    steal_cores: cpuKnown ? Math.round((steal / t.seconds) * 100) / 100 : null,
    other_cores: cpuKnown ? Math.round((other / t.seconds) * 100) / 100 : null,
  }));
  return { rounds, slice_s: sliceS, routes: summaries };
}

/** A warm-up run of `seconds` against a route (figures thrown away); resolves with its 2xx count. */
export async function warmUp(route, { seconds, connections }) {
  if (seconds <= 0) return 0;
  const r = await run({ ...cannonOptions({ ...route, connections }), title: `${route.title} (warm-up)`, duration: seconds });
  return r['2xx'];
}

/**
 * Unique `Idempotency-Key`s for a bench run: `<prefix>-<random>-<tag>-<n>`, `n` counting up.
 * `next(tag)` gives one; `requests(tag)` is autocannon `requests` setting a new one on every
 * request.
 * @returns {{next: (tag: string) => string, requests: (tag: string) => object[]}}
 */
export function idempotencyKeys(prefix) {
  const keyPrefix = `${prefix}-${crypto.randomBytes(6).toString('hex')}`;
  let keySeq = 0;
  const next = (tag) => {
    keySeq += 1;
    return `${keyPrefix}-${tag}-${keySeq}`;
  };
  return {
    next,
    requests: (tag) => [
      {
        setupRequest(req) {
          req.headers['Idempotency-Key'] = next(tag);
          return req;
        },
      },
    ],
  };
}
