/**
 * CarrierTransport (src/media/carrier-transport.ts): per dialect, a scripted carrier client
 * feeds the docs' frames carrying real synthesised speech (eSpeak NG, taken to the dialect's
 * format with src/media/audio.ts) and checks what reaches the listener and what goes back on
 * the socket. Frame shapes follow the carriers' docs:
 * - Twilio: https://www.twilio.com/docs/voice/media-streams/websocket-messages
 * - Exotel: https://developer.exotel.com/docs/agentstream/websocket-protocol
 * - Plivo:  https://www.plivo.com/docs/voice-agents/audio-streaming/concepts/audio-streaming-reference
 *
 * The speech worker runs compiled: the current sources are transpiled first (as
 * test/unit/speech-espeak.test.ts does) so this file never runs a stale build.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { pcm16FromBytes, pcm16ToBytes } from '../../src/media/audio.js';
import { decodeMulaw, encodeMulaw } from '../../src/media/audio-g711.js';
import { resample } from '../../src/media/audio-resample.js';
import { CLOSE_CODES, type CarrierSocket, type CarrierStartInfo } from '../../src/media/carrier-socket.js';
import { CarrierTransport } from '../../src/media/carrier-transport.js';
import { exotelChunkRules, MAX_FRAME_CHARS, MAX_MEDIA_PAYLOAD_BYTES, type CarrierDialect } from '../../src/media/carriers/index.js';
import type { StopReason, TransportListener } from '../../src/media/transport.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { concat } from '../support/media.js';

const j = (v: unknown) => JSON.stringify(v);

/** A socket that records what the transport sends and how it closes. */
class RecordingSocket implements CarrierSocket {
  readonly sent: string[] = [];
  readonly closes: { code: number; reason: string }[] = [];
  send(text: string): void {
    this.sent.push(text);
  }
  close(code: number, reason: string): void {
    this.closes.push({ code, reason });
  }
  get messages(): Record<string, unknown>[] {
    return this.sent.map((s) => JSON.parse(s) as Record<string, unknown>);
  }
}

/** A listener that records every event. */
class RecordingListener implements TransportListener {
  readonly audio: Int16Array[] = [];
  readonly dtmf: string[] = [];
  readonly acks: string[] = [];
  readonly stops: StopReason[] = [];
  onAudio(pcm: Int16Array): void {
    this.audio.push(pcm);
  }
  onDtmf(digit: string): void {
    this.dtmf.push(digit);
  }
  onMarkAck(name: string): void {
    this.acks.push(name);
  }
  onStop(reason: StopReason): void {
    this.stops.push(reason);
  }
  get samples(): Int16Array {
    return concat(this.audio);
  }
}

/** `bytes` cut into chunks of `size` (the last may be shorter). */
function chunks(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let at = 0; at < bytes.length; at += size) out.push(bytes.subarray(at, Math.min(bytes.length, at + size)));
  return out;
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

function setup(dialect: CarrierDialect) {
  const socket = new RecordingSocket();
  const listener = new RecordingListener();
  const started: CarrierStartInfo[] = [];
  const transport = new CarrierTransport(dialect, socket, { onStarted: (info) => started.push(info) });
  transport.listen(listener);
  return { socket, listener, started, transport };
}

// ------------------------------------------------------------------------------------------
// The docs' frames

const TW_SID = 'MZ18ad3ab5a668481ce02b83e7395059f0';
const tw = {
  connected: { event: 'connected', protocol: 'Call', version: '1.0.0' },
  start: {
    event: 'start',
    sequenceNumber: '1',
    start: {
      accountSid: 'AC123',
      streamSid: TW_SID,
      callSid: 'CA123',
      tracks: ['inbound'],
      mediaFormat: { encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 },
      customParameters: { call_id: 'call_abc', agent_id: 'ag_clinic' },
    },
    streamSid: TW_SID,
  },
  media: (payload: Uint8Array, n: number) => ({
    event: 'media',
    sequenceNumber: String(n + 2),
    media: { track: 'inbound', chunk: String(n + 1), timestamp: String(n * 20), payload: b64(payload) },
    streamSid: TW_SID,
  }),
  dtmf: (digit: string) => ({ event: 'dtmf', streamSid: TW_SID, sequenceNumber: '900', dtmf: { track: 'inbound_track', digit } }),
  mark: (name: string) => ({ event: 'mark', sequenceNumber: '901', streamSid: TW_SID, mark: { name } }),
  stop: { event: 'stop', sequenceNumber: '902', stop: { accountSid: 'AC123', callSid: 'CA123' }, streamSid: TW_SID },
};

