/**
 * The fake Deepgram server (src/devtools/fake-deepgram.ts) driven by a plain WebSocket client:
 * the handshake checks, the message shapes and timing of Deepgram's listen protocol, and the
 * injectable faults.
 */
import { afterEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startFakeDeepgram, type FakeDeepgram } from '../../src/devtools/fake-deepgram.js';
import { concat } from '../support/media.js';

const RATE = 16000;
const KEY = 'fake-dg-key-abcdef123456';
const QUERY =
  'model=nova-3&language=en-IN&encoding=linear16&sample_rate=16000&channels=1&interim_results=true&endpointing=300&utterance_end_ms=1000&vad_events=true';

function tone(ms: number): Int16Array {
  const out = new Int16Array(Math.round((RATE * ms) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 300 * i) / RATE));
  return out;
}
const silence = (ms: number) => new Int16Array(Math.round((RATE * ms) / 1000));
const bytes = (pcm: Int16Array) => Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);

/** Resolves once `predicate` holds (polled every 5 ms); fails after 5 s. */
async function until(predicate: () => boolean): Promise<void> {
  const end = Date.now() + 5000;
  while (!predicate()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

let fake: FakeDeepgram;
afterEach(async () => {
  await fake?.close();
});

/** Opens a client socket; records the answers, the refused status or the close. */
function client(url: string, headers: Record<string, string> = { Authorization: `Token ${KEY}` }) {
  const ws = new WebSocket(url, { headers });
  const got: Array<Record<string, unknown>> = [];
  const state: { status?: number; body?: string; close?: { code: number; reason: string } } = {};
  const opened = new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const ended = new Promise<void>((resolve) => {
    ws.on('unexpected-response', (_req, res) => {
      state.status = res.statusCode;
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => {
        state.body = body;
        resolve();
      });
    });
    ws.on('close', (code, reason) => {
      state.close = { code, reason: reason.toString() };
      resolve();
    });
  });
  ws.on('error', () => undefined);
  ws.on('message', (data) => got.push(JSON.parse(data.toString()) as Record<string, unknown>));
  return { ws, got, state, opened, ended };
}

describe('fake Deepgram', () => {
  it('refuses a missing or wrong key with 401 and an INVALID_AUTH body, recording no key', async () => {
    fake = await startFakeDeepgram({ apiKey: KEY });
    for (const headers of [{}, { Authorization: 'Token nope' }, { Authorization: `Bearer ${KEY}` }] as Array<Record<string, string>>) {
      const c = client(`${fake.url}?${QUERY}`, headers);
      await c.ended;
      expect(c.state.status).toBe(401);
      expect(JSON.parse(c.state.body!)).toMatchObject({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' });
    }
    expect(fake.handshakes.map((h) => h.status)).toEqual([401, 401, 401]);
    expect(fake.connections).toEqual([]);
    expect(JSON.stringify(fake.handshakes)).not.toContain(KEY);
  });

  it('refuses bad query parameters with 400 as Deepgram does, and unknown paths with 404', async () => {
    fake = await startFakeDeepgram({ apiKey: KEY });
    const cases: Array<[string, number]> = [
      [`${fake.url}?encoding=wav16&sample_rate=16000`, 400],
      [`${fake.url}?encoding=linear16`, 400],
      [`${fake.url}?encoding=linear16&sample_rate=16k`, 400],
      [`${fake.url}?encoding=linear16&sample_rate=16000&interim_results=yes`, 400],
      [fake.url.replace('/v1/listen', '/v1/speak') + `?${QUERY}`, 404],
    ];
    for (const [url, status] of cases) {
      const c = client(url);
      await c.ended;
      expect(c.state.status, url).toBe(status);
    }
    const ok = client(`${fake.url}?${QUERY}`);
    await ok.opened;
    ok.ws.close();
  });

  it('speaks the listen protocol: SpeechStarted, interims, a speech_final final, UtteranceEnd, then Metadata and a 1000 close on CloseStream', async () => {
    fake = await startFakeDeepgram({ apiKey: KEY, script: [{ text: 'mera naam Priya hai', confidence: 0.9 }] });
    const c = client(`${fake.url}?${QUERY}`);
    await c.opened;
    c.ws.send(bytes(concat([silence(200), tone(1000), silence(1500)])));
    await until(() => c.got.some((m) => m.type === 'UtteranceEnd'));
    c.ws.send(JSON.stringify({ type: 'CloseStream' }));
    await c.ended;
    expect(c.state.close).toEqual({ code: 1000, reason: '' });
    const types = c.got.map((m) =>
      m.type === 'Results' ? (m.is_final ? (m.speech_final ? 'final+speech_final' : 'final') : 'interim') : m.type,
    );
    // CloseStream flushes the silence after the endpoint as an empty final, then Metadata
    expect(types).toEqual(['SpeechStarted', 'interim', 'interim', 'interim', 'final+speech_final', 'UtteranceEnd', 'final', 'Metadata']);
    expect(c.got[6]).toMatchObject({
      start: 1.5,
      duration: 1.2,
      channel: { alternatives: [{ transcript: '', confidence: 0, words: [] }] },
    });
    expect(c.got[0]).toEqual({ type: 'SpeechStarted', channel: [0, 1], timestamp: 0.2 });
    expect(c.got.slice(1, 4).map((m) => (m.channel as any).alternatives[0].transcript)).toEqual(['mera', 'mera naam', 'mera naam Priya']);
    const final = c.got[4]!;
    expect(final).toMatchObject({
      type: 'Results',
      channel_index: [0, 1],
      start: 0,
      is_final: true,
      speech_final: true,
      metadata: { request_id: expect.any(String), model_uuid: expect.any(String) },
    });
    expect(final.duration).toBeCloseTo(1.5, 2); // 200 ms + 1000 ms of speech + 300 ms of endpointing silence
    const alt = (final.channel as any).alternatives[0];
    expect(alt).toMatchObject({ transcript: 'mera naam Priya hai', confidence: 0.9 });
    expect(alt.words.map((w: any) => w.punctuated_word)).toEqual(['mera', 'naam', 'Priya', 'hai']);
    expect(alt.words[0].start).toBeCloseTo(0.2, 2);
    expect(alt.words[3].end).toBeCloseTo(1.2, 2);
    expect(c.got[5]).toEqual({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: 1.2 });
    expect(c.got[7]).toMatchObject({
      type: 'Metadata',
      request_id: final.metadata && (final.metadata as any).request_id,
      duration: 2.7,
      channels: 1,
      sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(fake.remaining).toBe(0);
    expect(fake.messages).toEqual([{ connection: 0, type: 'CloseStream', afterBytes: 2.7 * RATE * 2 }]);
  });

  it('answers Finalize with a from_finalize final when audio is pending, and not otherwise', async () => {
    fake = await startFakeDeepgram({ apiKey: KEY, script: ['ek do teen'] });
    const c = client(`${fake.url}?${QUERY}`);
    await c.opened;
    c.ws.send(JSON.stringify({ type: 'Finalize' })); // nothing buffered: no answer
    c.ws.send(bytes(concat([tone(500), silence(100)])));
    c.ws.send(JSON.stringify({ type: 'Finalize' }));
    await until(() => c.got.some((m) => m.from_finalize === true));
    const final = c.got.find((m) => m.is_final === true)!;
    expect(final).toMatchObject({ from_finalize: true, is_final: true, speech_final: false, start: 0, duration: 0.6 });
    expect((final.channel as any).alternatives[0].transcript).toBe('ek do teen');
    expect(c.got.filter((m) => m.is_final === true)).toHaveLength(1);
    expect(fake.messages.map((m) => [m.type, m.afterBytes])).toEqual([
      ['Finalize', 0],
      ['Finalize', 0.6 * RATE * 2],
    ]);
    c.ws.close();
  });

  it('closes an idle socket with 1011 NET-0001; KeepAlive keeps it open', async () => {
    fake = await startFakeDeepgram({ apiKey: KEY, idleTimeoutMs: 1000 });
    const c = client(`${fake.url}?${QUERY}`);
    await c.opened;
    const opened = Date.now();
    for (let i = 0; i < 12; i++) {
      c.ws.send(JSON.stringify({ type: 'KeepAlive' })); // every ~100 ms: well inside the 1 s window
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(Date.now() - opened).toBeGreaterThan(1000); // open for longer than the idle window
    expect(c.state.close).toBeUndefined();
    await c.ended;
    expect(c.state.close).toEqual({ code: 1011, reason: 'NET-0001' });
    expect(fake.messages.filter((m) => m.type === 'KeepAlive')).toHaveLength(12);
  });

  it('injects faults per connection attempt: a refused handshake, a drop after bytes or time, slow answers', async () => {
    fake = await startFakeDeepgram({
      apiKey: KEY,
      script: ['slow one'],
      faults: [{ reject: 429 }, { reject: 500 }, { dropAfterBytes: 6400 }, { dropAfterMs: 50 }, { delayMs: 300 }],
    });
    for (const status of [429, 500]) {
      const c = client(`${fake.url}?${QUERY}`);
      await c.ended;
      expect(c.state.status).toBe(status);
    }
    const byBytes = client(`${fake.url}?${QUERY}`);
    await byBytes.opened;
    byBytes.ws.send(bytes(silence(100)));
    byBytes.ws.send(bytes(silence(100)));
    byBytes.ws.send(bytes(silence(100)));
    await byBytes.ended;
    expect(byBytes.state.close?.code).toBe(1006); // no close frame: a dropped connection
    expect(fake.connections[0]!.bytes).toBe(6400);

    const byTime = client(`${fake.url}?${QUERY}`);
    await byTime.opened;
    await byTime.ended;
    expect(byTime.state.close?.code).toBe(1006);

    const slow = client(`${fake.url}?${QUERY}`);
    await slow.opened;
    slow.ws.send(bytes(concat([tone(400), silence(400)])));
    const sentAt = Date.now();
    await until(() => slow.got.some((m) => m.speech_final === true));
    expect(Date.now() - sentAt).toBeGreaterThanOrEqual(290);
    slow.ws.close();
  });
});
