/**
 * The options of a {@link CallMediaSession} checked and resolved once, at construction: each
 * duration in its range, the barge-in and end-of-utterance tables of `endpointing.ts`, the
 * clock, and the VAD at the media core's rate.
 */
import type { CallSessionOptions } from '../call-session-port.js';
import { resolveEouSilence, type ExpectationKind } from '../endpointing.js';
import { resolveBargeInConfig, type BargeInConfig } from '../barge-in.js';
import { SilenceTimer } from '../silence-timer.js';
import { systemClock, type PlayoutClock } from '../playout-clock.js';
import { MEDIA_CORE_SAMPLE_RATE } from '../transport.js';

/** Invalid options of a {@link CallMediaSession}. */
export class CallSessionError extends RangeError {
  override readonly name = 'CallSessionError';
}

/**
 * `value` when it is a number of ms in [`min`, `max`].
 * @throws CallSessionError naming setting `name` otherwise
 */
export function msInRange(name: string, value: number, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max)
    throw new CallSessionError(`${name} must be a number of ms in [${min}, ${max}]; got ${String(value)}`);
  return value;
}

/** A session's options, checked, with the defaults filled in. */
export interface SessionSettings {
  /** Audio before the onset fed to a new recognition stream, samples at 16 kHz. */
  preRollSamples: number;
  recognizerTimeoutMs: number;
  dtmfTimeoutMs: number;
  closeGraceMs: number;
  markAckTimeoutMs: number;
  maxCallDurationMs: number | null;
  maxClosingMs: number;
  bargeIn: Readonly<BargeInConfig>;
  eouTable: Readonly<Record<ExpectationKind, number>>;
  clock: PlayoutClock;
  silence: SilenceTimer;
}

/**
 * Checks `opts` and fills in the defaults (pre-roll 300 ms, recogniser timeout 3 s, DTMF pause
 * 3 s, close grace 500 ms, mark acknowledgement 3 s, closing at most 15 s, no maximum duration).
 * @throws CallSessionError on a missing part, an option out of range or a VAD not at 16 kHz
 */
export function resolveSessionSettings(opts: CallSessionOptions): SessionSettings {
  if (!opts || !opts.transport || !opts.vad || !opts.recognizer || typeof opts.turn !== 'function')
    throw new CallSessionError('a call session needs a transport, a vad, a recognizer and a turn port');
  if (opts.vad.sampleRate !== MEDIA_CORE_SAMPLE_RATE)
    throw new CallSessionError(`the VAD must run at ${MEDIA_CORE_SAMPLE_RATE} Hz (the media core's rate); got ${opts.vad.sampleRate} Hz`);
  const preRollMs = msInRange('preRollMs', opts.preRollMs ?? 300, 0, 1000);
  const recognizerTimeoutMs = msInRange('recognizerTimeoutMs', opts.recognizerTimeoutMs ?? 3000, 1, 60_000);
  const dtmfTimeoutMs = msInRange('dtmfTimeoutMs', opts.dtmfTimeoutMs ?? 3000, 1, 60_000);
  const closeGraceMs = msInRange('closeGraceMs', opts.closeGraceMs ?? 500, 0, 60_000);
  const markAckTimeoutMs = msInRange('markAckTimeoutMs', opts.markAckTimeoutMs ?? 3000, 1, 60_000);
  const maxCallDurationMs =
    opts.maxCallDurationMs === undefined ? null : msInRange('maxCallDurationMs', opts.maxCallDurationMs, 1, 24 * 3600_000);
  const maxClosingMs = msInRange('maxClosingMs', opts.maxClosingMs ?? 15_000, 1, 600_000);
  try {
    const bargeIn = resolveBargeInConfig(opts.bargeIn ?? {});
    const eouTable = resolveEouSilence(opts.eouSilence ?? {});
    const clock = opts.clock ?? systemClock;
    const silence = new SilenceTimer(clock, opts.silence ?? {});
    return {
      preRollSamples: Math.round((preRollMs * MEDIA_CORE_SAMPLE_RATE) / 1000),
      recognizerTimeoutMs,
      dtmfTimeoutMs,
      closeGraceMs,
      markAckTimeoutMs,
      maxCallDurationMs,
      maxClosingMs,
      bargeIn,
      eouTable,
      clock,
      silence,
    };
  } catch (err) {
    throw new CallSessionError((err as Error).message);
  }
}
