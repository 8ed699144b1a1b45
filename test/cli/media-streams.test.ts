/**
 * Robustness of the carrier media endpoint `GET /v1/media/{twilio,exotel,plivo}` (docs/media.md),
 * against one real daemon on loopback with the fake streaming recogniser
 * (`VAGENT_RECOGNIZER=fake`; each stream says what it will "hear" in the custom parameter
 * `vagent_fake_transcripts`) and real eSpeak caller audio at real-time pacing:
 * - auth on the upgrade: a wrong key is refused with 401, a stream without credentials or
 *   stream token is closed 1008 before its `start` opens anything, a valid stream token opens
 *   the call, a plain GET is a 400;
 * - malformed frames close the socket with the protocol's code (1008, 1009, 1003) and leave no
 *   session open;
 * - a caller that vanishes without `stop`, a recogniser that crashes or hangs, 20 calls at once
 *   over the three dialects, DTMF entry, and `POST /v1/calls/{id}/hangup` on a live stream.
 * The first two groups count calls and sessions, so they run alone; the calls after them run
 * concurrently (each is tens of seconds of real-time audio).
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  prepareSimLine,
  simulateCall,
  type SimCall,
  type SimPreparedLine,
  type SimStep,
  type SimTimeline,
} from '../../src/cli/simulator/sim-client.js';
import { defaultSimFormat, SimFrameWriter, simStreamIds } from '../../src/media/carriers/sim-frames.js';
import type { CarrierDialect } from '../../src/media/carriers/types.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';
import { synthesizeLines } from '../support/espeak-worker.js';

const DIALECTS: readonly CarrierDialect[] = ['twilio', 'exotel', 'plivo'];
const AGENT = 'ag_clinic_booking';
const NOT_HEARD = 'Sorry, I did not catch that';

let daemon: Daemon;
let key: string;
/** One spoken caller line per dialect, cut into that dialect's frames (the fake recogniser decides what it "says"). */
const line = new Map<CarrierDialect, SimPreparedLine>();

beforeAll(async () => {
  requireBuild();
  const [started, audio] = await Promise.all([
    startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } }),
    synthesizeLines('media-streams', ['my name is on the line']),
  ]);
  daemon = started;
  key = await adminKey(daemon.stateDir);
  for (const d of DIALECTS) line.set(d, prepareSimLine(audio[0]!.samples, audio[0]!.sampleRate, d));
}, 60_000);
afterAll(cleanupAll, 30_000);

const wsUrl = (dialect: CarrierDialect, query = ''): string => `${daemon.url.replace(/^http/, 'ws')}/v1/media/${dialect}${query}`;

/** What a hand-driven stream saw: the upgrade refused with an HTTP status, or the socket's close. */
interface RawOutcome {
  status?: number;
  body?: string;
  close?: { code: number; reason: string };
  /** Text frames the daemon sent before closing. */
  received: string[];
}

/**
 * Opens a stream by hand, sends `frames` in order (a Buffer as a binary frame), then waits for
 * the daemon to close it (or refuse the upgrade). Sends nothing more and never closes first.
 */
