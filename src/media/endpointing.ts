/**
 * Endpointing and barge-in policy for a call's media session (issue 16, DESIGN.md §3 "Media").
 *
 * Three pure policies, plain data in and out, no I/O and no clock of their own (times come in
 * as ms on the caller's clock), so a media worker thread can run them as they are:
 *
 * - {@link endOfUtteranceSilenceMs}: how long the caller must be silent before their utterance
 *   is taken as finished, per step ({@link expectationForStep} maps an engine step to what the
 *   agent is waiting for). Fed to `SpeechSegmenter.setMinSilenceMs` (src/media/vad.ts).
 * - {@link decideBargeIn}: whether caller speech during playout interrupts the agent.
 * - {@link SilenceTimer} / {@link silenceReduce}: re-prompt after N ms of no caller speech,
 *   fallback and a polite hang-up after M re-prompts.
 *
 * The shape follows what telephony voice platforms expose: Dialogflow CX's advanced speech
 * settings set an end-of-speech sensitivity/timeout and a no-speech timeout per agent, flow and
 * page, the lower level overriding the higher
 * (https://cloud.google.com/dialogflow/cx/docs/concept/advanced-speech); Twilio's `<Gather>` has
 * `timeout` (seconds of silence before it gives up, default 5) and `speechTimeout`
 * (https://www.twilio.com/docs/voice/twiml/gather); SignalWire's collect defaults its
 * end-silence timeout to 1 s. The figures here: a yes/no answer is one word and can be
 * endpointed after ~500 ms, while people read digit strings and phone numbers in groups
 * ("98450 … 12345") with pauses of a second or more between them.
 */
import { z } from 'zod';
import {
  DEFAULT_EOU_SILENCE_MS,
  EXPECTATION_KINDS,
  MAX_EOU_SILENCE_MS,
  MIN_EOU_SILENCE_MS,
  type ExpectationKind,
} from '../domain/media.js';

// ---------------------------------------------------------------------------------------------
// Adaptive end-of-utterance silence
// ---------------------------------------------------------------------------------------------

// What the agent waits for and the default silences live in the domain, shared with the engine
// (its `mediaHintsOf`); re-exported here for the media core.
export {
  DEFAULT_EOU_SILENCE_MS,
  EXPECTATION_KINDS,
  MAX_EOU_SILENCE_MS,
  MIN_EOU_SILENCE_MS,
  PHONE_MIN_DIGITS,
  expectationForStep,
} from '../domain/media.js';
export type { ExpectationKind } from '../domain/media.js';

const EouMs = z
  .number()
  .int(`must be a whole number of ms`)
  .min(MIN_EOU_SILENCE_MS, `must be ≥ ${MIN_EOU_SILENCE_MS} ms`)
  .max(MAX_EOU_SILENCE_MS, `must be ≤ ${MAX_EOU_SILENCE_MS} ms`);

/**
 * Per-agent overrides of {@link DEFAULT_EOU_SILENCE_MS}: any subset of the kinds, each a whole
 * number of ms in [{@link MIN_EOU_SILENCE_MS}, {@link MAX_EOU_SILENCE_MS}]. Unknown kinds are
 * rejected so a typo surfaces. Meant to be embedded in the agent definition by the step that
 * wires the media session in.
 */
export const EouSilenceOverridesSchema = z
  .object(Object.fromEntries(EXPECTATION_KINDS.map((k) => [k, EouMs.optional()])) as Record<ExpectationKind, z.ZodOptional<typeof EouMs>>)
  .strict();
/** Per-agent end-of-utterance silence overrides, ms by kind. */
export type EouSilenceOverrides = Partial<Record<ExpectationKind, number>>;

/** Formats zod issues as `field: message; …`. */
function issuesText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

/**
 * The end-of-utterance silence table of an agent: the defaults with its overrides applied.
 *
 * @param overrides per-kind ms, validated by {@link EouSilenceOverridesSchema}
 * @returns a frozen table, ms by kind
 * @throws RangeError naming the field when an override is unknown, not a whole number or out of bounds
 */
