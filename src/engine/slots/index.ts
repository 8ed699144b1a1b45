/**
 * Typed slot extractors of the conversation engine (docs/agents.md "How a call runs", layer "step capture"):
 * rules, no model, English and Hindi/Hinglish (romanised and Devanagari) whatever the agent's
 * language, because Indian callers mix them.
 *
 * Canonical values (docs/agents.md "Capture and slot types"): `yes_no` → boolean; `digits` → string of 0-9;
 * `number` → number; `amount` → number in rupees; `date` → `YYYY-MM-DD`; `time` → `HH:MM`
 * (24 h); `person_name` → string, proper-cased as said; `choice` → option id; `text` → the
 * trimmed utterance.
 */
import type { Capture, SlotValue } from '../../domain/agent.js';
import { extractAmount } from './amount.js';
import { extractChoice } from './choice.js';
import { extractCount } from './number.js';
import { extractDate } from './date.js';
import { extractDigits } from './digits.js';
import { extractPersonName } from './person-name.js';
import { extractTime } from './time.js';
import { detectYesNo, findYesNo } from './yes-no.js';

export { detectYesNo };
export { parseNumberWords, spokenDigits } from './numbers.js';

/** What an extractor needs besides the utterance. */
export interface ExtractOptions {
  /** The step's capture: slot name, type, `options` (choice), `min_length`/`max_length` (digits), `min`/`max` (number, amount). */
  capture: Capture;
  /** BCP-47 tag of the agent ('en-IN', 'hi-IN' …). Every extractor hears English and Hindi/Hinglish regardless. */
  language: string;
  /** The session's reference time, epoch ms (relative dates: today, tomorrow, kal, next Friday). */
  nowMs: number;
  /** IANA zone of the agent, for the local calendar date of `nowMs` (unknown zones: UTC). */
  timezone: string;
  /**
   * `answer`: the caller is answering this slot's question — generous. `volunteer`: the caller
   * is answering another question (mixed initiative) — strong evidence only: a self-introduction
   * for names, a unit or count phrasing for numbers, currency or lakh/crore for amounts, the
   * full length for digits, a clear expression for dates and times; `yes_no` and `text` never
   * volunteer.
   */
  mode: 'answer' | 'volunteer';
}

/** A value found in an utterance. */
export interface Extracted {
  /** The canonical value (see the module comment). */
  value: SlotValue;
  /** The words of the utterance that produced it (for the decision trace). */
  matched: string;
}

type Extractor = (utterance: string, opts: ExtractOptions) => Extracted | null;

const EXTRACTORS: Record<Capture['type'], Extractor> = {
  yes_no: (u, o) => (o.mode === 'answer' ? findYesNo(u) : null),
  digits: (u, o) => extractDigits(u, o.capture, o.mode, o.nowMs, o.timezone),
  number: (u, o) => extractCount(u, o.capture, o.mode, o.nowMs, o.timezone),
  amount: (u, o) => extractAmount(u, o.capture, o.mode, o.nowMs, o.timezone),
  date: (u, o) => extractDate(u, o.nowMs, o.timezone, o.mode),
  time: (u, o) => extractTime(u, o.mode),
  person_name: (u, o) => extractPersonName(u, o.mode),
  choice: (u, o) => extractChoice(u, o.capture.options ?? [], o.mode),
  text: (u, o) => {
    const t = u.trim();
    return o.mode === 'answer' && t !== '' ? { value: t, matched: t } : null;
  },
};

/**
 * Extracts the value of one slot from a caller's utterance (docs/agents.md "Capture and slot types").
 *
 * @param utterance the caller's words (transcribed text)
 * @param opts the capture, language, clock and mode ({@link ExtractOptions})
 * @returns the canonical value and the words that produced it, or null when nothing of that
 *          type is found (or it falls outside the capture's bounds). Never throws.
 */
export function extractSlot(utterance: string, opts: ExtractOptions): Extracted | null {
  return EXTRACTORS[opts.capture.type](utterance, opts);
}
