/**
 * What the media core of a phone call should listen for next (docs/media.md "How a call behaves"):
 * the expectation of the step under the cursor (its end-of-utterance silence), the recogniser
 * grammar that suits it, and the phrases a `choice` step's answer is likely to hold.
 */
import { mediaSettingsOf } from '../domain/agent.js';
import {
  DEFAULT_EOU_SILENCE_MS,
  GRAMMAR_OF_EXPECTATION,
  expectationForStep,
  type ExpectationKind,
  type RecognitionGrammar,
} from '../domain/media.js';
import { currentStep, type CompiledAgent, type EngineState } from './state.js';

/** Most phrases in one hint (the recogniser interface's bound). */
export const MAX_HINT_PHRASES = 500;

/** The media hints of the current step (see {@link mediaHintsOf}). */
export interface MediaHints {
  /** What the agent is waiting to hear (src/domain/media.ts). */
  expectation: ExpectationKind;
  /** The recogniser grammar of that expectation. */
  grammar: RecognitionGrammar;
  /** The silence that ends the caller's answer, ms: the agent's `media.end_of_utterance_ms` for the expectation, else the default. */
  end_of_utterance_ms: number;
  /** A `choice` step's option words (each option's synonyms, else its id with spaces), deduplicated, at most {@link MAX_HINT_PHRASES}; absent for other steps. */
  phrases?: string[];
}

/**
 * The media hints of the session's current step. Pure.
 *
 * A pending readback expects `yes_no` (whatever the step captures); a closing or closed session,
 * or a step without capture, expects `free`.
 */
export function mediaHintsOf(agent: CompiledAgent, state: EngineState): MediaHints {
  const closing = state.closed || state.closing_at_ms !== null;
  const step = closing ? undefined : currentStep(agent, state);
  const confirmPending = !closing && state.confirm !== null;
  const expectation = expectationForStep(step, confirmPending);
  const eou = mediaSettingsOf(agent.def).end_of_utterance_ms[expectation] ?? DEFAULT_EOU_SILENCE_MS[expectation];
  const hints: MediaHints = { expectation, grammar: GRAMMAR_OF_EXPECTATION[expectation], end_of_utterance_ms: eou };
  if (expectation === 'choice' && step?.capture?.options) {
    const phrases = new Set<string>();
    for (const o of step.capture.options) {
      const words = o.synonyms.length > 0 ? o.synonyms : [o.id.replace(/_/g, ' ')];
      for (const w of words) if (phrases.size < MAX_HINT_PHRASES) phrases.add(w);
    }
    hints.phrases = [...phrases];
  }
  return hints;
}