function rawStream(dialect: CarrierDialect, frames: Array<string | Buffer>, headers: Record<string, string> = {}): Promise<RawOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(dialect), { headers });
    const received: string[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${dialect}: the daemon neither refused nor closed the stream`));
    }, 15_000);
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (s: string) => {
        body += s;
      });
      res.on('end', () => {
        clearTimeout(timer);
        ws.terminate();
        resolve({ status: res.statusCode, body, received });
      });
    });
    ws.on('open', () => {
      for (const f of frames) ws.send(f, { binary: Buffer.isBuffer(f) });
    });
    ws.on('message', (data, isBinary) => {
      if (!isBinary) received.push(String(data));
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ close: { code, reason: reason.toString() }, received });
    });
    ws.on('error', () => undefined);
  });
}

/** A frame writer for a fresh stream of `dialect` in its default format. */
const writer = (dialect: CarrierDialect): SimFrameWriter => new SimFrameWriter(dialect, simStreamIds(dialect), defaultSimFormat(dialect));

async function listAll(route: '/v1/calls' | '/v1/sessions'): Promise<Array<Record<string, unknown>>> {
  const res = await api(daemon, 'GET', `${route}?limit=100`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.has_more).toBe(false);
  return res.body.data as Array<Record<string, unknown>>;
}

/** Calls and sessions of the tenant, and how many sessions are open. */
async function counts(): Promise<{ calls: number; sessions: number; open: number }> {
  const [calls, sessions] = await Promise.all([listAll('/v1/calls'), listAll('/v1/sessions')]);
  return { calls: calls.length, sessions: sessions.length, open: sessions.filter((s) => s.status === 'open').length };
}

async function health(): Promise<number> {
  return (await api(daemon, 'GET', '/v1/health')).status;
}

/** The call record a stream opened, found by the carrier's call id (stored as `provider_call_id`). */
async function callOf(carrierCallId: string): Promise<Record<string, unknown>> {
  const found = (await listAll('/v1/calls')).find((c) => c.provider_call_id === carrierCallId);
  expect(found, `no call record for carrier call ${carrierCallId}`).toBeDefined();
  return found!;
}

/** Polls `GET /v1/calls/{id}` until the call is completed (at most `timeoutMs`); returns its last view. */
async function completed(callId: string, timeoutMs = 15_000): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await api(daemon, 'GET', `/v1/calls/${callId}`, { key });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.status === 'completed' || Date.now() > until) return res.body as Record<string, unknown>;
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function sessionDetail(sessionId: string): Promise<Record<string, any>> {
  const res = await api(daemon, 'GET', `/v1/sessions/${sessionId}`, { key });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as Record<string, any>;
}

/** Starts a simulated caller on `dialect` (Bearer auth unless `headers` says otherwise) hearing `transcripts`. */
function call(
  dialect: CarrierDialect,
  transcripts: unknown[],
  steps: SimStep[],
  extra: { params?: Record<string, string>; headers?: Record<string, string> } = {},
): SimCall {
  return simulateCall({
    url: wsUrl(dialect),
    dialect,
    headers: extra.headers ?? { authorization: `Bearer ${key}` },
    customParameters: { agent_id: AGENT, vagent_fake_transcripts: JSON.stringify(transcripts), ...(extra.params ?? {}) },
    from: '+919800000001',
    to: '+918000000002',
    steps,
    timeoutMs: 80_000,
  });
}

const say = (dialect: CarrierDialect): SimStep => ({ kind: 'say', prepared: line.get(dialect)! });

/**
 * Runs a caller who says `lines` (steps), then hangs up (`stop` as given) as soon as the bot's
 * reply to the last of them starts playing, so the last turn has been taken; a caller whose
 * reply never comes hangs up after 30 s, and the test's checks say what is missing.
 */
function callThenHangUp(dialect: CarrierDialect, transcripts: unknown[], steps: SimStep[], stop = true): Promise<SimTimeline> {
  const last = steps.filter((s) => s.kind === 'say' || s.kind === 'dtmf').length - 1;
  const sim = call(dialect, transcripts, [...steps, { kind: 'wait', ms: 30_000 }, { kind: 'hangup', stop }]);
  sim.on('event', (e) => {
    if (e.type === 'reply_start' && e.turn === last) sim.hangup(stop);
  });
  return sim.done;
}

/** A session detail's raw turns. */
function turnsOf(detail: Record<string, any>): Array<Record<string, any>> {
  return detail.turns as Array<Record<string, any>>;
}

/** A session detail's captured values by slot (its `session.steps`). */
function slotsOf(detail: Record<string, any>): Record<string, unknown> {
  const steps = detail.session.steps as Array<{ slot: string | null; value: unknown }>;
  return Object.fromEntries(steps.filter((s) => s.slot !== null && s.value !== null).map((s) => [s.slot, s.value]));
}

describe('media endpoint: auth and malformed frames (run alone: they count calls and sessions)', { timeout: 60_000 }, () => {
  it('refuses unauthenticated streams before anything opens; a valid stream token opens the call; a plain GET is a 400', async () => {
    const before = await counts();

    // A wrong API key: 401 on the upgrade, no socket.
    const wrongKey = await rawStream('twilio', [], { authorization: 'Bearer vk_not_a_real_key_at_all' });
    expect(wrongKey.status).toBe(401);
    expect(wrongKey.close).toBeUndefined();
    expect(JSON.parse(wrongKey.body!)).toMatchObject({ error: { code: 'unauthorized' } });

    // No credentials: the start (with an agent that exists) without a token, or with a junk one, is refused 1008.
    for (const dialect of DIALECTS) {
      for (const token of [undefined, 'vst_not_a_token']) {
        const w = writer(dialect);
        const params: Record<string, string> = { agent_id: AGENT, ...(token ? { stream_token: token } : {}) };
        const frames = [w.connected(), w.start(params, { from: '+919800000001', to: '+918000000002' }), w.media('/w==', 0)].filter(
          (f): f is string => f !== null,
        );
        const out = await rawStream(dialect, frames);
        expect(out.close, `${dialect} token=${String(token)}`).toMatchObject({
          code: 1008,
          reason: expect.stringContaining('unauthenticated'),
        });
        expect(out.received, 'no opening audio for an unauthenticated stream').toEqual([]);
      }
    }
    expect(await counts(), 'no call or session opened for refused streams').toEqual(before);

    // A valid stream token in start, no upgrade credentials: the call opens and its opening plays.
    const token = await api(daemon, 'POST', '/v1/carriers/stream_token', { key });
    expect(token.status).toBe(201);
    const sim = call('exotel', [], [{ kind: 'wait', ms: 15_000 }], {
      headers: {},
      params: { stream_token: token.body.stream_token as string },
    });
    sim.on('event', (e) => {
      if (e.type === 'reply_start') sim.hangup();
    });
    const t = await sim.done;
    expect(t.openingMs, JSON.stringify(t.events.slice(0, 5))).toEqual(expect.any(Number));
    expect(t.received.audioMs).toBeGreaterThan(0);
    const opened = await completed((await callOf(t.ids.callId)).call_id as string);
    expect(opened).toMatchObject({ status: 'completed', transport: 'exotel', agent_id: AGENT });

    // A plain GET, no upgrade: 400 in the error shape.
    for (const dialect of DIALECTS) {
      const plain = await api(daemon, 'GET', `/v1/media/${dialect}`, { key });
      expect(plain.status).toBe(400);
      expect(plain.body).toMatchObject({ error: { code: 'invalid_request', message: expect.stringContaining('WebSocket') } });
    }
  });

  it('malformed frames close the stream with the protocol code and leave no session open; the daemon lives', async () => {
    const before = await counts();
    const auth = { authorization: `Bearer ${key}` };
    const cases: Array<{
      name: string;
      dialect: CarrierDialect;
      frames: (w: SimFrameWriter) => Array<string | Buffer>;
      code: number;
    }> = [
      { name: 'not JSON', dialect: 'twilio', frames: () => ['{"event": "start", oops'], code: 1008 },
      { name: 'media before start', dialect: 'exotel', frames: (w) => [w.connected()!, w.media('AAAAAA==', 0)], code: 1008 },
      { name: 'media before start', dialect: 'plivo', frames: (w) => [w.media('/w==', 0)], code: 1008 },
      {
        name: 'a start missing its fields',
        dialect: 'twilio',
        frames: () => [JSON.stringify({ event: 'start', start: { customParameters: { agent_id: AGENT } } })],
        code: 1008,
      },
      {
        name: 'a start of another dialect',
        dialect: 'plivo',
        frames: () => [writer('exotel').start({ agent_id: AGENT })],
        code: 1008,
      },
      {
        name: 'a 100 KiB text frame',
        dialect: 'exotel',
        frames: () => [JSON.stringify({ event: 'media', pad: 'x'.repeat(100 * 1024) })],
        code: 1009,
      },
      { name: 'a binary frame', dialect: 'twilio', frames: () => [Buffer.from([0x7b, 0x7d, 0x00, 0xff])], code: 1003 },
    ];
    const outs = await Promise.all(cases.map(async (c) => ({ c, out: await rawStream(c.dialect, c.frames(writer(c.dialect)), auth) })));
    for (const { c, out } of outs) {
      expect(out.close?.code, `${c.dialect}: ${c.name}: ${JSON.stringify(out)}`).toBe(c.code);
      expect(out.received, `${c.dialect}: ${c.name}`).toEqual([]);
    }
    expect(await counts(), 'nothing opened by a frame refused before start').toEqual(before);

    // Out of order after start (a second start): the call opened, then the protocol error closes it (1008) and ends it.
    const results = await Promise.all(
      DIALECTS.map(async (dialect) => {
        const w = writer(dialect);
        const first = w.start({ agent_id: AGENT }, { from: '+919800000001', to: '+918000000002' });
        const out = await new Promise<RawOutcome>((resolve, reject) => {
          const ws = new WebSocket(wsUrl(dialect), { headers: auth });
          const received: string[] = [];
          const timer = setTimeout(() => {
            ws.terminate();
            reject(new Error(`${dialect}: no close after a second start`));
          }, 15_000);
          ws.on('open', () => {
            for (const f of [w.connected(), first].filter((f): f is string => f !== null)) ws.send(f);
          });
          ws.on('message', (data) => {
            // The opening is playing: the stream is attached; now the carrier misbehaves.
            if (received.push(String(data)) === 1) ws.send(first);
          });
          ws.on('close', (code, reason) => {
            clearTimeout(timer);
            resolve({ close: { code, reason: reason.toString() }, received });
          });
          ws.on('error', () => undefined);
        });
        return { dialect, out, ids: w.ids };
      }),
    );
    for (const { dialect, out, ids } of results) {
      expect(out.close, dialect).toMatchObject({ code: 1008, reason: expect.stringContaining('start') });
      expect(out.received.length, `${dialect}: the opening had begun`).toBeGreaterThan(0);
      const ended = await completed((await callOf(ids.callId)).call_id as string);
      expect(ended.status, dialect).toBe('completed');
      expect((await sessionDetail(ended.session_id as string)).session.status, dialect).toBe('ended');
    }
    const after = await counts();
    expect(after.open, 'no session left open').toBe(0);
    expect(after.calls).toBe(before.calls + 3);
    expect(await health()).toBe(200);
  });
});

describe.concurrent('media endpoint: calls under faults and load', { timeout: 90_000 }, () => {
  it('a stream that closes without stop ends its session; the call completes with the dialect as transport', async () => {
    const runs = await Promise.all(
      (['exotel', 'twilio'] as const).map(async (dialect) => {
        const t = await callThenHangUp(dialect, ['Priya Sharma'], [say(dialect)], false);
        return { dialect, t };
      }),
    );
    for (const { dialect, t } of runs) {
      expect(
        t.events.some((e) => e.type === 'hangup' && !e.stop),
        dialect,
      ).toBe(true);
      expect(t.close.by, dialect).toBe('caller');
      const view = await completed((await callOf(t.ids.callId)).call_id as string);
      expect(view, dialect).toMatchObject({
        status: 'completed',
        dial_status: 'completed',
        transport: dialect,
        direction: 'inbound',
      });
      expect((await sessionDetail(view.session_id as string)).session.status, dialect).toBe('ended');
    }
  });

  it('a recogniser that crashes or hangs on an utterance: the agent re-prompts, the next utterance advances, the daemon lives', async () => {
    const faults = [
      { dialect: 'plivo' as const, first: { text: 'Priya Sharma', mode: 'crash' } },
      { dialect: 'twilio' as const, first: { text: 'Priya Sharma', mode: 'hang' } },
    ];
    const runs = await Promise.all(
      faults.map(async ({ dialect, first }) => {
        const t = await callThenHangUp(dialect, [first, 'Priya Sharma'], [say(dialect), say(dialect)]);
        return { dialect, mode: first.mode, t };
      }),
    );
    for (const { dialect, mode, t } of runs) {
      const what = `${dialect} ${mode}`;
      expect(
        t.turns.filter((x) => x.noReply),
        `${what}: every line got a reply`,
      ).toEqual([]);
      const view = await completed((await callOf(t.ids.callId)).call_id as string);
      const turns = turnsOf(await sessionDetail(view.session_id as string));
      const missed = turns.findIndex((x) => x.event === 'not_heard');
      expect(missed, `${what}: ${JSON.stringify(turns)}`).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(turns[missed]), what).toContain(NOT_HEARD);
      const readback = turns.findIndex((x) => JSON.stringify(x).includes('That is Priya Sharma, right?'));
      expect(readback, `${what}: the next utterance advanced the step`).toBeGreaterThan(missed);
    }
    expect(await health()).toBe(200);
  });

  it('20 calls at once over the three dialects: each hears its own caller, all openings play, all complete', async () => {
    const names = [
      'Aarav Mehta',
      'Ananya Iyer',
      'Rohan Gupta',
      'Kavya Nair',
      'Vikram Singh',
      'Meera Pillai',
      'Arjun Reddy',
      'Sneha Kulkarni',
      'Rahul Verma',
      'Divya Menon',
      'Karan Malhotra',
      'Pooja Desai',
      'Aditya Joshi',
      'Neha Kapoor',
      'Siddharth Rao',
      'Isha Banerjee',
      'Nikhil Chawla',
      'Riya Sen',
      'Manish Tiwari',
      'Lakshmi Krishnan',
    ];
    const runs = await Promise.all(
      names.map(async (name, i) => {
        const dialect = DIALECTS[i % 3]!;
        const t = await callThenHangUp(dialect, [name, 'yes'], [say(dialect), say(dialect)]);
        return { name, dialect, t };
      }),
    );
    const sessions = new Set<string>();
    await Promise.all(
      runs.map(async ({ name, dialect, t }: { name: string; dialect: CarrierDialect; t: SimTimeline }) => {
        const what = `${dialect} ${name}`;
        expect(t.openingMs, `${what}: the opening arrived`).toEqual(expect.any(Number));
        const view = await completed((await callOf(t.ids.callId)).call_id as string);
        expect(view, what).toMatchObject({ status: 'completed', transport: dialect });
        sessions.add(view.session_id as string);
        const detail = await sessionDetail(view.session_id as string);
        expect(detail.session.status, what).toBe('ended');
        expect(slotsOf(detail).patient_name, `${what}: ${JSON.stringify(detail.session.steps)}`).toBe(name);
        expect(
          turnsOf(detail)
            .map((x) => x.user_text)
            .filter(Boolean),
          what,
        ).toEqual([name, 'yes']);
      }),
    );
    expect(sessions.size).toBe(20);
    expect(await health()).toBe(200);
  });

  it('DTMF at the phone step: 9876543210# is captured as the phone number', async () => {
    const dialect = 'twilio';
    const said = ['Priya Sharma', 'yes', 'tomorrow', 'yes', 'five in the evening', 'yes', 'yes'];
    const steps: SimStep[] = [
      ...said.slice(0, 6).map(() => say(dialect)),
      { kind: 'dtmf', digits: '9876543210#', gapMs: 150 },
      say(dialect),
    ];
    const t = await callThenHangUp(dialect, said, steps);
    expect(
      t.turns.filter((x) => x.noReply),
      'every step got a reply',
    ).toEqual([]);
    const view = await completed((await callOf(t.ids.callId)).call_id as string);
    const detail = await sessionDetail(view.session_id as string);
    expect(slotsOf(detail), JSON.stringify(turnsOf(detail).map((x) => x.user_text))).toMatchObject({
      patient_name: 'Priya Sharma',
      phone: '9876543210',
    });
    expect(turnsOf(detail).some((x) => x.stt_provider === 'dtmf' && x.user_text === '9876543210')).toBe(true);
  });

  it('POST /v1/calls/{id}/hangup on a live stream closes it from the bot side and completes the call', async () => {
    const sim = call('plivo', ['Priya Sharma'], [say('plivo'), { kind: 'wait', ms: 60_000 }]);
    const hungUp = new Promise<Record<string, any>>((resolve, reject) => {
      sim.on('event', (e) => {
        // The readback of the name has begun: the call is live and mid-conversation.
        if (e.type === 'reply_start' && e.turn === 0) {
          callOf(sim.ids.callId)
            .then((c) => api(daemon, 'POST', `/v1/calls/${String(c.call_id)}/hangup`, { key }))
            .then((r) => resolve({ ...r.body, http: r.status }), reject);
        }
      });
    });
    const [t, res] = await Promise.all([sim.done, hungUp]);
    expect(res, JSON.stringify(res)).toMatchObject({ http: 200, line: 'hung_up' });
    expect(t.close.by).toBe('bot');
    expect(t.events.some((e) => e.type === 'timeout')).toBe(false);
    const view = await completed(res.call_id as string);
    expect(view).toMatchObject({ status: 'completed', transport: 'plivo' });
    expect((await sessionDetail(view.session_id as string)).session.status).toBe('ended');
  });
});