const EX_SID = 'MZxxxxxxxxxxxxxxxxxxxxxxxx';
const ex = {
  connected: { event: 'connected' },
  start: (media_format: Record<string, string> = { encoding: 'audio/x-raw', sample_rate: '8000', bit_rate: '16' }) => ({
    event: 'start',
    sequence_number: '1',
    stream_sid: EX_SID,
    start: {
      stream_sid: EX_SID,
      call_sid: 'CAxxxxxxxxxxxxxxxxxxxxxxxx',
      account_sid: 'ACxxxxxxxxxxxxxxxxxxxxxxxx',
      from: '+919876543210',
      to: '+918047491899',
      custom_parameters: { agent_id: 'ag_clinic' },
      media_format,
    },
  }),
  media: (payload: Uint8Array, n: number) => ({
    event: 'media',
    sequence_number: String(n + 2),
    stream_sid: EX_SID,
    media: { chunk: String(n + 1), timestamp: String(n * 100), payload: b64(payload) },
  }),
  dtmf: (digit: string) => ({ event: 'dtmf', sequence_number: '900', stream_sid: EX_SID, dtmf: { digit, duration: '100' } }),
  mark: (name: string) => ({ event: 'mark', sequence_number: '901', stream_sid: EX_SID, mark: { name } }),
  stop: {
    event: 'stop',
    sequence_number: '902',
    stream_sid: EX_SID,
    stop: { call_sid: 'CA', account_sid: 'AC', reason: 'callended' },
  },
};

const PL_SID = '87654321-4321-4321-4321-cba987654321';
const pl = {
  start: (mediaFormat: Record<string, unknown>) => ({
    event: 'start',
    sequenceNumber: 1,
    start: {
      callId: '12345678-1234-1234-1234-123456789abc',
      streamId: PL_SID,
      accountId: 'MAXXXXXXXXXXXXXXXXXX',
      tracks: ['inbound'],
      mediaFormat,
    },
    extra_headers: 'call_id=call_xyz;stream_token=tok123',
  }),
  media: (payload: Uint8Array, n: number) => ({
    event: 'media',
    sequenceNumber: n + 2,
    streamId: PL_SID,
    media: { track: 'inbound', timestamp: String(1705312200000 + n * 20), chunk: n + 1, payload: b64(payload) },
  }),
  dtmf: (digit: string) => ({ event: 'dtmf', sequenceNumber: 900, streamId: PL_SID, dtmf: { digit } }),
  played: (name: string) => ({ event: 'playedStream', sequenceNumber: 901, streamId: PL_SID, name }),
};

// ------------------------------------------------------------------------------------------
// Real speech

let speech48k: Int16Array;

beforeAll(async () => {
  const [audio] = await synthesizeLines('carrier-transport-test', ['My name is Priya Sharma. Tomorrow at five pm.']);
  expect(audio!.sampleRate).toBe(48000);
  speech48k = audio!.samples;
}, 60_000);

/** The speech at `rate` Hz, trimmed to whole 20 ms frames. */
function speechAt(rate: number): Int16Array {
  const pcm = resample(speech48k, 48000, rate);
  const frame = (rate * 20) / 1000;
  return pcm.subarray(0, pcm.length - (pcm.length % frame));
}

/** RMS of `x`. */
const rms = (x: Int16Array) => Math.sqrt(x.reduce((a, v) => a + v * v, 0) / Math.max(1, x.length));

