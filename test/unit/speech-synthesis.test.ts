/**
 * The fake synthesiser (src/adapters/speech/fake.ts) and the speech service (src/adapters/speech/synthesis.ts):
 * cache hits without synthesis, deduplicated concurrent misses, bounded pre-synthesis, and
 * engine failures surfacing as SpeechError.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { renderCachedClips, renderClips } from '../../src/app/clips.js';
import { NoSpeech } from '../../src/app/speech-port.js';
import { SpeechError } from '../../src/adapters/speech/types.js';
import { readWavInfo } from '../../src/media/wav.js';

/** The install's audio secret of these tests. */
const SECRET = crypto.randomBytes(32);

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-speech-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

describe('FakeSynthesizer', () => {
  it('makes deterministic tone audio proportional to the text', async () => {
    const fake = new FakeSynthesizer();
    const a = await fake.synthesize('hello there', 'fake-en');
    const b = await fake.synthesize('hello there', 'fake-en');
    const long = await fake.synthesize('hello there, a much longer sentence', 'fake-en');
    expect(a.sampleRate).toBe(22050);
    expect(Array.from(a.samples)).toEqual(Array.from(b.samples));
    expect(a.samples.length).toBe(Math.round(11 * 60 * 22.05));
    expect(long.samples.length).toBeGreaterThan(a.samples.length * 3);
    expect(a.samples.some((s) => Math.abs(s) > 1000)).toBe(true);
    expect(fake.calls).toBe(3);
    expect(fake.requests[0]).toEqual({ text: 'hello there', voice: 'fake-en', timeoutMs: undefined });
    expect(fake.voiceFor('hi-IN')).toBe('fake-hi');
    expect(fake.provider).toBe('fake');
  });

  it('crashes, fails, hangs until the time limit, and refuses after close', async () => {
    const fake = new FakeSynthesizer({ mode: 'crash' });
    await expect(fake.synthesize('x', 'v')).rejects.toMatchObject({ name: 'SpeechError', reason: 'crashed' });
    fake.mode = 'fail';
    await expect(fake.synthesize('x', 'v')).rejects.toMatchObject({ reason: 'failed' });
    fake.mode = 'hang';
    await expect(fake.synthesize('x', 'v', { timeoutMs: 20 })).rejects.toMatchObject({ reason: 'timeout' });
    fake.mode = 'ok';
    await fake.close();
    await expect(fake.synthesize('x', 'v')).rejects.toMatchObject({ reason: 'unavailable' });
    expect(fake.calls).toBe(4);
  });
});

