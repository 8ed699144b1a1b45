/**
 * LiveKit as vagent's telephony provider (docs/calls.md; livekit-server-sdk 2.19.2 with

 * @livekit/protocol 1.51.0, the version the SDK pins).
 *
 * - Outbound: `SipClient.createSipParticipant` with the trunk's provider id, or an inline
 *   `SIPOutboundConfig` (host and decrypted credentials) — the SDK sends it as `trunk`.
 * - Failover to other regions is switched off: the SDK would replay a CreateSIPParticipant
 *   after a transport error or a 5xx, and a replayed dial can ring the callee twice.
 * - Errors are sorted into refused (nothing rings) and unknown (the phone may ring), so the
 *   call service never dials again on an unknown outcome.
 * - Hang-up: `RoomServiceClient.removeParticipant` (the SIP service then ends the call) and
 *   `deleteRoom` (vagent's media leaves); LiveKit's `not_found` means the line is already gone.
 * - A call dialled without waiting for the answer is watched through `getParticipant` until
 *   its SIP participant's `sip.callStatus` is `active`: LiveKit sends no webhook for that.
 * - Webhooks are verified over the exact raw body as the SDK's `WebhookReceiver.receive` does
 *   (the token with `TokenVerifier`, then its `sha256` claim against the body), and only then
 *   parsed, by the receiver with its own check skipped: a body that does not parse is told
 *   apart from a signature that does not verify.
 */
import crypto from 'node:crypto';
import { redactSecrets } from '../../domain/redact.js';
import { DisconnectReason, SIPOutboundConfig } from '@livekit/protocol';
import {
  AccessToken,
  RoomServiceClient,
  ServerError,
  SipCallError,
  SipClient,
  TokenVerifier,
  WebhookReceiver,
  type WebhookEvent,
} from 'livekit-server-sdk';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  HangupError,
  MalformedWebhookError,
  type AnswerWatch,
  type DialRequest,
  type DialResult,
  type HangupResult,
  type TelephonyCheck,
  type TelephonyEvent,
  type TelephonyPort,
} from '../../app/telephony-port.js';

/** LiveKit connection settings (the `livekit` settings with all three set). */
export interface LiveKitSettings {
  url: string;
  apiKey: string;
  apiSecret: string;
  /** The name vagent's own participant shows in call rooms (setting `livekit.agent_name`). */
  agentName: string;
  /** Timeout of one API request, seconds. */
  requestTimeoutS: number;
  /** Dial with `waitUntilAnswered` (see the `livekit.wait_until_answered` setting). */
  waitUntilAnswered: boolean;
  /** Milliseconds between two looks at a ringing call's SIP participant (default 1000). */
  answerPollMs?: number;
}

/** `participant.kind` of a SIP participant (livekit_models.proto `ParticipantInfo.Kind.SIP`). */
const KIND_SIP = 3;

/** Transport errors raised before the request could reach LiveKit: the dial was certainly not placed. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
  'CERT_HAS_EXPIRED',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** The low-level code of a fetch failure (`TypeError('fetch failed')` with a `cause`). */
function transportCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** Plain words for a LiveKit error that refused a request (no secrets: messages come from LiveKit or Node). */
export function explainLiveKitError(
  err: unknown,
  url: string,
): { problem: 'unauthenticated' | 'permission_denied' | 'unreachable' | 'error'; message: string } {
  const origin = safeOrigin(url);
  if (err instanceof ServerError) {
    if (err.status === 401) {
      return {
        problem: 'unauthenticated',
        message: `LiveKit at ${origin} rejected vagent's credentials (401 unauthenticated): LIVEKIT_API_KEY and LIVEKIT_API_SECRET must be a key pair of that LiveKit project`,
      };
    }
    if (err.status === 403) {
      return {
        problem: 'permission_denied',
        message: `LiveKit at ${origin} refused the request (403 permission_denied): the API key lacks the SIP/room admin grants this needs`,
      };
    }
    return {
      problem: 'error',
      message: redact(`LiveKit at ${origin} answered ${err.status} ${err.code ?? ''}: ${err.message}`.replace(/\s+:/, ':'), []),
    };
  }
  const code = transportCode(err);
  if (code)
    return {
      problem: 'unreachable',
      message: `cannot reach LiveKit at ${origin} (${code}): is the server running and LIVEKIT_URL right?`,
    };
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
    return { problem: 'unreachable', message: `LiveKit at ${origin} did not answer in time` };
  }
  return {
    problem: 'error',
    message: `LiveKit request to ${origin} failed: ${err instanceof Error ? err.message : String(err)}`,
  };
}

/** Longest piece of a LiveKit error message passed on. */
const MAX_MESSAGE = 300;

