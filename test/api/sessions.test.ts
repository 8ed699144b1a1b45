/**
 * Sessions over the API (`TurnResultSchema`, `SessionDetailSchema`, `EndResultSchema` in
 * src/contract/sessions.ts; docs/api-decisions.md "Sessions", "Errors"): every error code of the
 * session endpoints, close-grace, summary.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

let t: TestApp;
let clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;

beforeAll(async () => {
  t = await makeTestApp({}, { speech: testSpeech(), nowS: () => clock });
});
afterAll(async () => t.close());

async function open(body: Record<string, unknown> = { agent_id: 'ag_clinic_booking' }) {
  const res = await t.call('POST', '/v1/sessions', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as {
    session_id: string;
    opening: { text: string; clips: Array<Record<string, unknown>> };
    state: Record<string, unknown>;
  };
}
async function turn(id: string, text: string, extra: Record<string, unknown> = {}) {
  const res = await t.call('POST', `/v1/sessions/${id}/turn`, { text, ...extra });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe('POST /v1/sessions', () => {
  it('opens a session with opening clips in display order', async () => {
    const s = await open({ agent_id: 'ag_clinic_booking', customer_name: 'Priya', context: { clinic: 'Sunrise' } });
    expect(s.session_id).toMatch(/^se_[1-9][0-9]*$/);
    expect(s.opening.clips.length).toBeGreaterThanOrEqual(2);
    s.opening.clips.forEach((c, i) => {
      expect(c.display_order).toBe(i);
      expect(typeof c.requires_user_input).toBe('boolean');
      expect(c.audio_url).toMatch(/\/v1\/audio\/[0-9a-f]{64}\.wav$/);
      expect(c.livekit_wav_url).toBe(c.audio_url);
    });
    expect(s.opening.clips.at(-1)!.requires_user_input).toBe(true);
    expect(s.state).toMatchObject({ cursor: 'name', step_done: false, slots: {} });
  });

  it('is the same as POST /v1/agents/{id}/load', async () => {
    const res = await t.call('POST', '/v1/agents/ag_clinic_booking/load', { customer_name: 'Ravi' });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({
      agent_id: 'ag_clinic_booking',
      agent: { id: 'ag_clinic_booking', direction: 'inbound', language: 'en-IN' },
    });
    const bare = await t.call('POST', '/v1/agents/ag_clinic_booking/load');
    expect(bare.statusCode).toBe(201);
  });

  it('rejects bad bodies and ids with the spec codes', async () => {
    expectError(await t.call('POST', '/v1/sessions', {}), 400, 'invalid_request');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', context: [] }), 400, 'invalid_request');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', context: 'x' }), 400, 'invalid_request');
    expectError(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', context: { now: 'tomorrow' } }),
      400,
      'invalid_request',
    );
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', customer_phone: '98765' }), 400, 'invalid_request');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'clinic' }), 404, 'workflow_not_found');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_' + 'x'.repeat(65) }), 404, 'workflow_not_found');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_nobody' }), 404, 'not_found');
    expectError(await t.call('POST', '/v1/agents/Bad-Id/load', {}), 404, 'workflow_not_found');
  });

  it('replays an identical request with the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'open-1' };
    const a = await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' }, { headers });
    const b = await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' }, { headers });
    expect(b.headers['idempotency-replayed']).toBe('true');
    expect(b.json().session_id).toBe(a.json().session_id);
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_emi_reminder' }, { headers }), 422, 'idempotency_key_reuse');
  });
});

describe('POST /v1/sessions/{id}/turn', () => {
  it('rejects malformed, missing and foreign sessions and bad text', async () => {
    const s = await open();
    expectError(await t.call('POST', '/v1/sessions/123/turn', { text: 'hi' }), 404, 'session_not_found');
    expectError(await t.call('POST', '/v1/sessions/se_abc/turn', { text: 'hi' }), 404, 'session_not_found');
    expectError(await t.call('POST', '/v1/sessions/se_99999999999999999/turn', { text: 'hi' }), 404, 'session_not_found');
    expectError(await t.call('POST', '/v1/sessions/se_42/turn', { text: 'hi' }), 404, 'not_found');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, {}), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: '' }), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: '   ' }), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 42 }), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'x'.repeat(4001) }), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'hi', stt_ms: -1 }), 400, 'invalid_request');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'hi', stt_confidence: 'high' }), 400, 'invalid_request');
    // Nothing was changed by the rejected turns.
    const detail = (await t.call('GET', `/v1/sessions/${s.session_id}`)).json();
    expect(detail.turns).toHaveLength(0);
  });

  it('returns every field of the turn result', async () => {
    const s = await open();
    const r = await turn(s.session_id, 'My name is Priya Sharma', {
      stt_confidence: 0.93,
      stt_provider: 'deepgram',
      stt_ms: 1200,
      silence_ms: 300,
    });
    expect(r).toMatchObject({
      session_id: s.session_id,
      ended: false,
      state: { cursor: 'name', slots: {} },
      trace: { llm_used: false },
    });
    expect(typeof r.text).toBe('string');
    expect(typeof r.spoken_text).toBe('string');
    expect(r.clips.some((c: { is_readback?: boolean }) => c.is_readback)).toBe(true);
    expect(Object.keys(r.trace.latency_ms).sort()).toEqual(['classifier', 'llm', 'stt', 'total', 'tts']);
    expect(r.trace.latency_ms.llm).toBeNull();
    expect(r.trace.latency_ms.stt).toBe(1200);
    expect(r.trace.layer).toBe('capture');
    expect(Array.isArray(r.trace.steps)).toBe(true);
    expect(Object.keys(r.cost).sort()).toEqual(['llm_inr', 'stt_inr', 'total_inr', 'tts_inr']);
    expect(r.session_totals).toMatchObject({ turns: 1, llm_calls: 0, llm_input_tokens: 0, llm_output_tokens: 0 });
    expect(r.state.step_progress).toMatchObject({ done: 0, total: 5, pct: 0 });
  });

  it('books an appointment end to end with readbacks and canonical values', async () => {
    const s = await open({ agent_id: 'ag_clinic_booking', context: { now: '2026-11-21T10:00:00+05:30' } });
    const id = s.session_id;
    let r = await turn(id, 'My name is Priya Sharma');
    expect(r.text).toContain('Priya Sharma');
    r = await turn(id, 'yes');
    expect(r.state.step_progress.steps.name).toBe('done');
    expect(r.state.cursor).toBe('day');
    r = await turn(id, 'tomorrow');
    expect(r.clips[0].is_readback).toBe(true);
    r = await turn(id, 'haan');
    expect(r.state.cursor).toBe('time');
    r = await turn(id, 'what are your fees?');
    expect(r.trace.layer).toBe('faq');
    expect(r.clips.map((c: { intent_key?: string }) => c.intent_key)).toEqual(['fees', 'fees']);
    r = await turn(id, 'half past ten in the morning');
    r = await turn(id, 'yes that is right');
    expect(r.state.cursor).toBe('phone');
    r = await turn(id, 'nine eight seven six five four three two one zero');
    const digits = r.clips
      .filter((c: { is_digit?: boolean }) => c.is_digit)
      .map((c: { text: string }) => c.text)
      .join('');
    expect(digits).toBe('9876543210');
    expect(r.clips.at(-1).is_confirm_prompt).toBe(true);
    r = await turn(id, 'no, it is 9876543211');
    expect(
      r.clips
        .filter((c: { is_digit?: boolean }) => c.is_digit)
        .map((c: { text: string }) => c.text)
        .join(''),
    ).toBe('9876543211');
    r = await turn(id, 'correct');
    expect(r.state.cursor).toBe('reason');
    r = await turn(id, 'fever and cough since two days');
    expect(r.ended).toBe(false);
    expect(r.state.cursor).toBe('$closing');
    const end = await t.call('POST', `/v1/sessions/${id}/end`);
    expect(end.statusCode).toBe(200);
    expect(end.json()).toMatchObject({
      session_id: id,
      ended: true,
      summary: {
        outcome: 'completed',
        extracted: {
          patient_name: 'Priya Sharma',
          visit_date: '2026-11-22',
          visit_time: '10:30',
          phone: '9876543211',
          visit_reason: 'fever and cough since two days',
        },
        tool_calls: [],
      },
    });
    expect(end.json().summary.steps).toEqual(expect.arrayContaining([{ id: 'phone', status: 'done', attempts: 0 }]));
  });
});

describe('close-grace', () => {
  async function toClosing() {
    const s = await open({ agent_id: 'ag_clinic_booking' });
    await turn(s.session_id, 'bye');
    return s.session_id;
  }

  it('hears the next turn inside the window with ended true, then refuses', async () => {
    const id = await toClosing();
    const r = await turn(id, 'thank you');
    expect(r.ended).toBe(true);
    expectError(await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello?' }), 409, 'session_already_ended');
  });

  it('the goodbye turn itself has ended false', async () => {
    const s = await open({ agent_id: 'ag_clinic_booking' });
    const r = await turn(s.session_id, 'goodbye');
    expect(r.ended).toBe(false);
    expect(r.trace.layer).toBe('control:goodbye');
  });

  it('closes when the window lapses', async () => {
    const id = await toClosing();
    clock += 9; // past the 8 s default window
    expectError(await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'still there?' }), 409, 'session_already_ended');
    const end = (await t.call('POST', `/v1/sessions/${id}/end`)).json();
    expect(end.ended).toBe(true);
  });

  it('refuses a turn after /end, and /end again returns the same result', async () => {
    const s = await open();
    await turn(s.session_id, 'Priya');
    const a = await t.call('POST', `/v1/sessions/${s.session_id}/end`);
    expect(a.json().summary.outcome).toBe('abandoned');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'hello' }), 409, 'session_already_ended');
    const b = await t.call('POST', `/v1/sessions/${s.session_id}/end`);
    expect(b.statusCode).toBe(200);
    expect(b.json()).toEqual(a.json());
  });
});

describe('GET /v1/sessions/{id} and /end errors', () => {
  it('reports every metric with a bare integer id and no slots, ended_at or status', async () => {
    const s = await open();
    await turn(s.session_id, 'Priya Sharma', { silence_ms: 250, stt_ms: 800 });
    const res = await t.call('GET', `/v1/sessions/${s.session_id}`);
    expect(res.statusCode).toBe(200);
    const d = res.json();
    expect(d.session_id).toBe(Number(s.session_id.slice(3)));
    for (const k of [
      'cache_hits',
      'live_tts_calls',
      'llm_calls',
      'llm_input_tokens',
      'llm_output_tokens',
      'llm_cached_tokens',
      'tts_chars',
    ])
      expect(Number.isInteger(d[k]), k).toBe(true);
    for (const k of [
      'total_cost_inr',
      'llm_cost_inr',
      'tts_cost_inr',
      'stt_cost_inr',
      'stt_seconds',
      'cache_hit_percent',
      'live_tts_percent',
      'avg_latency_ms',
      'total_latency_ms',
      'total_silence_ms',
    ])
      expect(typeof d[k], k).toBe('number');
    expect(d.stt_seconds).toBeCloseTo(1.05, 6);
    expect(d.total_silence_ms).toBe(250);
    expect(d.turns).toHaveLength(1);
    expect(d).not.toHaveProperty('slots');
    expect(d).not.toHaveProperty('ended_at');
    expect(d).not.toHaveProperty('status');
  });

  it('uses session_not_found for malformed ids and not_found for unknown ones', async () => {
    expectError(await t.call('GET', '/v1/sessions/nope'), 404, 'session_not_found');
    expectError(await t.call('GET', '/v1/sessions/se_0'), 404, 'session_not_found');
    expectError(await t.call('GET', '/v1/sessions/se_7'), 404, 'not_found');
    expectError(await t.call('POST', '/v1/sessions/nope/end'), 404, 'session_not_found');
    expectError(await t.call('POST', '/v1/sessions/se_7/end'), 404, 'not_found');
  });
});
