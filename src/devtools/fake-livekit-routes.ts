/**
 * The Twirp methods the fake LiveKit server answers (`livekit.SIP`, `livekit.AgentDispatchService`
 * and `livekit.RoomService` subsets), each with the grants it needs, and the request checks
 * LiveKit makes before it dials or stores a trunk.
 *
 * Sources it mirrors: livekit/protocol `livekit/sip.go` (CreateSIPParticipant validation, SIP
 * status → Twirp code and `sip_status_code` meta) and livekit/sip `pkg/sip/client.go`.
 */
import {
  AgentDispatch,
  AgentDispatchState,
  CreateAgentDispatchRequest,
  CreateSIPOutboundTrunkRequest,
  CreateSIPParticipantRequest,
  DeleteRoomRequest,
  DeleteRoomResponse,
  DeleteSIPTrunkRequest,
  DisconnectReason,
  ListParticipantsRequest,
  ListParticipantsResponse,
  ListSIPOutboundTrunkRequest,
  ListSIPOutboundTrunkResponse,
  RemoveParticipantResponse,
  RoomParticipantIdentity,
  SIPTrunkInfo,
} from '@livekit/protocol';
import type { ParticipantInfo, SIPOutboundTrunkInfo, SIPParticipantInfo } from '@livekit/protocol';
import {
  DENIED,
  needRoomAdmin,
  needSipAdmin,
  newId,
  route,
  sipGrant,
  TwirpFailure,
  videoGrant,
  type AnyRoute,
} from './fake-livekit-twirp.js';

/** SIP status simulated by the last three digits of the dialed number → Twirp code (livekit/protocol `sipCodeToGRPCCode`). */
export const SIP_FAILURES: Record<string, { code: string; status: string; reason: DisconnectReason }> = {
  '486': { code: 'resource_exhausted', status: 'Busy Here', reason: DisconnectReason.USER_REJECTED },
  '603': { code: 'permission_denied', status: 'Decline', reason: DisconnectReason.USER_REJECTED },
  '480': { code: 'unavailable', status: 'Temporarily Unavailable', reason: DisconnectReason.USER_UNAVAILABLE },
  '404': { code: 'not_found', status: 'Not Found', reason: DisconnectReason.USER_UNAVAILABLE },
};

/** livekit/protocol `SIPOutboundConfig.Validate` / `SIPOutboundTrunkInfo.Validate` for a host name. */
function hostProblem(host: string, what: 'hostname' | 'address'): string | undefined {
  if (!host) return what === 'hostname' ? 'no outbound hostname specified' : 'no outbound address specified';
  if (host.includes('transport=')) return 'trunk transport should be set as a field, not a URI parameter';
  if (/[@;]/.test(host) || /^sips?:/.test(host)) return `trunk ${what} should be a domain name or IP, not SIP URI`;
  return undefined;
}

/** livekit/protocol `CreateSIPParticipantRequest.Validate` plus the checks livekit/sip makes before dialing. */
export function dialProblem(req: CreateSIPParticipantRequest, fromNumber: string): string | undefined {
  if (!req.sipTrunkId && !req.trunk && !req.sipNumber) return 'missing sip trunk id';
  if (req.trunk) {
    const p = hostProblem(req.trunk.hostname, 'hostname');
    if (p) return p;
  }
  if (!req.sipCallTo) return 'missing sip callee number';
  if (req.sipCallTo.includes('@')) return 'SipCallTo should be a phone number or SIP user, not a full SIP URI';
  if (!req.roomName) return 'missing room name';
  if (req.trunk && !fromNumber) return 'trunk outbound number must be set';
  return undefined;
}

/** A room as the method table sees it. */
interface RouteRoom {
  participants: Map<string, ParticipantInfo>;
}

/** What the method table needs from the server's state. */
export interface RouteHost {
  /** Outbound trunks by `sipTrunkId`. */
  trunks: Map<string, SIPOutboundTrunkInfo>;
  /** Rooms by name. */
  rooms: Map<string, RouteRoom>;
  /** The room named `name`; throws a `not_found` {@link TwirpFailure} when there is none. */
  existingRoom(name: string): RouteRoom;
  /** Dials: CreateSIPParticipant after its grant check. */
  createSipParticipant(req: CreateSIPParticipantRequest): Promise<SIPParticipantInfo>;
  /** Removes `p` from `room` and queues its `participant_left`. */
  leave(room: string, p: ParticipantInfo, reason: DisconnectReason): void;
  /** Throws the injected RoomService failure once, if one is set. */
  injectedRoomFailure(): void;
}

