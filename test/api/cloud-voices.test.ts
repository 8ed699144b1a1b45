/**
 * Per-agent cloud voices through the real services (docs/agents.md "Voice"): an agent with a
 * Sarvam voice is validated, pre-synthesised once in that voice through the fake Sarvam API,
 * and its turns charge only live text at Sarvam's price; a second session calls no provider; a
 * clip Sarvam fails is spoken by the embedded voice, priced as such and traced
 * (`{layer: 'tts', result: 'miss', detail: 'fallback:sarvam:http_500'}`), and a later turn asks
 * Sarvam again. A failing cloud voice says why in the agent's `audio.failure` (no key, an HTTP
 * status, with the fix) and is told to the daemon's listener at most once per provider and reason
 * a window; a Sarvam speaker not of the model is refused naming the model's speakers.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SarvamSynthesizer } from '../../src/adapters/speech/sarvam.js';
import { SpeechService, type FallbackNotice } from '../../src/adapters/speech/synthesis.js';
import { startFakeSarvam, type FakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { SARVAM_SPEAKERS, voiceFailureMessage, voiceIdOf } from '../../src/domain/voice.js';
import { makeTestApp, minimalAgent, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';

const KEY = 'sk_sarvam_api_test_key';
let sarvam: FakeSarvam;
let t: TestApp | undefined;
const dirs: string[] = [];
beforeAll(async () => {
  sarvam = await startFakeSarvam({ apiKey: KEY, voice: new FakeSynthesizer({ msPerChar: 5 }) });
});
afterAll(async () => {
  await sarvam.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  await t?.close();
  t = undefined;
  sarvam.tts.requests.length = 0;
  sarvam.tts.clearFaults();
});

function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-voices-'));
  dirs.push(d);
  return d;
}

/** A test app whose speech has the tone fake as the embedded engine and Sarvam at the fake; ₹1/char embedded, ₹2/char Sarvam. */
async function app(): Promise<TestApp> {
  const dir = tmp();
  const pricing = path.join(dir, 'pricing.yaml');
  fs.writeFileSync(pricing, 'tts:\n  fake: { per_1k_chars: 1000 }\n  sarvam: { per_1k_chars: 2000 }\n');
  const speech = new SpeechService(new FakeSynthesizer({ msPerChar: 5 }), new AudioCache(path.join(dir, 'audio'), crypto.randomBytes(32)), {
    timeoutMs: 2000,
    cloud: [new SarvamSynthesizer({ apiKey: KEY, baseUrl: sarvam.ttsUrl })],
  });
  return makeTestApp({ pricing_file: pricing }, { speech });
}

