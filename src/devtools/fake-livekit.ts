/**
 * A local fake LiveKit server that speaks LiveKit's real wire protocol: Twirp over HTTP with
 * protojson bodies, HS256 API tokens, and signed webhooks. It backs the telephony tests and
 * lets operators try vagent without a LiveKit server (`npm run fake-livekit`).
 *
 * Sources it mirrors (public LiveKit repositories):
 * - Twirp server: livekit/protocol `livekit/*.twirp.go` (routes, `bad_route` for an unknown
 *   route, method or Content-Type, `malformed` for an undecodable body, responses with
 *   `UseProtoNames` + `EmitUnpopulated`).
 * - Grants: livekit/livekit `pkg/service/auth.go` (`sip.call`, `sip.admin`, `video.roomAdmin`
 *   for the named room).
 * - CreateSIPParticipant: livekit/protocol `livekit/sip.go` (validation, SIP status → Twirp
 *   code and `sip_status_code` meta) and livekit/sip `pkg/sip/client.go` (without
 *   `waitUntilAnswered` the request succeeds before the INVITE is answered; a failed call
 *   then shows up only as `participant_left`).
 * - Webhooks: livekit/protocol `webhook/url_notifier.go`.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
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
  ParticipantInfo,
  ParticipantInfo_Kind,
  ParticipantInfo_State,
  RemoveParticipantResponse,
  Room,
  RoomParticipantIdentity,
  SIPParticipantInfo,
  SIPTrunkInfo,
  WebhookEvent,
} from '@livekit/protocol';
import type { SIPOutboundTrunkInfo } from '@livekit/protocol';
import type { FakeRoomParticipant } from './room-fake.js';
import { FakeRoomHub, type CalleeLog, type CalleeScript } from './fake-room-media.js';

/** How {@link startFakeLiveKit} listens and signs. */
export interface FakeLiveKitOptions {
  /** API key clients must use as the token issuer. Default `devkey`. */
  apiKey?: string;
  /** HS256 secret of that key (≥ 32 characters, as LiveKit requires). Default `secret_for_local_testing_only_0123456789`. */
  apiSecret?: string;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** TCP port; `0` (the default) picks a free one. */
  port?: number;
  /** Where simulated webhooks go (vagent's LiveKit webhook endpoint); settable later via {@link FakeLiveKit.webhookUrl}. */
  webhookUrl?: string;
  /** Called after each Twirp request is answered, with the HTTP status sent. */
  onRequest?: (request: RecordedRequest, status: number) => void;
  /** Called after each webhook delivery attempt (explicit or fire-and-forget). */
  onWebhook?: (delivery: WebhookDelivery) => void;
  /**
   * What the person on the phone says in every call's room (vagent's `fake` room driver joins
   * them): see {@link FakeLiveKit.callees} for per-number scripts. Default: a silent callee.
   */
  callee?: CalleeScript;
  /** The voice of callee lines; default the embedded espeak-ng voice. */
  synthesize?: (text: string, language: string) => Promise<{ samples: Int16Array; sampleRate: number }>;
}

/** One Twirp request as the fake received it. */
export interface RecordedRequest {
  /** Twirp service with its package, e.g. `livekit.SIP`. */
  service: string;
  /** Twirp method, e.g. `CreateSIPParticipant`. */
  method: string;
  /** The request's `Content-Type` header as sent (the SDK sends `application/json;charset=UTF-8`). */
  contentType: string;
  /** The verified JWT claims (`iss`, `exp`, `video`, `sip`, …); `{}` when the token was missing or invalid. */
  grants: Record<string, unknown>;
  /** The JSON body with field names normalised to protojson camelCase (map keys untouched); `{}` if undecodable. */
  body: Record<string, unknown>;
  /** Arrival time, epoch milliseconds. */
  at: number;
}

/** A Twirp error to answer with, as LiveKit would send it. */
export interface InjectedFailure {
  /** HTTP status, e.g. 503. */
  status: number;
  /** Twirp code, e.g. `unavailable`. */
  code: string;
  /** Error message (`msg`). */
  msg: string;
  /** Twirp `meta`, e.g. `{ sip_status_code: '486', sip_status: 'Busy Here' }`. */
  meta?: Record<string, string>;
}

/** Knobs a test turns to make the fake misbehave; read on every request. */
export interface FakeBehaviour {
  /** Milliseconds to wait before answering CreateSIPParticipant (to make a client time out). */
  delayMs?: number;
  /** Answer the next valid CreateSIPParticipant with this error, then clear it. */
  failNext?: InjectedFailure;
  /** Answer the next valid RoomService RemoveParticipant or DeleteRoom with this error, then clear it. */
  failNextRoom?: InjectedFailure;
  /**
   * Without `waitUntilAnswered`, milliseconds the callee lets it ring before answering (its
   * `sip.callStatus` turns `active`, with no webhook, as in LiveKit). Default 0: at once.
   */
  ringMs?: number;
}

