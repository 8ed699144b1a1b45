/**
 * Endpointing and barge-in policy for a call's media session (docs/media.md).
 *
 * Three pure policies, plain data in and out, no I/O and no clock of their own (times come in
 * as ms on the caller's clock), so a media worker thread can run them as they are:
 *
 * - {@link endOfUtteranceSilenceMs}: how long the caller must be silent before their utterance
 *   is taken as finished, per step ({@link expectationForStep} maps an engine step to what the
 *   agent is waiting for). Fed to `SpeechSegmenter.setMinSilenceMs` (src/media/vad.ts).
 * - `decideBargeIn`: whether caller speech during playout interrupts the agent.
 * - `SilenceTimer` / `silenceReduce`: re-prompt after N ms of no caller speech,
 *   fallback and a polite hang-up after M re-prompts.
 *
 * This file holds the first; the barge-in policy is ./barge-in.ts (with ./backchannels.ts), the
 * silence policy ./silence-timer.ts.
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

/** Formats zod issues as `field: message; …` (for the policies' RangeErrors). */
export function issuesText(error: z.ZodError): string {
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