export function resolveEouSilence(overrides: unknown = {}): Readonly<Record<ExpectationKind, number>> {
  const parsed = EouSilenceOverridesSchema.safeParse(overrides ?? {});
  if (!parsed.success) throw new RangeError(`end-of-utterance silence: ${issuesText(parsed.error)}`);
  const table = { ...DEFAULT_EOU_SILENCE_MS };
  for (const k of EXPECTATION_KINDS) {
    const v = parsed.data[k];
    if (v !== undefined) table[k] = v;
  }
  return Object.freeze(table);
}

/**
 * The silence that ends the caller's utterance for what the agent expects, ms.
 *
 * @param kind  what the agent waits for
 * @param table a table from {@link resolveEouSilence} (default: {@link DEFAULT_EOU_SILENCE_MS})
 * @throws RangeError for an unknown kind
 */
export function endOfUtteranceSilenceMs(
  kind: ExpectationKind,
  table: Readonly<Record<ExpectationKind, number>> = DEFAULT_EOU_SILENCE_MS,
): number {
  if (!(EXPECTATION_KINDS as readonly string[]).includes(kind))
    throw new RangeError(`unknown expectation kind "${String(kind)}"; one of ${EXPECTATION_KINDS.join(', ')}`);
  return table[kind];
}

// ---------------------------------------------------------------------------------------------
// Barge-in
// ---------------------------------------------------------------------------------------------

/**
 * Words and phrases a listener says to show they are following, not to take the turn
 * ("backchannels"): English, Hindi in Latin script as Indian callers and recognisers spell it,
 * and Devanagari. Matched on whole normalised tokens; runs of letters are folded first, so
 * "hmmm", "mmmm", "okkk" and "haaan" match too.
 */
export const BACKCHANNELS: readonly string[] = [
  // English
  'ok',
  'okay',
  'okey',
  'k',
  'uh huh',
  'uhhuh',
  'mhm',
  'mm',
  'hm',
  'hmm',
  'mm hmm',
  'um',
  'uh',
  'ah',
  'oh',
  'right',
  'alright',
  'all right',
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'i see',
  'got it',
  'fine',
  'cool',
  'go on',
  'yes yes',
  // Hindi / Hinglish, Latin script
  'ha',
  'haa',
  'haan',
  'han',
  'hanji',
  'haanji',
  'haan ji',
  'han ji',
  'ha ji',
  'ji',
  'jee',
  'ji haan',
  'ji han',
  'achha',
  'acha',
  'accha',
  'achchha',
  'theek',
  'thik',
  'theek hai',
  'thik hai',
  'thik he',
  'sahi',
  'sahi hai',
  'bilkul',
  // Devanagari
  'हाँ',
  'हां',
  'हा',
  'जी',
  'हाँ जी',
  'हां जी',
  'जी हाँ',
  'जी हां',
  'अच्छा',
  'ठीक',
  'ठीक है',
  'सही',
  'बिल्कुल',
  'हम्म',
  'हम',
];

/**
 * Backchannels that also answer a yes/no question: while the playing clip asks one (a confirm
 * prompt or readback), these are the answer and interrupt.
 */
export const ANSWER_BACKCHANNELS: readonly string[] = [
  'ok',
  'okay',
  'okey',
  'k',
  'uh huh',
  'uhhuh',
  'mhm',
  'mm hmm',
  'right',
  'alright',
  'all right',
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'yes yes',
  'fine',
  'ha',
  'haa',
  'haan',
  'han',
  'hanji',
  'haanji',
  'haan ji',
  'han ji',
  'ha ji',
  'ji',
  'jee',
  'ji haan',
  'ji han',
  'theek hai',
  'thik hai',
  'thik he',
  'sahi',
  'sahi hai',
  'bilkul',
  'हाँ',
  'हां',
  'हा',
  'जी',
  'हाँ जी',
  'हां जी',
  'जी हाँ',
  'जी हां',
  'ठीक है',
  'सही',
  'बिल्कुल',
];

