/**
 * The cloud voices (src/adapters/speech/sarvam.ts, elevenlabs.ts) against their fakes over
 * loopback (src/devtools/fake-sarvam-tts.ts, fake-elevenlabs.ts): the requests on the wire, the
 * audio converted to the cache's 48 kHz mono PCM16, errors that never hold the key or the text,
 * and the speech service's cache and per-clip fallback to the embedded voice.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import util from 'node:util';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { ElevenLabsSynthesizer } from '../../src/adapters/speech/elevenlabs.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SarvamSynthesizer } from '../../src/adapters/speech/sarvam.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { SpeechError } from '../../src/adapters/speech/types.js';
import { startFakeElevenLabs, type FakeElevenLabs } from '../../src/devtools/fake-elevenlabs.js';
import { startFakeSarvam, type FakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { parseCloudVoiceId, voiceIdOf } from '../../src/domain/voice.js';
import { clipSamples, readWavInfo } from '../../src/media/wav.js';

const SARVAM_KEY = 'sk_sarvam_secret_0123456789';
const ELEVEN_KEY = 'xi_eleven_secret_0123456789';
const HINDI = 'नमस्ते, आपकी किस्त कल देय है';
const SARVAM_VOICE = voiceIdOf({ provider: 'sarvam', speaker: 'anushka', model: 'bulbul:v2' }, 'hi-IN');
const ELEVEN_VOICE = voiceIdOf({ provider: 'elevenlabs', voice_id: 'JBFqnCBsd6RMkjVDRZzb' }, 'en-IN');

let sarvam: FakeSarvam;
let eleven: FakeElevenLabs;
const dirs: string[] = [];
beforeAll(async () => {
  // The fakes speak with the tone fake at 22050 Hz and resample to the provider's rate.
  sarvam = await startFakeSarvam({ apiKey: SARVAM_KEY, voice: new FakeSynthesizer() });
  eleven = await startFakeElevenLabs({ apiKey: ELEVEN_KEY, voice: new FakeSynthesizer() });
});
afterAll(async () => {
  await Promise.all([sarvam.close(), eleven.close()]);
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});
afterEach(() => {
  sarvam.tts.requests.length = 0;
  eleven.requests.length = 0;
  sarvam.tts.slowMs = 10_000;
  eleven.slowMs = 10_000;
});

/** A speech service over the tone fake (embedded) with the two cloud voices at the fakes. */
function service(opts: { sarvamKey?: string; elevenKey?: string; only?: 'sarvam' | 'elevenlabs' } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-cloud-'));
  dirs.push(dir);
  const embedded = new FakeSynthesizer();
  const cache = new AudioCache(dir, crypto.randomBytes(32));
  const cloud = [
    new SarvamSynthesizer({ apiKey: opts.sarvamKey ?? SARVAM_KEY, baseUrl: sarvam.ttsUrl }),
    new ElevenLabsSynthesizer({ apiKey: opts.elevenKey ?? ELEVEN_KEY, baseUrl: eleven.url }),
  ].filter((c) => opts.only === undefined || c.provider === opts.only);
  return { speech: new SpeechService(embedded, cache, { timeoutMs: 2000, cloud }), embedded, cache };
}

/** The rejection of `p`, as a SpeechError. */
async function failure(p: Promise<unknown>): Promise<SpeechError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(SpeechError);
  return err as SpeechError;
}

describe('voice ids', () => {
  it('name provider, model, voice and language, with the providers’ defaults filled in', () => {
    expect(SARVAM_VOICE).toBe('sarvam/bulbul:v2/anushka/hi-IN');
    expect(voiceIdOf({ provider: 'sarvam' }, 'ta-IN')).toBe('sarvam/bulbul:v2/anushka/ta-IN');
    expect(ELEVEN_VOICE).toBe('elevenlabs/eleven_multilingual_v2/JBFqnCBsd6RMkjVDRZzb/en-IN');
    expect(voiceIdOf('hi', 'hi-IN')).toBe('hi');
    expect(parseCloudVoiceId(SARVAM_VOICE)).toEqual({ provider: 'sarvam', model: 'bulbul:v2', voice: 'anushka', language: 'hi-IN' });
    expect(parseCloudVoiceId('hi')).toBeNull();
    expect(parseCloudVoiceId('en-gb-x-rp')).toBeNull();
    expect(parseCloudVoiceId('other/m/v/en')).toBeNull();
  });
});