/** The outcome of one webhook POST. */
export interface WebhookDelivery {
  /** Event name, e.g. `participant_joined`. */
  event: string;
  /** Target URL. */
  url: string;
  /** HTTP status of the reply, if one came. */
  status?: number;
  /** Transport error message, if none came. */
  error?: string;
}

/** Options of {@link FakeLiveKit.simulateInbound}. */
export interface SimulateInboundOptions {
  /** Caller number (E.164), becomes `sip.phoneNumber` and the identity `sip_<from>`. */
  from: string;
  /** Called DID (E.164), becomes `sip.trunkPhoneNumber`. */
  to: string;
  /** Room name; default `call-<from>_<random>` (individual dispatch rule style). */
  room?: string;
  /** LiveKit call id; default a fresh `SCL_…`. */
  callId?: string;
  /** Webhook URL; default {@link FakeLiveKit.webhookUrl}. */
  url?: string;
}

/** Options of {@link FakeLiveKit.hangup}. */
export interface HangupOptions {
  /** `sip.callID` of the call. */
  callId: string;
  /** Room the SIP participant is in. */
  room: string;
  /** Identity of the SIP participant. */
  identity: string;
  /** The call came in (adds `sip.ruleID`) when the fake does not know the participant. */
  inbound?: boolean;
  /** Webhook URL; default {@link FakeLiveKit.webhookUrl}. */
  url?: string;
}

/** A running fake LiveKit server; see {@link startFakeLiveKit}. */
export interface FakeLiveKit {
  /** `http://host:port`, usable as LIVEKIT_URL. */
  url: string;
  /** API key the fake accepts. */
  apiKey: string;
  /** API secret the fake verifies and signs with. */
  apiSecret: string;
  /** Every Twirp request, in arrival order. */
  requests: RecordedRequest[];
  /** Just the `livekit.SIP/CreateSIPParticipant` requests. */
  sipParticipants(): RecordedRequest[];
  /**
   * Just the hang-up requests: `livekit.RoomService/RemoveParticipant` (body `{room, identity}`)
   * and `livekit.RoomService/DeleteRoom` (body `{room}`), answered or not, in arrival order.
   */
  hangups(): RecordedRequest[];
  /** Misbehaviour knobs; mutate freely. */
  behaviour: FakeBehaviour;
  /** Where webhooks go; mutate freely. */
  webhookUrl: string | undefined;
  /** The `Authorization` header value LiveKit sends with `body`: a raw HS256 JWT (no `Bearer`), valid 5 min, claim `sha256`. */
  signWebhook(body: string): string;
  /**
   * POSTs `event` (protojson, camelCase) like LiveKit: `Content-Type: application/webhook+json`,
   * signed. Fills `id` and `createdAt` when absent. Throws when no URL is known or the target is
   * unreachable (an answer with any status, even 401, resolves).
   */
  sendWebhook(event: Record<string, unknown>, url?: string): Promise<{ status: number; body: string }>;
  /** Sends `participant_joined` for an inbound SIP caller (status `ringing`) and adds it to the room. */
  simulateInbound(opts: SimulateInboundOptions): Promise<{ callId: string; room: string; identity: string; status: number }>;
  /** Sends `participant_left` (status `hangup`, reason CLIENT_INITIATED) and removes the participant. */
  hangup(opts: HangupOptions): Promise<{ status: number }>;
  /** Stops listening, drops open connections and pending delays, and waits for queued webhooks. */
  close(): Promise<void>;
  /**
   * Callee scripts by phone number (the dialled number of an outbound call, the caller of an
   * inbound one); calls to other numbers use the `callee` option. Mutate freely.
   */
  callees: Map<string, CalleeScript>;
  /** What happened in `room`'s call (lines said, keys pressed, vagent's speech), once its callee started. */
  calleeLog(room: string): CalleeLog | undefined;
  /** Identities in `room` now (vagent's own included while it is there). */
  roomParticipants(room: string): string[];
}

const DEFAULT_API_KEY = 'devkey';
const DEFAULT_API_SECRET = 'secret_for_local_testing_only_0123456789';
const CLOCK_SKEW_S = 10;
const WEBHOOK_TTL_S = 300;
const WEBHOOK_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 1 << 20;

/** Twirp error codes → HTTP status (twitchtv/twirp `errors.go`). */
const TWIRP_STATUS: Record<string, number> = {
  canceled: 408,
  unknown: 500,
  invalid_argument: 400,
  malformed: 400,
  deadline_exceeded: 408,
  not_found: 404,
  bad_route: 404,
  already_exists: 409,
  permission_denied: 403,
  unauthenticated: 401,
  resource_exhausted: 429,
  failed_precondition: 412,
  aborted: 409,
  out_of_range: 400,
  unimplemented: 501,
  internal: 500,
  unavailable: 503,
  data_loss: 500,
};

