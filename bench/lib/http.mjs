/**
 * One HTTP throughput measurement with autocannon's programmatic API: a warm-up run whose
 * figures are thrown away, then the measured run against the same route with the same
 * options. Reports mean requests/s (autocannon's per-second samples), p50/p99 latency in ms
 * (autocannon records latency of 2xx responses only, in whole ms), non-2xx, errors and
 * timeouts, and where the CPU went during the measured run (see cpu.mjs).
 */
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
export async function measure({ title, url, pid, connections, durationS, warmupS, method = 'GET', path = '/', headers = {}, body, requests }) {
  const base = { url: url + path, connections, method, headers, timeout: 30 };
  if (body !== undefined) base.body = body;
  if (requests !== undefined) base.requests = requests;
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
