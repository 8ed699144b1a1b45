/**
 * The `rtc` room driver (docs/media.md "LiveKit rooms"): `@livekit/rtc-node`'s `Room` against a real LiveKit
 * server, behind ./room.ts {@link RoomConnection}. rtc-node 1.1.0 API (its `dist/room.d.ts`):
 * `Room.connect(url, token, {autoSubscribe, dynacast})`,
 * `RoomEvent.TrackSubscribed (track, publication, participant)`, `ParticipantConnected`,
 * `ParticipantDisconnected`, `ParticipantAttributesChanged (changed, participant)`,
 * `DtmfReceived (code, digit, participant)`, `Disconnected (reason)`;
 * `localParticipant.publishTrack(LocalAudioTrack.createAudioTrack(name, source), TrackPublishOptions)`.
 *
 * rtc-node keeps one native FFI client per process, and it answers only the thread that loaded
 * it first: rooms therefore run in a media child process (../../daemon/media-worker/worker-pool.ts `mode: 'process'`),
 * never in the daemon's worker threads.
 */
import {
  DisconnectReason,
  LocalAudioTrack,
  ParticipantKind,
  Room,
  RoomEvent,
  TrackKind,
  TrackPublishOptions,
  TrackSource,
  type AudioSource,
  type Participant,
  type RemoteParticipant,
  type RemoteTrack,
  type Track,
} from '@livekit/rtc-node';
import { EventEmitter } from 'node:events';
import { RoomConnectError, roomWsUrl, type RoomConnection, type RoomEvents, type RoomJoin, type RoomParticipant } from './room.js';

function view(p: Participant): RoomParticipant {
  return { identity: p.identity, kind: p.kind === ParticipantKind.SIP ? 'sip' : 'other', attributes: { ...p.attributes } };
}

class RtcRoom extends EventEmitter<RoomEvents> implements RoomConnection {
  private left = false;

  constructor(private readonly room: Room) {
    super();
    room.on(RoomEvent.ParticipantConnected, (p: RemoteParticipant) => this.emit('participantConnected', view(p)));
    room.on(RoomEvent.ParticipantDisconnected, (p: RemoteParticipant) => this.emit('participantDisconnected', view(p)));
    room.on(RoomEvent.ParticipantAttributesChanged, (changed: Record<string, string>, p: Participant) => {
      if (p.identity !== room.localParticipant?.identity) this.emit('attributesChanged', { ...changed }, view(p));
    });
    room.on(RoomEvent.TrackSubscribed, (track: RemoteTrack, _pub, p: RemoteParticipant) => {
      if (track.kind === TrackKind.KIND_AUDIO) this.emit('audioTrack', track, view(p));
    });
    room.on(RoomEvent.DtmfReceived, (code: number, digit: string, p: RemoteParticipant) => this.emit('dtmf', code, digit, view(p)));
    room.on(RoomEvent.Disconnected, (reason: DisconnectReason) => {
      if (this.left) return;
      this.left = true;
      this.emit('disconnected', DisconnectReason[reason] ?? String(reason));
    });
  }

  get participants(): ReadonlyMap<string, RoomParticipant> {
    const out = new Map<string, RoomParticipant>();
    for (const [identity, p] of this.room.remoteParticipants) out.set(identity, view(p));
    return out;
  }

  audioTracks(): Array<[Track, RoomParticipant]> {
    const out: Array<[Track, RoomParticipant]> = [];
    for (const p of this.room.remoteParticipants.values()) {
      for (const pub of p.trackPublications.values()) {
        if (pub.subscribed && pub.track && pub.track.kind === TrackKind.KIND_AUDIO) out.push([pub.track, view(p)]);
      }
    }
    return out;
  }

  async publishAudio(source: AudioSource): Promise<void> {
    const track = LocalAudioTrack.createAudioTrack('vagent-voice', source);
    await this.room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source: TrackSource.SOURCE_MICROPHONE }));
  }

  async disconnect(): Promise<void> {
    this.left = true;
    try {
      await this.room.disconnect();
    } catch {
      // Already gone.
    }
  }
}

/**
 * Joins `join.roomName` on a real LiveKit server with rtc-node.
 * @throws RoomConnectError when the server refuses the token or cannot be reached in time
 */
export async function connectRtcRoom(join: RoomJoin): Promise<RoomConnection> {
  const room = new Room();
  const conn = new RtcRoom(room);
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      room.connect(roomWsUrl(join.url), join.token, { autoSubscribe: true, dynacast: false }),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new RoomConnectError(`LiveKit did not let vagent into room ${join.roomName} within ${join.connectTimeoutMs} ms`)),
          join.connectTimeoutMs,
        );
      }),
    ]);
  } catch (err) {
    void room.disconnect().catch(() => undefined);
    if (err instanceof RoomConnectError) throw err;
    const message = (err instanceof Error ? err.message : String(err)).replace(join.token, '<token>');
    throw new RoomConnectError(`could not join LiveKit room ${join.roomName}: ${message.slice(0, 300)}`);
  } finally {
    clearTimeout(timer);
  }
  return conn;
}