/** SIP status simulated by the last three digits of the dialed number → Twirp code (livekit/protocol `sipCodeToGRPCCode`). */
const SIP_FAILURES: Record<string, { code: string; status: string; reason: DisconnectReason }> = {
  '486': { code: 'resource_exhausted', status: 'Busy Here', reason: DisconnectReason.USER_REJECTED },
  '603': { code: 'permission_denied', status: 'Decline', reason: DisconnectReason.USER_REJECTED },
  '480': { code: 'unavailable', status: 'Temporarily Unavailable', reason: DisconnectReason.USER_UNAVAILABLE },
  '404': { code: 'not_found', status: 'Not Found', reason: DisconnectReason.USER_UNAVAILABLE },
};

/** A Twirp error on its way to the client. */
class TwirpFailure extends Error {
  constructor(
    readonly code: string,
    msg: string,
    readonly meta?: Record<string, string>,
    readonly status = TWIRP_STATUS[code] ?? 500,
  ) {
    super(msg);
  }
}

type JsonObject = Record<string, unknown>;
/** protobuf-es's `JsonValue`, named through a class so no extra package is imported. */
type ProtoJson = Parameters<typeof CreateSIPParticipantRequest.fromJson>[0];
/** What the normaliser needs from a protobuf-es message class. */
interface FieldLike {
  name: string;
  jsonName: string;
  kind: string;
  repeated: boolean;
  T?: unknown;
  V?: { kind: string; T?: unknown };
}
interface SchemaLike {
  fields: { list(): readonly FieldLike[] };
}
interface Decoder<T> extends SchemaLike {
  fromJson(json: ProtoJson, options: { ignoreUnknownFields: boolean }): T;
}
interface Encodable {
  toJson(options: { emitDefaultValues: boolean; useProtoFieldName: boolean }): unknown;
}
interface Claims {
  video?: { roomAdmin?: unknown; roomCreate?: unknown; room?: unknown };
  sip?: { call?: unknown; admin?: unknown };
  [claim: string]: unknown;
}

/** One Twirp method: decode the body, check grants (a denial message or undefined), answer. */
interface Route<T> {
  schema: Decoder<T>;
  permit(claims: Claims, req: T): string | undefined;
  handle(req: T): Promise<Encodable>;
}
interface AnyRoute {
  schema: SchemaLike;
  run(claims: Claims, body: JsonObject): Promise<Encodable>;
}

/** Erases a route's request type behind a closure. */
function route<T>(r: Route<T>): AnyRoute {
  return {
    schema: r.schema,
    async run(claims, body) {
      let req: T;
      try {
        req = r.schema.fromJson(body as ProtoJson, { ignoreUnknownFields: true });
      } catch (err) {
        throw new TwirpFailure('malformed', `the json request could not be decoded: ${(err as Error).message}`);
      }
      const denied = r.permit(claims, req);
      if (denied !== undefined) throw new TwirpFailure('permission_denied', denied);
      return r.handle(req);
    },
  };
}

const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);
const nowS = (): number => Math.floor(Date.now() / 1000);
const b64url = (s: string): string => Buffer.from(s).toString('base64url');
const ID_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789';
/** A LiveKit-style id: `prefix` + 12 random characters, e.g. `PA_x8ZkQm2RwT4v`. */
function newId(prefix: string): string {
  return prefix + Array.from(randomBytes(12), (b) => ID_ALPHABET[b % ID_ALPHABET.length]).join('');
}

/** Whether `T` is a protobuf-es message class (sub-message field type). */
const isSchema = (T: unknown): T is SchemaLike => (typeof T === 'function' || isObject(T)) && 'fields' in T;

/** Renames snake_case (proto) field names to camelCase (json) per the message schema, recursing into sub-messages; map keys and unknown keys stay as sent. */
function normalise(value: JsonObject, schema: SchemaLike): JsonObject {
  const fields = schema.fields.list();
  const out: JsonObject = {};
  for (const [key, v] of Object.entries(value)) {
    const f = fields.find((x) => x.jsonName === key || x.name === key);
    if (!f) {
      out[key] = v;
      continue;
    }
    const sub = (x: unknown, T: unknown): unknown => (isObject(x) && isSchema(T) ? normalise(x, T) : x);
    if (f.kind === 'message') out[f.jsonName] = f.repeated && Array.isArray(v) ? v.map((x) => sub(x, f.T)) : sub(v, f.T);
    else if (f.kind === 'map' && f.V?.kind === 'message' && isObject(v))
      out[f.jsonName] = Object.fromEntries(Object.entries(v).map(([k, x]) => [k, sub(x, f.V?.T)]));
    else out[f.jsonName] = v;
  }
  return out;
}

