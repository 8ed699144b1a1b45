/**
 * The session service's phone-line side (docs/media.md "How a call behaves"): event turns (silence,
 * not heard, give up, time up), the media core's exact recogniser audio in the metering, per-turn
 * STT telemetry in session detail, the media hints of the current step, and `barge_in: false`
 * clips.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Principal } from '../../src/app/context.js';
import type { SessionEventInput } from '../../src/app/turn-input.js';
import { INTERNAL, type Committed } from '../../src/app/unit-of-work.js';
import { makeTestApp, minimalAgent, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const PRICING = parse(fs.readFileSync(path.join(ROOT, 'config', 'pricing.yaml'), 'utf8')) as {
  stt: Record<string, { per_minute: number }>;
};

let t: TestApp;
const clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
const principal: Principal = { tenantId: 'default', keyId: 'test', requestId: 'req_test', method: 'POST', route: '/test' };

beforeAll(async () => {
  t = await makeTestApp({}, { speech: testSpeech(), nowS: () => clock });
});
afterAll(async () => t.close());

const sessions = () => t.runtime.services.sessions;
/** The view a step without a key committed (such a step is never a replay). */
function valueOf<V>(done: Committed<V>): V {
  if (done.replayed) throw new Error('a step without a key was replayed');
  return done.value;
}

type View = {
  text: string;
  clips: Array<Record<string, unknown>>;
  ended: boolean;
  state: { cursor: string; step_done: boolean };
  trace: { layer: string; steps: unknown[] };
  cost: { stt_inr: number };
  session_totals: { stt_inr: number; turns: number };
};