describe('SarvamSynthesizer against the fake', () => {
  it("sends Sarvam's request and decodes its base64 WAV at 24 kHz", async () => {
    const synth = new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: sarvam.ttsUrl });
    const audio = await synth.synthesize(HINDI, SARVAM_VOICE, { timeoutMs: 2000 });
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.samples.length).toBeGreaterThan(2400);
    const [req] = sarvam.tts.requests;
    expect(req).toMatchObject({ method: 'POST', path: '/text-to-speech', authorized: true, status: 200 });
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.body).toEqual({
      text: HINDI,
      target_language_code: 'hi-IN',
      speaker: 'anushka',
      model: 'bulbul:v2',
      speech_sample_rate: 24_000,
    });
  });

  it('maps an agent language to Sarvam’s code (or → od-IN) and refuses one bulbul lacks without a request', async () => {
    const synth = new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: sarvam.ttsUrl });
    await synth.synthesize('ନମସ୍କାର', voiceIdOf({ provider: 'sarvam' }, 'or-IN'));
    expect((sarvam.tts.requests[0]!.body as { target_language_code: string }).target_language_code).toBe('od-IN');
    const err = await failure(synth.synthesize('bonjour', voiceIdOf({ provider: 'sarvam' }, 'fr-FR')));
    expect(err.detail).toBe('unsupported_language');
    expect(sarvam.tts.requests).toHaveLength(1);
  });

  it('a wrong key is an http_403 whose message holds neither key nor text', async () => {
    const synth = new SarvamSynthesizer({ apiKey: 'sk_wrong_key_abcdef', baseUrl: sarvam.ttsUrl });
    const err = await failure(synth.synthesize(HINDI, SARVAM_VOICE));
    expect(err).toMatchObject({ reason: 'failed', detail: 'http_403' });
    expect(err.message).toMatch(/Sarvam text-to-speech at 127\.0\.0\.1:\d+ answered HTTP 403 \(invalid_api_key_error\)/);
    expect(err.message).not.toContain('sk_wrong_key_abcdef');
    expect(err.message).not.toContain(HINDI);
    expect(sarvam.tts.requests[0]!.authorized).toBe(false);
  });

  it('500, 429, malformed audio and a slow answer become failed, failed, bad_audio and timeout', async () => {
    const synth = new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: sarvam.ttsUrl });
    sarvam.tts.failNext('error500');
    expect((await failure(synth.synthesize(HINDI, SARVAM_VOICE))).detail).toBe('http_500');
    sarvam.tts.failNext('error429');
    expect((await failure(synth.synthesize(HINDI, SARVAM_VOICE))).detail).toBe('http_429');
    sarvam.tts.failNext('malformed');
    expect((await failure(synth.synthesize(HINDI, SARVAM_VOICE))).detail).toBe('bad_audio');
    sarvam.tts.failNext('slow');
    const started = Date.now();
    const slow = await failure(synth.synthesize(HINDI, SARVAM_VOICE, { timeoutMs: 200 }));
    expect(slow).toMatchObject({ reason: 'timeout', detail: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
    for (const e of [slow]) expect(e.message).not.toContain(SARVAM_KEY);
  });

  it('an unreachable API is unavailable, and a closed synthesiser refuses', async () => {
    const synth = new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: 'http://127.0.0.1:1' });
    expect(await failure(synth.synthesize(HINDI, SARVAM_VOICE))).toMatchObject({ reason: 'unavailable', detail: 'unreachable' });
    await synth.close();
    expect((await failure(synth.synthesize(HINDI, SARVAM_VOICE))).reason).toBe('unavailable');
  });
});

describe('ElevenLabsSynthesizer against the fake', () => {
  it('asks for pcm_24000 with xi-api-key and reads the raw PCM', async () => {
    const synth = new ElevenLabsSynthesizer({ apiKey: ELEVEN_KEY, baseUrl: eleven.url });
    const audio = await synth.synthesize('Your payment is due tomorrow.', ELEVEN_VOICE);
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.samples.length).toBeGreaterThan(2400);
    const [req] = eleven.requests;
    expect(req).toMatchObject({
      method: 'POST',
      path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb',
      query: { output_format: 'pcm_24000' },
      authorized: true,
      status: 200,
    });
    expect(req!.body).toEqual({ text: 'Your payment is due tomorrow.', model_id: 'eleven_multilingual_v2' });
  });

  it('a wrong key is an http_401 naming invalid_api_key, never the key; faults as for Sarvam', async () => {
    const wrong = new ElevenLabsSynthesizer({ apiKey: 'xi_wrong_key_abcdef', baseUrl: eleven.url });
    const err = await failure(wrong.synthesize('secret text 4321', ELEVEN_VOICE));
    expect(err).toMatchObject({ reason: 'failed', detail: 'http_401' });
    expect(err.message).toContain('(invalid_api_key)');
    expect(err.message).not.toContain('xi_wrong_key_abcdef');
    expect(err.message).not.toContain('4321');
    const synth = new ElevenLabsSynthesizer({ apiKey: ELEVEN_KEY, baseUrl: eleven.url });
    eleven.failNext('error429');
    expect((await failure(synth.synthesize('hello', ELEVEN_VOICE))).detail).toBe('http_429');
    eleven.failNext('error500');
    expect((await failure(synth.synthesize('hello', ELEVEN_VOICE))).detail).toBe('http_500');
    eleven.failNext('malformed');
    expect((await failure(synth.synthesize('hello', ELEVEN_VOICE))).detail).toBe('bad_audio');
    eleven.failNext('slow');
    expect((await failure(synth.synthesize('hello', ELEVEN_VOICE, { timeoutMs: 200 }))).reason).toBe('timeout');
  });

  it('refuses a rate ElevenLabs has no PCM format for', () => {
    expect(() => new ElevenLabsSynthesizer({ apiKey: ELEVEN_KEY, sampleRate: 11025 })).toThrow(RangeError);
  });
});

