/**
 * The embedded eSpeak NG engine in a child process (src/adapters/speech/espeak.ts + espeak-worker.ts):
 * real synthesis in English and Hindi, and recovery from a killed child, a timeout and a bad
 * voice; plus the parent's handling of workers that cannot start, die early or hang, using
 * small stand-in worker scripts.
 *
 * The real worker runs compiled: the current sources are transpiled into
 * node_modules/.cache (so this file never runs a stale build) and the package is found from there.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EspeakSynthesizer, espeakVoiceFor, espeakWorkerPath } from '../../src/adapters/speech/espeak.js';
import { SpeechError, type SynthesizedAudio } from '../../src/adapters/speech/types.js';
import { clipSamples, readWavInfo, toWav48k } from '../../src/media/wav.js';
import { buildEspeakWorker, removeEspeakWorker } from '../support/espeak-worker.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const LONG_TEXT = 'This sentence keeps the speech engine busy for a good while, on purpose. '.repeat(40);

const buildWorker = (): string => buildEspeakWorker('test');

/** Root-mean-square level of the samples. */
function rms(samples: Int16Array): number {
  let sum = 0;
  for (const s of samples) sum += s * s;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

/** Synthesises and checks a plausible 48 kHz clip; returns its duration, ms. */
function checkClip(audio: SynthesizedAudio, minMs: number, maxMs: number): number {
  expect(audio.sampleRate).toBe(48000);
  const wav = toWav48k(audio);
  const info = readWavInfo(wav);
  expect(info).toMatchObject({ sampleRate: 48000, channels: 1, bitsPerSample: 16 });
  expect(info.durationMs).toBeGreaterThan(minMs);
  expect(info.durationMs).toBeLessThan(maxMs);
  expect(rms(clipSamples(wav))).toBeGreaterThan(300);
  return info.durationMs;
}

describe('eSpeak NG voices', () => {
  it('maps BCP-47 languages to eSpeak voices', () => {
    expect(espeakVoiceFor('en-IN')).toBe('en');
    expect(espeakVoiceFor('hi-IN')).toBe('hi');
    expect(espeakVoiceFor('en-US')).toBe('en-us');
    for (const l of ['ta', 'te', 'bn', 'mr', 'gu', 'kn', 'ml', 'pa', 'or', 'as', 'ur']) expect(espeakVoiceFor(`${l}-IN`)).toBe(l);
    expect(espeakVoiceFor('xx-YY')).toBe('xx');
  });
  it('finds the compiled worker in dist/ when running from sources', () => {
    expect(espeakWorkerPath()).toBe(path.join(ROOT, 'dist', 'adapters', 'speech', 'espeak-worker.js'));
  });
});

describe('EspeakSynthesizer (real engine)', { timeout: 60_000 }, () => {
  let synth: EspeakSynthesizer;
  let workerPath: string;
  let available: boolean;

  beforeAll(async () => {
    workerPath = buildWorker();
    available = await EspeakSynthesizer.available(workerPath);
    synth = new EspeakSynthesizer({ workerPath });
  });
  afterAll(async () => {
    await synth?.close();
    removeEspeakWorker(workerPath);
  });

  it('is installed (optional dependency) and speaks English and Hindi as 48 kHz WAV', async () => {
    expect(available).toBe(true);
    const en = await synth.synthesize('Namaste, this is Sunrise Clinic.', synth.voiceFor('en-IN'));
    checkClip(en, 1000, 4000);
    expect(synth.lastStartupMs).toBeGreaterThan(0);
    const hi = await synth.synthesize('नमस्ते, यह सनराइज़ क्लिनिक है। आपका नाम क्या है?', synth.voiceFor('hi-IN'));
    checkClip(hi, 1500, 6000);
    const tamil = await synth.synthesize('வணக்கம்', synth.voiceFor('ta-IN'));
    checkClip(tamil, 200, 3000);
  });

  it('treats text as plain text, not markup', async () => {
    const audio = await synth.synthesize('Tom & Jerry <speak> 5 > 3', 'en');
    checkClip(audio, 500, 5000);
  });

  it('rejects an unknown voice with failed, and the next call works', async () => {
    const err = await synth.synthesize('hello', 'no-such-voice').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SpeechError);
    expect((err as SpeechError).reason).toBe('failed');
    checkClip(await synth.synthesize('hello again', 'en'), 300, 3000);
  });

  it('rejects with crashed when the child is killed mid-request, and the next call starts a new child', async () => {
    await synth.synthesize('warm up', 'en');
    const pid = synth.childPid!;
    const pending = synth.synthesize(LONG_TEXT, 'en');
    process.kill(pid, 'SIGKILL');
    await expect(pending).rejects.toMatchObject({ name: 'SpeechError', reason: 'crashed' });
    checkClip(await synth.synthesize('Back again.', 'en'), 300, 3000);
    expect(synth.childPid).not.toBe(pid);
  });

  it('rejects with timeout when the time limit passes, kills that child, and the next call works', async () => {
    await synth.synthesize('warm up', 'en');
    const pid = synth.childPid!;
    await expect(synth.synthesize(LONG_TEXT, 'en', { timeoutMs: 1 })).rejects.toMatchObject({ reason: 'timeout' });
    checkClip(await synth.synthesize('Still here.', 'en'), 300, 3000);
    expect(synth.childPid).not.toBe(pid);
  });

  it('after close: no child, and calls reject with unavailable', async () => {
    const own = new EspeakSynthesizer({ workerPath });
    await own.synthesize('one', 'en');
    const pid = own.childPid!;
    await own.close();
    expect(own.childPid).toBeUndefined();
    expect(() => process.kill(pid, 0)).toThrow();
    await expect(own.synthesize('two', 'en')).rejects.toMatchObject({ reason: 'unavailable' });
    await own.close();
  });
});

