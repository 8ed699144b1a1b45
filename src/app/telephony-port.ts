/**
 * What the call services need from a telephony provider (docs/calls.md). The daemon plugs in
 * LiveKit (`src/adapters/livekit/telephony.ts`); with no provider configured, {@link NoTelephony}
 * refuses every use so `dial: true` fails with `telephony_not_configured` instead of
 * silently preparing only.
 */

/** Where an outbound SIP call goes through. */
export type DialTrunk =
  /** A trunk registered with the provider (`provider_trunk_id`, e.g. `ST_…`). */
  | { kind: 'provider'; providerTrunkId: string }
  /** An inline trunk: the carrier's SIP host[:port] and, if stored, decrypted credentials. */
  | { kind: 'inline'; hostname: string; username: string | null; password: string | null };

/** One outbound dial. Numbers are E.164; durations are whole seconds. */
export interface DialRequest {
  to: string;
  /** Caller ID presented to the callee (`fromNumber`), or null for the trunk's default. */
  from: string | null;
  trunk: DialTrunk;
  roomName: string;
  participantIdentity: string;
  participantName: string;
  /** JSON text attached to the SIP participant (call and session ids). */
  metadata: string;
  ringingTimeoutS: number;
  maxCallDurationS: number;
}

/** What a dial came to. */
export type DialResult =
  /**
   * The provider accepted the dial. `answered`: the request waited for the callee and they
   * answered (LiveKit's `waitUntilAnswered`); false: the phone is ringing.
   */
  | { kind: 'placed'; sipCallId: string; participantId: string; answered: boolean }
  /** The provider refused it; nothing rings. `sipStatus` when the carrier answered with a SIP failure. */
  | { kind: 'rejected'; message: string; sipStatus: number | null }
  /** No answer from the provider (timeout, connection lost mid-request): the phone may be ringing. */
  | { kind: 'unknown'; message: string };

/**
 * What hanging up a call's line came to: `hung_up` — the provider removed the phone
 * participant (or, with no participant identity, deleted the call's room); `already_gone` —
 * the provider had no such participant or room (the line had already ended).
 */
export type HangupResult = { line: 'hung_up' | 'already_gone' };

/** A hang-up the provider refused or did not answer: the line may still be up. The message has no secrets. */
export class HangupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HangupError';
  }
}

/** How a {@link TelephonyPort.watchAnswer} ended. */
export type AnswerWatch = 'answered' | 'gone' | 'timeout' | 'stopped';

/** A verified provider webhook, reduced to what vagent acts on. */
export interface TelephonyEvent {
  /** `participant_joined`, `participant_left`, `room_finished`, … */
  event: string;
  id: string;
  room: { name: string; sid: string } | null;
  participant: {
    identity: string;
    /** True for a SIP (phone) participant. */
    sip: boolean;
    attributes: Record<string, string>;
    /** Why it left (`participant_left`): `USER_REJECTED`, `USER_UNAVAILABLE`, `CLIENT_INITIATED`, … or null. */
    disconnectReason?: string | null;
  } | null;
}

/**
 * A webhook delivery whose signature verified but whose body is not an event of the provider's
 * (→ 400 `invalid_request`: the sender is authentic, its request is wrong; only a bad signature
 * is 401). The message says what is wrong, without quoting the body.
 */
export class MalformedWebhookError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MalformedWebhookError';
  }
}

/** Result of {@link TelephonyPort.check}. */
export type TelephonyCheck =
  | { ok: true; url: string; outboundTrunks: number; ms: number }
  | {
      ok: false;
      url: string | null;
      problem: 'not_configured' | 'unauthenticated' | 'permission_denied' | 'unreachable' | 'error';
      message: string;
    };

