/**
 * Cloud synthesis outside a turn is metered and charged (docs/api-decisions.md "Costs"), against
 * the fake Sarvam API at a fractional price (₹1.2345 per 1,000 characters, so a micro-rupee
 * rounding shows) and the fake ElevenLabs API: a session's open pays for the live text of its opening and the session's own
 * prompts (the customer's name) — in the open response, the `session.opened` event, the session
 * row written with it, Session detail (`session.opening`), the running totals and the tenant's
 * spend, read back the same after a restart — checked against the budget before anything is
 * synthesised, and an idempotent replay charges nothing again. On a call, a streamed model reply's first sentence played early is the
 * reply's first clip, synthesised once, and charged to its turn with the rest.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { ElevenLabsSynthesizer } from '../../src/adapters/speech/elevenlabs.js';
import { SarvamSynthesizer } from '../../src/adapters/speech/sarvam.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { EarlyClip } from '../../src/app/early-reply.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { INTERNAL } from '../../src/app/unit-of-work.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../../src/devtools/fake-elevenlabs.js';
import { startFakeSarvam, type FakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { priceMicro } from '../../src/domain/money.js';
import type { ClipRef } from '../../src/media/worker-protocol.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { ScriptedModel } from '../helpers/scripted-model.js';

const KEY = 'sk_sarvam_open_cost_key';
/** Sarvam's test price, ₹ per 1,000 characters. */
const PER_1K = 1.2345;
let sarvam: FakeSarvam;
let eleven: FakeElevenLabs;
let t: TestApp | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  sarvam = await startFakeSarvam({ apiKey: KEY, voice: new FakeSynthesizer({ msPerChar: 1 }) });
  eleven = await startFakeElevenLabs({ apiKey: KEY, voice: new FakeSynthesizer({ msPerChar: 1 }) });
});
afterAll(async () => {
  await sarvam.close();
  await eleven.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  await t?.close();
  t = undefined;
  sarvam.tts.requests.length = 0;
  sarvam.tts.clearFaults();
  eleven.requests.length = 0;
});

/** A test app whose embedded engine is free and whose Sarvam voice costs ₹1.2345 per 1,000 characters. */
async function app(model?: ScriptedModel): Promise<TestApp> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-open-cost-'));
  dirs.push(dir);
  const pricing = path.join(dir, 'pricing.yaml');
  fs.writeFileSync(pricing, 'tts:\n  fake: { per_1k_chars: 0 }\n  sarvam: { per_1k_chars: 1.2345 }\n  elevenlabs: { per_1k_chars: 8.5 }\n');
  const speech = new SpeechService(new FakeSynthesizer({ msPerChar: 1 }), new AudioCache(path.join(dir, 'audio'), crypto.randomBytes(32)), {
    timeoutMs: 5000,
    cloud: [
      new SarvamSynthesizer({ apiKey: KEY, baseUrl: sarvam.ttsUrl }),
      new ElevenLabsSynthesizer({ apiKey: KEY, baseUrl: eleven.url }),
    ],
  });
  return makeTestApp({ pricing_file: pricing }, { speech, ...(model ? { languageModel: model, llmDeadlineMs: 2000 } : {}) });
}

const AGENT = {
  id: 'ag_open_cost',
  name: 'Open cost',
  direction: 'outbound',
  language: 'en-IN',
  voice: { provider: 'sarvam', speaker: 'anushka' },
  opening: [{ text: 'Hello {{customer_name}}, this is Sunrise Clinic.' }, { text: 'Is now a good time?', requires_user_input: true }],
  steps: [
    {
      id: 'ok',
      ask: 'Is now a good time?',
      reprompt: 'Please say yes or no, {{customer_name}}.',
      capture: { slot: 'good_time', type: 'yes_no' },
    },
  ],
  closing: 'Thank you, {{customer_name}}. Goodbye.',
};

/** The agent applied and its static lines synthesised (as the daemon does after `agent apply`). */
async function applied(app: TestApp, def: Record<string, unknown> = AGENT): Promise<void> {
  const res = await app.call('PUT', `/v1/agents/${String(def.id)}`, def);
  expect(res.statusCode, res.body).toBeLessThan(300);
  await app.runtime.services.agents.presynthesizeAll();
}

/** The texts Sarvam was asked to speak since request `from`. */
const askedSince = (from: number): string[] => sarvam.tts.requests.slice(from).map((r) => String((r.body as { text: string }).text));
/** µ₹ of `texts` at Sarvam's price: characters summed, priced and rounded once. */
const priceOf = (texts: string[]): number =>
  priceMicro(
    texts.reduce((n, x) => n + [...x].length, 0),
    PER_1K,
    1000,
  );
