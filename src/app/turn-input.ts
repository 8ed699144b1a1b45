/**
 * What a session turn carries besides its text: the recogniser's telemetry, the fields only the
 * media core sets, and the phone-line events — with the checks that refuse a bad value before
 * anything is recorded (docs/api-decisions.md, docs/media.md "Confidence").
 */
import { ApiError } from '../domain/errors.js';
import { TURN_EVENT_KINDS, type TurnEventKind } from '../engine/turn.js';
import type { TurnInputBody } from '../contract/sessions.js';

/** A validated turn body (the contract's, src/contract/sessions.ts). `stt_ms`/`silence_ms` are ms. */
export type { TurnInputBody };

/** Speech-recognition telemetry of one turn (the turn body's fields, and the media core's exact audio). */
export type SttTelemetry = Omit<TurnInputBody, 'text'> & MediaTurnFields;

/** Fields only the media core sets on a turn (never part of the HTTP turn body). */
export interface MediaTurnFields {
  /**
   * Audio the recogniser consumed for this turn, ms (pre-roll and silence included): metered into
   * `stt_seconds`/`stt_inr` instead of `stt_ms + silence_ms`. A whole or fractional number 0–86400000.
   */
  stt_audio_ms?: number | null;
  /**
   * The turn came over the call's audio (the media core: a carrier stream or a LiveKit room),
   * so the engine speaks as on a phone (a `digits` step asked again offers the keypad). A turn
   * through the HTTP API is typed (`vagent agent chat`, an app) and never sets it.
   */
  phone?: boolean;
  /**
   * The recogniser heard this turn but gives no confidence (Sarvam; `stt_confidence` is then
   * null): the engine reads back every value it extracts (docs/agents.md "Recogniser confidence").
   */
  stt_unmeasured?: boolean;
}

/**
 * A phone-line event for {@link SessionService.eventTurn}: its kind (the engine's
 * `TURN_EVENT_KINDS`), which silence re-prompt it is (`attempt`, 1-based), and the
 * recogniser's telemetry when it heard something (`not_heard`: the audio it failed on).
 */
export interface SessionEventInput extends SttTelemetry {
  kind: TurnEventKind;
  attempt?: number | null;
}

/** Longest duration a turn's telemetry may give, ms (a day, as the turn body's `stt_ms`). */
const MAX_TELEMETRY_MS = 86_400_000;

/** @throws ApiError invalid_request unless `ms` is absent or a duration 0–{@link MAX_TELEMETRY_MS}. */
function checkMs(name: string, ms: unknown): void {
  if (ms === undefined || ms === null) return;
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_TELEMETRY_MS) {
    throw new ApiError('invalid_request', `${name} must be a number of milliseconds from 0 to ${MAX_TELEMETRY_MS}`, {
      param: name,
    });
  }
}

/** @throws ApiError invalid_request unless `stt_audio_ms` is absent or a duration in range. */
export function checkSttAudio(ms: unknown): void {
  checkMs('stt_audio_ms', ms);
}

/** @throws ApiError invalid_request naming the first bad field of a phone-line event. */
export function checkEvent(event: SessionEventInput): void {
  if (event === null || typeof event !== 'object') throw new ApiError('invalid_request', 'a turn event must be an object with kind');
  if (!(TURN_EVENT_KINDS as readonly string[]).includes(event.kind)) {
    throw new ApiError('invalid_request', `kind must be one of ${TURN_EVENT_KINDS.join(', ')}`, { param: 'kind' });
  }
  if (event.attempt != null && !(Number.isInteger(event.attempt) && event.attempt >= 1 && event.attempt <= 100)) {
    throw new ApiError('invalid_request', 'attempt must be a whole number from 1 to 100', { param: 'attempt' });
  }
  for (const name of ['stt_ms', 'silence_ms', 'stt_audio_ms'] as const) checkMs(name, event[name]);
  const c = event.stt_confidence;
  if (c != null && !(typeof c === 'number' && c >= 0 && c <= 1))
    throw new ApiError('invalid_request', 'stt_confidence must be a number from 0 to 1', { param: 'stt_confidence' });
  const p = event.stt_provider;
  if (p != null && !(typeof p === 'string' && p.length >= 1 && p.length <= 100))
    throw new ApiError('invalid_request', 'stt_provider must be a string of 1 to 100 characters', { param: 'stt_provider' });
}