/** Verifies an HS256 JWT; returns its claims, or why it was refused. */
function verifyToken(token: string, apiKey: string, secret: string): Claims | string {
  const parts = token.split('.');
  if (parts.length !== 3) return 'invalid token: not a JWT';
  const [h, p, s] = parts as [string, string, string];
  const parse = (x: string): JsonObject | undefined => {
    try {
      const o: unknown = JSON.parse(Buffer.from(x, 'base64url').toString('utf8'));
      return isObject(o) ? o : undefined;
    } catch {
      return undefined;
    }
  };
  const header = parse(h);
  const claims = parse(p);
  if (!header || !claims) return 'invalid token: undecodable';
  if (header.alg !== 'HS256') return `invalid token: unsupported algorithm ${String(header.alg)}`;
  if (claims.iss !== apiKey) return `invalid API key: ${String(claims.iss)}`;
  const expected = createHmac('sha256', secret).update(`${h}.${p}`).digest();
  const actual = Buffer.from(s, 'base64url');
  if (actual.length !== expected.length || !timingSafeEqual(actual, expected)) return 'invalid token: signature is invalid';
  const now = nowS();
  if (typeof claims.exp !== 'number' || claims.exp + CLOCK_SKEW_S < now) return 'invalid token: token is expired (exp)';
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf - CLOCK_SKEW_S > now))
    return 'invalid token: token is not valid yet (nbf)';
  return claims as Claims;
}

/** livekit/protocol `SIPOutboundConfig.Validate` / `SIPOutboundTrunkInfo.Validate` for a host name. */
function hostProblem(host: string, what: 'hostname' | 'address'): string | undefined {
  if (!host) return what === 'hostname' ? 'no outbound hostname specified' : 'no outbound address specified';
  if (host.includes('transport=')) return 'trunk transport should be set as a field, not a URI parameter';
  if (/[@;]/.test(host) || /^sips?:/.test(host)) return `trunk ${what} should be a domain name or IP, not SIP URI`;
  return undefined;
}

