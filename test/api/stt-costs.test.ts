/**
 * Speech-recognition costs on a phone call (`stt_inr` per turn and in totals; the budget counts it:
 * docs/media.md "Cloud speech recognition"): turns heard by Deepgram, Sarvam and the embedded
 * fallback, through the media-calls service as the media worker sends them, priced by the provider
 * that heard each one from the shipped config/pricing.yaml (deepgram ₹0.37/min, sarvam ₹0.5/min,
 * pocketsphinx free), exact to the micro-rupee, and counted by the tenant's daily budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TurnRequest, TurnTelemetry } from '../../src/media/call-session-port.js';
import { makeTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
let tenantId: string;
beforeAll(async () => {
  t = await makeTestApp({ tenant_daily_budget_inr: 1 });
  const steps = ['one', 'two', 'three', 'four'].map((id) => ({
    id,
    ask: `Question ${id}?`,
    capture: { slot: id, type: 'yes_no' },
  }));
  const put = await t.call('PUT', '/v1/agents/ag_stt_costs', {
    id: 'ag_stt_costs',
    name: 'STT costs',
    direction: 'inbound',
    language: 'hi-IN',
    opening: [{ text: 'Namaste.' }],
    steps,
    closing: 'Dhanyavaad.',
  });
  expect([200, 201]).toContain(put.statusCode);
  tenantId = t.runtime.services.tenants.authenticate(t.key)!.tenantId;
});
afterAll(() => t.close());

const speech = (text: string, provider: string, audioMs: number): TurnRequest => {
  const telemetry: TurnTelemetry = {
    stt_provider: provider,
    stt_ms: 120,
    stt_confidence: 0.9,
    silence_ms: 700,
    audio_ms: audioMs,
  };
  return { kind: 'speech', text, telemetry, heard: null };
};

describe('stt_inr of a phone call', () => {
  it('prices each turn by the provider that heard it, exact to the micro-rupee, and the budget counts the total', async () => {
    const media = t.runtime.services.media;
    const opened = await media.open(tenantId, {
      dialect: 'twilio',
      carrierCallId: 'CAstt1',
      from: '+919800000001',
      to: '+912240000000',
      params: { agent_id: 'ag_stt_costs' },
    });
    const n = opened.n;
    // 90 s by Deepgram: 90 000 × 0.37 / 60 000 = ₹0.555 exactly.
    await media.turn(tenantId, n, speech('yes', 'deepgram', 90_000));
    // 7.25 s by Sarvam: 7 250 × 0.5 / 60 000 = ₹0.0604166… → 60 417 µ₹ (rounded once, per turn).
    await media.turn(tenantId, n, speech('haan', 'sarvam', 7_250));
    // 3.2 s by the embedded fallback after a cloud failure: free.
    await media.turn(tenantId, n, speech('yes', 'pocketsphinx', 3_200));

    const res = await t.call('GET', `/v1/sessions/se_${n}`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    const turns = (body.turns as Array<{ stt_provider: string | null; cost: { stt_inr: number } }>).filter((x) => x.stt_provider !== null);
    expect(turns.map((x) => [x.stt_provider, x.cost.stt_inr])).toEqual([
      ['deepgram', 0.555],
      ['sarvam', 0.060417],
      ['pocketsphinx', 0],
    ]);
    expect(body.stt_cost_inr).toBe(0.615417);
    expect(body.stt_seconds).toBe(100.45);

    await media.ended(tenantId, n);
    // The day's spend is the session's cost (nothing else cost anything here: no speech engine, no LLM).
    const status = t.runtime.services.budget.status(tenantId);
    expect(status.spent_inr).toBe(body.total_cost_inr);
    expect(status.spent_inr).toBeGreaterThanOrEqual(0.615417);
    expect(() => t.runtime.services.budget.check(tenantId)).not.toThrow();

    // A second call's 90 s of Deepgram takes the day past the ₹1 budget: speech recognition alone.
    const second = await media.open(tenantId, {
      dialect: 'twilio',
      carrierCallId: 'CAstt2',
      from: '+919800000001',
      to: '+912240000000',
      params: { agent_id: 'ag_stt_costs' },
    });
    await media.turn(tenantId, second.n, speech('yes', 'deepgram', 90_000));
    await media.ended(tenantId, second.n);
    const after = t.runtime.services.budget.status(tenantId);
    expect(after.spent_inr).toBe(Math.round((status.spent_inr + 0.555) * 1e6) / 1e6);
    expect(() => t.runtime.services.budget.check(tenantId)).toThrow(/reached its daily budget of ₹1/);
  });
});