/** Asserts the listener got `expected` (16 kHz) exactly: the stream's resampling equals the one-shot one. */
function expectAudio(listener: RecordingListener, source: Int16Array, rate: number): void {
  const got = listener.samples;
  const durationMs = (source.length * 1000) / rate;
  expect(durationMs).toBeGreaterThan(1500);
  expect(got.length).toBe(Math.ceil((source.length * 16000) / rate));
  expect(Math.abs(got.length / 16 - durationMs)).toBeLessThan(1);
  expect(got).toEqual(resample(source, rate, 16000));
  expect(rms(got)).toBeGreaterThan(500); // speech, not silence
}

// ------------------------------------------------------------------------------------------

describe('Twilio Media Streams transport', { timeout: 30_000 }, () => {
  it('hands the speech over as 16 kHz PCM of its duration, with DTMF, mark acks and one stop', () => {
    const { socket, listener, started, transport } = setup('twilio');
    const pcm8k = speechAt(8000);
    const mulaw = encodeMulaw(pcm8k);
    const sent = decodeMulaw(mulaw); // what the caller's side actually carries
    transport.receive(j(tw.connected));
    transport.receive(j(tw.start));
    expect(started).toEqual([
      {
        dialect: 'twilio',
        streamId: TW_SID,
        callId: 'CA123',
        accountId: 'AC123',
        customParameters: { call_id: 'call_abc', agent_id: 'ag_clinic' },
        format: { encoding: 'mulaw', sampleRate: 8000 },
        outbound: { encoding: 'mulaw', sampleRate: 8000, frameBytes: 160, minLeadFrames: 1 },
      },
    ]);
    chunks(mulaw, 160).forEach((c, n) => transport.receive(j(tw.media(c, n))));
    transport.receive(j(tw.dtmf('1')));
    transport.receive(j(tw.dtmf('#')));
    transport.receive(j(tw.mark('opening-1')));
    transport.receive(j(tw.stop));
    expectAudio(listener, sent, 8000);
    expect(listener.dtmf).toEqual(['1', '#']);
    expect(listener.acks).toEqual(['opening-1']);
    expect(listener.stops).toEqual(['caller-hangup']);
    expect(transport.stopped).toBe('caller-hangup');
    expect(socket.sent).toEqual([]);
    expect(transport.stats).toMatchObject({
      mediaFramesIn: mulaw.length / 160,
      bytesIn: mulaw.length,
      protocolErrors: 0,
      samplesOut: listener.samples.length,
    });
  });

  it('plays frames, marks and clear as the exact Twilio JSON, one media message per 20 ms frame', () => {
    const { socket, transport } = setup('twilio');
    transport.receive(j(tw.start));
    const frames = chunks(encodeMulaw(speechAt(8000)), 160).slice(0, 3);
    for (const f of frames) transport.play(f);
    transport.mark('reply-1');
    transport.clear();
    expect(socket.sent).toEqual([
      ...frames.map((f) => `{"event":"media","streamSid":"${TW_SID}","media":{"payload":"${b64(f)}"}}`),
      `{"event":"mark","streamSid":"${TW_SID}","mark":{"name":"reply-1"}}`,
      `{"event":"clear","streamSid":"${TW_SID}"}`,
    ]);
    expect(transport.stats).toMatchObject({ framesOut: 5, bytesOut: 480, framesPlayed: 3 });
    expect(() => transport.play(new Uint8Array(320))).toThrow(RangeError);
    expect(() => transport.mark('')).toThrow(RangeError);
  });
});

