/**
 * Webhook delivery lag (docs/events.md "Webhooks"): CALLS (100) text sessions at once (open,
 * three turns, end) while one endpoint on loopback receives every event.
 *
 *   node bench/webhooks.mjs   (after `npm run build`)
 *
 * Reports the lag from an event's `created_at` (its write step) to its arrival at the receiver,
 * p50 / p99 / max, and deliveries per second; checks that each event arrived once at least, in
 * order per session, with a signature (the receiver does not verify it here: the tests do).
 * The daemon allows a plain-http loopback receiver (VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP/_PRIVATE).
 *
 * Environment: BENCH_WEBHOOK_CALLS (100). BENCH_SMOKE=1: 10 (bench/smoke.mjs).
 */
import http from 'node:http';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { invalid, numEnv, smokeOr } from './lib/report.mjs';
import { percentile } from './lib/stats.mjs';
import { admin, api } from './lib/vagent.mjs';

const CALLS = numEnv('BENCH_WEBHOOK_CALLS', smokeOr(10, 100));
const TURNS = ['what are your fees?', 'Meera Shah', 'yes'];

async function main() {
  const got = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const at = Date.now() / 1000;
      const e = JSON.parse(body);
      got.push({ at, e, signed: typeof req.headers['webhook-signature'] === 'string' });
      res.writeHead(204).end();
    });
  });
  await new Promise((r) => receiver.listen(0, '127.0.0.1', r));
  const stateDir = makeTempDir('vagent-bench-webhooks-');
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    env: {
      ...process.env,
      VAGENT_LOG_LEVEL: 'warn',
      VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'true',
      VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE: 'true',
      XDG_CONFIG_HOME: makeTempDir('vagent-bench-webhooks-profile-'),
    },
    stream: 'stderr',
    timeoutMs: 60_000,
  });
  try {
    const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
    await api(daemon.url, key, 'POST', '/v1/webhook_endpoints', { url: `http://127.0.0.1:${receiver.address().port}/hook` });
    const started = Date.now();
    const ids = await Promise.all(
      Array.from({ length: CALLS }, async () => {
        const { session_id: id } = await api(daemon.url, key, 'POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
        for (const text of TURNS) await api(daemon.url, key, 'POST', `/v1/sessions/${id}/turn`, { text });
        await api(daemon.url, key, 'POST', `/v1/sessions/${id}/end`);
        return id;
      }),
    );
    // Every event of these sessions, once the log has them all.
    const expected = CALLS * (2 + TURNS.length);
    const deadline = Date.now() + 120_000;
    while (new Set(got.map((g) => g.e.id)).size < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const seconds = (Date.now() - started) / 1000;
    const unique = new Map();
    for (const g of got) if (!unique.has(g.e.id)) unique.set(g.e.id, g);
    if (unique.size < expected) invalid(`the receiver got ${unique.size} of ${expected} events within 2 minutes`);
    const bySession = new Map(ids.map((id) => [id, []]));
    for (const g of got) bySession.get(g.e.session_id)?.push(g.e.sequence);
    for (const [id, seqs] of bySession) {
      if (seqs.some((q, i) => i > 0 && q < seqs[i - 1])) invalid(`session ${id}'s events arrived out of order: ${seqs.join(',')}`);
    }
    if (got.some((g) => !g.signed)) invalid('a delivery came without a webhook-signature');
    const lags = [...unique.values()].map((g) => (g.at - g.e.created_at) * 1000);
    const ms = (p) => percentile(lags, p).toFixed(0);
    console.log(
      `${CALLS} sessions at once, ${expected} events: lag p50 ${ms(50)} ms, p99 ${ms(99)} ms, max ${Math.max(...lags).toFixed(0)} ms`,
    );
    console.log(
      `deliveries ${(got.length / seconds).toFixed(0)} /s (${got.length - unique.size} sent again), every session's events in order`,
    );
  } finally {
    receiver.closeAllConnections();
    receiver.close();
  }
}

try {
  await main();
} finally {
  await cleanup();
}
