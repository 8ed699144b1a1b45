/**
 * The first call after start (bench/media.mjs, section (d)): how long the first caller of a
 * freshly started daemon waits for its opening, against the calls after it.
 *
 * A daemon is started on a state dir that served before (its audio cache holds the agents'
 * clips: a restart, the usual case in production), with the default recogniser (the embedded
 * one when installed). As soon as it prints its listening line and `/v1/health` answers, the
 * bench places `calls` simulated Twilio calls to ag_clinic_booking, one after another, each
 * hung up once the first frame of its opening arrived. Opening latency = the call's `start`
 * sent → the first opening frame received (src/cli/simulator/sim-client.ts `openingMs`).
 * Reports the first call's, the last one's (the 100th by default), the median of the others,
 * and first / last; and `/v1/health`'s `media.warm_up` when the first call started and at the end.
 */
import { performance } from 'node:perf_hooks';
import { simulateCall } from '../../dist/cli/simulator/sim-client.js';
import { startServer } from './procs.mjs';
import { median } from './stats.mjs';

/** `/v1/health`'s `media.warm_up`, or null. */
async function warmUp(url) {
  try {
    return (await (await fetch(`${url}/v1/health`)).json()).media?.warm_up ?? null;
  } catch {
    return null;
  }
}

/** One call that hangs up at the first frame of its opening; its opening latency, ms. @throws Error when no opening frame came */
async function openingOnly(url, key, agentId) {
  const call = simulateCall({
    url: `${url.replace(/^http/, 'ws')}/v1/media/twilio`,
    dialect: 'twilio',
    headers: { authorization: `Bearer ${key}` },
    customParameters: { agent_id: agentId },
    steps: [{ kind: 'wait', ms: 30_000 }, { kind: 'hangup' }],
    timeoutMs: 30_000,
    connectTimeoutMs: 30_000,
  });
  call.on('event', (e) => {
    if (e.type === 'reply_start' && e.turn === -1) call.hangup();
  });
  const t = await call.done;
  if (t.openingMs === undefined) throw new Error(`call ${agentId}: no opening frame arrived (${JSON.stringify(t.close ?? null)})`);
  return t.openingMs;
}

/**
 * @param {object} o
 * @param {string} o.root       the checkout (bin/vagent)
 * @param {string} o.stateDir   a state dir a daemon served before (its audio cache filled)
 * @param {object} o.env        the daemon's environment
 * @param {string} o.key        an API key of tenant default in that state dir
 * @param {number} o.calls      calls placed one after another (≥ 2)
 * @param {string} [o.agentId]  ag_clinic_booking
 * @returns {Promise<{calls: number, listening_to_first_call_ms: number, first_ms: number, last_ms: number,
 *   others_p50_ms: number, first_over_last: number, warm_up_at_first_call: object|null, warm_up_at_end: object|null}>}
 */
export async function measureFirstCall({ root, stateDir, env, key, calls, agentId = 'ag_clinic_booking' }) {
  if (calls < 2) throw new RangeError(`the first-call figure needs at least 2 calls, got ${calls}`);
  const daemon = await startServer({
    name: 'vagent serve (restarted)',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: root,
    env,
    stream: 'stderr',
  });
  try {
    const listening = performance.now();
    for (;;) {
      const res = await fetch(`${daemon.url}/v1/health`).catch(() => null);
      if (res?.ok) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const atFirst = await warmUp(daemon.url);
    const sinceListening = performance.now() - listening;
    const openings = [];
    for (let i = 0; i < calls; i++) openings.push(await openingOnly(daemon.url, key, agentId));
    const first = openings[0];
    const last = openings.at(-1);
    return {
      calls,
      listening_to_first_call_ms: sinceListening,
      first_ms: first,
      last_ms: last,
      others_p50_ms: median(openings.slice(1)),
      first_over_last: first / last,
      openings_ms: openings,
      warm_up_at_first_call: atFirst,
      warm_up_at_end: await warmUp(daemon.url),
    };
  } finally {
    await daemon.stop();
  }
}