/** The method table, keyed `service/method` (e.g. `livekit.SIP/CreateSIPParticipant`). */
export function livekitRoutes(host: RouteHost): Record<string, AnyRoute> {
  return {
    'livekit.SIP/CreateSIPParticipant': route({
      schema: CreateSIPParticipantRequest,
      permit: (c) => (sipGrant(c).call === true ? undefined : DENIED),
      handle: (r) => host.createSipParticipant(r),
    }),
    'livekit.SIP/CreateSIPOutboundTrunk': route({
      schema: CreateSIPOutboundTrunkRequest,
      permit: needSipAdmin,
      handle: async (r) => createTrunk(host.trunks, r),
    }),
    'livekit.SIP/ListSIPOutboundTrunk': route({
      schema: ListSIPOutboundTrunkRequest,
      permit: needSipAdmin,
      handle: async (r) =>
        new ListSIPOutboundTrunkResponse({
          items: [...host.trunks.values()].filter(
            (t) =>
              (r.trunkIds.length === 0 || r.trunkIds.includes(t.sipTrunkId)) &&
              (r.numbers.length === 0 || t.numbers.some((n) => r.numbers.includes(n))),
          ),
        }),
    }),
    'livekit.SIP/DeleteSIPTrunk': route({
      schema: DeleteSIPTrunkRequest,
      permit: needSipAdmin,
      handle: async (r) => {
        if (!host.trunks.delete(r.sipTrunkId)) throw new TwirpFailure('not_found', 'requested sip trunk does not exist');
        return new SIPTrunkInfo({ sipTrunkId: r.sipTrunkId });
      },
    }),
    'livekit.AgentDispatchService/CreateDispatch': route({
      schema: CreateAgentDispatchRequest,
      permit: (c, r) => needRoomAdmin(r.room)(c),
      handle: async (r) =>
        new AgentDispatch({
          id: newId('AD_'),
          agentName: r.agentName,
          room: r.room,
          metadata: r.metadata,
          restartPolicy: r.restartPolicy,
          deployment: r.deployment,
          attributes: r.attributes,
          state: new AgentDispatchState({ jobs: [], createdAt: BigInt(Date.now()) * 1_000_000n }),
        }),
    }),
    'livekit.RoomService/ListParticipants': route({
      schema: ListParticipantsRequest,
      permit: (c, r) => needRoomAdmin(r.room)(c),
      handle: async (r) => new ListParticipantsResponse({ participants: [...host.existingRoom(r.room).participants.values()] }),
    }),
    'livekit.RoomService/GetParticipant': route({
      schema: RoomParticipantIdentity,
      permit: (c, r) => needRoomAdmin(r.room)(c),
      handle: async (r) => {
        const p = host.existingRoom(r.room).participants.get(r.identity);
        if (!p) throw new TwirpFailure('not_found', 'participant not found');
        return p;
      },
    }),
    'livekit.RoomService/RemoveParticipant': route({
      schema: RoomParticipantIdentity,
      permit: (c, r) => needRoomAdmin(r.room)(c),
      handle: async (r) => {
        host.injectedRoomFailure();
        const p = host.existingRoom(r.room).participants.get(r.identity);
        if (!p) throw new TwirpFailure('not_found', 'participant not found');
        host.leave(r.room, p, DisconnectReason.PARTICIPANT_REMOVED);
        return new RemoveParticipantResponse();
      },
    }),
    'livekit.RoomService/DeleteRoom': route({
      schema: DeleteRoomRequest,
      permit: (c) => (videoGrant(c).roomCreate === true ? undefined : DENIED),
      handle: async (r) => {
        host.injectedRoomFailure();
        for (const p of host.existingRoom(r.room).participants.values()) host.leave(r.room, p, DisconnectReason.ROOM_DELETED);
        host.rooms.delete(r.room);
        return new DeleteRoomResponse();
      },
    }),
  };
}

/** CreateSIPOutboundTrunk: checked as livekit/protocol `SIPOutboundTrunkInfo.Validate` does, then stored under a new `ST_…` id. */
function createTrunk(trunks: Map<string, SIPOutboundTrunkInfo>, req: CreateSIPOutboundTrunkRequest): SIPOutboundTrunkInfo {
  const t = req.trunk;
  if (!t) throw new TwirpFailure('invalid_argument', 'missing trunk');
  if (t.numbers.length === 0) throw new TwirpFailure('invalid_argument', 'no trunk numbers specified');
  const problem = hostProblem(t.address, 'address');
  if (problem) throw new TwirpFailure('invalid_argument', problem);
  const stored = t.clone();
  stored.sipTrunkId = newId('ST_');
  trunks.set(stored.sipTrunkId, stored);
  return stored;
}