/**
 * A provider message made safe to store and show: `secrets` (a trunk's credentials, which a
 * proxy or a misdirected LIVEKIT_URL could echo back in a non-JSON error body) replaced,
 * control characters dropped, length capped.
 */
export function redact(message: string, secrets: ReadonlyArray<string | null>): string {
  // eslint-disable-next-line no-control-regex
  const out = redactSecrets(message, secrets).replace(/[\u0000-\u001f\u007f]+/g, ' ');
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}

/** fetch's "bad port" refusal (ports such as 1 or 25): nothing was sent. */
function blockedPort(err: unknown): boolean {
  return (err as { cause?: { message?: unknown } } | null)?.cause?.message === 'bad port';
}

/** LiveKit's answer that a room or participant does not exist (Twirp `not_found`, 404). */
function isNotFound(err: unknown): boolean {
  return err instanceof ServerError && (err.status === 404 || err.code === 'not_found');
}

function safeOrigin(url: string): string {
  try {
    return new URL(url).origin.replace(/^http/, url.startsWith('ws') ? 'ws' : 'http');
  } catch {
    return '(invalid LIVEKIT_URL)';
  }
}

/** LiveKit through the official server SDK. */
export class LiveKitTelephony implements TelephonyPort {
  readonly configured = true;
  readonly url: string;
  readonly agentName: string;
  private readonly sip: SipClient;
  private readonly rooms: RoomServiceClient;
  private readonly receiver: WebhookReceiver;
  private readonly verifier: TokenVerifier;

  constructor(private readonly settings: LiveKitSettings) {
    this.url = settings.url;
    this.agentName = settings.agentName;
    const options = { requestTimeout: settings.requestTimeoutS, failover: false };
    this.sip = new SipClient(settings.url, settings.apiKey, settings.apiSecret, options);
    this.rooms = new RoomServiceClient(settings.url, settings.apiKey, settings.apiSecret, options);
    this.receiver = new WebhookReceiver(settings.apiKey, settings.apiSecret);
    this.verifier = new TokenVerifier(settings.apiKey, settings.apiSecret);
  }

  async dial(r: DialRequest): Promise<DialResult> {
    // Waiting for the answer, the request lasts up to the ringing timeout; the SDK would raise
    // the timeout to ringing + 2 s itself, by mutating the options: it is set here instead.
    const timeoutS = this.timeoutFor(r);
    const opts = {
      participantIdentity: r.participantIdentity,
      participantName: r.participantName,
      participantMetadata: r.metadata,
      ringingTimeout: r.ringingTimeoutS,
      maxCallDuration: r.maxCallDurationS,
      waitUntilAnswered: this.settings.waitUntilAnswered,
      timeout: timeoutS,
      ...(r.from ? { fromNumber: r.from } : {}),
    };
    try {
      const info =
        r.trunk.kind === 'provider'
          ? await this.sip.createSipParticipant(r.trunk.providerTrunkId, r.to, r.roomName, opts)
          : await this.sip.createSipParticipant(
              '',
              r.to,
              r.roomName,
              opts,
              new SIPOutboundConfig({
                hostname: r.trunk.hostname,
                ...(r.trunk.username !== null ? { authUsername: r.trunk.username } : {}),
                ...(r.trunk.password !== null ? { authPassword: r.trunk.password } : {}),
              }),
            );
      return {
        kind: 'placed',
        sipCallId: info.sipCallId,
        participantId: info.participantId,
        answered: this.settings.waitUntilAnswered,
      };
    } catch (err) {
      const result = this.classify(err, timeoutS);
      const secrets = r.trunk.kind === 'inline' ? [r.trunk.username, r.trunk.password] : [];
      return { ...result, message: redact(result.message, secrets) };
    }
  }

  /** Seconds one dial request may take. */
  private timeoutFor(r: DialRequest): number {
    return this.settings.waitUntilAnswered ? Math.max(this.settings.requestTimeoutS, r.ringingTimeoutS + 2) : this.settings.requestTimeoutS;
  }

