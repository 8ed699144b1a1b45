/**
 * The fake LiveKit server's rooms and participants: the room record, the `ParticipantInfo` of a
 * phone (SIP) participant and of an agent that joined, a participant's copy as `participant_left`
 * shows it, and the view the fake room's socket gives of it.
 */
import type { DisconnectReason } from '@livekit/protocol';
import { ParticipantInfo, ParticipantInfo_Kind, ParticipantInfo_State } from '@livekit/protocol';
import type { FakeRoomParticipant } from './room-fake.js';
import { newId, nowS } from './fake-livekit-twirp.js';

/** One room: its LiveKit sid and name, and who is in it by identity. */
export interface FakeRoom {
  sid: string;
  name: string;
  creationTime: bigint;
  participants: Map<string, ParticipantInfo>;
}

/** A phone participant, as LiveKit SIP adds it to a room. */
export function sipParticipant(identity: string, name: string, attributes: Record<string, string>, metadata = ''): ParticipantInfo {
  const ms = Date.now();
  return new ParticipantInfo({
    sid: newId('PA_'),
    identity,
    name,
    metadata,
    attributes,
    kind: ParticipantInfo_Kind.SIP,
    state: ParticipantInfo_State.ACTIVE,
    joinedAt: BigInt(Math.floor(ms / 1000)),
    joinedAtMs: BigInt(ms),
  });
}

/** An agent participant (vagent's room driver) that joined `identity` through the room socket. */
export function agentParticipant(identity: string): ParticipantInfo {
  return new ParticipantInfo({
    sid: newId('PA_'),
    identity,
    name: identity,
    kind: ParticipantInfo_Kind.AGENT,
    state: ParticipantInfo_State.ACTIVE,
    joinedAt: BigInt(nowS()),
    joinedAtMs: BigInt(Date.now()),
  });
}

/** A copy of `p` as it looks in `participant_left`. */
export function departed(p: ParticipantInfo, reason: DisconnectReason, callStatus?: string): ParticipantInfo {
  const left = p.clone();
  if (callStatus) left.attributes['sip.callStatus'] = callStatus;
  left.state = ParticipantInfo_State.DISCONNECTED;
  left.disconnectReason = reason;
  return left;
}

/** A participant as the fake room's socket describes it. */
export function roomView(p: ParticipantInfo): FakeRoomParticipant {
  return {
    identity: p.identity,
    kind: Number(p.kind),
    attributes: { ...p.attributes },
    audio: p.kind === ParticipantInfo_Kind.SIP && p.attributes['sip.callStatus'] === 'active',
  };
}
