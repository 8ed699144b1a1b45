/**
 * A LiveKit room as vagent's media core sees it (docs/media.md "LiveKit rooms"): the narrow
 * {@link RoomConnection} that ./livekit-transport.ts drives, whatever carries the room.
 *
 * A {@link RoomDriver} implements it:
 * - {@link connectRoom} (./room-rtc.ts): `@livekit/rtc-node`'s `Room` against a real LiveKit
 *   server (WebRTC through the SDK's native FFI library). The only driver of the daemon.
 * - the development driver (src/devtools/room-fake.ts), for the fake of `npm run fake-livekit`,
 *   which carries a room's audio as PCM over a WebSocket but hands vagent the same rtc-node
 *   objects a real room does. The daemon's composition root hands its module to the media
 *   processes only as a development aid (`VAGENT_DEV_FAKE_ROOMS=1`; src/daemon/daemon.ts), and
 *   they load it by URL ({@link roomDriver}): nothing here imports it.
 *
 * Participants are reduced to what a phone call needs (livekit/protocol `ParticipantInfo`:
 * identity, kind, attributes; the SIP attributes such as `sip.callStatus` are those of
 * https://docs.livekit.io/sip/sip-participant/).
 */
import type { AudioSource, Track } from '@livekit/rtc-node';
import type { RoomJoin } from '../../media/worker-protocol.js';

export type { RoomJoin };

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

/** Joining a room failed; `message` says why in plain words (no token). */
export class RoomConnectError extends Error {
  override readonly name = 'RoomConnectError';
}

/**
 * Joins the room a {@link RoomJoin} names.
 * @throws RoomConnectError when the room cannot be joined within `join.connectTimeoutMs`
 */
export type RoomDriver = (join: RoomJoin) => Promise<RoomConnection>;

/** The WebSocket form of a LiveKit URL (`https://h` → `wss://h`), as rtc-node and the SDKs accept both. */
export function roomWsUrl(url: string): string {
  return url.replace(/^http(s?):\/\//i, 'ws$1://');
}