/**
 * Normalises recogniser text into tokens: lower case, Unicode NFC, punctuation and hyphens to
 * spaces, runs of one Latin letter folded to at most two ("hmmm" → "hmm", "haaan" → "haan",
 * "okkk" → "okk" → "ok" by a small fold table).
 */
export function backchannelTokens(text: string): string[] {
  const folded = text
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s]+/gu, ' ')
    .replace(/([a-z])\1{2,}/g, '$1$1');
  return folded
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((t) => FOLD.get(t) ?? t);
}

/** Spellings folded onto one token after letter runs are cut to two. */
const FOLD = new Map<string, string>([
  ['okk', 'ok'],
  ['hhmm', 'hmm'],
  ['hann', 'han'],
  ['yess', 'yes'],
  ['uhh', 'uh'],
  ['umm', 'um'],
  ['ohh', 'oh'],
  ['ahh', 'ah'],
]);

function phraseSet(list: readonly string[]): { phrases: Set<string>; longest: number } {
  const phrases = new Set<string>();
  let longest = 1;
  for (const p of list) {
    const toks = backchannelTokens(p);
    phrases.add(toks.join(' '));
    longest = Math.max(longest, toks.length);
  }
  return { phrases, longest };
}
const ALL_BACKCHANNELS = phraseSet(BACKCHANNELS);
const ANSWERS = phraseSet(ANSWER_BACKCHANNELS);

/** True when `tokens` split entirely into phrases of `set` (longest phrase first). */
function coveredBy(tokens: string[], set: { phrases: Set<string>; longest: number }): boolean {
  let i = 0;
  outer: while (i < tokens.length) {
    for (let n = Math.min(set.longest, tokens.length - i); n >= 1; n--) {
      if (set.phrases.has(tokens.slice(i, i + n).join(' '))) {
        i += n;
        continue outer;
      }
    }
    return false;
  }
  return true;
}

/**
 * True when the whole of `text` is backchannel ("haan ji", "okay okay", "hmm", "अच्छा"), false
 * when it says anything more ("haan ji, but make it Tuesday") or nothing at all.
 */
export function isBackchannel(text: string): boolean {
  const toks = backchannelTokens(text);
  return toks.length > 0 && coveredBy(toks, ALL_BACKCHANNELS);
}

/** Barge-in thresholds; every field optional, see {@link resolveBargeInConfig}. */
export interface BargeInConfig {
  /** Per-agent switch: false means caller speech never interrupts playout (legal disclaimers). Default true. */
  enabled: boolean;
  /** Caller speech needed before it interrupts, ms (default 250, range 100–2000). */
  minSpeechMs: number;
  /**
   * How long past `minSpeechMs` to wait for the recogniser's first partial text before
   * interrupting anyway, ms (default 50, range 0–1000): 250 + 50 keeps a barge-in `clear`
   * within issue 16's 300 ms of speech onset while a fast partial can still show a backchannel.
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
    if (!coveredBy(toks, ALL_BACKCHANNELS)) return { action: 'interrupt', reason: 'speech_beyond_backchannel' };
    const asks = input.clip?.is_confirm_prompt === true || input.clip?.is_readback === true;
    if (asks && coveredBy(toks, ANSWERS)) return { action: 'interrupt', reason: 'answer' };
    if (input.speechMs >= config.backchannelMaxMs) return { action: 'interrupt', reason: 'long_backchannel' };
    return { action: 'ignore', reason: 'backchannel' };
  }
  if (input.partialsExpected && input.speechMs < config.minSpeechMs + config.partialWaitMs)
    return { action: 'wait', reason: 'awaiting_partial' };
  return { action: 'interrupt', reason: 'speech' };
}

// ---------------------------------------------------------------------------------------------
// Silence: re-prompt, then fallback and hang-up
// ---------------------------------------------------------------------------------------------

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
