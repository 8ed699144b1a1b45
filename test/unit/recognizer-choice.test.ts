/**
 * Cloud recogniser settings (src/config), the per-call choice by language
 * (src/adapters/recognizers/recognizer-choice.ts), the worker's factory (src/adapters/recognizers/recognizer-factory.ts) and
 * what `/v1/health` and the start-up notice say (src/daemon/media-runtime.ts).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadSettings } from '../../src/config/load.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer } from '../../src/media/fake-recognizer.js';
import {
  chooseRecognizer,
  describeRecognition,
  SARVAM_LANGUAGES,
  DEEPGRAM_LANGUAGES,
  settingFor,
  type RecognitionConfig,
} from '../../src/adapters/recognizers/recognizer-choice.js';
import { buildRecognizer } from '../../src/adapters/recognizers/recognizer-factory.js';
import { DeepgramRecognizer } from '../../src/adapters/recognizers/deepgram.js';
import { FallbackRecognizer } from '../../src/adapters/recognizers/fallback.js';
import { SarvamRecognizer } from '../../src/adapters/recognizers/sarvam.js';
import { SARVAM_LANGUAGES as SARVAM_ADAPTER_LANGUAGES } from '../../src/adapters/recognizers/sarvam-protocol.js';
import type { RecognizerSpec } from '../../src/media/worker-protocol.js';
import { embeddedStatus, recognitionHealth, recognitionNotice, recognizerChoice } from '../../src/daemon/media-runtime.js';
import { MediaStreams } from '../../src/daemon/media-streams.js';
import type { MediaWorkerPool } from '../../src/daemon/media-worker/worker-pool.js';
import type { Services } from '../../src/app/index.js';

const DG_KEY = 'dg-secret-7f3a9c';
const SV_KEY = 'sv-secret-41b2e8';
const env = (extra: Record<string, string>) => ({ HOME: '/srv/op', ...extra });
const installed = { available: true };
const missing = {
  available: false,
  reason: 'pocketsphinx is not installed; install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us',
};

describe('recogniser settings', () => {
  it('reads the providers, their keys and URLs and the per-language overrides from the environment', () => {
    const s = loadSettings(
      {},
      env({
        VAGENT_RECOGNIZER: 'deepgram',
        DEEPGRAM_API_KEY: DG_KEY,
        VAGENT_DEEPGRAM_URL: 'ws://127.0.0.1:9/v1/listen',
        SARVAM_API_KEY: SV_KEY,
        VAGENT_SARVAM_URL: 'ws://127.0.0.1:9/speech-to-text/ws',
        VAGENT_RECOGNIZERS: 'hi=sarvam, en-US=pocketsphinx',
      }),
    );
    expect(s.recognizer).toBe('deepgram');
    expect(s.deepgram).toEqual({ api_key: DG_KEY, url: 'ws://127.0.0.1:9/v1/listen' });
    expect(s.sarvam).toEqual({ api_key: SV_KEY, url: 'ws://127.0.0.1:9/speech-to-text/ws' });
    expect(s.recognizers).toEqual({ hi: 'sarvam', 'en-US': 'pocketsphinx' });
    // The shipped example loads, and its commented recogniser blocks are valid settings once uncommented.
    const example = fileURLToPath(new URL('../../config/vagent.example.yaml', import.meta.url));
    expect(loadSettings({ config: example }, env({})).recognizer).toBe('auto');
    const text = fs.readFileSync(example, 'utf8');
    const lines = text.split('\n');
    const from = lines.findIndex((l) => l.startsWith('# recognizers:'));
    const to = lines.findIndex((l, i) => i > from && l.startsWith('# master_key'));
    const block = lines
      .slice(from, to)
      .map((l) => l.slice(2))
      .join('\n');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-example-'));
    fs.writeFileSync(path.join(dir, 'c.yaml'), `${block}\n`);
    const uncommented = loadSettings({ config: path.join(dir, 'c.yaml') }, env({ DEEPGRAM_API_KEY: DG_KEY, SARVAM_API_KEY: SV_KEY }));
    fs.rmSync(dir, { recursive: true, force: true });
    expect(uncommented.recognizers).toEqual({ hi: 'sarvam', 'en-IN': 'deepgram' });
    expect(uncommented.sarvam).toEqual({
      api_key: SV_KEY,
      url: 'wss://api.sarvam.ai/speech-to-text/ws',
      model: 'saaras:v3',
      mode: 'codemix',
      tts_url: 'https://api.sarvam.ai',
    });
    expect(uncommented.elevenlabs).toEqual({ url: 'https://api.elevenlabs.io' });
    expect(uncommented.deepgram).toEqual({ api_key: DG_KEY, url: 'wss://api.deepgram.com/v1/listen', model: 'nova-3' });
    const d = loadSettings({}, env({}));
    expect(d.recognizer).toBe('auto');
    expect(d.recognizers).toEqual({});
  });

  it('a provider named without its key is a start-up error naming the environment variable, never echoing a key', () => {
    expect(() => loadSettings({}, env({ VAGENT_RECOGNIZER: 'deepgram' }))).toThrow(
      /deepgram\.api_key: recognizer names deepgram, but its API key is not set: export DEEPGRAM_API_KEY=/,
    );
    expect(() => loadSettings({}, env({ VAGENT_RECOGNIZERS: 'hi=sarvam', DEEPGRAM_API_KEY: DG_KEY }))).toThrow(
      /recognizers\.hi names sarvam, but its API key is not set: export SARVAM_API_KEY=/,
    );
    let message = '';
    try {
      loadSettings(
        {},
        env({
          DEEPGRAM_API_KEY: DG_KEY,
          SARVAM_API_KEY: SV_KEY,
          VAGENT_DEEPGRAM_URL: 'not a url',
          VAGENT_RECOGNIZERS: 'hi=whisper,??=sarvam',
        }),
      );
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/deepgram\.url: must be a URL .*\(from environment VAGENT_DEEPGRAM_URL\)/);
    expect(message).toMatch(
      /recognizers\.hi: must be one of auto, pocketsphinx, deepgram, sarvam, off \(from environment VAGENT_RECOGNIZERS\)/,
    );
    expect(message).toMatch(/must be a language range such as hi or en-IN/);
    expect(message).not.toContain(DG_KEY);
    expect(message).not.toContain(SV_KEY);
  });
});

describe('chooseRecognizer', () => {
  const config: RecognitionConfig = {
    recognizer: 'deepgram',
    recognizers: { hi: 'sarvam', 'en-US': 'auto', ta: 'off' },
    deepgram: { api_key: DG_KEY, model: 'nova-3' },
    sarvam: { api_key: SV_KEY, url: 'ws://127.0.0.1:9/ws', mode: 'codemix' },
  };

  it('picks the longest matching range, else the default', () => {
    expect(settingFor(config, 'hi-IN')).toEqual({ setting: 'sarvam', range: 'hi' });
    expect(settingFor({ ...config, recognizers: { hi: 'sarvam', 'hi-IN': 'deepgram', '*': 'off' } }, 'hi-in')).toEqual({
      setting: 'deepgram',
      range: 'hi-IN',
    });
    expect(settingFor({ ...config, recognizers: { '*': 'off', hi: 'sarvam' } }, 'en-IN')).toEqual({ setting: 'off', range: '*' });
    expect(settingFor(config, 'en-IN')).toEqual({ setting: 'deepgram', range: null });
  });

  it('maps settings and the agent’s language to a plain-data spec, with the embedded fallback only where it serves the language', () => {
    expect(chooseRecognizer(config, 'hi-IN', installed)).toEqual({
      kind: 'sarvam',
      options: { apiKey: SV_KEY, url: 'ws://127.0.0.1:9/ws', mode: 'codemix' },
      fallback: null,
    });
    expect(chooseRecognizer(config, 'en-IN', installed)).toEqual({
      kind: 'deepgram',
      options: { apiKey: DG_KEY, model: 'nova-3' },
      fallback: 'pocketsphinx',
    });
    expect(chooseRecognizer(config, 'en-IN', missing)).toEqual({
      kind: 'deepgram',
      options: { apiKey: DG_KEY, model: 'nova-3' },
      fallback: null,
    });
    expect(chooseRecognizer(config, 'en-US', installed)).toEqual({ kind: 'pocketsphinx' });
    expect(chooseRecognizer(config, 'en-US', missing)).toEqual({
      kind: 'off',
      reason: expect.stringContaining('pocketsphinx is not installed'),
    });
    expect(chooseRecognizer(config, 'ta-IN', installed)).toEqual({ kind: 'off', reason: 'recognizers.ta is set to off' });
    // auto: the embedded recogniser where it serves the language; Hindi is off without a cloud provider.
    expect(chooseRecognizer({ recognizer: 'auto' }, 'en-IN', installed)).toEqual({ kind: 'pocketsphinx' });
    const hi = chooseRecognizer({ recognizer: 'auto' }, 'hi-IN', installed);
    expect(hi.kind).toBe('off');
    expect((hi as { reason: string }).reason).toMatch(/speech recognition is off for hi-IN: no recogniser serves this language/);
    // Sarvam does not serve en-US: the embedded one takes it.
    expect(chooseRecognizer({ recognizer: 'sarvam', sarvam: { api_key: SV_KEY } }, 'en-US', installed)).toEqual({
      kind: 'pocketsphinx',
    });
    expect(chooseRecognizer({ recognizer: 'fake' }, 'hi-IN', missing)).toEqual({ kind: 'fake', script: [] });
    expect(() => chooseRecognizer(config, 'not a tag', installed)).toThrow(RangeError);
  });

  it('keeps its language tables in step with the adapters', () => {
    expect([...SARVAM_LANGUAGES]).toEqual([...SARVAM_ADAPTER_LANGUAGES]);
    expect([...DEEPGRAM_LANGUAGES]).toEqual([...new DeepgramRecognizer({ apiKey: 'k' }).languages]);
  });

  it('describes the recognition per language for /v1/health and the start-up notice, without keys', () => {
    const lines = describeRecognition(config, installed);
    expect(lines).toEqual([
      {
        range: '*',
        setting: 'deepgram',
        provider: 'deepgram',
        fallback: 'pocketsphinx',
        reason: 'the embedded fallback serves English only',
      },
      { range: 'hi', setting: 'sarvam', provider: 'sarvam', fallback: null },
      { range: 'en-US', setting: 'auto', provider: 'pocketsphinx', fallback: null },
      { range: 'ta', setting: 'off', provider: null, fallback: null, reason: 'recognizers.ta is set to off' },
    ]);
    const health = recognitionHealth(lines);
    expect(health).toMatchObject({ status: 'on', provider: 'deepgram' });
    expect(health.languages).toHaveLength(4);
    const notice = recognitionNotice(lines);
    expect(notice).toBe(
      'Call audio: carrier streams at /v1/media/{twilio,exotel,plivo}; speech recognition: deepgram (fallback pocketsphinx) by default; sarvam for hi; pocketsphinx for en-US; off for ta (recognizers.ta is set to off).',
    );
    for (const text of [JSON.stringify(lines), JSON.stringify(health), notice]) {
      expect(text).not.toContain(DG_KEY);
      expect(text).not.toContain(SV_KEY);
    }
    const off = describeRecognition({ recognizer: 'auto' }, missing);
    expect(recognitionHealth(off)).toMatchObject({ status: 'off', provider: null, reason: missing.reason });
    expect(recognitionNotice(off)).toMatch(/^Speech recognition is off \(pocketsphinx is not installed/);
  });

  it('requires the embedded recogniser only where a setting names it', () => {
    expect(embeddedStatus({ recognizer: 'auto', recognizers: {} }, missing)).toEqual(missing);
    expect(() => embeddedStatus({ recognizer: 'deepgram', recognizers: { 'en-US': 'pocketsphinx' } }, missing)).toThrow(
      /recognizers\.en-US is set to pocketsphinx but pocketsphinx is not installed/,
    );
    expect(embeddedStatus({ recognizer: 'pocketsphinx', recognizers: {} }, installed)).toEqual(installed);
  });
});

describe('buildRecognizer (the worker’s factory)', () => {
  const embedded = new FakeRecognizer({ provider: 'pocketsphinx', languages: ['en'] });

  it('wraps a cloud provider in a fallback recogniser: the embedded one when the spec asks, else none', () => {
    const dg = buildRecognizer(
      { kind: 'deepgram', options: { apiKey: DG_KEY, url: 'ws://127.0.0.1:9/v1/listen' }, fallback: 'pocketsphinx' },
      { embedded },
    );
    expect(dg).toBeInstanceOf(FallbackRecognizer);
    const f = dg as FallbackRecognizer;
    expect(f.primary).toBeInstanceOf(DeepgramRecognizer);
    expect(f.fallback).toBe(embedded);
    expect(f.provider).toBe('deepgram');
    const sv = buildRecognizer(
      { kind: 'sarvam', options: { apiKey: SV_KEY, mode: 'codemix' }, fallback: null },
      { embedded },
    ) as FallbackRecognizer;
    expect(sv.primary).toBeInstanceOf(SarvamRecognizer);
    expect(sv.fallback).toBeNull();
    expect(sv.provider).toBe('sarvam');
  });

  it('passes the spec’s options to the adapter, one new recogniser per call', () => {
    const seen: unknown[] = [];
    const clock = new FakeClock(0);
    const spec: RecognizerSpec = {
      kind: 'sarvam',
      options: { apiKey: SV_KEY, url: 'ws://h/ws', model: 'saaras:v3', mode: 'codemix' },
      fallback: 'pocketsphinx',
    };
    const make = () =>
      buildRecognizer(spec, {
        embedded,
        clock,
        sarvam: (o) => {
          seen.push(o);
          return new FakeRecognizer({ provider: 'sarvam' });
        },
      });
    const a = make();
    const b = make();
    expect(a).not.toBe(b);
    expect(seen).toEqual([
      { apiKey: SV_KEY, url: 'ws://h/ws', model: 'saaras:v3', mode: 'codemix', clock },
      { apiKey: SV_KEY, url: 'ws://h/ws', model: 'saaras:v3', mode: 'codemix', clock },
    ]);
  });

  it('builds the fake, the embedded and the off recognisers as before', () => {
    expect(buildRecognizer({ kind: 'pocketsphinx' }, { embedded })).toBe(embedded);
    const none = buildRecognizer({ kind: 'pocketsphinx' }, { embedded: null });
    expect(none.provider).toBe('pocketsphinx');
    const clock = new FakeClock(0);
    const off = buildRecognizer({ kind: 'off', reason: 'recognizer is set to off' }, { embedded, clock });
    const errors: string[] = [];
    off.start({ language: 'hi-IN', sampleRateHz: 16000 }).on('error', (e) => errors.push(e.message));
    return new Promise<void>((resolve) =>
      setTimeout(() => {
        expect(errors).toEqual(['none: recognizer is set to off']);
        expect(buildRecognizer({ kind: 'fake', script: [{ text: 'x' }] }, { embedded })).toBeInstanceOf(FakeRecognizer);
        resolve();
      }, 10),
    );
  });
});

describe('MediaStreams.recognizerSpec (per call, by the agent’s language)', () => {
  const log = { info: () => {}, warn: () => {}, debug: () => {} };
  const config: RecognitionConfig = {
    recognizer: 'deepgram',
    recognizers: { hi: 'sarvam' },
    deepgram: { api_key: DG_KEY },
    sarvam: { api_key: SV_KEY },
  };
  const streams = (c: RecognitionConfig) =>
    new MediaStreams({} as Services, {
      pool: {} as MediaWorkerPool,
      log,
      recognizerFor: recognizerChoice(c, installed),
    });

  it('chooses per call: a Hindi agent’s call goes to Sarvam, an English one to Deepgram with the embedded fallback', () => {
    const s = streams(config);
    expect(s.recognizerSpec('hi-IN', {})).toMatchObject({ kind: 'sarvam', fallback: null });
    expect(s.recognizerSpec('en-IN', {})).toMatchObject({ kind: 'deepgram', fallback: 'pocketsphinx' });
    expect(s.recognizerSpec('xx-not-a-tag!', {})).toMatchObject({
      kind: 'off',
      reason: expect.stringContaining('speech recognition is off'),
    });
  });

  it('fills a fake spec’s script from the stream, provider endpointing included', () => {
    const s = streams({ recognizer: 'fake' });
    const raw = JSON.stringify(['haan', { text: 'kal', end_of_utterance_after_ms: 900 }, { text: 'x', end_of_utterance_after_ms: -1 }]);
    expect(s.recognizerSpec('hi-IN', { vagent_fake_transcripts: raw })).toEqual({
      kind: 'fake',
      script: [{ text: 'haan' }, { text: 'kal', endOfUtteranceAfterMs: 900 }, { text: 'x' }],
    });
  });

  it('reads a LiveKit call context’s script (a JSON array, not its text) the same way', () => {
    const s = streams({ recognizer: 'fake' });
    expect(s.recognizerSpec('en-IN', { emi_amount: '12,500', vagent_fake_transcripts: ['yes', { text: 'no', confidence: 0.5 }] })).toEqual({
      kind: 'fake',
      script: [{ text: 'yes' }, { text: 'no', confidence: 0.5 }],
    });
    expect(s.recognizerSpec('en-IN', { vagent_fake_transcripts: 'not json' })).toEqual({ kind: 'fake', script: [] });
  });

  it('only a daemon with the fake recogniser reads the fake’s parameter', () => {
    const raw = JSON.stringify(['haan']);
    expect(streams({ recognizer: 'off' }).recognizerSpec('en-IN', { vagent_fake_transcripts: raw })).toEqual({
      kind: 'off',
      reason: 'recognizer is set to off',
    });
    expect(streams(config).recognizerSpec('hi-IN', { vagent_fake_transcripts: raw })).toMatchObject({ kind: 'sarvam' });
  });
});