describe('Exotel AgentStream transport', { timeout: 30_000 }, () => {
  it('hands 8 kHz slin speech over as 16 kHz PCM, with DTMF, mark acks and one stop', () => {
    const { socket, listener, started, transport } = setup('exotel');
    const pcm8k = speechAt(8000);
    transport.receive(j(ex.connected));
    transport.receive(j(ex.start()));
    expect(started[0]).toMatchObject({
      streamId: EX_SID,
      callId: 'CAxxxxxxxxxxxxxxxxxxxxxxxx',
      from: '+919876543210',
      to: '+918047491899',
      customParameters: { agent_id: 'ag_clinic' },
      format: { encoding: 'pcm16', sampleRate: 8000 },
      // 3200 B chunks = 200 ms of 8 kHz PCM16 = 10 frames.
      outbound: { encoding: 'pcm16le', sampleRate: 8000, frameBytes: 320, minLeadFrames: 10 },
    });
    chunks(pcm16ToBytes(pcm8k), 1600).forEach((c, n) => transport.receive(j(ex.media(c, n))));
    transport.receive(j(ex.dtmf('5')));
    transport.receive(j(ex.mark('greeting-done')));
    transport.receive(j(ex.stop));
    expectAudio(listener, pcm8k, 8000);
    expect(listener.dtmf).toEqual(['5']);
    expect(listener.acks).toEqual(['greeting-done']);
    expect(listener.stops).toEqual(['caller-hangup']);
    expect(socket.sent).toEqual([]);
  });

  it('aggregates 20 ms frames into valid chunks, pads before a mark, drops held frames on clear', () => {
    const { socket, transport } = setup('exotel');
    transport.receive(j(ex.start({ encoding: 'audio/x-raw', sample_rate: '16000', bit_rate: '16' })));
    expect(transport.outbound).toEqual({ encoding: 'pcm16le', sampleRate: 16000, frameBytes: 640, minLeadFrames: 5 });
    const bytes = pcm16ToBytes(speechAt(16000));
    const frames = chunks(bytes, 640).slice(0, 12);
    for (const f of frames.slice(0, 4)) transport.play(f);
    expect(socket.sent).toEqual([]); // 80 ms: not a chunk yet
    transport.play(frames[4]!);
    expect(socket.sent).toEqual([`{"event":"media","stream_sid":"${EX_SID}","media":{"payload":"${b64(bytes.subarray(0, 3200))}"}}`]);
    for (const f of frames.slice(5, 7)) transport.play(f); // 40 ms held
    transport.mark('reply-1');
    const padded = new Uint8Array(3200);
    padded.set(bytes.subarray(3200, 3200 + 1280));
    expect(socket.sent.slice(1)).toEqual([
      `{"event":"media","stream_sid":"${EX_SID}","media":{"payload":"${b64(padded)}"}}`,
      `{"event":"mark","stream_sid":"${EX_SID}","mark":{"name":"reply-1"}}`,
    ]);
    for (const f of frames.slice(7, 10)) transport.play(f); // held, then cleared: never sent
    transport.clear();
    expect(socket.sent.slice(3)).toEqual([`{"event":"clear","stream_sid":"${EX_SID}"}`]);
    transport.mark('after-clear');
    expect(socket.sent.slice(4)).toEqual([`{"event":"mark","stream_sid":"${EX_SID}","mark":{"name":"after-clear"}}`]);
    // Every media chunk sent keeps Exotel's rules.
    const rules = exotelChunkRules({ encoding: 'pcm16', sampleRate: 16000 });
    for (const m of socket.messages.filter((m) => m.event === 'media')) {
      const n = Buffer.from((m.media as { payload: string }).payload, 'base64').length;
      expect(n % rules.multipleBytes).toBe(0);
      expect(n).toBeGreaterThanOrEqual(rules.minBytes);
    }
  });

  it('μ-law 8 kHz streams chunk in 960 B (120 ms) and pad with μ-law silence', () => {
    const { socket, transport } = setup('exotel');
    transport.receive(j(ex.start({ encoding: 'audio/x-mulaw', sample_rate: '8000', bit_rate: '8' })));
    expect(transport.outbound).toMatchObject({ encoding: 'mulaw', frameBytes: 160, minLeadFrames: 6 });
    const frame = encodeMulaw(speechAt(8000).subarray(8000, 8160));
    transport.play(frame);
    transport.mark('m');
    const payload = Buffer.from((socket.messages[0]!.media as { payload: string }).payload, 'base64');
    expect(payload.length).toBe(960);
    expect(payload.subarray(0, 160).equals(Buffer.from(frame))).toBe(true);
    expect([...payload.subarray(160)].every((b) => b === 0xff)).toBe(true);
  });
});

