/**
 * The scripted carrier client (src/cli/simulator/sim-client.ts) against a small bot written
 * here: a real `ws` server on loopback that parses what the client sends with the daemon-side
 * dialect parsers (CarrierStream) and answers with their writers. Time is a FakeClock: the
 * tests move it and count frames and acknowledgements; nothing asserts wall-clock timings
 * (real time only lets loopback messages arrive).
 */
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer, type WebSocket } from 'ws';
import { FakeClock } from '../../src/media/fake-clock.js';
import { CarrierStream, exotelChunks, type CarrierDialect, type CarrierEvent } from '../../src/media/carriers/index.js';
import {
  prepareSimLine,
  simulateCall,
  SimConnectError,
  type SimCall,
  type SimEvent,
  type SimStep,
} from '../../src/cli/simulator/sim-client.js';
import { plivoExtraHeaders } from '../../src/media/carriers/sim-frames.js';

/** A bot: one connection at a time, every client frame parsed by the dialect's CarrierStream. */
interface Bot {
  url: string;
  stream: CarrierStream;
  events: CarrierEvent[];
  errors: string[];
  socket: () => WebSocket;
  close: () => Promise<void>;
}

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) {
    for (const c of s.clients) c.terminate();
    await new Promise<void>((r) => s.close(() => r()));
  }
});