/** The clinic example agent as `ag_clinic_sarvam`, speaking with a Sarvam voice. */
async function applySarvamClinic(app: TestApp): Promise<void> {
  const def = (await app.call('GET', '/v1/agents/ag_clinic_booking')).json().definition as Record<string, unknown>;
  const res = await app.call('PUT', '/v1/agents/ag_clinic_sarvam', {
    ...def,
    id: 'ag_clinic_sarvam',
    voice: { provider: 'sarvam', speaker: 'anushka', model: 'bulbul:v2' },
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

type Turn = {
  cost: { tts_inr: number };
  session_totals: { tts_chars: number };
  trace: { steps: Array<Record<string, unknown>> };
  cache_hit: boolean;
};

async function nameTurn(app: TestApp, text: string): Promise<Turn> {
  const s = (await app.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_sarvam' })).json();
  expect(s.opening.clips.every((c: { audio_url: string | null }) => c.audio_url !== null)).toBe(true);
  return (await app.call('POST', `/v1/sessions/${s.session_id}/turn`, { text })).json() as Turn;
}

const ttsSteps = (turn: Turn) => turn.trace.steps.filter((s) => s.layer === 'tts');

describe('an agent with a Sarvam voice', () => {
  it(
    'is pre-synthesised once in that voice, charges live text at Sarvam’s price, and a second session calls no provider',
    { timeout: 30_000 },
    async () => {
      t = await app();
      await applySarvamClinic(t);
      await t.runtime.services.agents.presynthesizeAll();
      const statics = sarvam.tts.requests.length;
      expect(statics).toBeGreaterThan(3); // the agent's static lines, each once
      expect(sarvam.tts.requests.every((r) => r.authorized && (r.body as { speaker: string }).speaker === 'anushka')).toBe(true);
      await t.runtime.services.agents.presynthesizeAll();
      expect(sarvam.tts.requests).toHaveLength(statics); // once per voice: nothing again

      const live = await nameTurn(t, 'My name is Asha Rao');
      expect(live.cache_hit).toBe(false);
      expect(live.session_totals.tts_chars).toBeGreaterThan(0);
      expect(live.cost.tts_inr).toBe(2 * live.session_totals.tts_chars); // ₹2 per character, Sarvam's price
      expect(ttsSteps(live)).toEqual([]);
      const afterFirst = sarvam.tts.requests.length;
      expect(afterFirst).toBeGreaterThan(statics);

      const second = await nameTurn(t, 'My name is Asha Rao');
      expect(second.cost.tts_inr).toBe(0);
      expect(second.session_totals.tts_chars).toBe(0);
      expect(sarvam.tts.requests).toHaveLength(afterFirst);
    },
  );

  it(
    'falls back to the embedded voice for a clip Sarvam fails, says so in the trace, and asks Sarvam again on a later turn',
    { timeout: 30_000 },
    async () => {
      t = await app();
      await applySarvamClinic(t);
      await t.runtime.services.agents.presynthesizeAll();
      sarvam.tts.failNext('error500', 5);
      const failed = await nameTurn(t, 'My name is Meera Iyer');
      expect(ttsSteps(failed).length).toBeGreaterThan(0);
      for (const step of ttsSteps(failed)) expect(step).toEqual({ layer: 'tts', result: 'miss', detail: 'fallback:sarvam:http_500' });
      expect(failed.cost.tts_inr).toBe(failed.session_totals.tts_chars); // ₹1 per character: the embedded engine's price
      const events = (await t.call('GET', '/v1/events?types=session.turn')).json().data as Array<{ data: { tts_fallbacks?: string[] } }>;
      expect(events.at(-1)!.data.tts_fallbacks).toEqual(ttsSteps(failed).map((x) => x.detail));

      sarvam.tts.clearFaults();
      const before = sarvam.tts.requests.length;
      const retried = await nameTurn(t, 'My name is Meera Iyer');
      expect(sarvam.tts.requests.length).toBeGreaterThan(before);
      expect(ttsSteps(retried)).toEqual([]);
      expect(retried.cost.tts_inr).toBe(2 * retried.session_totals.tts_chars);
      const later = (await t.call('GET', '/v1/events?types=session.turn')).json().data as Array<{ data: Record<string, unknown> }>;
      expect(later.at(-1)!.data).not.toHaveProperty('tts_fallbacks');
    },
  );
});

describe('the voice field', () => {
  it('takes the embedded voice as text (old files stay valid) and validates cloud voices with the field path', async () => {
    t = await app();
    const base = minimalAgent('ag_voice_test');
    expect((await t.call('PUT', '/v1/agents/ag_voice_test', { ...base, voice: 'en' })).statusCode).toBeLessThan(300);
    expect(
      (await t.call('PUT', '/v1/agents/ag_voice_test', { ...base, voice: { provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' } }))
        .statusCode,
    ).toBeLessThan(300);
    const bad = async (voice: unknown, language = 'en-IN') =>
      expectError(
        await t!.call('PUT', '/v1/agents/ag_voice_bad', { ...base, id: 'ag_voice_bad', language, voice }),
        400,
        'invalid_request',
      );
    expect((await bad({ provider: 'azure', speaker: 'x' })).message).toMatch(/provider: sarvam/);
    expect((await bad({ provider: 'elevenlabs' })).param).toBe('voice.voice_id');
    expect((await bad({ provider: 'sarvam', voice_id: 'abc' })).param).toBe('voice.voice_id');
    expect((await bad({ provider: 'sarvam', speaker: '../../etc' })).param).toBe('voice.speaker');
    expect((await bad({ provider: 'sarvam', speaker: 'anushka', pace: 2 })).message).toMatch(/pace/);
    const nobody = await bad({ provider: 'sarvam', speaker: 'nobody' });
    expect(nobody.param).toBe('voice.speaker');
    expect(nobody.message).toMatch(/nobody is not a speaker of Sarvam's bulbul:v2; its speakers are anushka, manisha, .*hitesh/);
    expect((await bad({ provider: 'sarvam', speaker: 'meera', model: 'bulbul:v2' })).param).toBe('voice.speaker');
    for (const speaker of SARVAM_SPEAKERS['bulbul:v2']!)
      expect(
        (await t.call('PUT', '/v1/agents/ag_voice_test', { ...base, voice: { provider: 'sarvam', speaker } })).statusCode,
      ).toBeLessThan(300);
    // Another model's speakers are the provider's business.
    expect(
      (await t.call('PUT', '/v1/agents/ag_voice_test', { ...base, voice: { provider: 'sarvam', speaker: 'meera', model: 'bulbul:v1' } }))
        .statusCode,
    ).toBeLessThan(300);
    const lang = await bad({ provider: 'sarvam' }, 'fr-FR');
    expect(lang.param).toBe('voice.provider');
    expect(lang.message).toMatch(/do not speak fr-FR.*hi-IN/);
    expect((await bad('')).param).toBe('voice');
    expect((await t.call('GET', '/v1/agents/ag_voice_bad')).statusCode).toBe(404);
  });
});

describe('a failing cloud voice', () => {
  it('says why pre-synthesis failed in the agent\u2019s audio status, with the fix', { timeout: 30_000 }, async () => {
    t = await app();
    const def = (await t.call('GET', '/v1/agents/ag_clinic_booking')).json().definition as Record<string, unknown>;
    const put = async (id: string, voice: unknown) =>
      expect((await t!.call('PUT', `/v1/agents/${id}`, { ...def, id, voice })).statusCode).toBeLessThan(300);
    // ElevenLabs is not configured in this app: no key on the daemon, said at once by the PUT.
    const warned = await t.call('PUT', '/v1/agents/ag_clinic_el', {
      ...def,
      id: 'ag_clinic_el',
      voice: { provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' },
    });
    expect(warned.json().warnings).toEqual([
      {
        param: 'voice.provider',
        message: 'elevenlabs has no API key on the daemon (set ELEVENLABS_API_KEY); the embedded voice speaks its lines instead',
      },
    ]);
    await t.runtime.services.agents.presynthesizeAll();
    const el = (await t.call('GET', '/v1/agents/ag_clinic_el')).json().audio;
    expect(el.failed).toBeGreaterThan(0);
    expect(el.failure).toBe('voice: elevenlabs has no API key on the daemon (set ELEVENLABS_API_KEY)');

    sarvam.tts.failNext('error500', 1000);
    await put('ag_clinic_sv', { provider: 'sarvam', speaker: 'karun' });
    await t.runtime.services.agents.presynthesizeAll();
    sarvam.tts.clearFaults();
    const sv = (await t.call('GET', '/v1/agents/ag_clinic_sv')).json().audio;
    expect(sv.failed).toBeGreaterThan(0);
    expect(sv.failure).toMatch(/^voice: sarvam answered 500 /);
    expect(JSON.stringify(sv)).not.toContain(KEY);

    // A healthy voice has no failure, and a configured provider no warning.
    const fine = await t.call('PUT', '/v1/agents/ag_clinic_fine', { ...def, id: 'ag_clinic_fine', voice: { provider: 'sarvam' } });
    expect(fine.json()).not.toHaveProperty('warnings');
    await applySarvamClinic(t);
    await t.runtime.services.agents.presynthesizeAll();
    expect((await t.call('GET', '/v1/agents/ag_clinic_sarvam')).json().audio).not.toHaveProperty('failure');
  });

  it('tells the listener once per provider and reason within the window, counting the rest', async () => {
    const dir = tmp();
    const notices: FallbackNotice[] = [];
    const speech = new SpeechService(
      new FakeSynthesizer({ msPerChar: 1 }),
      new AudioCache(path.join(dir, 'audio'), crypto.randomBytes(32)),
      {
        cloud: [new SarvamSynthesizer({ apiKey: 'wrong_key', baseUrl: sarvam.ttsUrl })],
        onFallback: (n) => notices.push(n),
        fallbackNoticeMs: 60_000,
      },
    );
    try {
      const el = voiceIdOf({ provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' }, 'en-IN');
      const sv = voiceIdOf({ provider: 'sarvam', speaker: 'anushka' }, 'hi-IN');
      for (const text of ['one', 'two', 'three']) {
        expect((await speech.ensure(text, el)).fallback).toBe('fallback:elevenlabs:not_configured');
        expect((await speech.ensure(text, sv)).fallback).toBe('fallback:sarvam:http_403');
      }
      expect(notices).toEqual([
        { provider: 'elevenlabs', reason: 'not_configured', suppressed: 0 },
        { provider: 'sarvam', reason: 'http_403', suppressed: 0 },
      ]);
      expect(JSON.stringify(notices)).not.toMatch(/wrong_key|one|two|three/);
      const fast = new SpeechService(new FakeSynthesizer({ msPerChar: 1 }), speech.cache, {
        onFallback: (n) => notices.push(n),
        fallbackNoticeMs: 150,
      });
      notices.length = 0;
      for (const text of ['four', 'five', 'six']) await fast.ensure(text, el);
      await new Promise((r) => setTimeout(r, 200));
      await fast.ensure('seven', el);
      expect(notices).toEqual([
        { provider: 'elevenlabs', reason: 'not_configured', suppressed: 0 },
        { provider: 'elevenlabs', reason: 'not_configured', suppressed: 2 },
      ]);
      expect(voiceFailureMessage('fallback:sarvam:http_403')).toBe('sarvam refused the API key (HTTP 403; check SARVAM_API_KEY)');
      expect(voiceFailureMessage('fallback:sarvam:http_400')).toBe('sarvam answered 400 (check voice.speaker and voice.model)');
      expect(voiceFailureMessage('fallback:elevenlabs:unreachable')).toMatch(/cannot reach elevenlabs .*VAGENT_ELEVENLABS_URL/);
      expect(voiceFailureMessage('nonsense')).toBeNull();
    } finally {
      await speech.close();
    }
  });
});
