/**
 * A LiveKit room as vagent's media core sees it (docs/media.md "LiveKit rooms"): the narrow
 * {@link RoomConnection} that ./livekit-transport.ts drives, whatever carries the room.
 *
 * Two drivers implement it:
 * - `rtc` (./room-rtc.ts): `@livekit/rtc-node`'s `Room` against a real LiveKit server
 *   (WebRTC through the SDK's native FFI library).
 * - `fake` (./room-fake.ts): the development fake of `npm run fake-livekit`, which carries a
 *   room's audio as PCM over a WebSocket but hands vagent the same rtc-node objects a real room
 *   does: remote audio arrives as an rtc-node audio track (read with `AudioStream`, resampled
 *   by rtc-node), and vagent's reply audio leaves through a real `AudioSource`, whose queue,
 *   real-time back-pressure and `clearQueue()` are the ones a real room uses.
 *
 * Participants are reduced to what a phone call needs (livekit/protocol `ParticipantInfo`:
 * identity, kind, attributes; the SIP attributes such as `sip.callStatus` are those of
 * https://docs.livekit.io/sip/sip-participant/).
 */
import type { AudioSource, Track } from '@livekit/rtc-node';

/** A participant of the room other than vagent. */
export interface RoomParticipant {
  /** LiveKit identity, e.g. `sip-cl_12` (outbound) or `sip_+919876543210` (inbound). */
  readonly identity: string;
  /** `sip` for a phone line (livekit_models.proto `ParticipantInfo.Kind.SIP` = 3), else `other`. */
  readonly kind: 'sip' | 'other';
  /** Participant attributes (`sip.callStatus`, `sip.phoneNumber`, …), as last seen. */
  readonly attributes: Readonly<Record<string, string>>;
}

/** The events of a {@link RoomConnection} and their listener arguments. */
export interface RoomEvents {
  /** A participant joined after vagent did (those already in the room are in {@link RoomConnection.participants}). */
  participantConnected: [participant: RoomParticipant];
  /** A participant left the room. */
  participantDisconnected: [participant: RoomParticipant];
  /** Some of a participant's attributes changed; `participant` holds them all. */
  attributesChanged: [changed: Record<string, string>, participant: RoomParticipant];
  /** vagent is subscribed to a participant's audio track: read it with rtc-node's `AudioStream`. */
  audioTrack: [track: Track, participant: RoomParticipant];
  /** A participant sent a DTMF key (RFC 4733 event `code`, `digit` its character). */
  dtmf: [code: number, digit: string, participant: RoomParticipant];
  /** vagent is out of the room (the server closed it, removed vagent, or the link broke). */
  disconnected: [reason: string];
}

/** vagent's presence in one room. */
export interface RoomConnection {
  /** Participants other than vagent, by identity. */
  readonly participants: ReadonlyMap<string, RoomParticipant>;
  /** Audio tracks vagent is subscribed to now (those whose `audioTrack` event may have passed already). */
  audioTracks(): Array<[Track, RoomParticipant]>;
  /** Publishes `source` as vagent's microphone track (its frames are what the callee hears). */
  publishAudio(source: AudioSource): Promise<void>;
  /** Leaves the room. Idempotent; never throws. */
  disconnect(): Promise<void>;
  /** Adds a listener. */
  on<K extends keyof RoomEvents>(event: K, listener: (...args: RoomEvents[K]) => void): this;
}

/** How to join a room (plain data: it crosses to the media process). */
export interface RoomJoin {
  /** The LiveKit server's WebSocket URL (`LIVEKIT_URL`, `ws(s)://` or `http(s)://`). */
  url: string;
  /** An access token for this room only (HS256 JWT with `video.roomJoin` and `video.room`). */
  token: string;
  /** The room, e.g. `call-cl_12`. */
  roomName: string;
  /** The phone participant's identity when vagent named it (outbound `sip-cl_<N>`), else null: the first SIP participant. */
  sipIdentity: string | null;
  /** Which driver carries the room (setting `livekit.rooms`). */
  driver: 'rtc' | 'fake';
  /** How long joining may take, ms. */
  connectTimeoutMs: number;
}

/** Joining a room failed; `message` says why in plain words (no token). */
export class RoomConnectError extends Error {
  override readonly name = 'RoomConnectError';
}

/**
 * Joins the room `join` names with its driver.
 * @throws RoomConnectError when the room cannot be joined within `join.connectTimeoutMs`
 */
export async function connectRoom(join: RoomJoin): Promise<RoomConnection> {
  if (join.driver === 'fake') {
    const { connectFakeRoom } = await import('./room-fake.js');
    return connectFakeRoom(join);
  }
  const { connectRtcRoom } = await import('./room-rtc.js');
  return connectRtcRoom(join);
}

/** The WebSocket form of a LiveKit URL (`https://h` → `wss://h`), as rtc-node and the SDKs accept both. */
export function roomWsUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, 'ws$1://');
}
