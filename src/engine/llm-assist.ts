/**
 * Where the rules may hand a turn to the agent's language model (docs/llm.md "Where the model
 * acts"), as plain data: what a turn asks of the model ({@link LlmAsk}), what the model's answer
 * comes back as ({@link LlmAssist}), the JSON Schema a slot's structured answer is held to, and
 * the rule layer's check of a model's slot value. Pure: the model is called by the session
 * service (src/app/llm-step.ts), which runs the turn again with the answer.
 */
import type { Capture, SlotType, SlotValue } from '../domain/agent.js';
import type { ControlIntent } from './intents.js';
import { extractSlot } from './slots/index.js';

/** The control intents the model may name when the rules are unsure (see {@link unsureControl}). */
export const LLM_INTENTS = ['goodbye', 'repeat', 'wait', 'human'] as const satisfies readonly ControlIntent[];

/**
 * What a turn asks of the model, when the rules missed and the agent has an `llm` block:
 * - `reply`: a question no FAQ matched (an off-script question): a short answer from the
 *   agent's instructions and FAQ texts, after which the step's question (`step`) is asked;
 * - `slot`: the step's capture found nothing: the slot's value, held to {@link slotSchema};
 * - `intent`: the rules are unsure whether the caller steers the call ({@link unsureControl}):
 *   one of {@link LLM_INTENTS}, or `none`.
 */
export type LlmAsk =
  | { kind: 'reply'; step: string | null; question: string | null }
  | { kind: 'slot'; step: string; question: string; capture: Capture }
  | { kind: 'intent'; step: string | null; question: string | null };

/**
 * The model's answer a turn runs again with (`TurnInput.assist`), or why there is none:
 * - `reply`: the reply text, already checked (not empty, not over-long, in the agent's script);
 * - `slot`: the value the model gave (null: none found); the engine checks it by the slot's type;
 * - `intent`: the intent the model named (`none`: not a control intent);
 * - `none`: no answer (`detail`: why — timeout, rate_limited, server_error, malformed, empty,
 *   too_long, other_language, budget, session_cap, not_configured …; `status`: the endpoint's
 *   HTTP status when it answered with an error): the rules' path stands.
 */
export type LlmAssist =
  | { kind: 'reply'; text: string }
  | { kind: 'slot'; value: SlotValue | null }
  | { kind: 'intent'; intent: (typeof LLM_INTENTS)[number] | 'none' }
  | { kind: 'none'; detail: string; status?: number };

/** Words that, in a short utterance no layer placed, make the rules unsure whether it is a control intent. */
const CONTROL_CUES = new Set([
  'thanks',
  'thank',
  'thx',
  'done',
  'set',
  'all',
  'nothing',
  'enough',
  'later',
  'leave',
  'person',
  'someone',
  'somebody',
  'again',
  'catch',
  'hear',
  'minute',
  'moment',
  'sec',
  'shukriya',
  'dhanyavaad',
  'bas',
]);

/**
 * True when the rules are unsure whether `norm` (a normalised utterance, `normalizeUtterance`)
 * is a control intent: it matched no control phrase, no FAQ and nothing of the step's type, it is
 * short (at most eight words, no digits, the same bounds as the control layer), and it holds one
 * of a few cue words of closing, holding, repeating or asking for a person ("I'm all set", "that
 * will be all, thanks", "get me someone"). Only then is the model asked for an intent.
 */
export function unsureControl(norm: string): boolean {
  const words = norm.trim().split(' ');
  if (words.length === 0 || words.length > 8 || /\d/.test(norm)) return false;
  return words.some((w) => CONTROL_CUES.has(w));
}

/** The JSON Schema of one slot type's value (null allowed: the model found none). */
function valueSchema(capture: Capture): Record<string, unknown> {
  const types: Record<SlotType, Record<string, unknown>> = {
    yes_no: { type: ['boolean', 'null'] },
    digits: { type: ['string', 'null'], pattern: '^[0-9]+$' },
    number: { type: ['number', 'null'] },
    amount: { type: ['number', 'null'], description: 'rupees' },
    date: { type: ['string', 'null'], description: 'YYYY-MM-DD' },
    time: { type: ['string', 'null'], description: 'HH:MM, 24-hour' },
    person_name: { type: ['string', 'null'], description: "the person's name only" },
    choice: { type: ['string', 'null'], enum: [...(capture.options ?? []).map((o) => o.id), null] },
    text: { type: ['string', 'null'] },
  };
  return types[capture.type];
}

/**
 * The structured-output schema of a slot request (`response_format: json_schema`):
 * `{"value": <the slot's type> | null}`, nothing else.
 */
export function slotSchema(capture: Capture): { name: string; schema: Record<string, unknown> } {
  return {
    name: `slot_${capture.type}`,
    schema: {
      type: 'object',
      properties: { value: valueSchema(capture) },
      required: ['value'],
      additionalProperties: false,
    },
  };
}

/** The structured-output schema of an intent request: `{"intent": goodbye|repeat|wait|human|none}`. */
export const INTENT_SCHEMA = {
  name: 'control_intent',
  schema: {
    type: 'object',
    properties: { intent: { type: 'string', enum: [...LLM_INTENTS, 'none'] } },
    required: ['intent'],
    additionalProperties: false,
  },
} as const;

/** Longest slot value from the model the rules look at, characters. */
const MAX_VALUE_CHARS = 200;

/**
 * The rule layer's check of a model's slot value: its text is run through the slot type's own
 * extractor, in answer mode, with the capture's bounds (so a date is a real date, digits have the
 * step's length, a choice is one of its options, a number is in range), and the extractor's
 * canonical value is what may be stored. A value of the wrong type is refused.
 * @returns the canonical value, or null when it is not a value of the slot's type.
 */
export function checkSlotValue(
  value: SlotValue,
  opts: { capture: Capture; language: string; nowMs: number; timezone: string },
): SlotValue | null {
  const c = opts.capture;
  if (typeof value === 'boolean') {
    if (c.type !== 'yes_no') return null;
    return value;
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  const text = String(value).trim();
  if (text === '' || text.length > MAX_VALUE_CHARS) return null;
  if (c.type === 'choice' && (c.options ?? []).some((o) => o.id === text)) return text;
  if (c.type === 'yes_no') return null; // a yes or no comes as a boolean
  const found = extractSlot(text, { capture: c, language: opts.language, nowMs: opts.nowMs, timezone: opts.timezone, mode: 'answer' });
  return found ? found.value : null;
}