describe('what the cloud voices share (cloud-http.ts)', () => {
  const both = () => [
    {
      synth: new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: `${sarvam.ttsUrl}//` }),
      own: SARVAM_VOICE,
      other: ELEVEN_VOICE,
      key: SARVAM_KEY,
    },
    {
      synth: new ElevenLabsSynthesizer({ apiKey: ELEVEN_KEY, baseUrl: `${eleven.url}/` }),
      own: ELEVEN_VOICE,
      other: SARVAM_VOICE,
      key: ELEVEN_KEY,
    },
  ];
  const requests = () => sarvam.tts.requests.length + eleven.requests.length;

  it("each refuses the other's voice ids and, once closed, every call, asking no provider; the key shows in no printing of it", async () => {
    for (const { synth, other, own, key } of both()) {
      const label = synth.provider === 'sarvam' ? 'a Sarvam' : 'an ElevenLabs';
      expect(await failure(synth.synthesize('hello', other))).toMatchObject({
        reason: 'failed',
        detail: 'bad_voice',
        message: `not ${label} voice`,
      });
      expect(await failure(synth.synthesize('hello', 'espeak-ng/en'))).toMatchObject({ detail: 'bad_voice' });
      expect(JSON.stringify(synth)).not.toContain(key);
      expect(util.inspect(synth, { depth: 5, showHidden: true })).not.toContain(key);
      await synth.close();
      await synth.close();
      expect(await failure(synth.synthesize('hello', own))).toMatchObject({ reason: 'unavailable', detail: 'closed' });
    }
    expect(requests()).toBe(0);
  });

  it('each drops the trailing slashes of its base URL and sends its key in its own header', async () => {
    for (const { synth, own } of both()) await synth.synthesize(synth.provider === 'sarvam' ? HINDI : 'hello', own);
    expect(sarvam.tts.requests).toHaveLength(1);
    expect(sarvam.tts.requests[0]).toMatchObject({ path: '/text-to-speech', authorized: true });
    expect(eleven.requests).toHaveLength(1);
    expect(eleven.requests[0]).toMatchObject({ path: '/v1/text-to-speech/JBFqnCBsd6RMkjVDRZzb', authorized: true });
  });
});

