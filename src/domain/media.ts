/**
 * What a phone call's media needs to know about the conversation (docs/media.md "How a call
 * behaves"): what the agent is waiting to hear at a step, the end-of-utterance silence that
 * suits it, and the recogniser grammar that biases towards it.
 *
 * Pure data and functions, in the domain so both the engine (which knows the current step)
 * and the media core (src/media/endpointing.ts, which re-exports them) share one mapping.
 *
 * The figures follow what telephony voice platforms expose: Dialogflow CX's end-of-speech and
 * no-speech timeouts per agent and page (https://cloud.google.com/dialogflow/cx/docs/concept/advanced-speech),
 * Twilio `<Gather>`'s `timeout` and `speechTimeout` (https://www.twilio.com/docs/voice/twiml/gather).
 * A yes/no answer is one word and can be endpointed after ~500 ms, while people read digit
 * strings and phone numbers in groups ("98450 … 12345") with pauses of a second or more.
 */
import type { SlotType } from './slot-types.js';

/**
 * What the agent is waiting to hear, derived from the engine's step (see {@link expectationForStep}):
 * - `yes_no`: a yes/no step, or any step while a readback awaits the caller's yes;
 * - `digits`: a `digits` capture (an OTP, an account number);
 * - `phone`: a `digits` capture of a phone number (10 digits or more, or a slot named for a phone);
 * - `number`: a `number` or `amount` capture (said as words, "two thousand five hundred");
 * - `choice`: a `choice` capture (one of a few words);
 * - `name`: a `person_name` capture;
 * - `date`, `time`: those captures;
 * - `free`: free text, a step without capture, or past the last step.
 */
export const EXPECTATION_KINDS = ['yes_no', 'digits', 'phone', 'number', 'choice', 'name', 'date', 'time', 'free'] as const;
/** One of {@link EXPECTATION_KINDS}. */
export type ExpectationKind = (typeof EXPECTATION_KINDS)[number];

/**
 * Default end-of-utterance silence per expectation, ms. Short after a yes/no question (the
 * answer is one word), longer for names and dates (people hesitate, spell), longest while
 * digits or a phone number are said (pauses between groups of 3–5 digits).
 */
export const DEFAULT_EOU_SILENCE_MS: Readonly<Record<ExpectationKind, number>> = Object.freeze({
  yes_no: 500,
  choice: 600,
  free: 700,
  name: 800,
  date: 800,
  time: 800,
  number: 900,
  digits: 1200,
  phone: 1500,
});

/** Least end-of-utterance silence accepted in an override, ms (below it a breath ends the turn). */
export const MIN_EOU_SILENCE_MS = 200;
/** Most end-of-utterance silence accepted in an override, ms (above it the caller thinks the line died). */
export const MAX_EOU_SILENCE_MS = 5000;

/** Digit strings at least this long are taken as phone numbers (Indian mobiles have 10 digits; E.164 up to 15). */
export const PHONE_MIN_DIGITS = 10;

/** What {@link expectationForStep} reads of an agent step: `Step` of ./agent.ts satisfies it. */
export interface StepCaptureView {
  /** The step id (`collect_phone`). */
  id: string;
  /** What the step captures, if anything: the slot name, its type and (`digits`) its length bounds. */
  capture?: { slot: string; type: SlotType; min_length?: number | undefined; max_length?: number | undefined } | undefined;
}
const PHONE_NAME = /(^|_)(phone|mobile|msisdn|cell|whatsapp|contact_number|tel)(_|$)/;

/**
 * Maps the engine's current step to what the agent waits for (the engine exposes it as
 * `currentStep(agent, state)` and `state.confirm` in src/engine/state.ts).
 *
 * @param step           the step under the cursor; undefined past the last step (closing) → `free`
 * @param confirmPending true while a readback of this step awaits the caller's yes
 *                       (`state.confirm !== null`) → `yes_no`: a correction said with pauses is
 *                       cut early, and the engine's correction layer asks again
 */
export function expectationForStep(step: StepCaptureView | undefined, confirmPending = false): ExpectationKind {
  if (!step) return 'free';
  if (confirmPending) return 'yes_no';
  const c = step.capture;
  if (!c) return 'free';
  switch (c.type) {
    case 'yes_no':
      return 'yes_no';
    case 'digits': {
      const longest = c.max_length ?? c.min_length ?? 0;
      return longest >= PHONE_MIN_DIGITS || PHONE_NAME.test(c.slot) || PHONE_NAME.test(step.id) ? 'phone' : 'digits';
    }
    case 'number':
    case 'amount':
      return 'number';
    case 'choice':
      return 'choice';
    case 'person_name':
      return 'name';
    case 'date':
      return 'date';
    case 'time':
      return 'time';
    case 'text':
      return 'free';
  }
}

/**
 * Step grammars a speech recogniser may use to bias its search; the same list as
 * `RECOGNITION_GRAMMARS` of src/media/recognizer.ts (a unit test keeps them equal).
 */
export const RECOGNITION_GRAMMARS = ['free', 'digits', 'yes_no', 'name', 'date', 'time', 'number'] as const;
/** A step grammar, see {@link RECOGNITION_GRAMMARS}. */
export type RecognitionGrammar = (typeof RECOGNITION_GRAMMARS)[number];

/**
 * The recogniser grammar of each expectation: a phone number is digits; a choice is free text
 * biased by its option phrases.
 */
export const GRAMMAR_OF_EXPECTATION: Readonly<Record<ExpectationKind, RecognitionGrammar>> = Object.freeze({
  yes_no: 'yes_no',
  digits: 'digits',
  phone: 'digits',
  number: 'number',
  name: 'name',
  date: 'date',
  time: 'time',
  choice: 'free',
  free: 'free',
});
