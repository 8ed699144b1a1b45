/**
 * A local fake LiveKit server that speaks LiveKit's real wire protocol: Twirp over HTTP with
 * protojson bodies, HS256 API tokens, and signed webhooks. It backs the telephony tests and
 * lets operators try vagent without a LiveKit server (`npm run fake-livekit`).
 *
 * This file holds the server's state and its public operations, and dials: CreateSIPParticipant
 * as livekit/sip `pkg/sip/client.go` does it (without `waitUntilAnswered` the request succeeds
 * before the INVITE is answered; a failed call then shows up only as `participant_left`).
 * Beside it: fake-livekit-api.ts (the public types), fake-livekit-twirp.ts (the Twirp wire,
 * tokens, grants), fake-livekit-routes.ts (the Twirp methods), fake-livekit-rooms.ts (rooms and
 * participants), fake-livekit-webhooks.ts (signed webhooks).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { DisconnectReason, ParticipantInfo_Kind, SIPParticipantInfo } from '@livekit/protocol';
import type { CreateSIPParticipantRequest, ParticipantInfo, SIPOutboundTrunkInfo } from '@livekit/protocol';
import type {
  FakeBehaviour,
  FakeLiveKit,
  FakeLiveKitOptions,
  HangupOptions,
  RecordedRequest,
  SimulateInboundOptions,
} from './fake-livekit-api.js';
import { dialProblem, livekitRoutes, SIP_FAILURES } from './fake-livekit-routes.js';
import { nowS, newId, serveTwirp, TwirpFailure, verifyToken, videoGrant, type AnyRoute } from './fake-livekit-twirp.js';
import { agentParticipant, departed, roomView, sipParticipant, type FakeRoom } from './fake-livekit-rooms.js';
import { eventBody, LiveKitWebhooks } from './fake-livekit-webhooks.js';
import { FakeRoomHub, type CalleeLog, type CalleeScript } from './fake-room-media.js';

/** Re-exported: the handle every test of the fake holds. */
export type { FakeLiveKit } from './fake-livekit-api.js';

const DEFAULT_API_KEY = 'devkey';
const DEFAULT_API_SECRET = 'secret_for_local_testing_only_0123456789';

/** The fake; {@link startFakeLiveKit} is its public face. */
class FakeServer implements FakeLiveKit {
  url = '';
  readonly requests: RecordedRequest[] = [];
  behaviour: FakeBehaviour = {};
  webhookUrl: string | undefined;
  private readonly server: http.Server;
  readonly rooms = new Map<string, FakeRoom>();
  readonly trunks = new Map<string, SIPOutboundTrunkInfo>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly routes: Record<string, AnyRoute>;
  private readonly webhooks: LiveKitWebhooks;
  readonly callees = new Map<string, CalleeScript>();
  private readonly hub: FakeRoomHub;

