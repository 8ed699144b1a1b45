/**
 * {@link LiveKitRoomTransport} over the development room driver (src/devtools/room-fake.ts)
 * against the development fake LiveKit, in-process: the room is joined with a real room token (livekit-server-sdk
 * `AccessToken`), the phone is brought in with the SDK's `SipClient.createSipParticipant`, and
 * the fake's scripted callee speaks, presses keys and hangs up; what it heard is its
 * `calleeLog`. Audio goes through rtc-node's real `AudioSource`/`AudioStream` both ways.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AccessToken, SipClient } from 'livekit-server-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import type { CalleeScript } from '../../src/devtools/fake-room-media.js';
import { LIVEKIT_OUT_RATE, LiveKitRoomTransport } from '../../src/adapters/livekit/livekit-transport.js';
import { connectFakeRoom } from '../../src/devtools/room-fake.js';
import { connectRoom, roomDriver } from '../../src/adapters/livekit/room-connect.js';
import { RoomConnectError, type RoomConnection } from '../../src/adapters/livekit/room.js';
import { devRoomDriver } from '../../src/daemon/daemon.js';
import type { StopReason, TransportListener } from '../../src/media/transport.js';

const FROM = '+912240001234';
/** Samples in one 20 ms frame at 48 kHz. */
const FRAME = (LIVEKIT_OUT_RATE * 20) / 1000;

