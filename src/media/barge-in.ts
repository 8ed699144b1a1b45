/**
 * The barge-in policy of a call's media session: whether caller speech during playout interrupts
 * the agent ({@link decideBargeIn}), and its per-agent thresholds. Pure: plain data in and out,
 * times in ms on the caller's clock. What counts as a backchannel is ./backchannels.ts.
 */
import { z } from 'zod';
import { backchannelTokens, isAnswerTokens, isBackchannelTokens } from './backchannels.js';
import { issuesText } from './endpointing.js';

/** Barge-in thresholds; every field optional, see {@link resolveBargeInConfig}. */
export interface BargeInConfig {
  /** Per-agent switch: false means caller speech never interrupts playout (legal disclaimers). Default true. */
  enabled: boolean;
  /** Caller speech needed before it interrupts, ms (default 250, range 100–2000). */
  minSpeechMs: number;
  /**
   * How long past `minSpeechMs` to wait for the recogniser's first partial text before
   * interrupting anyway, ms (default 50, range 0–1000): 250 + 50 keeps a barge-in `clear`
   * within 300 ms of speech onset while a fast partial can still show a backchannel.
   * Only used when `partialsExpected` is set on the input.
   */
  partialWaitMs: number;
  /**
   * Speech longer than this interrupts even when the partial text so far is only backchannel,
   * ms (default 1500, range 300–10000): the recogniser lags, and a caller still talking after
   * 1.5 s is taking the turn.
   */
  backchannelMaxMs: number;
}

/** Defaults of {@link BargeInConfig}. */
export const DEFAULT_BARGE_IN: Readonly<BargeInConfig> = Object.freeze({
  enabled: true,
  minSpeechMs: 250,
  partialWaitMs: 50,
  backchannelMaxMs: 1500,
});

/** Per-agent barge-in overrides (zod), for the agent definition. Unknown keys are rejected. */
export const BargeInOverridesSchema = z
  .object({
    enabled: z.boolean().optional(),
    minSpeechMs: z.number().int().min(100).max(2000).optional(),
    partialWaitMs: z.number().int().min(0).max(1000).optional(),
    backchannelMaxMs: z.number().int().min(300).max(10_000).optional(),
  })
  .strict();

/**
 * The barge-in configuration of an agent: defaults with its overrides.
 *
 * @throws RangeError naming the field when an override is unknown, of the wrong type, out of
 *         bounds, or when `backchannelMaxMs` < `minSpeechMs`
 */
export function resolveBargeInConfig(overrides: unknown = {}): Readonly<BargeInConfig> {
  const parsed = BargeInOverridesSchema.safeParse(overrides ?? {});
  if (!parsed.success) throw new RangeError(`barge-in: ${issuesText(parsed.error)}`);
  const cfg: BargeInConfig = { ...DEFAULT_BARGE_IN };
  for (const [k, v] of Object.entries(parsed.data)) if (v !== undefined) (cfg as unknown as Record<string, unknown>)[k] = v;
  if (cfg.backchannelMaxMs < cfg.minSpeechMs)
    throw new RangeError(`barge-in: backchannelMaxMs (${cfg.backchannelMaxMs} ms) must be ≥ minSpeechMs (${cfg.minSpeechMs} ms)`);
  return Object.freeze(cfg);
}

/**
 * Flags of the clip being played that matter to barge-in: the engine's `ClipFlags`
 * (src/engine/state.ts: `is_confirm_prompt`, `is_readback`, and `barge_in: false` on an opening
 * line or step question the agent marks to be heard whole).
 */
export interface PlayingClipFlags {
  barge_in?: boolean;
  is_confirm_prompt?: true;
  is_readback?: true;
}

/** What {@link decideBargeIn} looks at, all plain data. */
export interface BargeInInput {
  /** Whether agent audio is playing (queued and not yet acknowledged). */
  playing: boolean;
  /** Whether the caller is speaking (the segmenter's `speechStart` has fired and no `speechEnd` since). */
  speaking: boolean;
  /** Caller speech so far, ms from the onset (`SpeechEvent.atMs`) to now. */
  speechMs: number;
  /** The recogniser's latest partial text of this speech, if any. */
  partialText?: string;
  /** True when a streaming recogniser is running and may send a partial soon. */
  partialsExpected?: boolean;
  /** Flags of the clip playing now. */
  clip?: PlayingClipFlags;
}

/** Why {@link decideBargeIn} decided as it did (recorded in the decision trace). */
export type BargeInReason =
  | 'not_playing'
  | 'not_speaking'
  | 'agent_disabled'
  | 'clip_disabled'
  | 'too_short'
  | 'awaiting_partial'
  | 'backchannel'
  | 'answer'
  | 'speech'
  | 'speech_beyond_backchannel'
  | 'long_backchannel';

/** The decision: `interrupt` (clear the playout now), `ignore`, or `wait` (ask again on the next frame or partial). */
export interface BargeInDecision {
  action: 'interrupt' | 'ignore' | 'wait';
  reason: BargeInReason;
}

/**
 * Decides whether caller speech during playout interrupts it. Call on `speechStart`, on every
 * frame while the caller speaks during playout, and on every partial transcript, until it
 * returns `interrupt` or the speech ends.
 *
 * Order: nothing playing or nobody speaking → ignore; agent switch off → ignore; clip flagged
 * `barge_in: false` → ignore; under `minSpeechMs` → wait; partial text that is only backchannel →
 * interrupt if it answers a question the clip asks (`yes`, `haan` to a confirm prompt), else
 * ignore until `backchannelMaxMs`; partial text with more → interrupt; no partial yet → wait up
 * to `partialWaitMs` when partials are expected, else interrupt.
 *
 * @throws RangeError when `speechMs` is negative or not a number
 */
export function decideBargeIn(input: BargeInInput, config: Readonly<BargeInConfig> = DEFAULT_BARGE_IN): BargeInDecision {
  if (typeof input.speechMs !== 'number' || !(input.speechMs >= 0) || !Number.isFinite(input.speechMs)) {
    throw new RangeError(`speechMs must be a duration in ms ≥ 0, got ${input.speechMs}`);
  }
  if (!input.playing) return { action: 'ignore', reason: 'not_playing' };
  if (!input.speaking) return { action: 'ignore', reason: 'not_speaking' };
  if (!config.enabled) return { action: 'ignore', reason: 'agent_disabled' };
  if (input.clip?.barge_in === false) return { action: 'ignore', reason: 'clip_disabled' };
  if (input.speechMs < config.minSpeechMs) return { action: 'wait', reason: 'too_short' };
  const toks = backchannelTokens(input.partialText ?? '');
  if (toks.length > 0) {
    if (!isBackchannelTokens(toks)) return { action: 'interrupt', reason: 'speech_beyond_backchannel' };
    const asks = input.clip?.is_confirm_prompt === true || input.clip?.is_readback === true;
    if (asks && isAnswerTokens(toks)) return { action: 'interrupt', reason: 'answer' };
    if (input.speechMs >= config.backchannelMaxMs) return { action: 'interrupt', reason: 'long_backchannel' };
    return { action: 'ignore', reason: 'backchannel' };
  }
  if (input.partialsExpected && input.speechMs < config.minSpeechMs + config.partialWaitMs)
    return { action: 'wait', reason: 'awaiting_partial' };
  return { action: 'interrupt', reason: 'speech' };
}