const inr = (micro: number) => micro / 1e6;
const cost = (micro: number) => ({ llm_inr: 0, tts_inr: inr(micro), stt_inr: 0, total_inr: inr(micro) });

type Opened = { session_id: string; cost: Record<string, number> };

describe('the open of a session with a cloud voice', () => {
  it(
    'charges its live text (the opening with the name, the prompts that say it) exactly, everywhere the session’s cost shows',
    { timeout: 30_000 },
    async () => {
      t = await app();
      await applied(t);
      const from = sarvam.tts.requests.length;
      const res = await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Asha Rao' });
      expect(res.statusCode, res.body).toBe(201);
      const opened = res.json<Opened>();
      // The opening's line with the name, the re-prompt and the closing that say it: each once.
      const asked = askedSince(from);
      expect(asked).toHaveLength(3);
      expect(asked.every((x) => x.includes('Asha Rao'))).toBe(true);
      const micro = priceOf(asked);
      expect(micro % 1000).not.toBe(0); // a price that needs rounding to the micro-rupee
      expect(opened.cost).toEqual(cost(micro));
      const chars = asked.reduce((n, x) => n + [...x].length, 0);

      const event = (await t.call('GET', '/v1/events?types=session.opened')).json().data.at(-1) as { data: Record<string, unknown> };
      expect(event.data.cost).toEqual(cost(micro));
      // Written with the session's row, in the open's one write step.
      const n = Number(opened.session_id.slice(3));
      const row = t.runtime.services.repos.sessions.get(n)!;
      expect(JSON.parse(row.metrics)).toMatchObject({
        cost: { llm: 0, tts: micro, stt: 0 },
        opening_cost: { tts: micro },
        tts_chars: chars,
      });
      const tenant = 'default';
      expect(t.runtime.services.budget.status(tenant).spent_inr).toBe(inr(micro));

      const detail = (await t.call('GET', `/v1/sessions/${opened.session_id}`)).json();
      expect(detail).toMatchObject({ tts_cost_inr: inr(micro), total_cost_inr: inr(micro), tts_chars: chars, live_tts_calls: 0 });
      expect(detail.session.opening).toEqual({ tts_chars: chars, cost: cost(micro) });

      // The prompts with the name were synthesised with the open: the turns find them cached.
      const turn = (await t.call('POST', `/v1/sessions/${opened.session_id}/turn`, { text: 'maybe' })).json();
      expect(turn.text).toContain('Please say yes or no, Asha Rao.');
      expect(turn.cost.tts_inr).toBe(0);
      expect(turn.session_totals).toMatchObject({ tts_inr: inr(micro), total_inr: inr(micro), tts_chars: chars });
      const last = (await t.call('POST', `/v1/sessions/${opened.session_id}/turn`, { text: 'yes' })).json();
      expect(last.text).toContain('Thank you, Asha Rao. Goodbye.');
      expect(last.cost.tts_inr).toBe(0);
      expect(askedSince(from)).toHaveLength(3);
      const end = (await t.call('POST', `/v1/sessions/${opened.session_id}/end`)).json();
      expect(end.cost).toEqual(cost(micro));
      const ended = (await t.call('GET', `/v1/sessions/${opened.session_id}`)).json();
      // The totals are the open's cost plus the turns' costs, to the micro-rupee.
      const turnsMicro = (ended.turns as Array<{ cost: { total_inr: number } }>).reduce(
        (s, x) => s + Math.round(x.cost.total_inr * 1e6),
        0,
      );
      expect(Math.round(ended.total_cost_inr * 1e6)).toBe(micro + turnsMicro);
      expect(t.runtime.services.budget.status(tenant).spent_inr).toBe(inr(micro));
      const listed = (await t.call('GET', '/v1/sessions')).json().data[0];
      expect(listed.cost).toEqual(cost(micro));

      // Another session with the same name finds every text cached: its open costs nothing.
      const again = (await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Asha Rao' })).json<Opened>();
      expect(again.cost).toEqual(cost(0));
      expect(askedSince(from)).toHaveLength(3);
      expect((await t.call('GET', `/v1/sessions/${again.session_id}`)).json().session.opening).toEqual({ tts_chars: 0, cost: cost(0) });
    },
  );

  it('is read back after a restart from the session row it was written with', { timeout: 30_000 }, async () => {
    t = await app();
    await applied(t);
    const opened = (await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Ravi Kumar' })).json<Opened>();
    const micro = Math.round(opened.cost.tts_inr! * 1e6);
    expect(micro).toBeGreaterThan(0);
    // A second runtime on the same state dir, as after the daemon stopped hard: nothing in memory.
    const settings = t.settings;
    await t.app.close();
    t.runtime.close();
    t = undefined;
    const speech = new SpeechService(
      new FakeSynthesizer({ msPerChar: 1 }),
      new AudioCache(path.join(settings.state_dir, 'audio2'), crypto.randomBytes(32)),
    );
    const runtime = openRuntime(settings, { speech });
    try {
      const principal = { tenantId: 'default', keyId: 'test', requestId: 'test', method: 'GET', route: '/v1/sessions/:id' };
      const detail = runtime.services.sessions.detail(principal, opened.session_id);
      expect(detail).toMatchObject({ tts_cost_inr: inr(micro), total_cost_inr: inr(micro) });
      expect(detail.session.opening.cost).toEqual(cost(micro));
      expect(runtime.services.budget.status('default').spent_inr).toBe(inr(micro));
    } finally {
      runtime.close();
      fs.rmSync(settings.state_dir, { recursive: true, force: true });
    }
  });

  it('is charged once when replayed under its Idempotency-Key', { timeout: 30_000 }, async () => {
    t = await app();
    await applied(t);
    const from = sarvam.tts.requests.length;
    const headers = { 'idempotency-key': 'open-meera-1' };
    const body = { agent_id: AGENT.id, customer_name: 'Meera Iyer' };
    const first = await t.call('POST', '/v1/sessions', body, { headers });
    expect(first.statusCode).toBe(201);
    const micro = priceOf(askedSince(from));
    expect(micro).toBeGreaterThan(0);
    const second = await t.call('POST', '/v1/sessions', body, { headers });
    expect(second.statusCode).toBe(201);
    expect(second.body).toBe(first.body);
    expect(askedSince(from)).toHaveLength(3);
    expect(t.runtime.services.budget.status('default').spent_inr).toBe(inr(micro));
    expect((await t.call('GET', '/v1/sessions')).json().data).toHaveLength(1);
  });

  it(
    'is refused by the tenant’s budget before anything is synthesised, when its worst cost would pass it',
    { timeout: 30_000 },
    async () => {
      t = await app();
      await applied(t);
      const from = sarvam.tts.requests.length;
      const first = (await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Asha Rao' })).json<Opened>();
      const spent = Math.round(first.cost.total_inr! * 1e6);
      const asked = sarvam.tts.requests.length;
      // Room for less than another name's synthesis.
      t.runtime.services.tenants.setBudget('default', inr(spent + 20_000));
      const refused = await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Kavya Nair' });
      const err = expectError(refused, 429, 'rate_limit_exceeded');
      expect(err.message).toMatch(/would pass its daily budget of ₹0\.\d+ .*this would cost up to ₹0\.\d+ more/);
      expect(sarvam.tts.requests).toHaveLength(asked); // nothing synthesised, nothing spent
      expect((await t.call('GET', '/v1/sessions')).json().data).toHaveLength(1);
      expect(t.runtime.services.budget.status('default').spent_inr).toBe(inr(spent));
      // The refusal's event has a write of its own, queued by the refusal: wait for it.
      let events: unknown[] = [];
      for (let i = 0; i < 50 && events.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        events = (await t.call('GET', '/v1/events?types=budget.*')).json().data;
      }
      expect(events).toHaveLength(1);
      // An open whose texts are all cached costs nothing and is not refused.
      expect((await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Asha Rao' })).statusCode).toBe(201);
      // With the room, the same open goes ahead and costs at most its worst case.
      t.runtime.services.tenants.setBudget('default', 1);
      const ok = (await t.call('POST', '/v1/sessions', { agent_id: AGENT.id, customer_name: 'Kavya Nair' })).json<Opened>();
      expect(ok.cost.tts_inr).toBe(inr(priceOf(askedSince(asked))));
      expect(askedSince(from)).toHaveLength(6);
    },
  );

  it('with an ElevenLabs voice is charged at its price', { timeout: 30_000 }, async () => {
    t = await app();
    await applied(t, { ...AGENT, id: 'ag_open_eleven', voice: { provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' } });
    const from = eleven.requests.length;
    const opened = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_open_eleven', customer_name: 'Asha Rao' })).json<Opened>();
    const asked = eleven.requests.slice(from).map((r) => String((r.body as { text: string }).text));
    expect(asked).toHaveLength(3);
    const chars = asked.reduce((n, x) => n + [...x].length, 0);
    expect(opened.cost).toEqual(cost(priceMicro(chars, 8.5, 1000)));
    expect(sarvam.tts.requests).toHaveLength(0);
  });

  it('with a free voice costs nothing and leaves the session’s prompts to after the open', { timeout: 30_000 }, async () => {
    t = await app();
    const { voice: _voice, ...free } = AGENT;
    await applied(t, { ...free, id: 'ag_open_free' });
    const opened = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_open_free', customer_name: 'Asha Rao' })).json<Opened>();
    expect(opened.cost).toEqual(cost(0));
    expect(sarvam.tts.requests).toHaveLength(0);
  });
});

describe('a streamed model reply played early on a call', () => {
  const CLINIC = {
    ...AGENT,
    id: 'ag_open_cost_llm',
    direction: 'inbound',
    opening: [{ text: 'Namaste, Sunrise Clinic.' }],
    steps: [{ id: 'day', ask: 'Which day would you like to come in?', capture: { slot: 'visit_date', type: 'date' }, max_attempts: 5 }],
    closing: 'Goodbye!',
    llm: { model: 'gpt-4o-mini', instructions: 'Sunrise Clinic takes cash, card and UPI.' },
  };
  const FIRST = 'Yes, we take UPI at the desk.';
  const REST = 'Cards and cash are fine too.';
  const principal = { tenantId: 'default', keyId: 'media', requestId: 'media', method: 'GET', route: '/v1/media' };

  it('is the reply’s first clip, synthesised once with the rest, and its turn pays for both', { timeout: 30_000 }, async () => {
    const model = new ScriptedModel();
    t = await app(model);
    await applied(t, CLINIC);
    const id = (await t.call('POST', '/v1/sessions', { agent_id: CLINIC.id })).json<Opened>().session_id;
    model.script({ text: `${FIRST} ${REST}`, usage: { promptTokens: 100, completionTokens: 20 } });
    const from = sarvam.tts.requests.length;
    const sent: ClipRef[] = [];
    const early = new EarlyClip(t.runtime.services.speech, (c) => sent.push(c));
    const done = await t.runtime.services.sessions.turn(principal, id, { text: 'do you take UPI?', phone: true }, INTERNAL, early.sink);
    if (done.replayed) throw new Error('not replayed');
    const turn = done.value;
    // Sarvam spoke the sentence and the rest, never the whole reply again.
    expect(askedSince(from)).toEqual([FIRST, REST]);
    expect(turn.text).toBe(`${FIRST} ${REST} Which day would you like to come in?`);
    expect(turn.clips.map((c) => [c.text, (c as { source?: string }).source])).toEqual([
      [FIRST, 'llm'],
      [REST, 'llm'],
      ['Which day would you like to come in?', 'reprompt'],
    ]);
    expect(turn.clips.every((c) => c.audio_url !== null)).toBe(true);
    const micro = priceOf([FIRST, REST]);
    expect(turn.cost.tts_inr).toBe(inr(micro));
    expect(turn.session_totals.tts_chars).toBe([...FIRST].length + [...REST].length);
    // The line heard the sentence early, then the rest and the question.
    expect(sent.map((c) => c.text)).toEqual([FIRST]);
    const after = await early.finish(turn.clips, (c) => ({ file: c.audio_url, text: c.text, bargeIn: true, asksConfirmation: false }));
    expect(after.map((c) => c.text)).toEqual([REST, 'Which day would you like to come in?']);
    const stored = (await t.call('GET', `/v1/sessions/${id}`)).json();
    expect(stored.turns.at(-1)).toMatchObject({ tts_chars: [...FIRST].length + [...REST].length, live_tts_calls: 2 });
    expect(stored.tts_cost_inr).toBe(inr(micro));
  });

  it('is charged to its turn when the whole reply is then refused and the re-prompt follows it', { timeout: 30_000 }, async () => {
    const model = new ScriptedModel();
    t = await app(model);
    await applied(t, CLINIC);
    const id = (await t.call('POST', '/v1/sessions', { agent_id: CLINIC.id })).json<Opened>().session_id;
    model.script({ text: `${FIRST} ${'And there is much more to say about it. '.repeat(16)}` });
    const from = sarvam.tts.requests.length;
    const sent: ClipRef[] = [];
    const early = new EarlyClip(t.runtime.services.speech, (c) => sent.push(c));
    const done = await t.runtime.services.sessions.turn(principal, id, { text: 'do you take UPI?', phone: true }, INTERNAL, early.sink);
    if (done.replayed) throw new Error('not replayed');
    const turn = done.value;
    expect(turn.trace.layer).not.toBe('llm');
    expect(turn.text).not.toContain('UPI');
    expect(sent.map((c) => c.text)).toEqual([FIRST]);
    const asked = askedSince(from);
    expect(asked[0]).toBe(FIRST);
    expect(turn.cost.tts_inr).toBe(inr(priceOf(asked)));
    expect(turn.cost.tts_inr).toBeGreaterThanOrEqual(inr(priceOf([FIRST])));
    const after = await early.finish(turn.clips, (c) => ({ file: c.audio_url, text: c.text, bargeIn: true, asksConfirmation: false }));
    expect(after.map((c) => c.text)).toEqual(turn.clips.map((c) => c.text));
  });
});