/** A sine tone: mono PCM16 at `rate`. */
function tone(ms: number, rate: number, amplitude = 8000, hz = 440): Int16Array {
  const out = new Int16Array(Math.round((rate * ms) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
  return out;
}

/** `n` 20 ms frames of a 48 kHz tone, as PCM16 little-endian bytes. */
function toneFrames(n: number): Uint8Array[] {
  const all = tone(n * 20, LIVEKIT_OUT_RATE);
  const frames: Uint8Array[] = [];
  for (let i = 0; i < n; i++) frames.push(new Uint8Array(all.buffer.slice(i * FRAME * 2, (i + 1) * FRAME * 2)));
  return frames;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it is truthy or `ms` pass. */
async function until<T>(check: () => T, ms = 5000, what = 'condition'): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** Everything a transport told its listener, with arrival times. */
interface Heard {
  audio: Int16Array[];
  dtmf: string[];
  marks: Array<{ name: string; at: number }>;
  stops: StopReason[];
}

function listenTo(t: LiveKitRoomTransport): Heard {
  const heard: Heard = { audio: [], dtmf: [], marks: [], stops: [] };
  const listener: TransportListener = {
    onAudio: (pcm) => heard.audio.push(pcm),
    onDtmf: (d) => heard.dtmf.push(d),
    onMarkAck: (name) => heard.marks.push({ name, at: Date.now() }),
    onStop: (reason) => heard.stops.push(reason),
  };
  t.listen(listener);
  return heard;
}

const peak = (chunks: Int16Array[]) => chunks.reduce((m, c) => c.reduce((mm, v) => Math.max(mm, Math.abs(v)), m), 0);

let fake: FakeLiveKit;
let sip: SipClient;
let rooms = 0;
const open: RoomConnection[] = [];

beforeEach(async () => {
  // Callee lines are tones (no speech synthesis needed): 16 kHz, 800 ms.
  fake = await startFakeLiveKit({ synthesize: async () => ({ samples: tone(800, 16000), sampleRate: 16000 }) });
  sip = new SipClient(fake.url, fake.apiKey, fake.apiSecret);
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((r) => r.disconnect()));
  await fake.close();
});

/** A token for `identity` to join `room` only, signed with `secret`. */
async function roomToken(room: string, identity: string, secret = fake.apiSecret): Promise<string> {
  const at = new AccessToken(fake.apiKey, secret, { identity, ttl: 600 });
  at.addGrant({ roomJoin: true, room });
  return at.toJwt();
}

/** A fresh call: room name, the phone's identity and number, with `script` for its callee. */
function newCall(script?: CalleeScript) {
  const n = ++rooms;
  const to = `+9198765400${String(n).padStart(2, '0')}`;
  if (script) fake.callees.set(to, script);
  return { room: `call-cl_${n}`, identity: `sip-cl_${n}`, to, vagent: `vagent-cl_${n}` };
}

async function join(call: ReturnType<typeof newCall>): Promise<RoomConnection> {
  const room = await connectFakeRoom({
    url: fake.url,
    token: await roomToken(call.room, call.vagent),
    roomName: call.room,
    sipIdentity: call.identity,
    connectTimeoutMs: 5000,
  });
  open.push(room);
  return room;
}

async function dial(call: ReturnType<typeof newCall>, waitUntilAnswered = true): Promise<void> {
  await sip.createSipParticipant('ST_test', call.to, call.room, {
    fromNumber: FROM,
    participantIdentity: call.identity,
    waitUntilAnswered,
  });
}

/** vagent in the room with its transport published, then the phone dialled and answered. */
async function answeredCall(script: CalleeScript) {
  const call = newCall(script);
  const room = await join(call);
  const t = new LiveKitRoomTransport(room, { sipIdentity: call.identity });
  const heard = listenTo(t);
  await t.publish();
  await dial(call);
  await t.answered;
  return { call, room, t, heard };
}

describe('LiveKitRoomTransport over the fake room', { timeout: 20_000 }, () => {
  it("is answered only when the phone participant's sip.callStatus turns active, not while it rings", async () => {
    fake.behaviour.ringMs = 1000;
    const call = newCall();
    const room = await join(call);
    let answeredAt = 0;
    const t = new LiveKitRoomTransport(room, {
      sipIdentity: call.identity,
      onAnswered: () => {
        answeredAt = Date.now();
      },
    });
    listenTo(t);
    await t.publish();
    const dialledAt = Date.now();
    await dial(call, false);
    // The phone is in the room, dialling/ringing, and the call is not answered yet.
    await until(() => room.participants.get(call.identity), 2000, 'the phone participant');
    expect(room.participants.get(call.identity)!.attributes['sip.callStatus']).toBe('dialing');
    await sleep(300);
    expect(answeredAt).toBe(0);
    await t.answered;
    expect(answeredAt - dialledAt).toBeGreaterThanOrEqual(900);
    expect(room.participants.get(call.identity)!.attributes['sip.callStatus']).toBe('active');
    expect(t.ended).toBe(false);
  });

  it('hears a phone that was already in the room when vagent joined (a track subscribed before the transport listened)', async () => {
    const call = newCall({ steps: [{ say: 'hello' }], replyTimeoutMs: 300 });
    await dial(call);
    const room = await join(call);
    // The caller's track is subscribed before any transport exists.
    await until(() => room.audioTracks().length > 0, 3000, "the caller's track");
    expect(room.audioTracks().map(([, p]) => p.identity)).toEqual([call.identity]);
    const t = new LiveKitRoomTransport(room, { sipIdentity: null });
    const heard = listenTo(t);
    await t.answered;
    expect(t.phoneIdentity).toBe(call.identity);
    // The callee's 800 ms tone arrives as 16 kHz audio, loud.
    await until(() => peak(heard.audio) > 4000, 8000, "the callee's line");
    expect(heard.audio.every((c) => c.length === 320)).toBe(true);
    expect(fake.calleeLog(call.room)!.lines.map((l) => l.text)).toEqual(['hello']);
  });

  it('plays 20 ms frames to the callee and acks a mark only once its audio has played', async () => {
    const { call, t, heard } = await answeredCall({ steps: [{ wait: 10_000 }] });
    const start = Date.now();
    for (const f of toneFrames(50)) t.play(f);
    t.mark('after-1s');
    await until(() => heard.marks.length > 0, 6000, 'the mark');
    const ackMs = heard.marks[0]!.at - start;
    expect(heard.marks.map((m) => m.name)).toEqual(['after-1s']);
    // A second of audio cannot have played in much less than a second, nor take many seconds.
    expect(ackMs).toBeGreaterThanOrEqual(800);
    expect(ackMs).toBeLessThan(4000);
    // What was acked reached the callee: about a second of loud audio.
    await until(() => fake.calleeLog(call.room)!.agentSpeech.length > 0, 3000, 'the callee to hear vagent stop');
    const log = fake.calleeLog(call.room)!;
    expect(log.agentAudioMs).toBeGreaterThanOrEqual(900);
    const span = log.agentSpeech[0]!;
    expect(span.endMs - span.startMs).toBeGreaterThanOrEqual(800);
    expect(span.endMs - span.startMs).toBeLessThan(1400);
  });

  it('clear() drops queued audio: the callee hears vagent stop soon after, and the pending mark is never acked', async () => {
    const { call, t, heard } = await answeredCall({ steps: [{ wait: 10_000 }] });
    for (const f of toneFrames(200)) t.play(f); // 4 s
    t.mark('end-of-4s');
    await sleep(700);
    t.clear();
    await until(() => fake.calleeLog(call.room)!.agentSpeech.length > 0, 3000, 'the callee to hear vagent stop');
    const span = fake.calleeLog(call.room)!.agentSpeech[0]!;
    // About 0.7 s played, plus what the source and the fake's link held: far short of 4 s.
    expect(span.endMs - span.startMs).toBeLessThan(2000);
    await sleep(4000);
    expect(heard.marks).toEqual([]);
    expect(fake.calleeLog(call.room)!.agentSpeech).toHaveLength(1);
    expect(t.ended).toBe(false);
  });

  it("passes the callee's DTMF keys to onDtmf in order", async () => {
    const { call, heard } = await answeredCall({ steps: [{ dtmf: '12#' }, { dtmf: '*9' }], replyTimeoutMs: 200 });
    await until(() => heard.dtmf.length >= 5, 8000, 'five keys');
    expect(heard.dtmf).toEqual(['1', '2', '#', '*', '9']);
    expect(fake.calleeLog(call.room)!.dtmf).toEqual(['1', '2', '#', '*', '9']);
  });

  it('the callee hanging up stops the transport with caller-hangup', async () => {
    const { call, t, heard } = await answeredCall({ steps: [{ hangup: true }], replyTimeoutMs: 200 });
    await until(() => heard.stops.length > 0, 5000, 'the stop');
    expect(heard.stops).toEqual(['caller-hangup']);
    expect(t.ended).toBe(true);
    expect(fake.roomParticipants(call.room)).not.toContain(call.identity);
    // vagent leaves the room too.
    await until(() => !fake.roomParticipants(call.room).includes(call.vagent), 3000, 'vagent to leave');
  });

  it('hangup() stops with hangup and vagent leaves the room; later actions are no-ops', async () => {
    const { call, t, heard } = await answeredCall({ steps: [{ wait: 10_000 }] });
    expect(fake.roomParticipants(call.room)).toEqual(expect.arrayContaining([call.vagent, call.identity]));
    t.hangup();
    t.hangup();
    expect(heard.stops).toEqual(['hangup']);
    await until(() => !fake.roomParticipants(call.room).includes(call.vagent), 3000, 'vagent to leave');
    // vagent left; removing the phone is the daemon's job (RoomService), so it is still there.
    expect(fake.roomParticipants(call.room)).toContain(call.identity);
    t.play(new Uint8Array(3)); // no throw once stopped
    t.mark('late');
    await sleep(100);
    expect(heard.marks).toEqual([]);
  });

  it('play() of a frame that is not 20 ms of 48 kHz PCM16 throws RangeError', async () => {
    const { t } = await answeredCall({ steps: [{ wait: 10_000 }] });
    expect(() => t.play(new Uint8Array(FRAME * 2 - 2))).toThrow(RangeError);
    expect(() => t.play(new Uint8Array(320))).toThrow(/1920 bytes/);
    expect(() => t.play(new Uint8Array(FRAME * 2))).not.toThrow();
  });
});

describe('joining a room that cannot be joined', { timeout: 20_000 }, () => {
  it('a token signed with the wrong secret: RoomConnectError that does not carry the token', async () => {
    const call = newCall();
    const token = await roomToken(call.room, call.vagent, 'not-the-secret-of-this-server-0123456789');
    const err = await connectFakeRoom({
      url: fake.url,
      token,
      roomName: call.room,
      sipIdentity: call.identity,
      connectTimeoutMs: 5000,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(RoomConnectError);
    expect(err!.message).toContain(call.room);
    expect(err!.message).toContain('401');
    expect(err!.message).not.toContain(token);
    expect(err!.message).not.toContain(token.split('.')[2]!);
    expect(err!.message).not.toContain(fake.apiSecret);
    expect(fake.roomParticipants(call.room)).toEqual([]);
  });

  it('a closed port: RoomConnectError', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((r) => server.close(() => r()));
    const call = newCall();
    const token = await roomToken(call.room, call.vagent);
    const started = Date.now();
    const err = await connectFakeRoom({
      url: `http://127.0.0.1:${port}`,
      token,
      roomName: call.room,
      sipIdentity: null,
      connectTimeoutMs: 5000,
    }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(err).toBeInstanceOf(RoomConnectError);
    expect(err!.message).toMatch(new RegExp(`could not join room ${call.room}: .*ECONNREFUSED`));
    expect(err!.message).not.toContain(token);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('the room driver a media process uses', () => {
  it('is rtc-node’s unless the composition root names the development driver', async () => {
    expect(await roomDriver()).toBe(connectRoom);
    expect(devRoomDriver({})).toBeUndefined();
    expect(devRoomDriver({ VAGENT_LIVEKIT_ROOMS: 'fake', VAGENT_DEV_FAKE_ROOMS: '0' })).toBeUndefined();
    const url = devRoomDriver({ VAGENT_DEV_FAKE_ROOMS: '1' });
    expect(url).toMatch(/^file:.*\/devtools\/room-fake\.js$/);
  });

  it('loads the development driver by module URL, and refuses a module without one', async () => {
    const dev = new URL('../../src/devtools/room-fake.ts', import.meta.url).href;
    expect(await roomDriver(dev)).toBe(connectFakeRoom);
    const none = new URL('../../src/adapters/livekit/room-connect.ts', import.meta.url).href;
    await expect(roomDriver(none)).resolves.toBe(connectRoom);
    const bad = new URL('../../src/media/fake-clock.ts', import.meta.url).href;
    await expect(roomDriver(bad)).rejects.toThrow(/exports no connectRoom room driver/);
  });
});
