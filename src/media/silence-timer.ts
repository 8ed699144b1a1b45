/**
 * The silence policy of a call's media session: re-prompt after N ms of no caller speech, then
 * the fallback and a polite hang-up after M re-prompts — a pure reducer ({@link silenceReduce})
 * and a {@link SilenceTimer} that keeps its state and reads an injected clock. Times are ms on
 * the caller's clock.
 */
import { z } from 'zod';
import { issuesText } from './endpointing.js';

/** Silence policy: how long to wait for the caller, and how many times to ask again. */
export interface SilenceConfig {
  /** No caller speech this long after a prompt finished playing → re-prompt, ms (default 6000, range 1000–60000). */
  noSpeechMs: number;
  /** Re-prompts before the fallback and hang-up (default 2, range 0–5). */
  maxReprompts: number;
}

/** Defaults of {@link SilenceConfig}. */
export const DEFAULT_SILENCE: Readonly<SilenceConfig> = Object.freeze({ noSpeechMs: 6000, maxReprompts: 2 });

/** Per-agent silence overrides (zod). Unknown keys are rejected. */
export const SilenceOverridesSchema = z
  .object({
    noSpeechMs: z.number().int().min(1000).max(60_000).optional(),
    maxReprompts: z.number().int().min(0).max(5).optional(),
  })
  .strict();

/**
 * The silence configuration of an agent: defaults with its overrides.
 *
 * @throws RangeError naming the field when an override is unknown, of the wrong type or out of bounds
 */
export function resolveSilenceConfig(overrides: unknown = {}): Readonly<SilenceConfig> {
  const parsed = SilenceOverridesSchema.safeParse(overrides ?? {});
  if (!parsed.success) throw new RangeError(`silence: ${issuesText(parsed.error)}`);
  return Object.freeze({
    noSpeechMs: parsed.data.noSpeechMs ?? DEFAULT_SILENCE.noSpeechMs,
    maxReprompts: parsed.data.maxReprompts ?? DEFAULT_SILENCE.maxReprompts,
  });
}

/**
 * State of the silence machine, plain JSON:
 * - `idle`: the agent is speaking, the caller is speaking, or a turn is running — no timer;
 * - `waiting`: the prompt finished at `sinceMs` and the caller has not spoken since;
 * - `ended`: the fallback was given; nothing more happens.
 * `reprompts` counts re-prompts since the caller last spoke.
 */
export interface SilenceState {
  phase: 'idle' | 'waiting' | 'ended';
  sinceMs: number;
  reprompts: number;
}

/** The state of a new call: idle (the opening is about to play), no re-prompts. */
export const INITIAL_SILENCE_STATE: Readonly<SilenceState> = Object.freeze({ phase: 'idle', sinceMs: 0, reprompts: 0 });

/**
 * Events that drive the machine, each with its time on the session's clock, ms:
 * `promptStarted` (agent audio began), `promptFinished` (the last queued clip was acknowledged
 * as played), `speechStart` (from the segmenter), `tick` (a timer or frame).
 */
export type SilenceEvent =
  | { type: 'promptStarted'; atMs: number }
  | { type: 'promptFinished'; atMs: number }
  | { type: 'speechStart'; atMs: number }
  | { type: 'tick'; atMs: number };

/** What the session must do: say the step's re-prompt, or the fallback and then hang up politely. */
export type SilenceAction =
  { type: 'reprompt'; attempt: number; silentMs: number } | { type: 'fallback_hangup'; reprompts: number; silentMs: number };

/**
 * One transition of the silence machine. Pure: returns the next state and the action to take
 * (null when none). A tick at or past `sinceMs + noSpeechMs` while waiting yields a re-prompt
 * (the machine goes idle until that re-prompt finishes playing), or — after `maxReprompts` of
 * them with no caller speech between — the fallback and hang-up (the machine ends).
 * `speechStart` resets the count; events after `ended` change nothing.
 *
 * @throws RangeError when an event's time is not a finite number
 */
export function silenceReduce(
  state: Readonly<SilenceState>,
  event: SilenceEvent,
  config: Readonly<SilenceConfig> = DEFAULT_SILENCE,
): { state: SilenceState; action: SilenceAction | null } {
  if (typeof event.atMs !== 'number' || !Number.isFinite(event.atMs))
    throw new RangeError(`silence event ${event.type}: atMs must be a finite time in ms, got ${event.atMs}`);
  if (state.phase === 'ended') return { state: { ...state }, action: null };
  switch (event.type) {
    case 'promptStarted':
      return { state: { ...state, phase: 'idle' }, action: null };
    case 'promptFinished':
      return { state: { ...state, phase: 'waiting', sinceMs: event.atMs }, action: null };
    case 'speechStart':
      return { state: { phase: 'idle', sinceMs: event.atMs, reprompts: 0 }, action: null };
    case 'tick': {
      if (state.phase !== 'waiting') return { state: { ...state }, action: null };
      const silentMs = event.atMs - state.sinceMs;
      if (silentMs < config.noSpeechMs) return { state: { ...state }, action: null };
      if (state.reprompts >= config.maxReprompts) {
        return {
          state: { phase: 'ended', sinceMs: event.atMs, reprompts: state.reprompts },
          action: { type: 'fallback_hangup', reprompts: state.reprompts, silentMs },
        };
      }
      const attempt = state.reprompts + 1;
      return {
        state: { phase: 'idle', sinceMs: event.atMs, reprompts: attempt },
        action: { type: 'reprompt', attempt, silentMs },
      };
    }
  }
}

/** The time source a {@link SilenceTimer} reads, ms (the playout clock fits). */
export interface SilenceClock {
  now(): number;
}

/**
 * {@link silenceReduce} with its state kept and times read from an injected clock. The session
 * calls {@link tick} from a timer set for {@link deadlineMs} (or on every frame).
 */
export class SilenceTimer {
  private s: SilenceState = { ...INITIAL_SILENCE_STATE };
  private readonly config: Readonly<SilenceConfig>;

  /**
   * @param clock     time source, ms
   * @param overrides per-agent overrides, see {@link resolveSilenceConfig}
   * @throws RangeError for bad overrides
   */
  constructor(
    private readonly clock: SilenceClock,
    overrides: unknown = {},
  ) {
    this.config = resolveSilenceConfig(overrides);
  }

  /** A copy of the current state. */
  get state(): SilenceState {
    return { ...this.s };
  }

  /** When a re-prompt or fallback falls due, ms on the clock; null unless waiting. */
  get deadlineMs(): number | null {
    return this.s.phase === 'waiting' ? this.s.sinceMs + this.config.noSpeechMs : null;
  }

  private apply(type: SilenceEvent['type']): SilenceAction | null {
    const { state, action } = silenceReduce(this.s, { type, atMs: this.clock.now() }, this.config);
    this.s = state;
    return action;
  }

  /** Agent audio began. */
  promptStarted(): void {
    this.apply('promptStarted');
  }

  /** The last queued clip was played out; the wait for the caller starts now. */
  promptFinished(): void {
    this.apply('promptFinished');
  }

  /** The caller started speaking: no silence, the re-prompt count starts over. */
  speechStart(): void {
    this.apply('speechStart');
  }

  /** Checks the time; returns the action that fell due, if any. */
  tick(): SilenceAction | null {
    return this.apply('tick');
  }
}