async function open(agentId = 'ag_clinic_booking'): Promise<string> {
  const res = await t.call('POST', '/v1/sessions', { agent_id: agentId });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().session_id as string;
}
async function turn(id: string, text: string, extra: Record<string, unknown> = {}): Promise<View> {
  const res = await t.call('POST', `/v1/sessions/${id}/turn`, { text, ...extra });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as View;
}
const event = async (id: string, ev: SessionEventInput) => valueOf(await sessions().eventTurn(principal, id, ev, INTERNAL));
async function detail(id: string) {
  const res = await t.call('GET', `/v1/sessions/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as {
    stt_seconds: number;
    stt_cost_inr: number;
    total_silence_ms: number;
    turns: Array<Record<string, unknown>>;
    session: { status: string; outcome: string | null; steps: Array<{ id: string; attempts: number; status: string }> };
  };
}

describe('SessionService.eventTurn', () => {
  it('silence: the "still there?" line and the re-prompt, a turn row with the event, attempts untouched', async () => {
    const id = await open();
    const spoken = await turn(id, 'what are the fees?');
    const v = await event(id, { kind: 'silence', attempt: 1 });
    expect(Object.keys(v).sort()).toEqual(Object.keys(spoken).sort());
    expect(v.clips.map((c) => c.text)).toEqual(['Are you still there?', "Could you tell me the patient's full name?"]);
    expect(v.clips.every((c) => typeof c.audio_url === 'string')).toBe(true);
    expect(v).toMatchObject({
      ended: false,
      state: { cursor: 'name', step_done: false },
      trace: { layer: 'no_input' },
      cost: { stt_inr: 0 },
      session_totals: { turns: 2 },
    });
    const d = await detail(id);
    expect(d.turns).toHaveLength(2);
    expect(d.turns[1]).toMatchObject({
      index: 2,
      user_text: '',
      event: 'silence',
      attempt: 1,
      layer: 'no_input',
      stt_audio_ms: 0,
      stt_ms: null,
      silence_ms: null,
      stt_provider: null,
    });
    expect(d.turns[0]!.event).toBeUndefined();
    expect(d.session.steps.find((s) => s.id === 'name')).toMatchObject({ status: 'pending', attempts: 0 });
    expect(d.stt_seconds).toBe(0);
  });

  it('not_heard: re-prompts, and meters the audio the recogniser failed on', async () => {
    const id = await open();
    const v = await event(id, {
      kind: 'not_heard',
      stt_provider: 'deepgram',
      stt_audio_ms: 6000,
      stt_ms: 3000,
      silence_ms: 700,
      stt_confidence: 0,
    });
    expect(v.trace.layer).toBe('not_heard');
    expect(v.clips.map((c) => c.text)).toEqual(['Sorry, I did not catch that.', "Could you tell me the patient's full name?"]);
    // 6 s at config/pricing.yaml's deepgram price per minute.
    expect(PRICING.stt.deepgram!.per_minute).toBe(0.37);
    expect(v.cost.stt_inr).toBe(0.037);
    const d = await detail(id);
    expect(d.stt_seconds).toBe(6);
    expect(d.turns[0]).toMatchObject({
      event: 'not_heard',
      user_text: '',
      stt_provider: 'deepgram',
      stt_ms: 3000,
      silence_ms: 700,
      stt_confidence: 0,
      stt_audio_ms: 6000,
    });
  });

  it('give_up: the polite goodbye, ended, and the session ends with its summary', async () => {
    const id = await open();
    await turn(id, 'Priya Sharma');
    await turn(id, 'yes');
    const v = await event(id, { kind: 'give_up', attempt: 3 });
    expect(v.ended).toBe(true);
    expect(v.trace.layer).toBe('no_input:give_up');
    expect(v.text).toBe('I am sorry, I cannot hear you, so I will end this call now. Goodbye!');
    const d = await detail(id);
    expect(d.session).toMatchObject({ status: 'ended', outcome: 'abandoned' });
    const end = await t.call('POST', `/v1/sessions/${id}/end`);
    expect(end.json().summary).toMatchObject({ outcome: 'abandoned', extracted: { patient_name: 'Priya Sharma' }, turns: 3 });
    expectError(await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello?' }), 409, 'session_already_ended');
    await expect(event(id, { kind: 'silence' })).rejects.toMatchObject({ code: 'session_already_ended' });
  });

  it('max_duration: the time-up line and goodbye; the session ends', async () => {
    const id = await open();
    const v = await event(id, { kind: 'max_duration' });
    expect(v.ended).toBe(true);
    expect(v.clips.map((c) => c.text)).toEqual(['I am sorry, we have run out of time on this call.', 'Thank you. Goodbye!']);
    expect(v.trace.layer).toBe('max_duration');
    expect((await detail(id)).session.status).toBe('ended');
  });

  it('refuses a bad event with invalid_request and changes nothing', async () => {
    const id = await open();
    const bad: Array<[SessionEventInput, string]> = [
      [{ kind: 'shout' as SessionEventInput['kind'] }, 'kind'],
      [{ kind: 'silence', attempt: 0 }, 'attempt'],
      [{ kind: 'silence', attempt: 1.5 }, 'attempt'],
      [{ kind: 'not_heard', stt_audio_ms: -1 }, 'stt_audio_ms'],
      [{ kind: 'not_heard', stt_audio_ms: Number.NaN }, 'stt_audio_ms'],
      [{ kind: 'not_heard', stt_ms: 86_400_001 }, 'stt_ms'],
      [{ kind: 'not_heard', stt_confidence: 2 }, 'stt_confidence'],
      [{ kind: 'not_heard', stt_provider: '' }, 'stt_provider'],
    ];
    for (const [ev, param] of bad) await expect(event(id, ev)).rejects.toMatchObject({ code: 'invalid_request', param });
    await expect(sessions().turn(principal, id, { text: 'hi', stt_audio_ms: -5 }, INTERNAL)).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'stt_audio_ms',
    });
    const d = await detail(id);
    expect(d.turns).toHaveLength(0);
    expect(d.session.status).toBe('open');
  });
});

describe('STT metering and telemetry', () => {
  it('meters stt_audio_ms instead of stt_ms + silence_ms, exact to the micro-rupee', async () => {
    const id = await open();
    // google 1.36 INR/min: 4321 ms → 4321 × 1.36 / 60 000 INR = 0.097942666… → 97 943 µ₹.
    expect(PRICING.stt.google!.per_minute).toBe(1.36);
    const a = valueOf(
      await sessions().turn(
        principal,
        id,
        { text: 'Priya Sharma', stt_provider: 'google', stt_ms: 300, silence_ms: 700, stt_confidence: 0.9, stt_audio_ms: 4321 },
        INTERNAL,
      ),
    );
    expect(a.cost.stt_inr).toBe(0.097943);
    // Without it, stt_ms + silence_ms: 1000 ms × 1.36 / 60 000 = 0.022666… → 22 667 µ₹.
    const b = valueOf(
      await sessions().turn(principal, id, { text: 'yes', stt_provider: 'google', stt_ms: 300, silence_ms: 700 }, INTERNAL),
    );
    expect(b.cost.stt_inr).toBe(0.022667);
    // deepgram 0.37 INR/min: 1 ms → 0.00000616… → 6 µ₹.
    const c = await event(id, { kind: 'silence', attempt: 1, stt_provider: 'deepgram', stt_audio_ms: 1 });
    expect(c.cost.stt_inr).toBe(0.000006);
    expect(c.session_totals.stt_inr).toBe(0.120616);
    const d = await detail(id);
    expect(d.stt_seconds).toBe(5.322);
    expect(d.stt_cost_inr).toBe(0.120616);
    expect(d.total_silence_ms).toBe(1400);
  });

  it('the HTTP turn body cannot set stt_audio_ms', async () => {
    const id = await open();
    const r = await turn(id, 'Priya Sharma', { stt_provider: 'google', stt_ms: 300, silence_ms: 700, stt_audio_ms: 600_000 });
    expect(r.cost.stt_inr).toBe(0.022667);
  });

  it('session detail shows silence_ms, stt_ms, stt_confidence and stt_provider per turn', async () => {
    const id = await open();
    await turn(id, 'My name is Priya Sharma', {
      stt_confidence: 0.93,
      stt_provider: 'pocketsphinx',
      stt_ms: 412,
      silence_ms: 800,
    });
    await turn(id, 'yes');
    const d = await detail(id);
    expect(d.turns[0]).toMatchObject({
      user_text: 'My name is Priya Sharma',
      stt_confidence: 0.93,
      stt_provider: 'pocketsphinx',
      stt_ms: 412,
      silence_ms: 800,
      stt_audio_ms: 1212,
    });
    expect(d.turns[1]).toMatchObject({
      stt_confidence: null,
      stt_provider: null,
      stt_ms: null,
      silence_ms: null,
      stt_audio_ms: 0,
    });
  });
});

describe('SessionService.mediaHints', () => {
  it('follows the clinic agent: name, readback, date, time, phone; ended after the end', async () => {
    const id = await open();
    const hints = () => sessions().mediaHints(principal, id);
    expect(hints()).toMatchObject({
      expectation: 'name',
      grammar: 'name',
      end_of_utterance_ms: 800,
      language: 'en-IN',
      ended: false,
      closing: false,
      media: { barge_in: true, no_speech_timeout_ms: 6000, max_silence_reprompts: 2, max_call_duration_s: 1800 },
    });
    expect(hints().phrases).toBeUndefined();
    await turn(id, 'Priya Sharma');
    expect(hints()).toMatchObject({ expectation: 'yes_no', grammar: 'yes_no' });
    await turn(id, 'yes');
    expect(hints()).toMatchObject({ expectation: 'date', grammar: 'date' });
    await turn(id, 'tomorrow');
    await turn(id, 'yes');
    expect(hints()).toMatchObject({ expectation: 'time', grammar: 'time' });
    await turn(id, 'ten thirty in the morning');
    await turn(id, 'yes');
    expect(hints()).toMatchObject({ expectation: 'phone', grammar: 'digits', end_of_utterance_ms: 1500 });
    await turn(id, '9845012345');
    await turn(id, 'yes');
    await turn(id, 'fever');
    expect(hints()).toMatchObject({ ended: false, closing: true, expectation: 'free' });
    await event(id, { kind: 'max_duration' });
    expect(hints()).toMatchObject({ ended: true, closing: false, expectation: 'free' });
  });

  it('refuses a malformed or foreign session', async () => {
    expect(() => sessions().mediaHints(principal, 'se_x')).toThrow(expect.objectContaining({ code: 'session_not_found' }));
    expect(() => sessions().mediaHints({ ...principal, tenantId: 'someone_else' }, 'se_42')).toThrow(
      expect.objectContaining({ code: 'not_found' }),
    );
  });
});

describe('agent media settings over the API', () => {
  it('carries barge_in: false to clips, takes the media block into the digest, and explains bad values', async () => {
    const def = {
      ...minimalAgent('ag_disclaimer', 'outbound'),
      opening: [{ text: 'This call is recorded.', barge_in: false }, { text: 'Hello.' }],
      steps: [{ id: 'ok', ask: 'Is now a good time?', capture: { slot: 'good_time', type: 'yes_no' }, barge_in: false }],
    };
    const first = await t.call('PUT', '/v1/agents/ag_disclaimer', def);
    expect(first.statusCode, first.body).toBe(200);
    const o = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_disclaimer' })).json();
    expect(o.opening.clips.map((c: Record<string, unknown>) => c.barge_in)).toEqual([false, undefined, false]);
    const silence = await event(o.session_id as string, { kind: 'silence' });
    expect(silence.clips.map((c) => c.barge_in)).toEqual([undefined, false]);

    const withMedia = await t.call('PUT', '/v1/agents/ag_disclaimer', { ...def, media: { max_call_duration_s: 300 } });
    expect(withMedia.statusCode, withMedia.body).toBe(200);
    expect(withMedia.json().version).toBe(first.json().version + 1);
    expect(withMedia.json().digest).not.toBe(first.json().digest);
    expect((await t.call('PUT', '/v1/agents/ag_disclaimer', { ...def, media: { max_call_duration_s: 300 } })).json().version).toBe(
      withMedia.json().version,
    );
    const later = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_disclaimer' })).json().session_id as string;
    expect(sessions().mediaHints(principal, later).media).toMatchObject({ max_call_duration_s: 300, barge_in: true });

    const bad = await t.call('PUT', '/v1/agents/ag_disclaimer', { ...def, media: { no_speech_timeout_ms: 100 } });
    expectError(bad, 400, 'invalid_request');
    expect(bad.json().error.message).toContain('media.no_speech_timeout_ms: no_speech_timeout_ms must be at least 1000 ms');
    expect(bad.json().error.param).toBe('media.no_speech_timeout_ms');
  });
});