describe('EspeakSynthesizer (stand-in workers)', { timeout: 30_000 }, () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-worker-'));
  });
  afterAll(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const stub = (name: string, body: string): string => {
    const file = path.join(dir, `${name}.mjs`);
    fs.writeFileSync(file, body);
    return file;
  };

  it('is unavailable when the worker is not built', async () => {
    const missing = path.join(dir, 'nope.js');
    expect(await EspeakSynthesizer.available(missing)).toBe(false);
    const synth = new EspeakSynthesizer({ workerPath: missing });
    await expect(synth.synthesize('x', 'en')).rejects.toMatchObject({ reason: 'unavailable' });
    await synth.close();
  });

  it('is unavailable when the worker cannot load the engine, and stays so without respawning', async () => {
    const counter = path.join(dir, 'starts.txt');
    const file = stub(
      'fatal',
      `import fs from 'node:fs'; fs.appendFileSync(${JSON.stringify(counter)}, 'x');
process.send({ type: 'fatal', reason: 'unavailable', message: 'cannot load the engine' }); process.disconnect();`,
    );
    const synth = new EspeakSynthesizer({ workerPath: file });
    await expect(synth.synthesize('x', 'en')).rejects.toMatchObject({ reason: 'unavailable', message: 'cannot load the engine' });
    await expect(synth.synthesize('y', 'en')).rejects.toMatchObject({ reason: 'unavailable' });
    expect(fs.readFileSync(counter, 'utf8')).toBe('x');
    await synth.close();
  });

  it('fails queued calls when the worker dies before it is ready', async () => {
    const synth = new EspeakSynthesizer({ workerPath: stub('dies', 'process.exit(3);') });
    const results = await Promise.allSettled([synth.synthesize('a', 'en'), synth.synthesize('b', 'en')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results.map((r) => (r as PromiseRejectedResult).reason.reason)).toEqual(['unavailable', 'unavailable']);
    await synth.close();
  });

  it('times out a hung request, while queued calls behind it are served by a new child', async () => {
    const file = stub(
      'hangs',
      `process.send({ type: 'ready', sampleRate: 8000, startupMs: 1 });
process.on('disconnect', () => process.exit(0));
process.on('message', (m) => { if (m.text !== 'hang') process.send({ type: 'result', id: m.id, samples: new Int16Array([1, 2, 3]), sampleRate: 8000 }); });`,
    );
    const synth = new EspeakSynthesizer({ workerPath: file });
    expect((await synth.synthesize('ok', 'en')).samples.length).toBe(3);
    const hung = synth.synthesize('hang', 'en', { timeoutMs: 50 });
    const queued = synth.synthesize('after', 'en', { timeoutMs: 10_000 });
    await expect(hung).rejects.toMatchObject({ reason: 'timeout' });
    expect(Array.from((await queued).samples)).toEqual([1, 2, 3]);
    await synth.close();
  });
});