async function bot(dialect: CarrierDialect, opts: { refuse?: number } = {}): Promise<Bot> {
  const wss = new WebSocketServer({
    port: 0,
    host: '127.0.0.1',
    verifyClient: (_info, cb) => (opts.refuse ? cb(false, opts.refuse, 'no') : cb(true)),
  });
  servers.push(wss);
  await once(wss, 'listening');
  const b: Bot = {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/v1/media/${dialect}`,
    stream: new CarrierStream(dialect),
    events: [],
    errors: [],
    socket: () => {
      const [s] = wss.clients;
      if (!s) throw new Error('no client connected');
      return s;
    },
    close: async () => undefined,
  };
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      try {
        b.events.push(b.stream.receive(data.toString('utf8')));
      } catch (err) {
        b.errors.push((err as Error).message);
      }
    });
  });
  return b;
}

/** Lets loopback messages flow for a moment (real time; the fake clock stands still). */
const settle = (ms = 15): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (cond()) return;
    await settle(5);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** Moves the fake clock by `ms` in `step` ms steps, letting I/O flow between steps. */
async function advance(clock: FakeClock, ms: number, step = 20): Promise<void> {
  for (let done = 0; done < ms; done += step) {
    clock.advance(Math.min(step, ms - done));
    await new Promise((r) => setImmediate(r));
  }
  await settle(5);
}

/** 16 kHz PCM: `ms` of a 440 Hz tone at amplitude 8000 (clearly speech for the client). */
function tone(ms: number): Int16Array {
  const n = (ms * 16000) / 1000;
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16000));
  return out;
}

function start(
  b: Bot,
  clock: FakeClock,
  steps: SimStep[],
  extra: Partial<Parameters<typeof simulateCall>[0]> = {},
): { call: SimCall; seen: SimEvent[] } {
  const call = simulateCall({ url: b.url, dialect: b.stream.dialect, steps, clock, ...extra });
  const seen: SimEvent[] = [];
  call.on('event', (e) => seen.push(e));
  return { call, seen };
}

const media = (b: Bot): Array<Extract<CarrierEvent, { type: 'media' }>> =>
  b.events.filter((e): e is Extract<CarrierEvent, { type: 'media' }> => e.type === 'media');

describe('scripted carrier client: what it sends parses as the carrier', () => {
  it.each(['twilio', 'exotel', 'plivo'] as const)(
    '%s: connected/start/media/dtmf/stop all pass the daemon-side parser, custom parameters intact',
    async (dialect) => {
      const b = await bot(dialect);
      const clock = new FakeClock(5000);
      const transcripts = JSON.stringify(['my name is Priya, Sharma', 'tomorrow; at 5 pm']);
      const { call } = start(
        b,
        clock,
        [{ kind: 'say', pcm: tone(200), text: 'hello', afterReplyMs: 0 }, { kind: 'dtmf', digits: '12#', gapMs: 100 }, { kind: 'hangup' }],
        {
          customParameters: { call_id: 'cl_1', from: '+919876543210', vagent_fake_transcripts: transcripts },
          from: '+919876543210',
          to: '+918047491899',
          replyTimeoutMs: 100,
        },
      );
      await until(() => b.events.some((e) => e.type === 'start'), 'start');
      await advance(clock, 2000);
      const timeline = await call.done;
      await until(() => b.stream.phase === 'stopped' || dialect === 'plivo', 'stop');
      expect(b.errors).toEqual([]);
      const types = b.events.map((e) => e.type);
      expect(types[0]).toBe(dialect === 'plivo' ? 'start' : 'connected');
      const st = b.events.find((e) => e.type === 'start') as Extract<CarrierEvent, { type: 'start' }>;
      expect(st.customParameters).toEqual({ call_id: 'cl_1', from: '+919876543210', vagent_fake_transcripts: transcripts });
      expect(JSON.parse(st.customParameters.vagent_fake_transcripts!)).toEqual(['my name is Priya, Sharma', 'tomorrow; at 5 pm']);
      expect(st.streamId).toBe(call.ids.streamId);
      expect(st.format).toEqual(dialect === 'exotel' ? { encoding: 'pcm16', sampleRate: 8000 } : { encoding: 'mulaw', sampleRate: 8000 });
      if (dialect !== 'twilio') expect([st.from, st.to]).toEqual(['+919876543210', '+918047491899']);
      expect(b.events.filter((e) => e.type === 'dtmf').map((e) => (e as { digit: string }).digit)).toEqual(['1', '2', '#']);
      // Plivo documents no stop frame: its socket just closes.
      expect(types.filter((e) => e === 'stop')).toHaveLength(dialect === 'plivo' ? 0 : 1);
      if (dialect !== 'plivo') expect(types.at(-1)).toBe('stop');
      expect(timeline.close).toMatchObject({ code: 1000, by: 'caller' });
      expect(timeline.turns.map((t) => t.kind)).toEqual(['say', 'dtmf']);
      expect(timeline.events.filter((e) => e.type === 'no_reply')).toHaveLength(2);
    },
  );

  it('plivo extra_headers: the string form when values allow it, the object form when they hold separators', () => {
    expect(plivoExtraHeaders({ call_id: 'cl_1', agent_id: 'ag_x' })).toBe('call_id=cl_1;agent_id=ag_x');
    expect(plivoExtraHeaders({ t: '["a,b"]' })).toEqual({ t: '["a,b"]' });
  });

  it('a line prepared once can be shared by calls of its format, and only by them', async () => {
    const line = prepareSimLine(tone(400), 16000, 'twilio');
    expect(line).toMatchObject({ dialect: 'twilio', format: { encoding: 'mulaw', sampleRate: 8000 }, speechMs: 400 });
    expect(line.frames).toHaveLength(20);
    expect(Buffer.from(line.frames[0]!, 'base64')).toHaveLength(160);
    expect(prepareSimLine(tone(400), 16000, 'exotel').frames.map((f) => Buffer.from(f, 'base64').length)).toEqual([1600, 1600, 1600, 1600]);
    // Silence around the speech is trimmed.
    const padded = new Int16Array(16000 + 6400);
    padded.set(tone(400), 8000);
    expect(prepareSimLine(padded, 16000, 'twilio').frames).toEqual(line.frames);
    expect(() =>
      simulateCall({
        url: 'ws://127.0.0.1:1',
        dialect: 'exotel',
        steps: [{ kind: 'say', prepared: line }],
        clock: new FakeClock(),
      }),
    ).toThrow(/prepared line is for twilio/);
    expect(() =>
      simulateCall({
        url: 'ws://127.0.0.1:1',
        dialect: 'twilio',
        steps: [{ kind: 'say', prepared: line, pcm: tone(20) }],
        clock: new FakeClock(),
      }),
    ).toThrow(/not both/);
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call } = start(b, clock, [{ kind: 'say', prepared: line }], { replyTimeoutMs: 100 });
    await until(() => b.stream.phase === 'started', 'start');
    await advance(clock, 800);
    call.hangup();
    await call.done;
    const sent = media(b).map((f) => f.payload.toString('base64'));
    const at = sent.indexOf(line.frames[0]!);
    expect(sent.slice(at, at + 20)).toEqual(line.frames);
  });

  it('refuses bad options before connecting', () => {
    const clock = new FakeClock();
    expect(() => simulateCall({ url: 'http://x', dialect: 'twilio', steps: [], clock })).toThrow(/ws:\/\//);
    expect(() => simulateCall({ url: 'ws://127.0.0.1:1', dialect: 'twilio', steps: [{ kind: 'dtmf', digits: '12x' }], clock })).toThrow(
      /digits/,
    );
    expect(() =>
      simulateCall({
        url: 'ws://127.0.0.1:1',
        dialect: 'twilio',
        steps: [],
        format: { encoding: 'pcm16', sampleRate: 8000 },
        clock,
      }),
    ).toThrow(/twilio does not stream/);
    expect(() =>
      simulateCall({ url: 'ws://127.0.0.1:1', dialect: 'twilio', steps: [{ kind: 'say', pcm: new Int16Array(0) }], clock }),
    ).toThrow(/pcm/);
  });
});

describe('scripted carrier client: pacing', () => {
  it.each([
    ['twilio', 20, 160, 1],
    ['exotel', 100, 1600, 20],
    ['plivo', 20, 160, 37],
  ] as const)(
    '%s: one %i ms frame of %i bytes per period, drift-free although every timer fires 7 ms late',
    async (dialect, frameMs, frameBytes, step) => {
      const b = await bot(dialect);
      const clock = new FakeClock(1234.5, () => 7);
      const { call } = start(b, clock, [], { timeoutMs: 60_000 });
      await until(() => b.stream.phase === 'started', 'start');
      await advance(clock, 3010, step);
      const frames = media(b);
      // Frames are due at t0 + k·frameMs, k = 1…: exactly 3000 / frameMs of them in 3 s.
      expect(frames).toHaveLength(3000 / frameMs);
      expect(frames.every((f) => f.payload.length === frameBytes)).toBe(true);
      expect(frames.reduce((n, f) => n + f.payload.length, 0)).toBe((3000 / frameMs) * frameBytes);
      expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i + 1));
      if (dialect !== 'plivo') expect(frames.map((f) => f.timestampMs)).toEqual(frames.map((_, i) => i * frameMs));
      await advance(clock, 1000, 250);
      expect(media(b)).toHaveLength(4000 / frameMs);
      call.hangup();
      const t = await call.done;
      expect(t.sent.frames).toBe(4000 / frameMs);
      expect(t.sent.maxSendLagMs).toBe(7);
    },
  );

  it("a line is sent as the dialect's audio, then silence resumes", async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [{ kind: 'say', pcm: tone(400), afterReplyMs: 0 }], { replyTimeoutMs: 100 });
    await until(() => b.stream.phase === 'started', 'start');
    await advance(clock, 1000);
    call.hangup();
    await call.done;
    const loud = media(b).map((f) => f.payload.some((x) => x !== 0xff && x !== 0x7f));
    expect(loud.filter(Boolean)).toHaveLength(20); // 400 ms of tone in 20 ms frames
    const first = loud.indexOf(true);
    expect(loud.slice(first, first + 20).every(Boolean)).toBe(true);
    expect(seen.map((e) => e.type)).toEqual(expect.arrayContaining(['no_reply', 'line_start', 'line_end']));
  });
});

describe("scripted carrier client: the phone's play-out", () => {
  it('acknowledges a mark only once the audio before it has played', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    const frame = Buffer.alloc(160, 0x55);
    for (let i = 0; i < 10; i++) b.socket().send(b.stream.writer.media(frame)); // 200 ms
    b.socket().send(b.stream.writer.mark('m1'));
    await until(() => seen.some((e) => e.type === 'reply_start'), 'reply');
    await settle(20);
    await advance(clock, 180);
    expect(b.events.filter((e) => e.type === 'markAck')).toEqual([]);
    await advance(clock, 40);
    expect(b.events.filter((e) => e.type === 'markAck')).toEqual([{ type: 'markAck', streamId: call.ids.streamId, name: 'm1' }]);
    expect(seen.find((e) => e.type === 'reply_start')).toMatchObject({ turn: -1 });
    call.hangup();
    const t = await call.done;
    expect(t.openingMs).toBeDefined();
    expect(t.received).toMatchObject({
      frames: 10,
      bytes: 1600,
      audioMs: 200,
      marks: 1,
      marksPlayed: 1,
      marksCleared: 0,
      clears: 0,
    });
    expect(t.received.lateness.max).toBe(0);
  });

  it('a mark with nothing queued is acknowledged at once', async () => {
    const b = await bot('exotel');
    const clock = new FakeClock();
    const { call } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    b.socket().send(b.stream.writer.mark('now'));
    await until(() => b.events.some((e) => e.type === 'markAck'), 'mark ack');
    call.hangup();
    await call.done;
  });

  it.each(['twilio', 'exotel'] as const)('%s clear: drops the queue and echoes the pending marks', async (dialect) => {
    const b = await bot(dialect);
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    const chunks =
      dialect === 'twilio'
        ? Array.from({ length: 50 }, () => Buffer.alloc(160, 0x55))
        : exotelChunks(Buffer.alloc(16000, 1), { encoding: 'pcm16', sampleRate: 8000 }, 3200); // 1 s in 200 ms chunks
    for (const c of chunks) b.socket().send(w.media(c));
    b.socket().send(w.mark('a'));
    for (const c of chunks) b.socket().send(w.media(c));
    b.socket().send(w.mark('b'));
    await until(() => seen.some((e) => e.type === 'reply_start'), 'reply');
    await settle(20);
    await advance(clock, 300);
    expect(b.events.filter((e) => e.type === 'markAck')).toEqual([]);
    b.socket().send(w.clear());
    await until(() => b.events.filter((e) => e.type === 'markAck').length === 2, 'echoed marks');
    expect(b.events.filter((e) => e.type === 'markAck').map((e) => (e as { name: string }).name)).toEqual(['a', 'b']);
    const clear = seen.find((e) => e.type === 'clear') as Extract<SimEvent, { type: 'clear' }>;
    expect(clear.marksPending).toBe(2);
    expect(clear.droppedMs).toBe(1700);
    expect(seen.filter((e) => e.type === 'mark').every((e) => (e as { by: string }).by === 'clear')).toBe(true);
    call.hangup();
    const t = await call.done;
    expect(t.received).toMatchObject({ marks: 2, marksPlayed: 0, marksCleared: 2, clears: 1 });
  });

  it('plivo clearAudio: answers clearedAudio and never acknowledges the dropped checkpoints', async () => {
    const b = await bot('plivo');
    const clock = new FakeClock();
    const { call } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    for (let i = 0; i < 20; i++) b.socket().send(w.media(Buffer.alloc(160, 0x55)));
    b.socket().send(w.mark('cp1'));
    await settle(30);
    await advance(clock, 100);
    b.socket().send(w.clear());
    await until(() => b.events.some((e) => e.type === 'cleared'), 'clearedAudio');
    await advance(clock, 1000);
    expect(b.events.filter((e) => e.type === 'markAck')).toEqual([]);
    call.hangup();
    const t = await call.done;
    expect(t.received).toMatchObject({ marks: 1, marksPlayed: 0, marksCleared: 0, clears: 1 });
  });

  it('counts a frame that arrives after the queue ran dry mid-clip as late, by the gap', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    b.socket().send(w.media(Buffer.alloc(160, 0x55)));
    await settle(20);
    await advance(clock, 40); // the 20 ms frame ran out 20 ms ago: the next is 20 ms late
    b.socket().send(w.media(Buffer.alloc(160, 0x55)));
    b.socket().send(w.mark('end'));
    await settle(20);
    await advance(clock, 100);
    b.socket().send(w.media(Buffer.alloc(160, 0x55))); // a new clip after a mark: not late
    await settle(20);
    call.hangup();
    const t = await call.done;
    expect(t.received.lateness).toMatchObject({ count: 3, max: 20 });
  });

  it('records protocol errors the carrier would refuse, and keeps going', async () => {
    const b = await bot('exotel');
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    b.socket().send(
      JSON.stringify({ event: 'media', stream_sid: call.ids.streamId, media: { payload: Buffer.alloc(320).toString('base64') } }),
    );
    b.socket().send(JSON.stringify({ event: 'media', stream_sid: 'other', media: { payload: Buffer.alloc(3200).toString('base64') } }));
    b.socket().send('not json');
    b.socket().send(Buffer.from([1, 2, 3]), { binary: true });
    await until(() => seen.filter((e) => e.type === 'protocol_error').length === 4, 'four errors');
    expect(seen.filter((e) => e.type === 'protocol_error').map((e) => (e as { code: string }).code)).toEqual([
      'oversized',
      'stream_mismatch',
      'malformed_json',
      'binary_frame',
    ]);
    call.hangup();
    const t = await call.done;
    expect(t.received.protocolErrors).toBe(4);
    expect(t.received.frames).toBe(0);
  });
});

describe('scripted carrier client: the call timeline', () => {
  it('response latency: end of the line → first reply frame; the next line waits for the reply to finish', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(
      b,
      clock,
      [
        { kind: 'say', pcm: tone(300), text: 'one' },
        { kind: 'say', pcm: tone(300), text: 'two', afterReplyMs: 100 },
      ],
      { replyQuietMs: 200, timeoutMs: 60_000 },
    );
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    for (let i = 0; i < 10; i++) b.socket().send(w.media(Buffer.alloc(160, 0x55))); // the opening, 200 ms
    await settle(20);
    await advance(clock, 200); // played
    expect(seen.some((e) => e.type === 'line_start')).toBe(false);
    await advance(clock, 220); // quiet for 200 ms: the caller speaks
    expect(seen.filter((e) => e.type === 'line_start')).toHaveLength(1);
    expect(seen.some((e) => e.type === 'line_end')).toBe(false);
    await advance(clock, 320); // 15 frames of tone
    const ended = seen.find((e) => e.type === 'line_end')!;
    expect(ended).toBeDefined();
    await advance(clock, 140);
    b.socket().send(w.media(Buffer.alloc(160, 0x55)));
    await until(() => seen.filter((e) => e.type === 'reply_start').length === 2, 'reply');
    const reply = seen.filter((e) => e.type === 'reply_start')[1] as Extract<SimEvent, { type: 'reply_start' }>;
    expect(reply.turn).toBe(0);
    expect(reply.atMs - ended.atMs).toBeCloseTo(reply.latencyMs, 0);
    expect(reply.latencyMs).toBeGreaterThanOrEqual(140);
    expect(reply.latencyMs).toBeLessThanOrEqual(200);
    await advance(clock, 280); // 20 played + 200 quiet + 100 pause not yet over
    expect(seen.filter((e) => e.type === 'line_start')).toHaveLength(1);
    await advance(clock, 80);
    expect(seen.filter((e) => e.type === 'line_start')).toHaveLength(2);
    call.hangup();
    const t = await call.done;
    expect(t.turns[0]).toMatchObject({ turn: 0, kind: 'say', text: 'one', bargeIn: false, latencyMs: reply.latencyMs });
    expect(t.events.map((e) => e.type)).toEqual(
      expect.arrayContaining(['open', 'start', 'reply_start', 'reply_end', 'line_start', 'line_end', 'hangup', 'closed']),
    );
  });

  it('barge-in: the caller talks over the reply; the clear is timed from the speech onset', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [{ kind: 'say', pcm: tone(1000), text: 'wait', bargeInAfterMs: 600 }], {
      timeoutMs: 60_000,
    });
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    for (let i = 0; i < 150; i++) b.socket().send(w.media(Buffer.alloc(160, 0x55))); // 3 s of reply
    b.socket().send(w.mark('reply'));
    await until(() => seen.some((e) => e.type === 'reply_start'), 'reply');
    await settle(20);
    await advance(clock, 580);
    expect(seen.some((e) => e.type === 'line_start')).toBe(false);
    await advance(clock, 40);
    const line = seen.find((e) => e.type === 'line_start') as Extract<SimEvent, { type: 'line_start' }>;
    expect(line).toMatchObject({ bargeIn: true, overReply: true });
    await advance(clock, 260);
    b.socket().send(w.clear());
    await until(() => seen.some((e) => e.type === 'clear'), 'clear');
    const clear = seen.find((e) => e.type === 'clear') as Extract<SimEvent, { type: 'clear' }>;
    expect(clear.turn).toBe(0);
    expect(clear.bargeInMs).toBeGreaterThanOrEqual(260);
    expect(clear.bargeInMs).toBeLessThanOrEqual(300);
    expect(b.events.filter((e) => e.type === 'markAck')).toEqual([{ type: 'markAck', streamId: call.ids.streamId, name: 'reply' }]);
    call.hangup(false);
    const t = await call.done;
    expect(t.turns[0]!.bargeInMs).toBe(clear.bargeInMs);
    expect(t.close.by).toBe('caller');
    expect(b.stream.phase).toBe('started'); // closed without stop
  });

  it('keys over the reply: pressed bargeInAfterMs into it; the clear is timed from the first key', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(b, clock, [{ kind: 'dtmf', digits: '98#', gapMs: 100, bargeInAfterMs: 600 }], {
      timeoutMs: 60_000,
    });
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    for (let i = 0; i < 150; i++) b.socket().send(w.media(Buffer.alloc(160, 0x55))); // 3 s of reply
    b.socket().send(w.mark('reply'));
    await until(() => seen.some((e) => e.type === 'reply_start'), 'reply');
    await settle(20);
    await advance(clock, 580);
    expect(seen.some((e) => e.type === 'dtmf')).toBe(false);
    await advance(clock, 40);
    await until(() => b.events.some((e) => e.type === 'dtmf'), 'the first key');
    expect(seen.filter((e) => e.type === 'dtmf').map((e) => (e as { digit: string }).digit)).toEqual(['9']);
    b.socket().send(w.clear());
    await until(() => seen.some((e) => e.type === 'clear'), 'clear');
    const clear = seen.find((e) => e.type === 'clear') as Extract<SimEvent, { type: 'clear' }>;
    expect(clear.turn).toBe(0);
    expect(clear.bargeInMs).toBeLessThanOrEqual(60);
    await advance(clock, 300);
    expect(b.events.filter((e) => e.type === 'dtmf').map((e) => (e as { digit: string }).digit)).toEqual(['9', '8', '#']);
    call.hangup(false);
    const t = await call.done;
    expect(t.turns[0]).toMatchObject({ kind: 'dtmf', digits: '98#', bargeIn: true, bargeInMs: clear.bargeInMs });
    expect(() =>
      simulateCall({
        url: 'ws://127.0.0.1:1',
        dialect: 'twilio',
        steps: [{ kind: 'dtmf', digits: '1', afterReplyMs: 1, bargeInAfterMs: 1 }],
        clock,
      }),
    ).toThrow(/do not go together/);
  });

  it('a hang-up after the reply waits until the reply to the last line has played, then sends stop', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call, seen } = start(
      b,
      clock,
      [
        { kind: 'say', pcm: tone(300), text: 'one' },
        { kind: 'hangup', afterReply: true },
      ],
      { replyQuietMs: 200, timeoutMs: 60_000 },
    );
    await until(() => b.stream.phase === 'started', 'start');
    const w = b.stream.writer;
    await advance(clock, 200); // no opening: the line goes after the reply timeout at the latest
    await advance(clock, 10_000);
    await until(() => seen.some((e) => e.type === 'line_start'), 'the line');
    await advance(clock, 320);
    await until(() => seen.some((e) => e.type === 'line_end'), 'the line ends');
    // Before any reply the caller stays on the line.
    await advance(clock, 1000);
    expect(seen.some((e) => e.type === 'hangup')).toBe(false);
    for (let i = 0; i < 25; i++) b.socket().send(w.media(Buffer.alloc(160, 0x55))); // a 500 ms reply
    await until(() => seen.some((e) => e.type === 'reply_start' && e.turn === 0), 'the reply');
    await settle(20);
    await advance(clock, 500); // played
    await advance(clock, 150); // not yet quiet for 200 ms
    expect(seen.some((e) => e.type === 'hangup')).toBe(false);
    await advance(clock, 80);
    expect(seen.find((e) => e.type === 'hangup')).toMatchObject({ type: 'hangup', stop: true });
    const t = await call.done;
    expect(t.close.by).toBe('caller');
    await until(() => b.stream.phase === 'stopped', 'stop');
  });

  it('the bot hanging up ends the timeline with its close code', async () => {
    const b = await bot('exotel');
    const clock = new FakeClock();
    const { call } = start(b, clock, [], { timeoutMs: 60_000 });
    await until(() => b.stream.phase === 'started', 'start');
    b.socket().close(1000, 'bye');
    const t = await call.done;
    expect(t.close).toEqual({ code: 1000, reason: 'bye', by: 'bot' });
    expect(t.events.at(-1)).toMatchObject({ type: 'closed', by: 'bot' });
  });

  it('the call timeout hangs up with stop', async () => {
    const b = await bot('twilio');
    const clock = new FakeClock();
    const { call } = start(b, clock, [], { timeoutMs: 500 });
    await until(() => b.stream.phase === 'started', 'start');
    await advance(clock, 600);
    const t = await call.done;
    expect(t.events.map((e) => e.type)).toEqual(expect.arrayContaining(['timeout', 'hangup']));
    await until(() => b.stream.phase === 'stopped', 'stop');
  });
});

describe('scripted carrier client: connection errors', () => {
  it('a refused upgrade rejects with the HTTP status', async () => {
    const b = await bot('twilio', { refuse: 401 });
    const call = simulateCall({
      url: b.url,
      dialect: 'twilio',
      steps: [],
      clock: new FakeClock(),
      headers: { authorization: 'Bearer vk_wrong' },
    });
    const err = await call.done.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SimConnectError);
    expect(err).toMatchObject({ kind: 'refused', status: 401 });
    expect((err as Error).message).not.toContain('vk_wrong');
  });

  it('no server rejects as unreachable', async () => {
    const b = await bot('twilio');
    const url = b.url;
    for (const s of servers.splice(0)) await new Promise<void>((r) => s.close(() => r()));
    const err = await simulateCall({ url, dialect: 'twilio', steps: [], clock: new FakeClock() }).done.catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'SimConnectError', kind: 'unreachable' });
  });
});
