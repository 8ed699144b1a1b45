/**
 * The Sarvam streaming recogniser (src/adapters/recognizers/sarvam.ts) against the fake Sarvam
 * server (src/devtools/fake-sarvam.ts) over real loopback sockets: the final that answers a
 * flush, Sarvam's own endpointing (END_SPEECH), transcripts in both scripts, reconnect with the
 * utterance's audio replayed, refused handshakes (403, 429, 5xx), drops, a slow provider under
 * withTimeout, cancel, checkSarvam, and the key kept out of every error.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { startFakeSarvam, type FakeSarvam } from '../../../src/devtools/fake-sarvam.js';
import { systemClock } from '../../../src/media/playout.js';
import { type FinalTranscript, type RecognitionStream, type RecognizerError } from '../../../src/media/recognizer.js';
import { withTimeout } from '../../../src/media/recognition-stream.js';
import { SarvamRecognizer } from '../../../src/adapters/recognizers/sarvam.js';
import { checkSarvam } from '../../../src/adapters/recognizers/sarvam-check.js';
import { concat } from '../../support/media.js';

const KEY = 'sk_test_SECRET_4f9a';
const HINDI = 'हाँ, मैं कल भुगतान कर दूँगा';
const LATIN = 'haan main kal payment kar dunga';

/** `ms` of a 440 Hz tone (RMS ≈ 5700) at `rate` Hz. */
function tone(ms: number, rate = 16000): Int16Array {
  const n = (rate * ms) / 1000;
  return Int16Array.from({ length: n }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)));
}
/** `ms` of digital silence. */
const silence = (ms: number, rate = 16000): Int16Array => new Int16Array((rate * ms) / 1000);

/** Pushes `pcm` in 20 ms frames, as the media session does. */
function pushFrames(stream: RecognitionStream, pcm: Int16Array, rate = 16000): void {
  const f = (rate * 20) / 1000;
  for (let i = 0; i < pcm.length; i += f) stream.push(pcm.slice(i, i + f));
}

type Outcome = { final: FinalTranscript } | { error: RecognizerError };
/** The stream's first final or error; later events are collected in `extra`. */
function outcome(stream: RecognitionStream, extra: string[] = []): Promise<Outcome> {
  return new Promise((resolve) => {
    let first = true;
    stream.on('final', (final) => (first ? ((first = false), resolve({ final })) : extra.push('final')));
    stream.on('error', (error) => (first ? ((first = false), resolve({ error })) : extra.push('error')));
    stream.on('partial', () => extra.push('partial'));
  });
}
function finalOf(o: Outcome): FinalTranscript {
  if ('error' in o) throw new Error(`expected a final, got ${o.error.kind}: ${o.error.message}`);
  return o.final;
}
function errorOf(o: Outcome): RecognizerError {
  if ('final' in o) throw new Error(`expected an error, got the final ${JSON.stringify(o.final)}`);
  return o.error;
}

let fake: FakeSarvam | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

async function setup(script: string[] = [], key = KEY): Promise<{ fake: FakeSarvam; rec: SarvamRecognizer }> {
  fake = await startFakeSarvam({ apiKey: KEY, script });
  return { fake, rec: new SarvamRecognizer({ apiKey: key, url: fake.url }) };
}

