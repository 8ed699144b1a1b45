/**
 * The Deepgram recogniser (src/adapters/recognizers/deepgram.ts) against the fake Deepgram server
 * (src/devtools/fake-deepgram.ts) over real sockets on loopback, and against small scripted
 * WebSocket servers for the answers the fake's energy detector does not produce.
 */
import net from 'node:net';
import util from 'node:util';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { startFakeDeepgram, type FakeDeepgram, type FakeDeepgramOptions } from '../../src/devtools/fake-deepgram.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { type FinalTranscript, type PartialTranscript, type RecognitionStream, type RecognizerError } from '../../src/media/recognizer.js';
import { withTimeout } from '../../src/media/recognition-stream.js';
import { DeepgramRecognizer, type DeepgramOptions } from '../../src/adapters/recognizers/deepgram.js';
import { checkDeepgram } from '../../src/adapters/recognizers/deepgram-check.js';
import { deepgramLanguage } from '../../src/adapters/recognizers/deepgram-protocol.js';
import { concat } from '../support/media.js';

const RATE = 16000;
const KEY = 'dg-secret-key-0123456789abcdef';

/** `ms` of a 440 Hz tone at amplitude 8000 (speech to the fake's energy detector). */
function tone(ms: number): Int16Array {
  const out = new Int16Array(Math.round((RATE * ms) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / RATE));
  return out;
}
/** `ms` of digital silence. */
function silence(ms: number): Int16Array {
  return new Int16Array(Math.round((RATE * ms) / 1000));
}
/** The bytes Deepgram should receive for `pcm` (little-endian PCM16). */
function bytesOf(pcm: Int16Array): Buffer {
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}
/** Pushes `pcm` in 20 ms chunks, as the media session does. */
function pushAll(stream: RecognitionStream, pcm: Int16Array): void {
  const step = (RATE * 20) / 1000;
  for (let at = 0; at < pcm.length; at += step) stream.push(pcm.slice(at, at + step));
}

/** Everything a stream delivered, with a way to wait for more. */
function record(stream: RecognitionStream) {
  const got = { partials: [] as PartialTranscript[], finals: [] as FinalTranscript[], errors: [] as RecognizerError[] };
  stream.on('partial', (p) => got.partials.push(p));
  stream.on('final', (f) => got.finals.push(f));
  stream.on('error', (e) => got.errors.push(e));
  return got;
}

/** Resolves once `predicate` holds (polled every 5 ms); fails after `ms`. */
async function until(predicate: () => boolean, ms = 5000, what = 'condition'): Promise<void> {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let fake: FakeDeepgram | undefined;
const servers: Array<{ close(cb: () => void): void }> = [];
afterEach(async () => {
  await fake?.close();
  fake = undefined;
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((r) => s.close(() => r()))));
});

async function setup(fakeOptions: FakeDeepgramOptions = {}, options: Partial<DeepgramOptions> = {}) {
  fake = await startFakeDeepgram({ apiKey: KEY, ...fakeOptions });
  const recognizer = new DeepgramRecognizer({ apiKey: KEY, url: fake.url, ...options });
  return { fake, recognizer };
}

/** A WebSocket server that answers each connection with `onConnection`. */
async function scriptedServer(onConnection: (ws: WebSocket) => void): Promise<string> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((r) => wss.once('listening', () => r()));
  wss.on('connection', onConnection);
  servers.push({
    close: (cb) => {
      for (const c of wss.clients) c.terminate();
      wss.close(() => cb());
    },
  });
  return `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/listen`;
}

function results(
  transcript: string,
  flags: { is_final: boolean; speech_final?: boolean; from_finalize?: boolean; start?: number; duration?: number },
) {
  return JSON.stringify({
    type: 'Results',
    channel_index: [0, 1],
    start: flags.start ?? 0,
    duration: flags.duration ?? 1,
    is_final: flags.is_final,
    speech_final: flags.speech_final ?? false,
    ...(flags.from_finalize ? { from_finalize: true } : {}),
    channel: { alternatives: [{ transcript, confidence: 0.8, words: [] }] },
    metadata: { request_id: 'r', model_info: { name: 'general-nova-3', version: 'x', arch: 'nova-3' }, model_uuid: 'u' },
  });
}