  /** Refused (nothing rings) or unknown (it may ring). */
  private classify(err: unknown, timeoutS: number): Exclude<DialResult, { kind: 'placed' }> {
    if (err instanceof SipCallError) {
      const status = err.sipStatusCode ?? null;
      return {
        kind: 'rejected',
        sipStatus: status,
        message: `the carrier refused the call: SIP ${status ?? '?'}${err.sipStatus ? ` ${err.sipStatus}` : ''}`,
      };
    }
    if (err instanceof ServerError) {
      // 4xx: LiveKit refused the request itself (bad argument, credentials, quota); 408/5xx:
      // the request may have reached the SIP service before it failed.
      if (err.status >= 400 && err.status < 500 && err.status !== 408) {
        return { kind: 'rejected', sipStatus: null, message: explainLiveKitError(err, this.url).message };
      }
      return {
        kind: 'unknown',
        message: `LiveKit answered ${err.status} ${err.code ?? ''} without saying whether the call was placed`.replace(/ +/g, ' '),
      };
    }
    const code = transportCode(err);
    if (code && NOT_SENT.has(code)) return { kind: 'rejected', sipStatus: null, message: explainLiveKitError(err, this.url).message };
    if (blockedPort(err))
      return {
        kind: 'rejected',
        sipStatus: null,
        message: `LIVEKIT_URL ${safeOrigin(this.url)} uses a port fetch refuses to connect to`,
      };
    if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) {
      return { kind: 'unknown', message: `LiveKit did not answer the dial within ${timeoutS} s` };
    }
    return {
      kind: 'unknown',
      message: `the connection to LiveKit failed mid-request (${code ?? (err instanceof Error ? err.message : 'error')})`,
    };
  }

  async hangUp(roomName: string, participantIdentity: string | null): Promise<HangupResult> {
    let line: HangupResult['line'] = 'already_gone';
    if (participantIdentity !== null) {
      try {
        await this.rooms.removeParticipant(roomName, participantIdentity);
        line = 'hung_up';
      } catch (err) {
        if (!isNotFound(err)) throw new HangupError(`could not hang up: ${explainLiveKitError(err, this.url).message}`);
      }
    }
    try {
      await this.rooms.deleteRoom(roomName);
      if (participantIdentity === null) line = 'hung_up';
    } catch (err) {
      // With the phone participant removed, the room is only tidied: vagent's media leaves
      // on its own once the session has ended.
      if (!isNotFound(err) && participantIdentity === null) {
        throw new HangupError(`could not hang up: ${explainLiveKitError(err, this.url).message}`);
      }
    }
    return { line };
  }

  async watchAnswer(roomName: string, participantIdentity: string, timeoutS: number, signal: AbortSignal): Promise<AnswerWatch> {
    const deadline = Date.now() + timeoutS * 1000;
    const everyMs = this.settings.answerPollMs ?? 1000;
    while (!signal.aborted && Date.now() < deadline) {
      try {
        await sleep(everyMs, undefined, { signal, ref: false });
      } catch {
        return 'stopped';
      }
      try {
        const p = await this.rooms.getParticipant(roomName, participantIdentity);
        if (p.attributes['sip.callStatus'] === 'active') return 'answered';
      } catch (err) {
        if (isNotFound(err)) return 'gone';
        // Anything else (LiveKit briefly unreachable) is tried again until the deadline.
      }
    }
    return signal.aborted ? 'stopped' : 'timeout';
  }

  async roomToken(roomName: string, identity: string, ttlS: number): Promise<string> {
    const at = new AccessToken(this.settings.apiKey, this.settings.apiSecret, {
      identity,
      name: this.settings.agentName,
      ttl: ttlS,
    });
    at.addGrant({ roomJoin: true, room: roomName, canPublish: true, canSubscribe: true, canPublishData: true });
    return at.toJwt();
  }

  async verifyWebhook(rawBody: string, authorization: string | undefined): Promise<TelephonyEvent> {
    // The checks of WebhookReceiver.receive, in its order (10 s of clock tolerance).
    if (!authorization) throw new Error('authorization header is empty');
    const claims = await this.verifier.verify(authorization, 10);
    if (claims.sha256 !== crypto.createHash('sha256').update(rawBody, 'utf8').digest('base64')) {
      throw new Error('sha256 checksum of body does not match');
    }
    let ev: WebhookEvent;
    try {
      ev = await this.receiver.receive(rawBody, undefined, true);
    } catch (err) {
      throw new MalformedWebhookError(
        err instanceof SyntaxError
          ? 'the webhook body is not JSON'
          : 'the webhook body is not a LiveKit WebhookEvent in its JSON form (an object whose fields have their protocol types)',
      );
    }
    const p = ev.participant;
    return {
      event: ev.event,
      id: ev.id,
      room: ev.room ? { name: ev.room.name, sid: ev.room.sid } : null,
      participant: p
        ? {
            identity: p.identity,
            sip: Number(p.kind) === KIND_SIP,
            attributes: { ...p.attributes },
            disconnectReason: p.disconnectReason ? (DisconnectReason[p.disconnectReason] ?? null) : null,
          }
        : null,
    };
  }

  async check(): Promise<TelephonyCheck> {
    const started = performance.now();
    try {
      const trunks = await this.sip.listSipOutboundTrunk();
      return { ok: true, url: this.url, outboundTrunks: trunks.length, ms: Math.round(performance.now() - started) };
    } catch (err) {
      return { ok: false, url: this.url, ...explainLiveKitError(err, this.url) };
    }
  }
}