  constructor(
    readonly apiKey: string,
    readonly apiSecret: string,
    private readonly opts: FakeLiveKitOptions,
  ) {
    this.webhookUrl = opts.webhookUrl;
    this.webhooks = new LiveKitWebhooks(apiKey, apiSecret, () => this.webhookUrl, opts.onWebhook);
    this.server = http.createServer(
      (req, res) =>
        void serveTwirp(req, res, {
          apiKey: this.apiKey,
          apiSecret: this.apiSecret,
          routes: this.routes,
          requests: this.requests,
          onRequest: opts.onRequest,
        }),
    );
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
          room.participants.set(identity, agentParticipant(identity));
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
    this.routes = livekitRoutes(this);
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
  injectedRoomFailure(): void {
    const injected = this.behaviour.failNextRoom;
    if (!injected) return;
    this.behaviour.failNextRoom = undefined;
    throw new TwirpFailure(injected.code, injected.msg, injected.meta, injected.status);
  }

  signWebhook(body: string): string {
    return this.webhooks.sign(body);
  }

  async sendWebhook(event: Record<string, unknown>, url?: string): Promise<{ status: number; body: string }> {
    const body = JSON.stringify({ ...event, id: event.id ?? newId('EV_'), createdAt: event.createdAt ?? String(nowS()) });
    return this.webhooks.post(body, String(event.event ?? ''), url);
  }

  async simulateInbound(opts: SimulateInboundOptions): Promise<{ callId: string; room: string; identity: string; status: number }> {
    const callId = opts.callId ?? newId('SCL_');
    const room = this.room(opts.room ?? `call-${opts.from}_${newId('').slice(0, 8)}`);
    const p = sipParticipant(`sip_${opts.from}`, `Phone ${opts.from}`, {
      'sip.callID': callId,
      'sip.callStatus': 'ringing',
      'sip.trunkPhoneNumber': opts.to,
      'sip.phoneNumber': opts.from,
      'sip.ruleID': newId('SDR_'),
      'sip.trunkID': newId('ST_'),
    });
    room.participants.set(p.identity, p);
    this.hub.participantJoined(room.name, roomView(p));
    const { status } = await this.webhooks.post(eventBody('participant_joined', room, p), 'participant_joined', opts.url);
    return { callId, room: room.name, identity: p.identity, status };
  }

  async hangup(opts: HangupOptions): Promise<{ status: number }> {
    const known = this.rooms.get(opts.room)?.participants.get(opts.identity);
    const p =
      known ??
      sipParticipant(opts.identity, '', {
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
    const left = departed(p, DisconnectReason.CLIENT_INITIATED, 'hangup');
    const { status } = await this.webhooks.post(eventBody('participant_left', room, left), 'participant_left', opts.url);
    return { status };
  }

  async close(): Promise<void> {
    this.hub.close();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
    await this.webhooks.drained();
  }

  // ---- SIP ----

  async createSipParticipant(req: CreateSIPParticipantRequest): Promise<SIPParticipantInfo> {
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
    const p = sipParticipant(
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
    this.webhooks.fireAndForget('participant_joined', () => eventBody('participant_joined', room, p));
    if (failure) {
      // Without waitUntilAnswered the request has already succeeded; the rejected call just leaves.
      this.webhooks.fireAndForget('participant_left', () => eventBody('participant_left', room, departed(p, failure.reason)));
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

  // ---- rooms and participants ----

  private room(name: string): FakeRoom {
    let r = this.rooms.get(name);
    if (!r) {
      r = { sid: newId('RM_'), name, creationTime: BigInt(nowS()), participants: new Map() };
      this.rooms.set(name, r);
    }
    return r;
  }

  existingRoom(name: string): FakeRoom {
    const r = this.rooms.get(name);
    if (!r) throw new TwirpFailure('not_found', 'requested room does not exist');
    return r;
  }

  /** Removes `p` from `room` and queues its `participant_left`. */
  leave(room: string, p: ParticipantInfo, reason: DisconnectReason, callStatus?: string): void {
    const r = this.room(room);
    r.participants.delete(p.identity);
    this.hub.participantLeft(room, p.identity);
    this.webhooks.fireAndForget('participant_left', () =>
      eventBody('participant_left', r, departed(p, reason, p.kind === ParticipantInfo_Kind.SIP ? callStatus : undefined)),
    );
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

/** The embedded espeak-ng voice, started on first use (lines of a callee script). */
function espeakVoice(): (text: string, language: string) => Promise<{ samples: Int16Array; sampleRate: number }> {
  let synth: Promise<{
    synthesize(text: string, voice: string, o: { timeoutMs: number }): Promise<{ samples: Int16Array; sampleRate: number }>;
    voiceFor(l: string): string;
  }> | null = null;
  return async (text, language) => {
    synth ??= import('../adapters/speech/espeak.js').then(({ EspeakSynthesizer }) => new EspeakSynthesizer());
    const s = await synth;
    const { toSpokenText } = await import('../engine/spoken.js');
    return s.synthesize(toSpokenText(text, language), s.voiceFor(language), { timeoutMs: 15_000 });
  };
}
