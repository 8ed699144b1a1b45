/**
 * A streamed model reply on a simulated phone call (docs/media.md "The early clip"): one real
 * daemon on loopback with the fake streaming recogniser and the fake OpenAI-compatible model
 * streaming one word per chunk, slowly. The caller asks an off-script question; the first
 * sentence of the model's reply is heard before the completion has ended (wall-clock timestamps
 * of the simulator's events and of the fake's last chunk), then the rest, then the step's
 * question; and the turn stored for the call equals the same turn typed (no streaming to a line).
 * A reply whose first sentence passes but whose whole is refused (too long) is followed on the
 * line by the rules' re-prompt, which is what the turn stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareSimLine, simulateCall, type SimEvent, type SimPreparedLine } from '../../src/cli/simulator/sim-client.js';
import { startFakeLlm, type FakeLlm } from '../../src/devtools/fake-llm.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { askingCall, llmClinicAgent, QUESTION, storedTurnOfLastCall } from '../support/llm-stream-call.mjs';

const AGENT = 'ag_stream_clinic';
const FIRST = 'Yes, well behaved pets on a leash are welcome in the waiting area.';
const REST = 'Please tell the front desk when you arrive so they can seat you near the door.';
const CHUNK_MS = 120;
/** A question whose reply is too long as a whole. */
const CAT = 'can I bring my cat along';

const agent = llmClinicAgent(AGENT);

let daemon: Daemon;
let fake: FakeLlm;
let key: string;
let line: SimPreparedLine;
/** performance.now() when the fake sent its last chunk, per request. */
const completedAt: number[] = [];

beforeAll(async () => {
  requireBuild();
  fake = await startFakeLlm({
    rules: [
      { match: 'dog', reply: `${FIRST} ${REST}`, chunk_delay_ms: CHUNK_MS },
      // A first sentence that passes, then a reply too long as a whole (over 600 characters).
      { match: 'cat', reply: `${FIRST} ${'And there is much more to say about it. '.repeat(16)}`, chunk_delay_ms: 5 },
    ],
    onRequest: () => completedAt.push(performance.now()),
  });
  const [started, audio] = await Promise.all([
    startDaemon({
      env: { VAGENT_RECOGNIZER: 'fake', VAGENT_LLM_BASE_URL: fake.url, VAGENT_LLM_MODEL: 'fake-llm', VAGENT_LLM_TIMEOUT_MS: '15000' },
    }),
    synthesizeLines('media-llm-stream', [QUESTION]),
  ]);
  daemon = started;
  key = await adminKey(daemon.stateDir);
  line = prepareSimLine(audio[0]!.samples, audio[0]!.sampleRate, 'twilio');
  const put = await api(daemon, 'PUT', `/v1/agents/${AGENT}`, { key, body: agent });
  expect([200, 201], JSON.stringify(put.body)).toContain(put.status);
}, 60_000);
afterAll(async () => {
  await fake?.close();
  await cleanupAll();
}, 30_000);

type StoredTurn = Record<string, unknown> & { cost: { llm_inr: number; tts_inr: number } };

/**
 * What must be equal between a turn heard on a call and the same turn typed: not its times, its
 * recogniser fields, nor what the audio cache served (the second turn finds the reply cached).
 */
function comparable(t: StoredTurn): unknown {
  return {
    user_text: t.user_text,
    reply_text: t.reply_text,
    layer: t.layer,
    cursor: t.cursor,
    ended: t.ended,
    llm: t.llm,
    llm_inr: t.cost.llm_inr,
    tts_inr: t.cost.tts_inr,
  };
}

