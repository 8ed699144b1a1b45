/**
 * The fake LiveKit server's public interface: how it is started ({@link FakeLiveKitOptions}),
 * what it records, the knobs a test turns to make it misbehave, and the {@link FakeLiveKit}
 * handle a running fake is. The server itself is in src/devtools/fake-livekit.ts.
 */
import type { CalleeLog, CalleeScript } from './fake-room-media.js';

/** How `startFakeLiveKit` listens and signs. */
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

/** A running fake LiveKit server; see `startFakeLiveKit`. */
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
