/**
 * The development room driver (a development aid, not a setting): joins a room of the fake
 * LiveKit (`npm run fake-livekit`, ./fake-livekit.ts) over a WebSocket, and hands the media core
 * the same rtc-node objects a real room does (real AudioFrame/AudioSource/AudioResampler), so the
 * room adapter is tested as it runs against a real server. The daemon's composition root loads
 * it into its room processes only when started with `VAGENT_DEV_FAKE_ROOMS=1`
 * (src/daemon/daemon.ts; docs/media.md, "Try it without LiveKit"); the module's `connectRoom`
 * export is the {@link RoomDriver} they use.
 *
 * - The phone participant's audio arrives as PCM frames; they are captured into an rtc-node
 *   `AudioSource` behind a `LocalAudioTrack`, which is the track handed out as `audioTrack`:
 *   vagent reads it with `AudioStream` (rtc-node's own resampling to 16 kHz), as it reads a
 *   real `RemoteAudioTrack`.
 * - vagent's published `AudioSource` is read back with `AudioStream` at {@link FAKE_ROOM_RATE}
 *   and sent to the fake: what the callee hears is what left the real source's queue, in real
 *   time, with `clearQueue()` taking effect exactly as on a real room.
 *
 * Wire protocol (the fake's own; JSON text frames and binary audio), see {@link FakeRoomMessage}.
 */
import { AudioFrame, AudioSource, AudioStream, LocalAudioTrack, type Track } from '@livekit/rtc-node';
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import {
  RoomConnectError,
  roomWsUrl,
  type RoomConnection,
  type RoomDriver,
  type RoomEvents,
  type RoomJoin,
  type RoomParticipant,
} from '../adapters/livekit/room.js';

/** Sample rate of the audio frames on the fake room's socket, Hz (LiveKit's Opus runs at 48 kHz). */
export const FAKE_ROOM_RATE = 48_000;
/** Samples in 10 ms at {@link FAKE_ROOM_RATE}: audio on the socket comes in whole multiples of it (vagent sends 20 ms frames). */
export const FAKE_ROOM_FRAME_SAMPLES = FAKE_ROOM_RATE / 100;
/** Path of the fake room's WebSocket on the fake LiveKit server. */
export const FAKE_ROOM_PATH = '/fake-room';

/** A participant as the fake describes it. */
export interface FakeRoomParticipant {
  identity: string;
  /** livekit_models.proto `ParticipantInfo.Kind`: 3 = SIP. */
  kind: number;
  attributes: Record<string, string>;
  /** Whether it publishes audio now. */
  audio: boolean;
}

/**
 * Server → client text messages. Binary messages from the server are the phone participant's
 * audio: mono PCM16 little-endian at {@link FAKE_ROOM_RATE}; from the client, vagent's audio in
 * the same format.
 */
export type FakeRoomMessage =
  | { type: 'joined'; room: string; participants: FakeRoomParticipant[] }
  | { type: 'participant_connected'; participant: FakeRoomParticipant }
  | { type: 'participant_disconnected'; identity: string }
  | { type: 'attributes_changed'; identity: string; changed: Record<string, string> }
  | { type: 'track_published'; identity: string }
  | { type: 'dtmf'; identity: string; code: number; digit: string };

function toView(p: FakeRoomParticipant): RoomParticipant {
  return { identity: p.identity, kind: p.kind === 3 ? 'sip' : 'other', attributes: { ...p.attributes } };
}

class FakeRoom extends EventEmitter<RoomEvents> implements RoomConnection {
  private readonly people = new Map<string, FakeRoomParticipant>();
  /** The phone participant's audio, replayed into a real rtc-node source. */
  private remote: {
    identity: string;
    source: AudioSource;
    track: LocalAudioTrack;
    chain: Promise<void>;
    queuedMs: number;
  } | null = null;
  private outbound: ReadableStreamDefaultReader<AudioFrame> | null = null;
  private closed = false;

  constructor(private readonly ws: WebSocket) {
    super();
    ws.on('message', (data: Buffer, isBinary: boolean) => (isBinary ? this.onAudio(data) : this.onText(data.toString('utf8'))));
    ws.on('close', () => this.gone('the fake LiveKit closed the room connection'));
    ws.on('error', () => undefined);
  }

  /** Fills the participant list from `joined`. */
  init(list: FakeRoomParticipant[]): void {
    for (const p of list) this.people.set(p.identity, { ...p });
  }

  /** Tracks already published when vagent joined are subscribed now (autoSubscribe). */
  subscribeExisting(): void {
    for (const p of this.people.values()) if (p.audio) this.subscribe(p);
  }

  get participants(): ReadonlyMap<string, RoomParticipant> {
    const out = new Map<string, RoomParticipant>();
    for (const [k, p] of this.people) out.set(k, toView(p));
    return out;
  }

  audioTracks(): Array<[Track, RoomParticipant]> {
    const r = this.remote;
    const p = r ? this.people.get(r.identity) : undefined;
    return r && p ? [[r.track as Track, toView(p)]] : [];
  }