describe('SpeechService', () => {
  const make = (fake = new FakeSynthesizer(), concurrency?: number) =>
    new SpeechService(fake, new AudioCache(root, SECRET), { timeoutMs: 50, prepareTimeoutMs: 70, concurrency });

  it('synthesises a miss once, stores a 48 kHz WAV, then serves hits for free', async () => {
    const fake = new FakeSynthesizer();
    const speech = make(fake);
    const first = await speech.ensure('May I have your name?', 'fake-en');
    expect(first).toEqual({ key: speech.keyFor('May I have your name?', 'fake-en'), cacheHit: false, chars: 21 });
    expect(speech.has(first.key)).toBe(true);
    const info = readWavInfo(fs.readFileSync(speech.fileOf(speech.nameOf(first.key))!));
    expect(info).toMatchObject({ sampleRate: 48000, channels: 1, bitsPerSample: 16 });
    expect(info.durationMs).toBeCloseTo(21 * 60, -1);
    const again = await speech.ensure('May I have your name?', 'fake-en');
    expect(again).toEqual({ key: first.key, cacheHit: true, chars: 0 });
    expect(fake.calls).toBe(1);
    expect(speech.provider).toBe('fake');
    expect(speech.voiceFor('en-IN')).toBe('fake-en');
  });

  it('counts characters as code points', async () => {
    const speech = make();
    expect((await speech.ensure('नमस्ते', 'fake-hi')).chars).toBe(6);
  });

  it('merges concurrent identical requests into one synthesis', async () => {
    const fake = new FakeSynthesizer({ delayMs: 5 });
    const speech = make(fake);
    const results = await Promise.all([1, 2, 3].map(() => speech.ensure('same text', 'fake-en')));
    expect(fake.calls).toBe(1);
    expect(new Set(results.map((r) => r.key)).size).toBe(1);
    expect(results.map((r) => r.chars).sort()).toEqual([0, 0, 9]);
  });

  it('passes engine failures on as SpeechError and caches nothing', async () => {
    const fake = new FakeSynthesizer({ mode: 'crash' });
    const speech = make(fake);
    const err = await speech.ensure('x', 'fake-en').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpeechError);
    expect((err as SpeechError).reason).toBe('crashed');
    fake.mode = 'hang';
    await expect(speech.ensure('x', 'fake-en')).rejects.toMatchObject({ reason: 'timeout' });
    expect(speech.has(speech.keyFor('x', 'fake-en'))).toBe(false);
    expect(speech.fileOf(speech.nameOf(speech.keyFor('x', 'fake-en')))).toBeNull();
    fake.mode = 'ok';
    expect((await speech.ensure('x', 'fake-en')).cacheHit).toBe(false);
  });

  it('wraps non-speech errors (a bad sample rate) as SpeechError failed', async () => {
    const broken = new FakeSynthesizer({ sampleRate: 0 });
    await expect(make(broken).ensure('x', 'fake-en')).rejects.toMatchObject({ name: 'SpeechError', reason: 'failed' });
  });

  it('prepares many texts with bounded concurrency, once each, reporting progress', async () => {
    const fake = new FakeSynthesizer({ delayMs: 2 });
    let running = 0;
    let peak = 0;
    const original = fake.synthesize.bind(fake);
    fake.synthesize = async (...args) => {
      running += 1;
      peak = Math.max(peak, running);
      try {
        return await original(...args);
      } finally {
        running -= 1;
      }
    };
    const speech = make(fake, 2);
    const texts = ['a', 'b', 'c', 'd', 'e', 'a', 'b'];
    const progress: Array<[number, number]> = [];
    const result = await speech.prepare(texts, 'fake-en', { onProgress: (done, total) => progress.push([done, total]) });
    expect(result).toEqual({ ready: 5, failed: 0 });
    expect(fake.calls).toBe(5);
    expect(peak).toBe(2);
    expect(progress.at(-1)).toEqual([5, 5]);
    expect(progress).toHaveLength(5);
    expect(await speech.prepare(texts, 'fake-en')).toEqual({ ready: 5, failed: 0 });
    expect(fake.calls).toBe(5);
  });

  it('prepare never rejects: failures and hangs are counted', async () => {
    const fake = new FakeSynthesizer({ mode: 'crash' });
    const speech = make(fake);
    expect(await speech.prepare(['a', 'b'], 'fake-en')).toEqual({ ready: 0, failed: 2 });
    fake.mode = 'hang';
    expect(await speech.prepare(['c'], 'fake-en')).toEqual({ ready: 0, failed: 1 });
    expect(await speech.prepare([], 'fake-en')).toEqual({ ready: 0, failed: 0 });
  });

  it('prepare starts no text once its signal aborts, and settles the ones under way', async () => {
    const fake = new FakeSynthesizer({ delayMs: 20 });
    const speech = make(fake, 1);
    const stop = new AbortController();
    const run = speech.prepare(['a', 'b', 'c'], 'fake-en', { signal: stop.signal });
    expect(fake.calls).toBe(1); // 'a' is under way
    stop.abort();
    expect(await run).toEqual({ ready: 1, failed: 0 });
    expect(fake.calls).toBe(1);
    expect(speech.has(speech.keyFor('a', 'fake-en'))).toBe(true);
    expect(await speech.prepare(['d'], 'fake-en', { signal: stop.signal })).toEqual({ ready: 0, failed: 0 });
    expect(fake.calls).toBe(1);
  });

  it('gives live synthesis its time limit and background pre-synthesis its own', async () => {
    const fake = new FakeSynthesizer();
    const speech = make(fake);
    await speech.ensure('live', 'fake-en');
    await speech.prepare(['background'], 'fake-en');
    expect(fake.requests.map((r) => r.timeoutMs)).toEqual([50, 70]);
  });

  it('combines cached clips and closes the engine', async () => {
    const fake = new FakeSynthesizer();
    const speech = make(fake);
    const a = await speech.ensure('one', 'fake-en');
    const b = await speech.ensure('two', 'fake-en');
    const ab = await speech.combine([a.key, b.key]);
    expect(readWavInfo(fs.readFileSync(speech.fileOf(speech.nameOf(ab))!)).durationMs).toBeCloseTo(180 + 150 + 180, -1);
    await speech.close();
    expect(fake.closed).toBe(true);
  });
});

describe('reply clips (app/clips.ts)', () => {
  const make = (fake = new FakeSynthesizer()) => new SpeechService(fake, new AudioCache(root, SECRET), { timeoutMs: 50 });
  const specs = [
    { text: 'The fee is ₹500.', flags: { source: 'faq' } },
    { text: 'May I have your name?', flags: {} },
  ];
  const base = 'http://127.0.0.1:7000';

  it('serves a reply whose clips and combination are cached without waiting, as renderClips would', async () => {
    const fake = new FakeSynthesizer();
    const speech = make(fake);
    expect(renderCachedClips(speech, specs, 'en-IN', 'fake-en', base)).toBeNull(); // nothing cached
    const first = await renderClips(speech, specs, 'en-IN', 'fake-en', base);
    expect(first.misses).toBe(2);
    const fast = renderCachedClips(speech, specs, 'en-IN', 'fake-en', base);
    // The same reply the clip-by-clip path built (which also combined the clips), now at once.
    expect(fast).toEqual({ ...first, hits: 2, misses: 0, liveChars: 0, liveCharsBy: {}, ttsMs: 0 });
    expect(await renderClips(speech, specs, 'en-IN', 'fake-en', base)).toEqual(fast);
    expect(fast).toMatchObject({
      hits: 2,
      misses: 0,
      liveChars: 0,
      spokenText: 'The fee is five hundred rupees. May I have your name?',
    });
    expect(fast!.audioUrl).toMatch(/^http:\/\/127\.0\.0\.1:7000\/v1\/audio\/[0-9a-f]{64}\.wav$/);
    expect(fast!.clips.map((c) => c.audio_url)).toEqual(first.clips.map((c) => c.audio_url));
    expect(fake.calls).toBe(2);
  });

  it('leaves a reply to renderClips when its combination is not stored yet', async () => {
    const speech = make();
    await renderClips(speech, [specs[0]!], 'en-IN', 'fake-en', base);
    await renderClips(speech, [specs[1]!], 'en-IN', 'fake-en', base);
    expect(renderCachedClips(speech, [specs[1]!], 'en-IN', 'fake-en', base)?.hits).toBe(1);
    expect(renderCachedClips(speech, specs, 'en-IN', 'fake-en', base)).toBeNull();
    expect(renderCachedClips(speech, [], 'en-IN', 'fake-en', base)).toBeNull();
    expect(renderCachedClips(new NoSpeech(), specs, 'en-IN', 'none', base)).toBeNull();
  });
});