/** livekit/protocol `CreateSIPParticipantRequest.Validate` plus the checks livekit/sip makes before dialing. */
function dialProblem(req: CreateSIPParticipantRequest, fromNumber: string): string | undefined {
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

const sipGrant = (c: Claims) => (isObject(c.sip) ? c.sip : {});
const videoGrant = (c: Claims) => (isObject(c.video) ? c.video : {});
const DENIED = 'permissions denied';
const needSipAdmin = (c: Claims) => (sipGrant(c).admin === true ? undefined : DENIED);
const needRoomAdmin = (room: string) => (c: Claims) => {
  const v = videoGrant(c);
  return v.roomAdmin === true && v.room === room ? undefined : DENIED;
};

interface FakeRoom {
  sid: string;
  name: string;
  creationTime: bigint;
  participants: Map<string, ParticipantInfo>;
}

/** The fake; {@link startFakeLiveKit} is its public face. */
class FakeServer implements FakeLiveKit {
  url = '';
  readonly requests: RecordedRequest[] = [];
  behaviour: FakeBehaviour = {};
  webhookUrl: string | undefined;
  private readonly server: http.Server;
  private readonly rooms = new Map<string, FakeRoom>();
  private readonly trunks = new Map<string, SIPOutboundTrunkInfo>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private queue: Promise<void> = Promise.resolve();
  private readonly routes: Record<string, AnyRoute>;
  readonly callees = new Map<string, CalleeScript>();
  private readonly hub: FakeRoomHub;

  constructor(
    readonly apiKey: string,
    readonly apiSecret: string,
    private readonly opts: FakeLiveKitOptions,
  ) {
    this.webhookUrl = opts.webhookUrl;
    this.server = http.createServer((req, res) => void this.serve(req, res));
    this.hub = new FakeRoomHub(
      {
        verify: (token) => {
          const claims = verifyToken(token, this.apiKey, this.apiSecret);
          if (typeof claims === 'string') return claims;
          const v = videoGrant(claims) as { roomJoin?: unknown; room?: unknown };
          if (v.roomJoin !== true || typeof v.room !== 'string' || v.room === '') return 'the token has no video.roomJoin grant for a room';
          if (typeof claims['sub'] !== 'string' || claims['sub'] === '') return 'the token has no identity (sub)';
          return { room: v.room, identity: claims['sub'] };
        },
        participants: (room) => [...(this.rooms.get(room)?.participants.values() ?? [])].map(roomView),
        script: (_room, p) => this.callees.get(p.attributes['sip.phoneNumber'] ?? '') ?? opts.callee ?? null,
        joined: (roomName, identity) => {
          const room = this.room(roomName);
          room.participants.set(
            identity,
            new ParticipantInfo({
              sid: newId('PA_'),
              identity,
              name: identity,
              kind: ParticipantInfo_Kind.AGENT,
              state: ParticipantInfo_State.ACTIVE,
              joinedAt: BigInt(nowS()),
              joinedAtMs: BigInt(Date.now()),
            }),
          );
          // LiveKit answers a ringing inbound call once an agent subscribes to the caller's audio.
          for (const p of room.participants.values()) {
            if (p.kind === ParticipantInfo_Kind.SIP && p.attributes['sip.callStatus'] === 'ringing') this.activate(room, p);
          }
        },
        calleeHangup: (roomName, identity) => {
          const p = this.rooms.get(roomName)?.participants.get(identity);
          if (p) this.leave(roomName, p, DisconnectReason.CLIENT_INITIATED, 'hangup');
        },
        left: (roomName, identity) => {
          this.rooms.get(roomName)?.participants.delete(identity);
        },
      },
      opts.synthesize ?? espeakVoice(),
    );
    this.hub.attach(this.server);
    this.routes = {
      'livekit.SIP/CreateSIPParticipant': route({
        schema: CreateSIPParticipantRequest,
        permit: (c) => (sipGrant(c).call === true ? undefined : DENIED),
        handle: (r) => this.createSipParticipant(r),
      }),
      'livekit.SIP/CreateSIPOutboundTrunk': route({
        schema: CreateSIPOutboundTrunkRequest,
        permit: needSipAdmin,
        handle: async (r) => this.createTrunk(r),
      }),
      'livekit.SIP/ListSIPOutboundTrunk': route({
        schema: ListSIPOutboundTrunkRequest,
        permit: needSipAdmin,
        handle: async (r) =>
          new ListSIPOutboundTrunkResponse({
            items: [...this.trunks.values()].filter(
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
          if (!this.trunks.delete(r.sipTrunkId)) throw new TwirpFailure('not_found', 'requested sip trunk does not exist');
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
        handle: async (r) => new ListParticipantsResponse({ participants: [...this.existingRoom(r.room).participants.values()] }),
      }),
      'livekit.RoomService/GetParticipant': route({
        schema: RoomParticipantIdentity,
        permit: (c, r) => needRoomAdmin(r.room)(c),
        handle: async (r) => {
          const p = this.existingRoom(r.room).participants.get(r.identity);
          if (!p) throw new TwirpFailure('not_found', 'participant not found');
          return p;
        },
      }),
      'livekit.RoomService/RemoveParticipant': route({
        schema: RoomParticipantIdentity,
        permit: (c, r) => needRoomAdmin(r.room)(c),
        handle: async (r) => {
          this.injectedRoomFailure();
          const p = this.existingRoom(r.room).participants.get(r.identity);
          if (!p) throw new TwirpFailure('not_found', 'participant not found');
          this.leave(r.room, p, DisconnectReason.PARTICIPANT_REMOVED);
          return new RemoveParticipantResponse();
        },
      }),
      'livekit.RoomService/DeleteRoom': route({
        schema: DeleteRoomRequest,
        permit: (c) => (videoGrant(c).roomCreate === true ? undefined : DENIED),
        handle: async (r) => {
          this.injectedRoomFailure();
          for (const p of this.existingRoom(r.room).participants.values()) this.leave(r.room, p, DisconnectReason.ROOM_DELETED);
          this.rooms.delete(r.room);
          return new DeleteRoomResponse();
        },
      }),
    };
  }

  async listen(host: string, port: number): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    const addr = this.server.address() as AddressInfo;
    this.url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }

  calleeLog(room: string): CalleeLog | undefined {
    return this.hub.log(room);
  }

  roomParticipants(room: string): string[] {
    return [...(this.rooms.get(room)?.participants.keys() ?? [])];
  }

  /** Phone participant `p` of `room` picks up: `sip.callStatus` becomes `active`. */
  private activate(room: FakeRoom, p: ParticipantInfo): void {
    const answered = p.clone();
    answered.attributes['sip.callStatus'] = 'active';
    room.participants.set(p.identity, answered);
    this.hub.attributesChanged(room.name, p.identity, { 'sip.callStatus': 'active' });
  }

  sipParticipants(): RecordedRequest[] {
    return this.requests.filter((r) => r.service === 'livekit.SIP' && r.method === 'CreateSIPParticipant');
  }

  hangups(): RecordedRequest[] {
    return this.requests.filter(
      (r) => r.service === 'livekit.RoomService' && (r.method === 'RemoveParticipant' || r.method === 'DeleteRoom'),
    );
  }

  /** Throws {@link FakeBehaviour.failNextRoom} once, if set. */
  private injectedRoomFailure(): void {
    const injected = this.behaviour.failNextRoom;
    if (!injected) return;
    this.behaviour.failNextRoom = undefined;
    throw new TwirpFailure(injected.code, injected.msg, injected.meta, injected.status);
  }

  signWebhook(body: string): string {
    const now = nowS();
    const claims = {
      iss: this.apiKey,
      nbf: now,
      exp: now + WEBHOOK_TTL_S,
      sha256: createHash('sha256').update(body, 'utf8').digest('base64'),
    };
    const unsigned = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(claims))}`;
    return `${unsigned}.${createHmac('sha256', this.apiSecret).update(unsigned).digest('base64url')}`;
  }

  async sendWebhook(event: Record<string, unknown>, url?: string): Promise<{ status: number; body: string }> {
    const body = JSON.stringify({ ...event, id: event.id ?? newId('EV_'), createdAt: event.createdAt ?? String(nowS()) });
    return this.post(body, String(event.event ?? ''), url);
  }

  async simulateInbound(opts: SimulateInboundOptions): Promise<{ callId: string; room: string; identity: string; status: number }> {
    const callId = opts.callId ?? newId('SCL_');
    const room = this.room(opts.room ?? `call-${opts.from}_${newId('').slice(0, 8)}`);
    const p = this.sipParticipant(`sip_${opts.from}`, `Phone ${opts.from}`, {
      'sip.callID': callId,
      'sip.callStatus': 'ringing',
      'sip.trunkPhoneNumber': opts.to,
      'sip.phoneNumber': opts.from,
      'sip.ruleID': newId('SDR_'),
      'sip.trunkID': newId('ST_'),
    });
    room.participants.set(p.identity, p);
    this.hub.participantJoined(room.name, roomView(p));
    const { status } = await this.post(this.eventBody('participant_joined', room, p), 'participant_joined', opts.url);
    return { callId, room: room.name, identity: p.identity, status };
  }

  async hangup(opts: HangupOptions): Promise<{ status: number }> {
    const known = this.rooms.get(opts.room)?.participants.get(opts.identity);
    const p =
      known ??
      this.sipParticipant(opts.identity, '', {
        'sip.callID': opts.callId,
        'sip.callStatus': 'active',
        'sip.trunkID': '',
        ...(opts.inbound ? { 'sip.ruleID': newId('SDR_') } : {}),
      });
    const room = this.rooms.get(opts.room) ?? {
      sid: newId('RM_'),
      name: opts.room,
      creationTime: BigInt(nowS()),
      participants: new Map(),
    };
    room.participants.delete(opts.identity);
    this.hub.participantLeft(room.name, opts.identity);
    const left = this.departed(p, DisconnectReason.CLIENT_INITIATED, 'hangup');
    const { status } = await this.post(this.eventBody('participant_left', room, left), 'participant_left', opts.url);
    return { status };
  }

  async close(): Promise<void> {
    this.hub.close();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    await this.queue;
  }

  // ---- HTTP / Twirp ----

  private async serve(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const send = (status: number, obj: unknown): number => {
      const text = JSON.stringify(obj);
      // Exactly `application/json`: the SDK parses error bodies only for that value (TwirpRPC.ts).
      res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      return status;
    };
    const fail = (e: TwirpFailure): number => send(e.status, { code: e.code, msg: e.message, ...(e.meta ? { meta: e.meta } : {}) });
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const m = /^\/twirp\/([\w.]+)\/(\w+)$/.exec(path);
    if (!m) {
      fail(new TwirpFailure('bad_route', `no handler for path "${path}"`));
      return;
    }
    const [, service = '', method = ''] = m;
    const contentType = req.headers['content-type'] ?? '';
    const record: RecordedRequest = { service, method, contentType, grants: {}, body: {}, at: Date.now() };
    this.requests.push(record);
    let status: number;
    try {
      status = send(200, await this.twirp(req, record));
    } catch (err) {
      status = fail(err instanceof TwirpFailure ? err : new TwirpFailure('internal', (err as Error).message));
    }
    this.opts.onRequest?.(record, status);
  }

  /** Runs one Twirp call in LiveKit's order: auth middleware, route, Content-Type, decode, grants, handler. */
  private async twirp(req: http.IncomingMessage, record: RecordedRequest): Promise<unknown> {
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) throw new TwirpFailure('unauthenticated', 'invalid authorization header. Must start with Bearer ');
    const claims = verifyToken(auth.slice('Bearer '.length), this.apiKey, this.apiSecret);
    if (typeof claims === 'string') throw new TwirpFailure('unauthenticated', claims);
    record.grants = claims;
    const r = this.routes[`${record.service}/${record.method}`];
    if (req.method !== 'POST') throw new TwirpFailure('bad_route', `unsupported method "${req.method}" (only POST is allowed)`);
    if (!r) throw new TwirpFailure('bad_route', `no handler for path "${req.url}"`);
    // Twirp answers an unexpected Content-Type with bad_route; this fake speaks JSON only (no application/protobuf).
    if (record.contentType.split(';')[0]?.trim().toLowerCase() !== 'application/json') {
      throw new TwirpFailure('bad_route', `unexpected Content-Type: "${record.contentType}"`);
    }
    let raw: unknown;
    try {
      raw = JSON.parse(await readBody(req));
    } catch (err) {
      throw new TwirpFailure('malformed', `the json request could not be decoded: ${(err as Error).message}`);
    }
    if (!isObject(raw)) throw new TwirpFailure('malformed', 'the json request could not be decoded: not an object');
    record.body = normalise(raw, r.schema);
    const reply = await r.run(claims, record.body);
    return reply.toJson({ emitDefaultValues: true, useProtoFieldName: true });
  }

  // ---- SIP ----

  private async createSipParticipant(req: CreateSIPParticipantRequest): Promise<SIPParticipantInfo> {
    const fromNumber = req.sipNumber || this.trunks.get(req.sipTrunkId)?.numbers[0] || '';
    const problem = dialProblem(req, fromNumber);
    if (problem) throw new TwirpFailure('invalid_argument', problem);
    if (this.behaviour.delayMs) await this.sleep(this.behaviour.delayMs);
    const injected = this.behaviour.failNext;
    if (injected) {
      this.behaviour.failNext = undefined;
      throw new TwirpFailure(injected.code, injected.msg, injected.meta, injected.status);
    }
    const sipCode = req.sipCallTo.slice(-3);
    const failure = SIP_FAILURES[sipCode];
    if (failure && req.waitUntilAnswered) {
      throw new TwirpFailure(failure.code, `twirp error unknown: sip status: ${sipCode}: ${failure.status}`, {
        sip_status_code: sipCode,
        sip_status: failure.status,
      });
    }
    const callId = newId('SCL_');
    const room = this.room(req.roomName);
    const phone: Record<string, string> = req.hidePhoneNumber
      ? {}
      : { 'sip.trunkPhoneNumber': fromNumber, 'sip.phoneNumber': req.sipCallTo };
    const p = this.sipParticipant(
      req.participantIdentity || `sip_${req.sipCallTo}`,
      req.participantName,
      {
        ...req.participantAttributes,
        'sip.callID': callId,
        'sip.callStatus': 'dialing',
        ...phone,
        'sip.trunkID': req.sipTrunkId,
      },
      req.participantMetadata,
    );
    // The participant joins before the INVITE (livekit/sip outbound.go), so participant_joined says `dialing`.
    this.fireAndForget('participant_joined', () => this.eventBody('participant_joined', room, p));
    if (failure) {
      // Without waitUntilAnswered the request has already succeeded; the rejected call just leaves.
      this.fireAndForget('participant_left', () => this.eventBody('participant_left', room, this.departed(p, failure.reason)));
    } else {
      const ringMs = req.waitUntilAnswered ? 0 : (this.behaviour.ringMs ?? 0);
      room.participants.set(p.identity, p);
      this.hub.participantJoined(room.name, roomView(p));
      if (ringMs > 0) {
        // The callee picks up later, unless the participant was removed meanwhile.
        void this.sleep(ringMs).then(() => {
          if (room.participants.get(p.identity) === p) this.activate(room, p);
        });
      } else {
        this.activate(room, p);
      }
    }
    return new SIPParticipantInfo({
      participantId: p.sid,
      participantIdentity: p.identity,
      roomName: room.name,
      sipCallId: callId,
    });
  }

  private createTrunk(req: CreateSIPOutboundTrunkRequest): SIPOutboundTrunkInfo {
    const t = req.trunk;
    if (!t) throw new TwirpFailure('invalid_argument', 'missing trunk');
    if (t.numbers.length === 0) throw new TwirpFailure('invalid_argument', 'no trunk numbers specified');
    const problem = hostProblem(t.address, 'address');
    if (problem) throw new TwirpFailure('invalid_argument', problem);
    const stored = t.clone();
    stored.sipTrunkId = newId('ST_');
    this.trunks.set(stored.sipTrunkId, stored);
    return stored;
  }

  // ---- rooms, participants, webhooks ----

  private room(name: string): FakeRoom {
    let r = this.rooms.get(name);
    if (!r) {
      r = { sid: newId('RM_'), name, creationTime: BigInt(nowS()), participants: new Map() };
      this.rooms.set(name, r);
    }
    return r;
  }

  private existingRoom(name: string): FakeRoom {
    const r = this.rooms.get(name);
    if (!r) throw new TwirpFailure('not_found', 'requested room does not exist');
    return r;
  }

  private sipParticipant(identity: string, name: string, attributes: Record<string, string>, metadata = ''): ParticipantInfo {
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

  /** A copy of `p` as it looks in `participant_left`. */
  private departed(p: ParticipantInfo, reason: DisconnectReason, callStatus?: string): ParticipantInfo {
    const left = p.clone();
    if (callStatus) left.attributes['sip.callStatus'] = callStatus;
    left.state = ParticipantInfo_State.DISCONNECTED;
    left.disconnectReason = reason;
    return left;
  }

  /** Removes `p` from `room` and queues its `participant_left`. */
  private leave(room: string, p: ParticipantInfo, reason: DisconnectReason, callStatus?: string): void {
    const r = this.room(room);
    r.participants.delete(p.identity);
    this.hub.participantLeft(room, p.identity);
    this.fireAndForget('participant_left', () =>
      this.eventBody('participant_left', r, this.departed(p, reason, p.kind === ParticipantInfo_Kind.SIP ? callStatus : undefined)),
    );
  }

  private eventBody(event: string, room: FakeRoom, participant: ParticipantInfo): string {
    return JSON.stringify(
      new WebhookEvent({
        event,
        id: newId('EV_'),
        createdAt: BigInt(nowS()),
        participant,
        room: new Room({ sid: room.sid, name: room.name, creationTime: room.creationTime }),
      }).toJson(),
    );
  }

  /** Queues a webhook to {@link webhookUrl} (if set), in order, without waiting for it. */
  private fireAndForget(event: string, body: () => string): void {
    const url = this.webhookUrl;
    if (!url) return;
    const text = body();
    this.queue = this.queue.then(() =>
      this.post(text, event, url).then(
        () => undefined,
        () => undefined,
      ),
    );
  }

  private async post(body: string, event: string, url = this.webhookUrl): Promise<{ status: number; body: string }> {
    if (!url) throw new Error('no webhook URL: pass one or set webhookUrl');
    try {
      const res = await fetch(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/webhook+json', Authorization: this.signWebhook(body) },
        body,
        signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
      });
      const reply = { status: res.status, body: await res.text() };
      this.opts.onWebhook?.({ event, url, status: reply.status });
      return reply;
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      const error = cause?.code ?? cause?.message ?? (err as Error).message;
      this.opts.onWebhook?.({ event, url, error });
      throw new Error(`webhook ${event} to ${url} failed: ${error}`, { cause: err });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = setTimeout(() => {
        this.timers.delete(t);
        resolve();
      }, ms);
      this.timers.add(t);
    });
  }
}

/** Reads a request body as UTF-8, refusing more than {@link MAX_BODY_BYTES}. */
async function readBody(req: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Starts a fake LiveKit server (Twirp `livekit.SIP`, `livekit.AgentDispatchService`,
 * `livekit.RoomService` subsets) on `opts.host:opts.port`.
 *
 * Dialing outcomes are chosen by the last three digits of the dialed number: `486` busy,
 * `603` declined, `480` unavailable, `404` not found; anything else answers. With
 * `waitUntilAnswered` a failure is a Twirp error carrying `sip_status_code`; without it the
 * request succeeds and the call leaves (`participant_left`, USER_REJECTED/USER_UNAVAILABLE),
 * as in livekit/sip. Unknown `sipTrunkId`s are accepted (a real server answers not_found).
 *
 * @returns the running fake; call `close()` when done.
 * @throws if the port cannot be bound, or `apiSecret` is shorter than 32 characters.
 */
export async function startFakeLiveKit(opts: FakeLiveKitOptions = {}): Promise<FakeLiveKit> {
  const secret = opts.apiSecret ?? DEFAULT_API_SECRET;
  if (secret.length < 32) throw new Error('apiSecret must be at least 32 characters (LiveKit rejects shorter secrets)');
  const fake = new FakeServer(opts.apiKey ?? DEFAULT_API_KEY, secret, opts);
  await fake.listen(opts.host ?? '127.0.0.1', opts.port ?? 0);
  return fake;
}

/** A participant as the fake room's socket describes it. */
function roomView(p: ParticipantInfo): FakeRoomParticipant {
  return {
    identity: p.identity,
    kind: Number(p.kind),
    attributes: { ...p.attributes },
    audio: p.kind === ParticipantInfo_Kind.SIP && p.attributes['sip.callStatus'] === 'active',
  };
}

/** The embedded espeak-ng voice, started on first use (lines of a callee script). */
function espeakVoice(): (text: string, language: string) => Promise<{ samples: Int16Array; sampleRate: number }> {
  let synth: Promise<{
    synthesize(text: string, voice: string, o: { timeoutMs: number }): Promise<{ samples: Int16Array; sampleRate: number }>;
    voiceFor(l: string): string;
  }> | null = null;
  return async (text, language) => {
    synth ??= import('../speech/espeak.js').then(({ EspeakSynthesizer }) => new EspeakSynthesizer());
    const s = await synth;
    const { toSpokenText } = await import('../engine/spoken.js');
    return s.synthesize(toSpokenText(text, language), s.voiceFor(language), { timeoutMs: 15_000 });
  };
}
