/**
 * The event stream under load (docs/events.md): text turns at full speed while SSE readers
 * follow `GET /v1/events`.
 *
 *   node bench/events.mjs   (after `npm run build`)
 *
 * Reports, from one daemon (a fresh state dir, its example agents, open sessions):
 * - the turn route's req/s with no reader and with SUBSCRIBERS (10) readers, measured in
 *   alternating slices (none, readers, none, readers …) so that the host's load falls on both;
 *   their ratio is what following the stream costs the turns;
 * - events per second delivered to each reader, and that every reader got every event of the
 *   slices it followed, once and in order (a reader that missed or repeated one fails the run).
 *
 * Environment: BENCH_EVENTS_SUBSCRIBERS (10), BENCH_EVENTS_ROUNDS (3), BENCH_EVENTS_SLICE_S (4),
 * BENCH_CONNECTIONS (50). BENCH_SMOKE=1: 2 readers, 1 round of 1 s (bench/smoke.mjs).
 */
import crypto from 'node:crypto';
import { measure, warmUp } from './lib/http.mjs';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { invalid, numEnv, smokeOr } from './lib/report.mjs';
import { admin, api, turnRoute, untilAgentAudio } from './lib/vagent.mjs';

const SUBSCRIBERS = numEnv('BENCH_EVENTS_SUBSCRIBERS', smokeOr(2, 10));
const ROUNDS = numEnv('BENCH_EVENTS_ROUNDS', smokeOr(1, 3));
const SLICE_S = numEnv('BENCH_EVENTS_SLICE_S', smokeOr(1, 4));
const CONNECTIONS = numEnv('BENCH_CONNECTIONS', 50);
const SESSIONS = smokeOr(20, 200);

/** A reader of the stream: keeps the ids it got, checks they rise, until `stop()`. */
function subscribe(url, key) {
  const abort = new AbortController();
  const state = { events: 0, firstSeq: null, lastSeq: null, seqs: [], repeats: 0, bytes: 0 };
  const done = (async () => {
    const res = await fetch(`${url}/v1/events?types=session.turn`, {
      headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) return;
        state.bytes += value.length;
        buf += decoder.decode(value, { stream: true });
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const id = /^id: evt_(\d+)$/m.exec(buf.slice(0, cut));
          buf = buf.slice(cut + 2);
          if (!id) continue;
          const seq = Number(id[1]);
          if (state.lastSeq !== null && seq <= state.lastSeq) state.repeats++;
          if (state.firstSeq === null) state.firstSeq = seq;
          state.lastSeq = seq;
          state.seqs.push(seq);
          state.events++;
        }
      }
    } catch {
      // aborted
    }
  })();
  return { state, stop: () => abort.abort(), done };
}

async function main() {
  const stateDir = makeTempDir('vagent-bench-events-');
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    env: { ...process.env, VAGENT_LOG_LEVEL: 'warn', XDG_CONFIG_HOME: makeTempDir('vagent-bench-events-profile-') },
    stream: 'stderr',
    timeoutMs: 60_000,
  });
  const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  await untilAgentAudio(daemon.url, key, 'ag_clinic_booking');
  const ids = [];
  for (let i = 0; i < SESSIONS; i++)
    ids.push((await api(daemon.url, key, 'POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).session_id);
  const route = turnRoute({
    title: 'turn',
    url: daemon.url,
    pid: daemon.pid,
    key,
    ids,
    prefix: `bench-events-${crypto.randomBytes(4).toString('hex')}`,
  });
  await warmUp(route, { seconds: smokeOr(1, 2), connections: CONNECTIONS });

  const plain = [];
  const followed = [];
  const delivered = [];
  for (let round = 0; round < ROUNDS; round++) {
    const alone = await measure({ ...route, connections: CONNECTIONS, durationS: SLICE_S, warmupS: 0 });
    plain.push(alone);
    const readers = Array.from({ length: SUBSCRIBERS }, () => subscribe(daemon.url, key));
    await new Promise((r) => setTimeout(r, 300)); // connected, before the turns start
    const turnsBefore = route.sent();
    const t0 = performance.now();
    const withReaders = await measure({ ...route, connections: CONNECTIONS, durationS: SLICE_S, warmupS: 0 });
    // Each answered turn wrote one session.turn (requests cut off by the slice's end may add a
    // few): wait until every reader has at least the answered ones and all have the same.
    const expected = withReaders.total_2xx;
    const deadline = Date.now() + 30_000;
    const caughtUp = () => readers.every((r) => r.state.events >= expected && r.state.lastSeq === readers[0].state.lastSeq);
    while (!caughtUp() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const seconds = (performance.now() - t0) / 1000;
    for (const r of readers) r.stop();
    await Promise.all(readers.map((r) => r.done));
    // Readers connect one after another while the previous slice's last turns may still commit,
    // so each starts at its own event; from the latest start to the common end all must hold the
    // same ids.
    const from = Math.max(...readers.map((r) => r.state.firstSeq ?? Infinity));
    const to = Math.min(...readers.map((r) => r.state.lastSeq ?? -Infinity));
    const window = (r) => r.state.seqs.filter((s) => s >= from && s <= to).join(',');
    const reference = window(readers[0]);
    for (const r of readers) {
      if (r.state.events < expected || window(r) !== reference || r.state.repeats > 0) {
        invalid(
          `a reader got ${r.state.events} turn events, another ${readers[0].state.events}, of ${expected} answered turns ` +
            `(${r.state.repeats} out of order or repeated; ids ${r.state.firstSeq}..${r.state.lastSeq} against ` +
            `${readers[0].state.firstSeq}..${readers[0].state.lastSeq}; turns sent ${route.sent() - turnsBefore})`,
        );
      }
      delivered.push(r.state.events / seconds);
    }
    followed.push(withReaders);
  }
  const rate = (xs) => xs.reduce((a, r) => a + r.total_2xx, 0) / xs.reduce((a, r) => a + r.duration_s, 0);
  const p99 = (xs) => Math.max(...xs.map((r) => r.latency_p99_ms));
  const none = rate(plain);
  const some = rate(followed);
  console.log(`turn, no reader             ${none.toFixed(0).padStart(7)} req/s  p99 ${p99(plain)} ms`);
  console.log(
    `turn, ${String(SUBSCRIBERS).padEnd(2)} readers following ${some.toFixed(0).padStart(7)} req/s  p99 ${p99(followed)} ms  (${((100 * some) / none).toFixed(1)}% of no reader)`,
  );
  const perReader = delivered.reduce((a, b) => a + b, 0) / delivered.length;
  console.log(
    `events delivered            ${perReader.toFixed(0).padStart(7)} /s to each of ${SUBSCRIBERS} readers (${(perReader * SUBSCRIBERS).toFixed(0)} /s in all), every one once and in order`,
  );
}

try {
  await main();
} finally {
  await cleanup();
}
