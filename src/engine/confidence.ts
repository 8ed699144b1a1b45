/**
 * How sure the recogniser must be before a heard value is stored without a question
 * (docs/agents.md "Recogniser confidence"). A value extracted from an utterance heard below its
 * slot type's threshold is read back ("I heard … — is that right?") and stored only on the
 * caller's yes; a yes or no heard below the `yes_no` threshold on a readback counts as unclear.
 * Typed and keyed turns carry no confidence and are taken as they are.
 */
import type { AgentDefinition, SlotType } from '../domain/agent.js';

/**
 * Default thresholds per slot type, 0..1. Values whose slip costs most and that a recogniser
 * confuses most (digits, numbers, amounts, dates, times, names: one wrong word is a wrong value)
 * ask for more; a choice among a few known options and a yes/no, for less. Free text asks for as
 * much as a name: the README's booking once stored "the what", heard at 0.46.
 */
export const DEFAULT_MIN_CONFIDENCE: Readonly<Record<SlotType, number>> = Object.freeze({
  digits: 0.6,
  number: 0.6,
  amount: 0.6,
  date: 0.5,
  time: 0.5,
  person_name: 0.5,
  text: 0.5,
  choice: 0.4,
  yes_no: 0.3,
});

/** The threshold of `type` for `agent`: its `media.min_confidence.<type>`, else the default. */
export function minConfidence(agent: Pick<AgentDefinition, 'media'>, type: SlotType): number {
  return agent.media?.min_confidence?.[type] ?? DEFAULT_MIN_CONFIDENCE[type];
}

/**
 * Whether a turn heard at `confidence` is below the threshold of `type`. Undefined and null
 * (typed text, DTMF, a recogniser that gives no measure through the HTTP API) are never low.
 */
export function heardBelow(agent: Pick<AgentDefinition, 'media'>, type: SlotType, confidence: number | null | undefined): boolean {
  return typeof confidence === 'number' && confidence < minConfidence(agent, type);
}