/** A telephony provider. */
export interface TelephonyPort {
  /** False when no provider is configured. */
  readonly configured: boolean;
  /** The provider's URL (for messages), or null. */
  readonly url: string | null;
  /** The name vagent's own participant shows in call rooms, or null. */
  readonly agentName: string | null;
  /** Places an outbound SIP call. Never throws: every failure is a {@link DialResult}. */
  dial(request: DialRequest): Promise<DialResult>;
  /**
   * Hangs up the phone line in `roomName`: removes the SIP participant `participantIdentity`
   * when it is known (outbound calls), then deletes the room so vagent's media leaves too.
   * With no identity (inbound calls), deleting the room is what hangs up.
   * @throws HangupError when the provider refuses or cannot be reached (the line may be up).
   */
  hangUp(roomName: string, participantIdentity: string | null): Promise<HangupResult>;
  /**
   * Watches a ringing outbound call until its SIP participant's `sip.callStatus` is `active`
   * (LiveKit sends no webhook for that change), polling the provider.
   * @param timeoutS how long to watch at most (the ringing timeout and a margin), seconds.
   * @param signal stops the watch (resolves `stopped`).
   * @returns `answered`, `gone` (no such participant any more: it left or was never there),
   *          `timeout` or `stopped`. Provider errors are retried until the timeout.
   */
  watchAnswer(roomName: string, participantIdentity: string, timeoutS: number, signal: AbortSignal): Promise<AnswerWatch>;
  /**
   * An access token for vagent's own media participant `identity` in `roomName` only
   * (vagent joins call rooms itself rather than being dispatched as an agent):
   * `video.roomJoin` for that room, publish and subscribe, valid `ttlS` seconds.
   * @throws Error when no provider is configured
   */
  roomToken(roomName: string, identity: string, ttlS: number): Promise<string>;
  /**
   * Verifies a webhook delivery (signature over the exact raw body), then parses it.
   * @throws MalformedWebhookError when the signature verifies but the body is not an event
   *         (not JSON, not an object, a field of the wrong type);
   *         any other Error when the signature or its body hash is not valid.
   */
  verifyWebhook(rawBody: string, authorization: string | undefined): Promise<TelephonyEvent>;
  /** Checks the settings with one authenticated request (lists outbound trunks). */
  check(): Promise<TelephonyCheck>;
}

/** No telephony provider: every use is refused. */
export class NoTelephony implements TelephonyPort {
  readonly configured = false;
  readonly url = null;
  readonly agentName = null;
  async dial(): Promise<DialResult> {
    return { kind: 'rejected', message: 'no telephony provider is configured', sipStatus: null };
  }
  async roomToken(): Promise<string> {
    throw new Error('no telephony provider is configured');
  }
  async hangUp(): Promise<HangupResult> {
    throw new HangupError('no telephony provider is configured');
  }
  async watchAnswer(): Promise<AnswerWatch> {
    return 'gone';
  }
  async verifyWebhook(): Promise<TelephonyEvent> {
    throw new Error('no telephony provider is configured');
  }
  async check(): Promise<TelephonyCheck> {
    return {
      ok: false,
      url: null,
      problem: 'not_configured',
      message:
        'LiveKit is not configured: set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET (or livekit: in the config file) and restart vagent serve',
    };
  }
}

/** A LiveKit call whose room vagent joins (docs/media.md "LiveKit rooms"). */
export interface RoomCall {
  /** The call's number N (`cl_<N>`, session `se_<N>`). */
  n: number;
  tenantId: string;
  /** The call's room, e.g. `call-cl_12`. */
  roomName: string;
  /** The phone participant's identity when vagent named it (outbound), else null (the first SIP participant). */
  sipIdentity: string | null;
}

/**
 * vagent's media in LiveKit call rooms (src/daemon/media-rooms.ts), connected once
 * call audio runs. vagent mints its own room token and joins as a participant: see
 * docs/media.md "LiveKit rooms" for why it is not a dispatched agent.
 */
export interface CallRooms {
  /** Joins call `call.n`'s room in the background; its media session runs there once the call is answered. Never throws. */
  join(call: RoomCall): void;
  /** Leaves call `n`'s room (a failed dial, a hang-up); false when vagent is not in it. */
  hangUp(n: number): boolean;
}