describe('Plivo Audio Streams transport', { timeout: 30_000 }, () => {
  it('hands L16 16 kHz speech over unchanged in rate, with DTMF and playedStream; a socket closed without stop stops once with closed', () => {
    const { socket, listener, started, transport } = setup('plivo');
    const pcm16k = speechAt(16000);
    transport.receive(j(pl.start({ encoding: 'audio/x-l16', sampleRate: 16000 })));
    expect(started[0]).toMatchObject({
      streamId: PL_SID,
      callId: '12345678-1234-1234-1234-123456789abc',
      customParameters: { call_id: 'call_xyz', stream_token: 'tok123' },
      outbound: { encoding: 'pcm16le', sampleRate: 16000, frameBytes: 640, minLeadFrames: 1 },
    });
    chunks(pcm16ToBytes(pcm16k), 640).forEach((c, n) => transport.receive(j(pl.media(c, n))));
    transport.receive(j(pl.dtmf('#')));
    transport.receive(j(pl.played('opening')));
    transport.closed(1000);
    transport.closed(1006);
    expectAudio(listener, pcm16k, 16000);
    expect(listener.dtmf).toEqual(['#']);
    expect(listener.acks).toEqual(['opening']);
    expect(listener.stops).toEqual(['closed']);
    expect(socket.closes).toEqual([]);
  });

  it('hands μ-law 8 kHz speech over as 16 kHz PCM', () => {
    const { listener, transport } = setup('plivo');
    const mulaw = encodeMulaw(speechAt(8000));
    transport.receive(j(pl.start({ encoding: 'audio/x-mulaw', sampleRate: 8000 })));
    chunks(mulaw, 160).forEach((c, n) => transport.receive(j(pl.media(c, n))));
    transport.closed(1001);
    expectAudio(listener, decodeMulaw(mulaw), 8000);
    expect(listener.stops).toEqual(['closed']);
  });

  it('plays playAudio, checkpoint and clearAudio as the exact Plivo JSON', () => {
    const { socket, transport } = setup('plivo');
    transport.receive(j(pl.start({ encoding: 'audio/x-l16', sampleRate: 8000 })));
    const frame = pcm16ToBytes(speechAt(8000).subarray(4000, 4160));
    transport.play(frame);
    transport.mark('reply-1');
    transport.clear();
    expect(socket.sent).toEqual([
      `{"event":"playAudio","media":{"contentType":"audio/x-l16","sampleRate":8000,"payload":"${b64(frame)}"}}`,
      `{"event":"checkpoint","streamId":"${PL_SID}","name":"reply-1"}`,
      `{"event":"clearAudio","streamId":"${PL_SID}"}`,
    ]);
    expect(pcm16FromBytes(Buffer.from((socket.messages[0]!.media as { payload: string }).payload, 'base64'))).toEqual(
      speechAt(8000).subarray(4000, 4160),
    );
  });
});