describe('SarvamRecognizer', () => {
  it('declares provider endpointing, no partials, and the Indian languages', async () => {
    const { rec } = await setup();
    expect({
      provider: rec.provider,
      endpoints: rec.endpoints,
      emitsPartials: rec.emitsPartials,
      priceBasis: rec.priceBasis,
    }).toEqual({ provider: 'sarvam', endpoints: true, emitsPartials: false, priceBasis: 'audio_second' });
    expect(rec.languages).toContain('hi-IN');
    expect(rec.languages).toContain('od-IN');
    expect(() => rec.start({ language: 'fr-FR', sampleRateHz: 16000 })).toThrow(RangeError);
    expect(() => new SarvamRecognizer({ apiKey: '' })).toThrow(/API subscription key/);
    expect(() => new SarvamRecognizer({ apiKey: KEY, url: 'https://api.sarvam.ai' })).toThrow(/ws:/);
  });

  it('answers finish() with the transcript of a flush, speaking the handshake and audio format Sarvam expects', async () => {
    const { fake, rec } = await setup([LATIN]);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const extra: string[] = [];
    const done = outcome(stream, extra);
    const audio = concat([tone(600), silence(200)]);
    pushFrames(stream, audio);
    stream.finish();
    expect(stream.state).toBe('finishing');
    const final = finalOf(await done);
    expect(final).toEqual({ text: LATIN, confidence: null, startMs: 0, endMs: 800, audioMs: 800 });
    expect(stream.state).toBe('done');
    const c = fake.connections[0]!;
    expect(c.query).toEqual({
      'language-code': 'hi-IN',
      model: 'saaras:v3',
      mode: 'codemix',
      sample_rate: '16000',
      input_audio_codec: 'pcm_s16le',
      high_vad_sensitivity: 'true',
      vad_signals: 'true',
      flush_signal: 'true',
    });
    expect(JSON.stringify(c.headers)).not.toContain(KEY);
    expect(c.audioBytes).toBe(audio.length * 2);
    expect(concat(c.audio)).toEqual(audio);
    expect(c.messages.audio).toBe(8); // 100 ms per message
    expect(c.messages.flush).toBe(1);
    await vi.waitFor(() => expect(c.messages.end_of_stream).toBe(1));
    stream.finish(); // idempotent
    await new Promise((r) => setTimeout(r, 50));
    expect(extra).toEqual([]);
  });

  it('resamples 8 kHz input to the 16 kHz Sarvam takes', async () => {
    const { fake, rec } = await setup([LATIN]);
    const stream = rec.start({ language: 'en-IN', sampleRateHz: 8000 });
    const done = outcome(stream);
    pushFrames(stream, concat([tone(600, 8000), silence(200, 8000)]), 8000);
    stream.finish();
    expect(finalOf(await done)).toMatchObject({ text: LATIN, endMs: 800 });
    expect(fake.connections[0]!.audioBytes).toBe(16000 * 0.8 * 2);
  });

  it('ends the utterance on Sarvam END_SPEECH before finish(): endOfUtterance, no flush, a later finish() is a no-op', async () => {
    const { fake, rec } = await setup([HINDI]);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const extra: string[] = [];
    const done = outcome(stream, extra);
    pushFrames(stream, concat([tone(600), silence(700)]));
    const final = finalOf(await done);
    expect(final).toEqual({ text: HINDI, confidence: null, startMs: 0, endMs: 1300, audioMs: 1300, endOfUtterance: true });
    expect(stream.state).toBe('done');
    stream.finish();
    expect(stream.state).toBe('done');
    await new Promise((r) => setTimeout(r, 50));
    expect(extra).toEqual([]);
    expect(fake.connections[0]!.messages.flush).toBeUndefined();
  });

  it('joins the transcript of an END_SPEECH still in flight at finish() with the flush answer: one final', async () => {
    const { fake, rec } = await setup(['haan', 'main kal payment kar dunga']);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const extra: string[] = [];
    const done = outcome(stream, extra);
    // All of it reaches Sarvam after finish(): its END_SPEECH ends "haan", the flush the rest.
    pushFrames(stream, concat([tone(400), silence(600), tone(500), silence(100)]));
    stream.finish();
    expect(finalOf(await done)).toEqual({
      text: 'haan main kal payment kar dunga',
      confidence: null,
      startMs: 0,
      endMs: 1600,
      audioMs: 1600,
    });
    expect(fake.connections[0]!.transcripts).toEqual(['haan', 'main kal payment kar dunga']);
    await new Promise((r) => setTimeout(r, 50));
    expect(extra).toEqual([]);
  });

  it('passes Devanagari and Latin transcripts through intact', async () => {
    const { rec } = await setup([HINDI, LATIN]);
    const texts: string[] = [];
    for (let i = 0; i < 2; i++) {
      const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
      const done = outcome(stream);
      pushFrames(stream, concat([tone(500), silence(100)]));
      stream.finish();
      texts.push(finalOf(await done).text);
    }
    expect(texts).toEqual([HINDI, LATIN]);
  });

  it('gives an empty final, confidence 0, when Sarvam heard no speech', async () => {
    const { rec } = await setup([LATIN]);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(stream);
    pushFrames(stream, silence(300));
    stream.finish();
    expect(finalOf(await done)).toEqual({ text: '', confidence: 0, startMs: 0, endMs: 300, audioMs: 300 });
  });

  it('reconnects once when the socket drops mid-utterance and replays all of the utterance', async () => {
    const { fake, rec } = await setup([LATIN]);
    fake.dropNext({ afterBytes: 6400 }); // 200 ms in
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(stream);
    const first = tone(400);
    pushFrames(stream, first);
    await vi.waitFor(() => expect(fake.connections[0]?.dropped).toBe(true));
    await vi.waitFor(() => expect(fake.connections[1]?.audioBytes).toBe(first.length * 2));
    const rest = concat([tone(200), silence(200)]);
    pushFrames(stream, rest);
    stream.finish();
    expect(finalOf(await done)).toMatchObject({ text: LATIN, endMs: 800 });
    expect(fake.connections).toHaveLength(2);
    expect(concat(fake.connections[1]!.audio)).toEqual(concat([first, rest]));
  });

  it('fails with crashed when the socket drops twice, without the key in the error', async () => {
    const { fake, rec } = await setup([LATIN]);
    fake.dropNext({ afterBytes: 3200 }, 2);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(stream);
    pushFrames(stream, tone(400));
    const err = errorOf(await done);
    expect(err.kind).toBe('crashed');
    expect(err.message).toMatch(/dropped/);
    expect(JSON.stringify(err.toData())).not.toContain(KEY);
    expect(stream.state).toBe('failed');
    expect(fake.connections).toHaveLength(2);
    expect(() => stream.push(tone(20))).not.toThrow(); // ignored once failed
  });

  it('fails at once with unavailable on a 403 handshake, in plain words, no reconnect, no key', async () => {
    const { fake, rec } = await setup([LATIN], 'sk_wrong_SECRET_key');
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(stream);
    pushFrames(stream, tone(200));
    const err = errorOf(await done);
    expect(err.kind).toBe('unavailable');
    expect(err.message).toBe('sarvam: Sarvam rejected the API subscription key (403); check SARVAM_API_KEY');
    expect(err.message).not.toContain('sk_wrong_SECRET_key');
    expect(fake.connections.map((c) => c.refused)).toEqual([403]);
  });

  it('retries a 429 handshake once, then reports unavailable', async () => {
    const { fake, rec } = await setup([LATIN, LATIN]);
    fake.rejectNext(429, 1);
    const ok = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const okDone = outcome(ok);
    pushFrames(ok, tone(300));
    ok.finish();
    expect(finalOf(await okDone).text).toBe(LATIN);
    expect(fake.connections.map((c) => c.refused)).toEqual([429, undefined]);

    fake.rejectNext(429, 2);
    const limited = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(limited);
    pushFrames(limited, tone(300));
    limited.finish();
    const err = errorOf(await done);
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/rate limiting .*429/);
    expect(JSON.stringify(err.toData())).not.toContain(KEY);
    expect(fake.connections.map((c) => c.refused)).toEqual([429, undefined, 429, 429]);
  });

  it('retries a 5xx handshake once with the audio pushed meanwhile', async () => {
    const { fake, rec } = await setup([HINDI]);
    fake.rejectNext(500, 1);
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const done = outcome(stream);
    const audio = concat([tone(400), silence(100)]);
    pushFrames(stream, audio);
    stream.finish();
    expect(finalOf(await done).text).toBe(HINDI);
    expect(concat(fake.connections[1]!.audio)).toEqual(audio);
  });

  it('reports a provider that cannot be reached as unavailable after one retry', async () => {
    const { fake, rec } = await setup();
    await fake.close();
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const err = errorOf(await outcome(stream));
    expect(err.kind).toBe('unavailable');
    expect(err.message).toMatch(/cannot reach Sarvam at 127\.0\.0\.1:\d+ \(ECONNREFUSED\) \(after one reconnect\)/);
  });

  it('turns a slow provider into a timeout with withTimeout, and stops its socket', async () => {
    const { fake, rec } = await setup([LATIN]);
    fake.answerDelayMs = 1500;
    const stream = withTimeout(rec.start({ language: 'hi-IN', sampleRateHz: 16000 }), 200, systemClock, rec.provider);
    const done = outcome(stream);
    pushFrames(stream, tone(300));
    stream.finish();
    const err = errorOf(await done);
    expect(err.kind).toBe('timeout');
    expect(err.provider).toBe('sarvam');
    expect(stream.state).toBe('failed');
  });

  it('delivers nothing after cancel()', async () => {
    const { fake, rec } = await setup([LATIN]);
    fake.answerDelayMs = 400;
    const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
    const extra: string[] = [];
    void outcome(stream, extra).then(() => extra.push('first'));
    const audio = concat([tone(600), silence(700)]); // ends by END_SPEECH; the transcript comes 400 ms later
    pushFrames(stream, audio);
    await vi.waitFor(() => expect(fake.connections[0]?.audioBytes).toBe(audio.length * 2), { interval: 5 });
    stream.cancel();
    expect(stream.state).toBe('cancelled');
    await new Promise((r) => setTimeout(r, 600));
    expect(extra).toEqual([]);
    expect(fake.connections[0]!.transcripts).toEqual([]); // the socket was gone before the answer
    expect(() => stream.finish()).toThrow(/cancelled/);
  });
});

describe('checkSarvam', () => {
  it('accepts a good key, and says in plain words what is wrong otherwise', async () => {
    const { fake } = await setup();
    const ok = await checkSarvam({ apiKey: KEY, url: fake.url });
    expect(ok).toMatchObject({ ok: true });
    expect(fake.connections[0]!.query['language-code']).toBe('en-IN');

    const bad = await checkSarvam({ apiKey: 'sk_bad_SECRET', url: fake.url });
    expect(bad).toEqual({
      ok: false,
      problem: 'unauthenticated',
      message: 'Sarvam rejected the API subscription key (403); check SARVAM_API_KEY',
    });

    fake.rejectNext(429);
    expect(await checkSarvam({ apiKey: KEY, url: fake.url })).toMatchObject({ ok: false, problem: 'rate_limited' });

    const url = fake.url;
    await fake.close();
    const down = await checkSarvam({ apiKey: KEY, url });
    expect(down).toMatchObject({ ok: false, problem: 'unreachable' });
    expect(JSON.stringify([ok, bad, down])).not.toContain('SECRET');
  });
});