  async publishAudio(source: AudioSource): Promise<void> {
    const track = LocalAudioTrack.createAudioTrack('vagent-voice', source);
    const reader = new AudioStream(track, { sampleRate: FAKE_ROOM_RATE, numChannels: 1, frameSizeMs: 20 }).getReader();
    this.outbound = reader;
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || this.closed) break;
          if (this.ws.readyState === WebSocket.OPEN)
            this.ws.send(Buffer.from(value.data.buffer, value.data.byteOffset, value.data.byteLength));
        }
      } catch {
        // The track went away with the room.
      }
    })();
  }

  async disconnect(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      this.ws.close(1000, 'leave');
    } catch {
      this.ws.terminate();
    }
    await this.release();
  }

  private async release(): Promise<void> {
    try {
      await this.outbound?.cancel();
    } catch {
      // already closed
    }
    const r = this.remote;
    this.remote = null;
    if (r) await r.source.close().catch(() => undefined);
  }

  private gone(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    void this.release();
    this.emit('disconnected', reason);
  }

  private subscribe(p: FakeRoomParticipant): void {
    if (this.remote) return;
    const source = new AudioSource(FAKE_ROOM_RATE, 1, 1000);
    const track = LocalAudioTrack.createAudioTrack(`${p.identity}-audio`, source);
    this.remote = { identity: p.identity, source, track, chain: Promise.resolve(), queuedMs: 0 };
    this.emit('audioTrack', track as Track, toView(p));
  }

  private onAudio(data: Buffer): void {
    const r = this.remote;
    if (!r || this.closed || data.byteLength < 2) return;
    const samples = new Int16Array(data.byteLength >> 1);
    Buffer.from(samples.buffer).set(data.subarray(0, samples.length * 2));
    // More than a second behind (a stalled reader) drops audio rather than grow without bound.
    if (r.queuedMs > 1000) return;
    r.queuedMs += (samples.length * 1000) / FAKE_ROOM_RATE;
    r.chain = r.chain.then(async () => {
      try {
        if (this.remote === r) await r.source.captureFrame(new AudioFrame(samples, FAKE_ROOM_RATE, 1, samples.length));
      } catch {
        // The source closed with the room.
      } finally {
        r.queuedMs -= (samples.length * 1000) / FAKE_ROOM_RATE;
      }
    });
  }

  private onText(text: string): void {
    let msg: FakeRoomMessage;
    try {
      msg = JSON.parse(text) as FakeRoomMessage;
    } catch {
      return;
    }
    switch (msg.type) {
      case 'participant_connected':
        this.people.set(msg.participant.identity, { ...msg.participant });
        this.emit('participantConnected', toView(msg.participant));
        if (msg.participant.audio) this.subscribe(msg.participant);
        return;
      case 'participant_disconnected': {
        const p = this.people.get(msg.identity);
        if (!p) return;
        this.people.delete(msg.identity);
        this.emit('participantDisconnected', toView(p));
        return;
      }
      case 'attributes_changed': {
        const p = this.people.get(msg.identity);
        if (!p) return;
        Object.assign(p.attributes, msg.changed);
        this.emit('attributesChanged', { ...msg.changed }, toView(p));
        return;
      }
      case 'track_published': {
        const p = this.people.get(msg.identity);
        if (!p) return;
        p.audio = true;
        this.subscribe(p);
        return;
      }
      case 'dtmf': {
        const p = this.people.get(msg.identity);
        if (p) this.emit('dtmf', msg.code, msg.digit, toView(p));
        return;
      }
      default:
        return;
    }
  }
}

/**
 * Joins a room of the fake LiveKit at `join.url` (`ws://host:port`, path {@link FAKE_ROOM_PATH}).
 * @throws RoomConnectError when the fake refuses the token (401), does not answer in time, or cannot be reached
 */
export async function connectFakeRoom(join: RoomJoin): Promise<RoomConnection> {
  const base = roomWsUrl(join.url).replace(/\/+$/, '');
  const ws = new WebSocket(`${base}${FAKE_ROOM_PATH}?access_token=${encodeURIComponent(join.token)}`, {
    handshakeTimeout: join.connectTimeoutMs,
  });
  const room = new FakeRoom(ws);
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new RoomConnectError(`the fake LiveKit did not let vagent into room ${join.roomName} within ${join.connectTimeoutMs} ms`));
    }, join.connectTimeoutMs);
    const fail = (why: string) => {
      clearTimeout(timer);
      reject(new RoomConnectError(`could not join room ${join.roomName}: ${why}`));
    };
    ws.once('unexpected-response', (_req, res) => {
      fail(`the fake LiveKit answered ${res.statusCode}`);
      ws.terminate();
    });
    ws.once('error', (err) => fail(err.message));
    ws.on('message', function first(data: Buffer, isBinary: boolean) {
      if (isBinary) return;
      let msg: FakeRoomMessage;
      try {
        msg = JSON.parse(data.toString('utf8')) as FakeRoomMessage;
      } catch {
        return;
      }
      if (msg.type !== 'joined') return;
      ws.off('message', first);
      clearTimeout(timer);
      room.init(msg.participants);
      resolve();
    });
  });
  // Let the caller attach its listeners first; then the published tracks are subscribed.
  setImmediate(() => room.subscribeExisting());
  return room;
}

/** This module's room driver, under the export name a media process loads (src/adapters/livekit/room.ts, {@link RoomDriver}). */
export const connectRoom: RoomDriver = connectFakeRoom;