describe('SpeechService with cloud voices', () => {
  it('caches a cloud clip as 48 kHz mono PCM16 under its own key; a second ask calls no provider and costs nothing', async () => {
    const { speech, embedded, cache } = service();
    const first = await speech.ensure(HINDI, SARVAM_VOICE);
    expect(first).toMatchObject({ cacheHit: false, chars: [...HINDI].length, provider: 'sarvam' });
    expect(first.fallback).toBeUndefined();
    expect(first.key).toBe(speech.keyFor(HINDI, SARVAM_VOICE));
    expect(first.key).not.toBe(speech.keyFor(HINDI, 'hi'));
    const wav = cache.read(first.key)!;
    expect(readWavInfo(wav)).toMatchObject({ sampleRate: 48_000, channels: 1, bitsPerSample: 16 });
    // 24 kHz from the provider, twice as many samples in the cache (the resampler ran).
    expect(clipSamples(wav).length).toBeGreaterThan(4800);
    expect(embedded.calls).toBe(0);
    const again = await speech.ensure(HINDI, SARVAM_VOICE);
    expect(again).toMatchObject({ key: first.key, cacheHit: true, chars: 0 });
    expect(sarvam.tts.requests).toHaveLength(1);
  });

  it('keeps voices, models and providers apart in the cache', () => {
    const { speech } = service();
    const keys = new Set([
      speech.keyFor('Hello', SARVAM_VOICE),
      speech.keyFor('Hello', voiceIdOf({ provider: 'sarvam', speaker: 'abhilash' }, 'hi-IN')),
      speech.keyFor('Hello', voiceIdOf({ provider: 'sarvam', model: 'bulbul:v1', speaker: 'anushka' }, 'hi-IN')),
      speech.keyFor('Hello', ELEVEN_VOICE),
      speech.keyFor('Hello', 'hi'),
    ]);
    expect(keys.size).toBe(5);
  });

  it('falls back to the embedded voice for a clip the provider fails, caches it under the embedded key only, and retries the provider next time', async () => {
    const { speech, embedded, cache } = service();
    sarvam.tts.failNext('error500');
    const clip = await speech.ensure(HINDI, SARVAM_VOICE);
    expect(clip).toMatchObject({ provider: 'fake', fallback: 'fallback:sarvam:http_500', cacheHit: false });
    expect(clip.key).toBe(speech.keyFor(HINDI, embedded.voiceFor('hi-IN')));
    expect(embedded.requests.map((r) => r.voice)).toEqual(['fake-hi']);
    expect(cache.has(speech.keyFor(HINDI, SARVAM_VOICE))).toBe(false);
    // The provider is asked again, and this time its clip is cached under the cloud key.
    const later = await speech.ensure(HINDI, SARVAM_VOICE);
    expect(later).toMatchObject({ provider: 'sarvam', key: speech.keyFor(HINDI, SARVAM_VOICE) });
    expect(later.fallback).toBeUndefined();
    expect(sarvam.tts.requests).toHaveLength(2);
  });

  it('names the cause of each fallback: timeout, 429, bad audio, a rejected key, no key configured', async () => {
    const { speech } = service();
    sarvam.tts.slowMs = 5000;
    sarvam.tts.failNext('slow');
    const short = new SpeechService(
      new FakeSynthesizer(),
      new AudioCache(fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-cloud-')), crypto.randomBytes(32)),
      {
        timeoutMs: 200,
        cloud: [new SarvamSynthesizer({ apiKey: SARVAM_KEY, baseUrl: sarvam.ttsUrl })],
      },
    );
    expect((await short.ensure('one', SARVAM_VOICE)).fallback).toBe('fallback:sarvam:timeout');
    eleven.failNext('error429');
    expect((await speech.ensure('two', ELEVEN_VOICE)).fallback).toBe('fallback:elevenlabs:http_429');
    eleven.failNext('malformed');
    expect((await speech.ensure('three', ELEVEN_VOICE)).fallback).toBe('fallback:elevenlabs:bad_audio');
    expect((await service({ elevenKey: 'nope' }).speech.ensure('four', ELEVEN_VOICE)).fallback).toBe('fallback:elevenlabs:http_401');
    const onlySarvam = service({ only: 'sarvam' }).speech;
    expect((await onlySarvam.ensure('five', ELEVEN_VOICE)).fallback).toBe('fallback:elevenlabs:not_configured');
    // Five requests to local fakes, each allowed its service's 2 s: on a loaded host they add up past vitest's default 5 s.
  }, 20_000);

  it('pre-synthesis counts a text that fell back as failed (with its fallback mark), and the cloud clips it made as ready', async () => {
    const { speech } = service();
    sarvam.tts.failNext('error500');
    const counts = await speech.prepare(['first line', 'second line'], SARVAM_VOICE);
    expect(counts).toEqual({ ready: 1, failed: 1, fallback: 'fallback:sarvam:http_500' });
    expect(speech.has(speech.keyFor('first line', SARVAM_VOICE)) !== speech.has(speech.keyFor('second line', SARVAM_VOICE))).toBe(true);
    expect(await speech.prepare(['first line', 'second line'], SARVAM_VOICE)).toEqual({ ready: 2, failed: 0 });
  });
});

describe('the fakes speak with the embedded engine by default', () => {
  it('answers real eSpeak NG speech at the asked rate', async (ctx) => {
    const { EspeakSynthesizer } = await import('../../src/adapters/speech/espeak.js');
    if (!(await EspeakSynthesizer.available())) ctx.skip();
    const fake = await startFakeElevenLabs({ apiKey: ELEVEN_KEY });
    try {
      const synth = new ElevenLabsSynthesizer({ apiKey: ELEVEN_KEY, baseUrl: fake.url, sampleRate: 16_000 });
      const audio = await synth.synthesize('Hello there, this is a test.', ELEVEN_VOICE, { timeoutMs: 20_000 });
      expect(audio.sampleRate).toBe(16_000);
      expect(audio.samples.length).toBeGreaterThan(8000);
      expect(Math.max(...audio.samples.map(Math.abs))).toBeGreaterThan(1000);
    } finally {
      await fake.close();
    }
  }, 30_000);
});
