/**
 * Sessions when things go wrong or cost money: a synthesiser that crashes or hangs, tenancy
 * (audit vs enforce), costs from the price list, and the audio route.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readWavInfo } from '../../src/media/wav.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const FAQ_AGENT = {
  name: 'FAQ only',
  direction: 'inbound',
  language: 'en-IN',
  opening: [{ text: 'Hello.' }],
  steps: [{ id: 'q', ask: 'What is your name?', capture: { slot: 'name', type: 'person_name' } }],
  faq: [{ intent: 'fees', keywords: ['fees'], answer: 'Five hundred rupees.' }],
  closing: 'Bye.',
};

describe('a synthesiser that fails', () => {
  for (const mode of ['crash', 'hang'] as const) {
    it(`${mode}: the turn is answered without audio, and the daemon keeps serving`, async () => {
      const speech = testSpeech('ok', 300);
      t = await makeTestApp({}, { speech });
      const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
      speech.fake.mode = mode;
      const r = await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Zubin Irani' });
      expect(r.statusCode).toBe(200);
      const body = r.json();
      expect(body.clips[0].is_readback).toBe(true);
      expect(body.clips[0].audio_url).toBeNull();
      expect(body.audio_url).toBeNull();
      expect(body.cache_hit).toBe(false);
      expect(body.text).toContain('Zubin Irani');
      // Cached clips still play; the daemon still answers.
      speech.fake.mode = 'ok';
      const next = await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'yes' });
      expect(next.statusCode).toBe(200);
      expect(next.json().clips.every((c: { audio_url: string | null }) => c.audio_url !== null)).toBe(true);
      expect((await t.call('GET', '/v1/health', undefined, { key: null })).statusCode).toBe(200);
    });
  }
});

describe('tenancy of sessions', () => {
  it("enforce: another tenant's session is not_found and unchanged", async () => {
    t = await makeTestApp({ auth_mode: 'enforce' }, { speech: testSpeech() });
    const keyB = t.tenantKey('acme');
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'hi' }, { key: keyB }), 404, 'not_found');
    expectError(await t.call('GET', `/v1/sessions/${s.session_id}`, undefined, { key: keyB }), 404, 'not_found');
    expectError(await t.call('POST', `/v1/sessions/${s.session_id}/end`, undefined, { key: keyB }), 404, 'not_found');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' }, { key: keyB }), 404, 'not_found');
    expect((await t.call('GET', `/v1/sessions/${s.session_id}`)).json().turns).toEqual([]);
  });

  it("audit: another tenant's session resolves and the access is audited", async () => {
    t = await makeTestApp({ auth_mode: 'audit' }, { speech: testSpeech() });
    const keyB = t.tenantKey('acme');
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
    expect((await t.call('GET', `/v1/sessions/${s.session_id}`, undefined, { key: keyB })).statusCode).toBe(200);
    const events = t.runtime.services.tenants.listAudit(100, 'acme');
    expect(events.some((e) => e.resource_id === s.session_id && e.owner_tenant_id === 'default')).toBe(true);
  });
});

describe('costs', () => {
  it('prices STT from telemetry and live TTS characters; totals are exact sums', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-pricing-'));
    const pricing = path.join(dir, 'pricing.yaml');
    fs.writeFileSync(pricing, 'tts:\n  fake: { per_1k_chars: 0.3 }\nstt:\n  deepgram: { per_minute: 0.7 }\n');
    t = await makeTestApp({ pricing_file: pricing }, { speech: testSpeech() });
    await t.call('PUT', '/v1/agents/ag_faq', FAQ_AGENT);
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_faq' })).json();
    // The totals start at what the open cost (its live synthesis, if any; docs/api-decisions.md "Costs").
    let sum = Math.round(s.cost.total_inr * 1e6);
    for (let i = 0; i < 30; i++) {
      const r = (
        await t.call('POST', `/v1/sessions/${s.session_id}/turn`, {
          text: 'what are the fees?',
          stt_provider: 'deepgram',
          stt_ms: 1000,
          silence_ms: 100,
        })
      ).json();
      // 1.1 s at ₹0.70 a minute = ₹0.012833 (rounded to the micro-rupee)
      expect(r.cost.stt_inr).toBe(0.012833);
      expect(r.cost.llm_inr).toBe(0);
      sum += Math.round(r.cost.total_inr * 1e6);
      expect(Math.round(r.session_totals.total_inr * 1e6)).toBe(sum);
    }
    const unknown = (
      await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'fees?', stt_provider: 'nobody', stt_ms: 5000 })
    ).json();
    expect(unknown.cost.stt_inr).toBe(0);
    const end = (await t.call('POST', `/v1/sessions/${s.session_id}/end`)).json();
    const detail = (await t.call('GET', `/v1/sessions/${s.session_id}`)).json();
    expect(end.cost.total_inr).toBe(detail.total_cost_inr);
    expect(detail.stt_cost_inr).toBe(0.38499); // 30 × 12 833 µ₹
    expect(detail.stt_seconds).toBeCloseTo(30 * 1.1 + 5, 6);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('charges live synthesis only: cache hits are free', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-pricing-'));
    const pricing = path.join(dir, 'pricing.yaml');
    fs.writeFileSync(pricing, 'tts:\n  fake: { per_1k_chars: 1000 }\n');
    t = await makeTestApp({ pricing_file: pricing }, { speech: testSpeech() });
    await t.runtime.services.agents.presynthesizeAll(); // as the daemon does at start-up
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
    expect(s.opening.clips.length).toBeGreaterThan(0);
    const live = (await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Asha Rao' })).json();
    expect(live.cache_hit).toBe(false);
    expect(live.session_totals.tts_chars).toBeGreaterThan(0);
    expect(live.cost.tts_inr).toBe(live.session_totals.tts_chars); // ₹1 per character
    const repeat = (await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'repeat please' })).json();
    expect(repeat.cost.tts_inr).toBe(0);
    expect(repeat.clips.every((c: { audio_url: string | null }) => c.audio_url)).toBe(true);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('GET /v1/audio/{name}.wav', () => {
  it('serves a 48 kHz mono WAV without auth, and 404 for anything else', async () => {
    t = await makeTestApp({}, { speech: testSpeech() });
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
    const url = new URL(s.opening.clips[0].audio_url);
    const res = await t.app.inject({ method: 'GET', url: url.pathname });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('audio/wav');
    const info = readWavInfo(res.rawPayload);
    expect(info).toMatchObject({ sampleRate: 48_000, channels: 1, bitsPerSample: 16 });
    expect(info.durationMs).toBeGreaterThan(100);
    for (const bad of ['0'.repeat(64) + '.wav', 'abc.wav', '..%2F..%2Fvagent.db', `${'a'.repeat(64)}.mp3`]) {
      expectError(await t.app.inject({ method: 'GET', url: `/v1/audio/${bad}` }), 404, 'not_found');
    }
  });
});

describe('a session across a restart', () => {
  it('continues where it was, from the turn log', async () => {
    t = await makeTestApp({}, { speech: testSpeech() });
    const s = (
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', context: { now: '2026-11-21T10:00:00+05:30' } })
    ).json();
    await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Priya Sharma' });
    await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'yes' });
    // A second runtime on the same state dir (as after a daemon restart) has nothing cached.
    const { openRuntime } = await import('../../src/daemon/runtime.js');
    const { buildApp } = await import('../../src/http/app.js');
    const settings = t.settings;
    await t.app.close();
    t.runtime.close();
    const runtime = openRuntime(settings, { speech: testSpeech() });
    const app = await buildApp({
      services: runtime.services,
      bodyLimitBytes: settings.body_limit_bytes,
      logger: false,
      version: 'test',
    });
    const call = (method: 'GET' | 'POST', url: string, body?: object) =>
      app.inject({ method, url, headers: { authorization: `Bearer ${t!.key}` }, ...(body ? { payload: body } : {}) });
    try {
      const r = (await call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'tomorrow' })).json();
      expect(r.state.cursor).toBe('day');
      expect(r.session_totals.turns).toBe(3);
      await call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'yes' });
      const end = (await call('POST', `/v1/sessions/${s.session_id}/end`)).json();
      expect(end.summary.extracted).toEqual({ patient_name: 'Priya Sharma', visit_date: '2026-11-22' });
      expect((await call('GET', `/v1/sessions/${s.session_id}`)).json().turns).toHaveLength(4);
    } finally {
      await app.close();
      runtime.close();
      fs.rmSync(settings.state_dir, { recursive: true, force: true });
      t = undefined;
    }
  });
});

describe('a turn whose write fails part-way', () => {
  it('keeps nothing of it (no log row, no stored response, the session unmoved), and the same request then succeeds', async () => {
    t = await makeTestApp({}, { speech: testSpeech() });
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' })).json();
    const { repos } = t.runtime.services;
    // The turn row is written, then storing the response fails: the turn commits without a
    // savepoint of its own, so its whole batch must go.
    const spy = vi.spyOn(repos.idempotency, 'put').mockImplementationOnce(() => {
      throw new Error('disk full at /var/secret');
    });
    const headers = { 'idempotency-key': 'turn-1' };
    const failed = await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Priya Sharma' }, { headers });
    expectError(failed, 500, 'internal_error');
    expect(failed.body).not.toContain('secret');
    expect(spy).toHaveBeenCalledTimes(1);
    expect(repos.idempotency.get('default', 'turn-1')).toBeUndefined();
    expect((await t.call('GET', `/v1/sessions/${s.session_id}`)).json().turns).toEqual([]);

    const ok = (await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'My name is Priya Sharma' }, { headers })).json();
    expect(ok.session_totals.turns).toBe(1); // the failed attempt left the session in memory as it was
    expect((await t.call('GET', `/v1/sessions/${s.session_id}`)).json().turns).toHaveLength(1);
    expect(repos.idempotency.get('default', 'turn-1')).toMatchObject({ state: 'done', status: 200 });
  });
});

describe('a hostile or malformed context', () => {
  const count = (app: TestApp) => app.runtime.services.repos.store.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get() as number;
  /** JSON text of `fields` plus a `context` nested `levels` deep, built without recursion (JSON.stringify would overflow). */
  const deepBody = (fields: Record<string, unknown>, levels: number) =>
    JSON.stringify({ ...fields, context: 0 }).replace(/0\}$/, `${'{"a":'.repeat(levels - 1)}{}${'}'.repeat(levels - 1)}}`);
  const headers = { 'content-type': 'application/json' };

  it('context.now that is not an ISO 8601 time is invalid_request on context.now, checked before the agent', async () => {
    t = await makeTestApp({}, { speech: testSpeech() });
    for (const now of ['x', 'tomorrow', '2026-13-45T00:00:00Z', 1_780_000_000, false]) {
      for (const agent of ['ag_clinic_booking', 'ag_nope']) {
        const open = expectError(
          await t.call('POST', '/v1/sessions', { agent_id: agent, context: { now } }),
          400,
          'invalid_request',
          'context.now',
        );
        expect(open.message).toBe('context.now must be an ISO 8601 time such as 2026-11-21T10:30:00+05:30');
        expectError(await t.call('POST', `/v1/agents/${agent}/load`, { context: { now } }), 400, 'invalid_request', 'context.now');
      }
    }
    expect(count(t)).toBe(0);
    expect((await t.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking', context: { now: null } })).statusCode).toBe(201);
  });

  it('a context nested 100 000 levels deep is invalid_request, not a crash, and opens nothing', async () => {
    t = await makeTestApp({}, { speech: testSpeech() });
    const deep = deepBody({ agent_id: 'ag_clinic_booking' }, 100_000);
    expect(deep.length).toBeLessThan(t.settings.body_limit_bytes);
    const err = expectError(await t.call('POST', '/v1/sessions', deep, { headers }), 400, 'invalid_request', 'context');
    expect(err.message).toBe('context is nested too deeply: at most 32 levels');
    expectError(
      await t.call('POST', '/v1/agents/ag_clinic_booking/load', deepBody({}, 100_000), { headers }),
      400,
      'invalid_request',
      'context',
    );
    expectError(
      await t.call('POST', '/v1/sessions', deepBody({ agent_id: 'ag_clinic_booking' }, 33), { headers }),
      400,
      'invalid_request',
      'context',
    );
    expect(count(t)).toBe(0);
    const ok = await t.call('POST', '/v1/sessions', deepBody({ agent_id: 'ag_clinic_booking' }, 32), { headers });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(count(t)).toBe(1);
  });
});