describe('protocol errors, stops and hang-up', () => {
  const startOf: Record<CarrierDialect, unknown> = {
    twilio: tw.start,
    exotel: ex.start(),
    plivo: pl.start({ encoding: 'audio/x-mulaw', sampleRate: 8000 }),
  };
  const mediaOf: Record<CarrierDialect, (p: Uint8Array, n: number) => unknown> = {
    twilio: tw.media,
    exotel: ex.media,
    plivo: pl.media,
  };

  for (const dialect of ['twilio', 'exotel', 'plivo'] as const) {
    describe(dialect, () => {
      it('closes with 1008 and stops once with error on a malformed frame, never throwing', () => {
        const { socket, listener, transport } = setup(dialect);
        transport.receive(j(startOf[dialect]));
        expect(() => transport.receive('{"event": "media", ')).not.toThrow();
        expect(socket.closes).toHaveLength(1);
        expect(socket.closes[0]!.code).toBe(CLOSE_CODES.policy);
        expect(socket.closes[0]!.reason).toMatch(/^malformed_json: /);
        expect(Buffer.byteLength(socket.closes[0]!.reason)).toBeLessThanOrEqual(123);
        transport.receive('also garbage');
        transport.closed(1006);
        expect(listener.stops).toEqual(['error']);
        expect(socket.closes).toHaveLength(1);
        expect(transport.stats.protocolErrors).toBe(1);
        expect(transport.lastError).toMatchObject({ code: 'malformed_json', dialect });
      });

      it('closes with 1008 on media before start', () => {
        const { socket, listener, transport } = setup(dialect);
        transport.receive(j(mediaOf[dialect](new Uint8Array(160).fill(0xff), 0)));
        expect(socket.closes).toEqual([{ code: 1008, reason: expect.stringMatching(/^out_of_order: /) as unknown as string }]);
        expect(listener.stops).toEqual(['error']);
        expect(listener.audio).toEqual([]);
      });

      it('closes with 1008 on a second start', () => {
        const { socket, listener, started, transport } = setup(dialect);
        transport.receive(j(startOf[dialect]));
        transport.receive(j(startOf[dialect]));
        expect(started).toHaveLength(1);
        expect(socket.closes.map((c) => c.code)).toEqual([1008]);
        expect(listener.stops).toEqual(['error']);
      });

      it('closes with 1009 on an oversized frame or payload', () => {
        const big = setup(dialect);
        big.transport.receive(j(startOf[dialect]));
        big.transport.receive('{"event":"media","x":"' + 'a'.repeat(MAX_FRAME_CHARS) + '"}');
        expect(big.socket.closes.map((c) => c.code)).toEqual([1009]);
        expect(big.listener.stops).toEqual(['error']);
        const payload = setup(dialect);
        payload.transport.receive(j(startOf[dialect]));
        payload.transport.receive(j(mediaOf[dialect](new Uint8Array(MAX_MEDIA_PAYLOAD_BYTES + 2), 0)));
        expect(payload.socket.closes.map((c) => c.code)).toEqual([1009]);
        expect(payload.listener.stops).toEqual(['error']);
      });

      it('stops once with closed when the socket ends without stop, and sends nothing after hang-up', () => {
        const a = setup(dialect);
        a.transport.receive(j(startOf[dialect]));
        a.transport.closed(1006);
        a.transport.closed(1006);
        a.transport.receive(j(mediaOf[dialect](new Uint8Array(160).fill(0xff), 0)));
        expect(a.listener.stops).toEqual(['closed']);
        expect(a.listener.audio).toEqual([]);

        const b = setup(dialect);
        b.transport.receive(j(startOf[dialect]));
        const frame = new Uint8Array(b.transport.outbound.frameBytes);
        b.transport.play(frame);
        b.transport.mark('x');
        const before = b.socket.sent.length;
        b.transport.hangup();
        b.transport.hangup();
        b.transport.play(frame);
        b.transport.mark('y');
        b.transport.clear();
        b.transport.receive(j(mediaOf[dialect](new Uint8Array(160).fill(0xff), 1)));
        b.transport.closed(1000);
        expect(b.socket.sent.length).toBe(before);
        expect(b.socket.closes).toEqual([{ code: 1000, reason: 'hangup' }]);
        expect(b.listener.stops).toEqual(['hangup']);
      });
    });
  }

  it('a frame after the carrier’s stop closes with 1008 without a second onStop', () => {
    const { socket, listener, transport } = setup('twilio');
    transport.receive(j(tw.start));
    transport.receive(j(tw.stop));
    transport.receive(j(tw.media(new Uint8Array(160).fill(0xff), 0)));
    expect(socket.closes.map((c) => c.code)).toEqual([1008]);
    expect(listener.stops).toEqual(['caller-hangup']);
  });

  it('a listener that throws closes the stream with 1011 instead of throwing out of receive', () => {
    const socket = new RecordingSocket();
    const transport = new CarrierTransport('twilio', socket);
    const stops: StopReason[] = [];
    transport.listen({
      onAudio: () => {
        throw new Error('boom');
      },
      onDtmf: () => undefined,
      onMarkAck: () => undefined,
      onStop: (r) => stops.push(r),
    });
    transport.receive(j(tw.start));
    expect(() => transport.receive(j(tw.media(encodeMulaw(speechAt(8000).subarray(0, 800)), 0)))).not.toThrow();
    expect(socket.closes.map((c) => c.code)).toEqual([1011]);
    expect(stops).toEqual(['error']);
  });

  it('drops actions before start without sending', () => {
    const { socket, transport } = setup('plivo');
    transport.play(new Uint8Array(160));
    transport.mark('m');
    transport.clear();
    expect(socket.sent).toEqual([]);
    expect(transport.stats.droppedBeforeStart).toBe(3);
  });
});