describe('a streamed model reply on a call', () => {
  it('plays its first sentence before the completion ends, then the rest, then the question; stored as a typed turn', async () => {
    fake.clearCache();
    const at = new Map<string, number>();
    const events: Array<SimEvent & { wall: number }> = [];
    const sim = simulateCall(askingCall({ daemonUrl: daemon.url, key, agentId: AGENT, line, replyQuietMs: 3000 }));
    let marksAfterLine = 0;
    const played: string[] = [];
    sim.on('event', (e) => {
      const wall = performance.now();
      events.push({ ...e, wall });
      if (e.type === 'line_end') at.set('line_end', wall);
      if (e.type === 'reply_start' && e.turn === 0) at.set('first_audio', wall);
      if (e.type === 'mark' && e.by === 'played' && at.has('line_end')) {
        marksAfterLine++;
        played.push(e.name);
        at.set(`mark${marksAfterLine}`, wall);
        if (marksAfterLine === 3) sim.hangup(true); // the early clip, the rest, the question
      }
    });
    const t = await sim.done;
    const trace = JSON.stringify(events.map((e) => ({ type: e.type, ms: Math.round(e.wall) })));
    expect(completedAt.length, trace).toBe(1);
    const done = completedAt[0]!;
    // The first sentence was heard while the model was still generating the rest.
    expect(at.get('first_audio'), trace).toBeDefined();
    expect(at.get('first_audio')!, trace).toBeLessThan(done);
    // The rest is ~15 words of CHUNK_MS each: the first audio came well ahead of the end.
    expect(done - at.get('first_audio')!, trace).toBeGreaterThan(5 * CHUNK_MS);
    // Marks are `t<reply>c<clip>`: the opening was reply 1; the early clip is a reply of its own
    // (2), then the turn's reply (3) holds the rest of the model's answer and the step's question.
    expect(played, trace).toEqual(['t2c1', 't3c1', 't3c2']);
    expect(t.received.clears).toBe(0);

    // The stored turn of the call.
    const calls = await api(daemon, 'GET', '/v1/calls?limit=10', { key });
    const sessionId = (calls.body.data as Array<{ session_id: string }>)[0]!.session_id;
    const detail = await api(daemon, 'GET', `/v1/sessions/${sessionId}`, { key });
    expect(detail.status).toBe(200);
    const turns = detail.body.turns as StoredTurn[];
    const heard = turns.at(-1)!;
    expect(heard.user_text).toBe(QUESTION);

    // The same question typed, with the prompt cache as cold as for the call.
    fake.clearCache();
    const opened = await api(daemon, 'POST', '/v1/sessions', { key, body: { agent_id: AGENT } });
    expect(opened.status).toBe(201);
    const typedId = (opened.body as { session_id: string }).session_id;
    const typed = await api(daemon, 'POST', `/v1/sessions/${typedId}/turn`, { key, body: { text: QUESTION } });
    expect(typed.status, JSON.stringify(typed.body)).toBe(200);
    const typedDetail = await api(daemon, 'GET', `/v1/sessions/${typedId}`, { key });
    const typedTurn = (typedDetail.body.turns as StoredTurn[]).at(-1)!;
    expect(comparable(heard), JSON.stringify(heard)).toEqual(comparable(typedTurn));
    expect(heard.reply_text).toBe(`${FIRST} ${REST} Which day would you like to come in?`);
    expect(heard.llm).toMatchObject({ model: 'fake-llm' });
  }, 90_000);

  it('when the whole reply fails its checks, the played first sentence is followed by the re-prompt', async () => {
    fake.clearCache();
    const before = completedAt.length;
    const played: string[] = [];
    let afterLine = false;
    const sim = simulateCall(askingCall({ daemonUrl: daemon.url, key, agentId: AGENT, line, heard: CAT, replyQuietMs: 3000 }));
    sim.on('event', (e) => {
      if (e.type === 'line_end') afterLine = true;
      if (e.type === 'mark' && e.by === 'played' && afterLine) {
        played.push(e.name);
        if (played.length === 2) setTimeout(() => sim.hangup(true), 1500); // any further clip of the re-prompt
      }
    });
    await sim.done;
    expect(completedAt.length).toBe(before + 1);
    const get = async (p: string) => (await api(daemon, 'GET', p, { key })).body;
    const stored = await storedTurnOfLastCall<StoredTurn>(get, CAT, 50);
    // The stored turn is the rules' re-prompt (the model's reply refused as too long) …
    expect(stored).toBeDefined();
    expect(String(stored!.reply_text)).not.toContain('pets');
    expect(stored!.layer).not.toBe('llm');
    // … and on the line, the early clip (reply 2) was followed by the re-prompt's clips (reply 3).
    expect(played[0]).toBe('t2c1');
    expect(played.slice(1).every((m) => m.startsWith('t3c'))).toBe(true);
    expect(played.length).toBeGreaterThanOrEqual(2);
  }, 90_000);
});