describe('DeepgramRecognizer', () => {
  it('declares itself: provider deepgram, partials, provider endpointing', () => {
    const r = new DeepgramRecognizer({ apiKey: KEY });
    expect(r).toMatchObject({
      provider: 'deepgram',
      emitsPartials: true,
      endpoints: true,
      priceBasis: 'audio_second',
      languages: ['*'],
    });
    expect(() => new DeepgramRecognizer({ apiKey: '  ' })).toThrow(RangeError);
    expect(() => new DeepgramRecognizer({ apiKey: KEY, url: 'https://api.deepgram.com/v1/listen' })).toThrow(/ws:\/\/ or wss:\/\//);
    expect(() => new DeepgramRecognizer({ apiKey: KEY, endpointingMs: 5 })).toThrow(/endpointingMs/);
  });

  it('opens the socket with the stream settings as Deepgram query parameters and the key as a Token header', async () => {
    const { fake, recognizer } = await setup({ script: ['haan ji'] });
    const stream = recognizer.start({
      language: 'hi-IN',
      sampleRateHz: RATE,
      hints: { grammar: 'free', phrases: ['Dr. Mehta', 'EMI'] },
    });
    const got = record(stream);
    stream.finish();
    await until(() => got.finals.length === 1, 5000, 'final');
    expect(fake.handshakes).toHaveLength(1);
    const q = fake.connections[0]!.query;
    expect(q).toEqual({
      model: 'nova-3',
      language: 'multi',
      language_hint: ['hi', 'en'],
      encoding: 'linear16',
      sample_rate: '16000',
      channels: '1',
      interim_results: 'true',
      endpointing: '300',
      utterance_end_ms: '1000',
      vad_events: 'true',
      smart_format: 'true',
      punctuate: 'true',
      keyterm: ['Dr. Mehta', 'EMI'],
    });
    expect(JSON.stringify(fake.connections[0]!.headers)).not.toContain(KEY);
  });

  it('maps languages: Hindi and Hinglish to multi, Indian English kept, other English to en', () => {
    expect(deepgramLanguage('hi')).toEqual({ language: 'multi', hints: ['hi', 'en'] });
    expect(deepgramLanguage('hi-Latn-IN')).toEqual({ language: 'multi', hints: ['hi', 'en'] });
    expect(deepgramLanguage('ta-IN')).toEqual({ language: 'multi', hints: ['ta', 'en'] });
    expect(deepgramLanguage('hi-IN', 'nova-2')).toEqual({ language: 'hi', hints: [] });
    expect(deepgramLanguage('en-in')).toEqual({ language: 'en-IN', hints: [] });
    expect(deepgramLanguage('en-GB')).toEqual({ language: 'en-GB', hints: [] });
    expect(deepgramLanguage('en-SG')).toEqual({ language: 'en', hints: [] });
    expect(deepgramLanguage('fr-CA')).toEqual({ language: 'fr-CA', hints: [] });
  });

  it('sends partials while the caller speaks, then the final after finish() (Finalize → from_finalize)', async () => {
    const { fake, recognizer } = await setup({ script: [{ text: 'book an appointment tomorrow', confidence: 0.91 }] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    const audio = concat([silence(200), tone(1000), silence(100)]); // 100 ms of silence: Deepgram's 300 ms endpointing does not fire
    pushAll(stream, audio);
    await until(() => got.partials.length >= 3, 5000, 'partials');
    expect(got.finals).toEqual([]);
    expect(got.partials.slice(0, 3).map((p) => p.text)).toEqual(['book', 'book an', 'book an appointment']);
    for (const p of got.partials) {
      expect(p.startMs).toBe(0);
      expect(p.endMs).toBeGreaterThan(0);
      expect(p.endMs).toBeLessThanOrEqual(1300);
    }
    stream.finish();
    expect(stream.state).toBe('finishing');
    await until(() => got.finals.length === 1, 5000, 'final');
    expect(got.finals[0]).toEqual({
      text: 'book an appointment tomorrow',
      confidence: 0.91,
      startMs: 0,
      endMs: 1300,
      audioMs: 1300,
    });
    expect(stream.state).toBe('done');
    const conn = fake.connections[0]!;
    expect(conn.sent.some((m) => m.type === 'Results' && m.from_finalize === true)).toBe(true);
    expect(fake.messages.map((m) => m.type)).toEqual(['Finalize', 'CloseStream']);
    expect(conn.audio().equals(bytesOf(audio))).toBe(true);
    await sleep(50);
    expect(got.finals).toHaveLength(1);
    expect(got.errors).toEqual([]);
  });

  it('ends the utterance on Deepgram endpointing (speech_final) before finish(); a later finish() is a no-op', async () => {
    const { fake, recognizer } = await setup({ script: ['yes please'] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    pushAll(stream, concat([silence(100), tone(800), silence(500)]));
    await until(() => got.finals.length === 1, 5000, 'endpointed final');
    expect(got.finals[0]).toMatchObject({ text: 'yes please', endOfUtterance: true, startMs: 0, endMs: 1400, audioMs: 1400 });
    expect(stream.state).toBe('done');
    expect(fake.connections[0]!.sent.find((m) => m.speech_final === true)).toBeDefined();
    stream.push(silence(20)); // audio in flight after the endpoint: ignored
    stream.finish();
    expect(stream.state).toBe('done');
    await fake.until(() => fake.connections[0]!.closed);
    expect(fake.messages.map((m) => m.type)).toEqual(['CloseStream']); // no Finalize: nothing more asked
    expect(got.finals).toHaveLength(1);
    expect(got.errors).toEqual([]);
  });

  it('ends the utterance on UtteranceEnd after settled words, marked endOfUtterance', async () => {
    const url = await scriptedServer((ws) => {
      ws.once('message', () => {
        ws.send(results('hello', { is_final: false }));
        ws.send(results('hello there', { is_final: true }));
        ws.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 0.9 }));
      });
    });
    const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    pushAll(stream, tone(200));
    await until(() => got.finals.length === 1, 5000, 'final');
    expect(got.partials.map((p) => p.text)).toEqual(['hello', 'hello there']);
    expect(got.finals[0]).toMatchObject({ text: 'hello there', confidence: 0.8, endOfUtterance: true });
  });

  it("passes Deepgram's confidence through as the mean of the segments, and null (none invented) when a segment has none", async () => {
    const bare = (transcript: string) =>
      JSON.stringify({
        ...(JSON.parse(results(transcript, { is_final: true })) as object),
        channel: { alternatives: [{ transcript, words: [] }] },
      });
    const finalOf = async (messages: string[]) => {
      const url = await scriptedServer((ws) => {
        ws.once('message', () => {
          for (const m of messages) ws.send(m);
          ws.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 0.9 }));
        });
      });
      const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'en-IN', sampleRateHz: RATE });
      const got = record(stream);
      pushAll(stream, tone(200));
      await until(() => got.finals.length === 1, 5000, 'final');
      return got.finals[0]!;
    };
    const withScores = [
      results('hello', { is_final: true }),
      JSON.stringify({
        ...(JSON.parse(results('there', { is_final: true })) as object),
        channel: { alternatives: [{ transcript: 'there', confidence: 0.4, words: [] }] },
      }),
    ];
    expect((await finalOf(withScores)).confidence).toBeCloseTo(0.6, 9);
    expect(await finalOf([results('hello', { is_final: true }), bare('there')])).toMatchObject({
      text: 'hello there',
      confidence: null,
    });
  });

  it('ignores a socket that drops after the final (no error, no reconnect)', async () => {
    let connections = 0;
    const url = await scriptedServer((ws) => {
      connections++;
      ws.once('message', () => {
        ws.send(results('ho gaya', { is_final: true, speech_final: true }));
        setTimeout(() => ws.terminate(), 10);
      });
    });
    const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'hi-IN', sampleRateHz: RATE });
    const got = record(stream);
    stream.push(tone(100));
    await until(() => got.finals.length === 1);
    await sleep(100);
    expect(got.finals[0]).toMatchObject({ text: 'ho gaya', endOfUtterance: true });
    expect(got.errors).toEqual([]);
    expect(connections).toBe(1);
  });

  it('ignores speech_final and UtteranceEnd with no words heard (noise), waiting for finish()', async () => {
    const url = await scriptedServer((ws) => {
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          ws.send(results('', { is_final: true, speech_final: true }));
          ws.send(JSON.stringify({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 0 }));
          return;
        }
        const type = (JSON.parse(data.toString()) as { type: string }).type;
        if (type === 'Finalize') ws.send(results('ok', { is_final: true, from_finalize: true }));
      });
    });
    const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    stream.push(tone(100));
    await sleep(100);
    expect(got.finals).toEqual([]);
    expect(stream.state).toBe('open');
    stream.finish();
    await until(() => got.finals.length === 1);
    expect(got.finals[0]).toMatchObject({ text: 'ok' });
    expect(got.finals[0]!.endOfUtterance).toBeUndefined();
  });

  it('finish() with no audio gives an empty final (Metadata after CloseStream: Finalize has nothing to answer)', async () => {
    const { fake, recognizer } = await setup({ script: ['never heard'] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    stream.finish();
    await until(() => got.finals.length === 1);
    expect(got.finals[0]).toEqual({ text: '', confidence: 0, startMs: 0, endMs: 0, audioMs: 0 });
    expect(fake.connections[0]!.sent.map((m) => m.type)).toEqual(['Metadata']);
    expect(fake.remaining).toBe(1);
  });

  it('buffers audio pushed before the socket opens and sends it in order', async () => {
    const { fake, recognizer } = await setup({ script: ['one two'] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    const audio = concat([tone(600), silence(100)]);
    pushAll(stream, audio); // synchronously: the handshake has not happened yet
    expect(fake.connections).toHaveLength(0);
    stream.finish();
    await until(() => got.finals.length === 1);
    expect(got.finals[0]!.text).toBe('one two');
    expect(fake.connections[0]!.audio().equals(bytesOf(audio))).toBe(true);
  });

  it('reconnects once when the socket drops mid-utterance, replaying all the utterance audio', async () => {
    const { fake, recognizer } = await setup({ script: ['my number is nine eight seven'], faults: [{ dropAfterBytes: 20_000 }] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    const audio = concat([silence(300), tone(900), silence(100)]); // 41 600 bytes; the drop comes 625 ms in, mid-speech
    pushAll(stream, audio);
    stream.finish();
    await until(() => got.finals.length + got.errors.length === 1, 5000, 'final');
    expect(got.errors).toEqual([]);
    expect(got.finals[0]).toMatchObject({ text: 'my number is nine eight seven', audioMs: 1300, endMs: 1300 });
    expect(fake.connections).toHaveLength(2);
    expect(fake.connections[0]!.bytes).toBeGreaterThanOrEqual(20_000);
    expect(fake.connections[0]!.bytes).toBeLessThan(audio.byteLength);
    expect(fake.connections[1]!.audio().equals(bytesOf(audio))).toBe(true); // the whole utterance, replayed
    expect(fake.remaining).toBe(0);
  });

  it('reconnects once after a 5xx or 429 handshake', async () => {
    for (const status of [503, 429]) {
      const { fake, recognizer } = await setup({ script: ['theek hai'], faults: [{ reject: status }] });
      const stream = recognizer.start({ language: 'hi-IN', sampleRateHz: RATE });
      const got = record(stream);
      pushAll(stream, concat([tone(500), silence(100)]));
      stream.finish();
      await until(() => got.finals.length + got.errors.length === 1, 5000, `final after ${status}`);
      expect(got.finals[0]?.text).toBe('theek hai');
      expect(fake.handshakes.map((h) => h.status)).toEqual([status, 101]);
      await fake.close();
    }
  });

  it('a dropped socket twice is a crashed error', async () => {
    const { fake, recognizer } = await setup({ script: ['x'], faults: [{ dropAfterBytes: 3200 }, { dropAfterBytes: 3200 }] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    pushAll(stream, tone(500));
    await until(() => got.errors.length === 1, 5000, 'error');
    expect(got.errors[0]!.kind).toBe('crashed');
    expect(got.errors[0]!.provider).toBe('deepgram');
    expect(stream.state).toBe('failed');
    expect(fake.connections).toHaveLength(2);
    stream.push(tone(20)); // in flight after the failure: ignored
    stream.finish();
    await sleep(50);
    expect(got.errors).toHaveLength(1);
    expect(got.finals).toEqual([]);
  });

  it('401 is unavailable at once, with a plain message and no retry', async () => {
    const { fake } = await setup();
    const stream = new DeepgramRecognizer({ apiKey: 'wrong-key-abcdef', url: fake.url }).start({
      language: 'en-IN',
      sampleRateHz: RATE,
    });
    const got = record(stream);
    await until(() => got.errors.length === 1);
    expect(got.errors[0]!.toData()).toEqual({
      kind: 'unavailable',
      provider: 'deepgram',
      message: 'deepgram: Deepgram rejected the API key (401)',
    });
    await sleep(RATE_LIMIT_WAIT);
    expect(fake.handshakes.map((h) => h.status)).toEqual([401]);
  });

  it('429 twice is unavailable: Deepgram is rate-limiting', async () => {
    const { fake, recognizer } = await setup({ faults: [{ reject: 429 }, { reject: 429 }] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    pushAll(stream, tone(100));
    await until(() => got.errors.length === 1);
    expect(got.errors[0]!.kind).toBe('unavailable');
    expect(got.errors[0]!.message).toBe('deepgram: Deepgram is rate-limiting (429)');
    expect(fake.handshakes.map((h) => h.status)).toEqual([429, 429]);
  });

  it('a handshake that never completes times out twice: a timeout error', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => sockets.push(s)); // accepts TCP, never answers the upgrade
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.push({
      close: (cb) => {
        for (const s of sockets) s.destroy();
        server.close(() => cb());
      },
    });
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/listen`;
    const stream = new DeepgramRecognizer({ apiKey: KEY, url, connectTimeoutMs: 100 }).start({
      language: 'en-IN',
      sampleRateHz: RATE,
    });
    const got = record(stream);
    await until(() => got.errors.length === 1);
    expect(got.errors[0]!.kind).toBe('timeout');
    expect(got.errors[0]!.message).toContain('no answer from Deepgram within 100 ms');
    expect(sockets).toHaveLength(2);
  });

  it('an unreachable host is unavailable after one retry', async () => {
    const { fake } = await setup();
    const url = fake.url;
    await fake.close();
    const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    await until(() => got.errors.length === 1);
    expect(got.errors[0]!.kind).toBe('unavailable');
    expect(got.errors[0]!.message).toMatch(/cannot reach Deepgram at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);
  });

  it('a slow provider: withTimeout turns the missing final into a timeout, and nothing follows', async () => {
    const { fake, recognizer } = await setup({ script: ['late words'] });
    fake.delayMs = 400;
    const clock = new FakeClock();
    const stream = withTimeout(recognizer.start({ language: 'en-IN', sampleRateHz: RATE }), 300, clock, 'deepgram');
    const got = record(stream);
    pushAll(stream, concat([tone(500), silence(100)]));
    await fake.until(() => (fake.connections[0]?.bytes ?? 0) === RATE * 0.6 * 2);
    stream.finish();
    clock.advance(300);
    expect(got.errors.map((e) => e.toData())).toEqual([
      { kind: 'timeout', provider: 'deepgram', message: 'deepgram: no transcript within 300 ms of the end of speech' },
    ]);
    expect(stream.state).toBe('failed');
    await sleep(600); // the slow answers arrive, or would, after the cancel
    expect(got.finals).toEqual([]);
    expect(got.errors).toHaveLength(1);
  });

  it('never puts the API key in an error, a handshake record or a message', async () => {
    const errors: RecognizerError[] = [];
    for (const faults of [
      [{ reject: 401 }],
      [{ reject: 429 }, { reject: 429 }],
      [{ dropAfterBytes: 100 }, { dropAfterBytes: 100 }],
      [{ reject: 500 }, { reject: 403 }],
    ]) {
      const { fake, recognizer } = await setup({ faults });
      const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
      const got = record(stream);
      pushAll(stream, tone(100));
      await until(() => got.errors.length === 1);
      errors.push(...got.errors);
      expect(JSON.stringify(fake.handshakes)).not.toContain(KEY);
      await fake.close();
    }
    expect(errors.map((e) => e.kind)).toEqual(['unavailable', 'unavailable', 'crashed', 'unavailable']);
    for (const e of errors) {
      expect(e.message).not.toContain(KEY);
      expect(JSON.stringify(e.toData())).not.toContain(KEY);
      expect(e.stack ?? '').not.toContain(KEY);
    }
  });

  it('keeps the key out of sight: inspecting or serialising the recogniser or a stream shows no key', async () => {
    const { fake, recognizer } = await setup({ script: ['x'] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const shown = () => [
      util.inspect(recognizer, { depth: 8, showHidden: true }),
      util.inspect(stream, { depth: 8, showHidden: true }),
      JSON.stringify(recognizer),
    ];
    for (const s of shown()) expect(s).not.toContain(KEY); // handshake under way
    stream.push(tone(100));
    await fake.until(() => fake.connections[0]?.bytes === 3200);
    for (const s of shown()) expect(s).not.toContain(KEY); // open
    stream.cancel();
  });

  it('sends KeepAlive after keepAliveMs without audio, and not while audio flows', async () => {
    const clock = new FakeClock();
    const { fake, recognizer } = await setup({}, { clock });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    stream.push(silence(100));
    await fake.until(() => fake.connections[0]?.bytes === 3200); // open: the audio went out
    const keepAlives = () => fake.messages.filter((m) => m.type === 'KeepAlive').length;
    clock.advance(4999);
    await sleep(50);
    expect(keepAlives()).toBe(0);
    clock.advance(1);
    await fake.until(() => keepAlives() === 1);
    for (let i = 0; i < 10; i++) {
      clock.advance(1000); // audio every second: no KeepAlive
      stream.push(silence(20));
    }
    await fake.until(() => fake.connections[0]!.bytes === 3200 + 10 * 640);
    expect(keepAlives()).toBe(1);
    clock.advance(5000);
    await fake.until(() => keepAlives() === 2);
    stream.cancel();
  });

  it('cancel() closes the socket and delivers nothing more', async () => {
    const { fake, recognizer } = await setup({ script: ['ignored'] });
    const stream = recognizer.start({ language: 'en-IN', sampleRateHz: RATE });
    const got = record(stream);
    pushAll(stream, tone(400));
    await fake.until(() => fake.connections[0]?.bytes === RATE * 0.4 * 2);
    stream.cancel();
    expect(stream.state).toBe('cancelled');
    await fake.until(() => fake.connections[0]!.closed);
    expect(() => stream.finish()).toThrow(/cancelled/);
    expect(() => stream.push(tone(20))).toThrow(/cancelled/);
    await sleep(50);
    expect(got).toEqual({ partials: [], finals: [], errors: [] });
  });
});

const RATE_LIMIT_WAIT = 700;

describe('checkDeepgram', () => {
  it('is ok when the key opens a socket', async () => {
    const { fake } = await setup();
    const result = await checkDeepgram({ apiKey: KEY, url: fake.url });
    expect(result).toEqual({ ok: true, detail: expect.stringContaining('accepted the API key') });
    await fake.until(() => fake.connections[0]?.closed === true);
    expect(fake.messages.map((m) => m.type)).toEqual(['CloseStream']);
    expect(fake.connections[0]!.bytes).toBe(0);
  });

  it('explains a rejected key, rate limiting and an unreachable host in plain words, without the key', async () => {
    const { fake } = await setup();
    const bad = await checkDeepgram({ apiKey: 'not-the-key-123456', url: fake.url });
    expect(bad).toEqual({
      ok: false,
      problem: 'unauthenticated',
      message: 'Deepgram rejected the API key (401): check DEEPGRAM_API_KEY',
    });
    fake.faults.push({ reject: 429 });
    expect(await checkDeepgram({ apiKey: KEY, url: fake.url })).toMatchObject({ ok: false, problem: 'rate_limited' });
    const url = fake.url;
    await fake.close();
    const down = await checkDeepgram({ apiKey: KEY, url, timeoutMs: 2000 });
    expect(down).toMatchObject({ ok: false, problem: 'unreachable' });
    expect(down.ok === false && down.message).toMatch(/^cannot reach Deepgram at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)$/);
    expect(JSON.stringify([bad, down])).not.toContain(KEY);
    expect(await checkDeepgram({ apiKey: '', url })).toMatchObject({ ok: false, problem: 'unauthenticated' });
  });

  it('reports a host that never answers as unreachable within the deadline', async () => {
    const sockets: net.Socket[] = [];
    const server = net.createServer((s) => sockets.push(s));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    servers.push({
      close: (cb) => {
        for (const s of sockets) s.destroy();
        server.close(() => cb());
      },
    });
    const result = await checkDeepgram({
      apiKey: KEY,
      url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/v1/listen`,
      timeoutMs: 150,
    });
    expect(result).toMatchObject({
      ok: false,
      problem: 'unreachable',
      message: expect.stringContaining('did not answer within 150 ms'),
    });
  });
});
