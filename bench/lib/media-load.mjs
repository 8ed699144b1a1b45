/**
 * The media bench's load generator, run as a child process by bench/media.mjs so that the
 * simulated carrier clients do not share the bench's own thread (where the `/v1` turn load is
 * timed): `node bench/lib/media-load.mjs CONFIG.json` runs `calls` simulated Twilio calls
 * (src/cli/simulator/sim-client.ts) against the daemon and prints one JSON line with a
 * summary of each call on stdout, then exits.
 *
 * CONFIG.json: { url: ws://…/v1/media/twilio, key: API key (sent as `Authorization: Bearer`,
 * never printed), agentId, calls, staggerMs (call k of this child starts at k × staggerMs),
 * lines: [{ text, prepared }] (lines cut once by prepareSimLine in the parent, shared by every
 * call), afterReplyMs, timeoutMs }.
 *
 * Each call says every line after the bot's reply to the previous one (the fake recogniser
 * hears `text`, passed as custom parameter `vagent_fake_transcripts`) and hangs up once the
 * reply to its last line has finished playing.
 */
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { simulateCall } from '../../dist/cli/simulator/sim-client.js';

const cfg = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const transcripts = JSON.stringify(cfg.lines.map((l) => l.text));
const lastTurn = cfg.lines.length - 1;
const steps = [
  ...cfg.lines.map((l) => ({ kind: 'say', prepared: l.prepared, text: l.text, afterReplyMs: cfg.afterReplyMs })),
  // Fallback only: the call hangs up as soon as the last reply has played (below).
  { kind: 'wait', ms: 15_000 },
  { kind: 'hangup' },
];

/** One call: its timeline boiled down to what the bench aggregates. */
async function one(k) {
  await sleep(k * cfg.staggerMs);
  const call = simulateCall({
    url: cfg.url,
    dialect: 'twilio',
    headers: { authorization: `Bearer ${cfg.key}` },
    customParameters: { agent_id: cfg.agentId, vagent_fake_transcripts: transcripts },
    steps,
    timeoutMs: cfg.timeoutMs,
    connectTimeoutMs: 30_000,
  });
  call.on('event', (e) => {
    if (e.type === 'reply_end' && e.turn === lastTurn) call.hangup();
  });
  try {
    const t = await call.done;
    return {
      ok: true,
      openingMs: t.openingMs ?? null,
      turns: t.turns.map((u) => ({ turn: u.turn, latencyMs: u.latencyMs ?? null, noReply: u.noReply === true })),
      replyFrames: t.events.filter((e) => e.type === 'reply_end').map((e) => ({ turn: e.turn, frames: e.frames })),
      openingFrames: t.events.find((e) => e.type === 'reply_end' && e.turn === -1)?.frames ?? null,
      received: {
        frames: t.received.frames,
        latenessP99: t.received.lateness.p99,
        latenessMax: t.received.lateness.max,
        protocolErrors: t.received.protocolErrors,
      },
      maxSendLagMs: t.sent.maxSendLagMs,
      timeout: t.events.some((e) => e.type === 'timeout'),
      close: t.close,
      durationMs: t.durationMs,
    };
  } catch (err) {
    return { ok: false, error: `${err.name}: ${err.message}` };
  }
}

const results = await Promise.all(Array.from({ length: cfg.calls }, (_, k) => one(k)));
process.stdout.write(`${JSON.stringify(results)}\n`);
