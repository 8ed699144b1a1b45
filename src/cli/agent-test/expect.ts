/**
 * The expectations of a scenario file checked against what a turn or a session gave
 * (docs/agent-tests.md "Expectations"). Pure: each check returns the expectations that failed,
 * in the order the file lists them, each with what was expected and what was got.
 */
import type { ScenarioExpect, TurnExpect } from '../../domain/agent-scenario.js';

/** A slot's value as a session gives it (docs/agents.md "Capture and slot types"). */
export type SlotValue = string | number | boolean;

/** What one turn gave: the reply and the session's state after it. */
export interface TurnObservation {
  /** The reply's text, its clips joined. */
  reply: string;
  /** The step under the cursor after the reply (`$closing` past the last). */
  step: string;
  /** `trace.layer`. */
  layer: string;
  /** `trace.llm_used`. */
  llm_used: boolean;
  /** Captured (and confirmed) slots after the turn. */
  slots: Record<string, SlotValue>;
  /** True when the reply ends the conversation: the agent said its last line (closing, stop, goodbye, hand-off), or the session ended. */
  ended: boolean;
  /** The turn's cost, rupees. */
  cost_inr: number;
}

/** What a whole conversation came to, once its session ended. */
export interface SessionObservation {
  /** The summary's outcome. */
  outcome: string | null;
  /** The summary's `extracted`. */
  slots: Record<string, SlotValue>;
  /** True when the agent ended the conversation by the last turn (not the test ending it). */
  ended: boolean;
  /** The session's total cost, rupees. */
  cost_inr: number;
}

/** One expectation that did not hold. */
export interface Failure {
  /** 1-based turn number, or null for the scenario's own `expect`. */
  turn: number | null;
  /** The expectation's name as written (`step`, `slots.visit_date`, `reply_contains`). */
  expectation: string;
  expected: unknown;
  got: unknown;
}

/** Compares slot values as a session stores them: numbers and booleans exactly, text ignoring case and outer spaces. */
function sameSlot(expected: SlotValue, got: SlotValue | undefined): boolean {
  if (got === undefined) return false;
  if (typeof expected === 'string' && typeof got === 'string') return expected.trim().toLowerCase() === got.trim().toLowerCase();
  // A date or digits slot written unquoted in YAML may parse as a number: compare as text then.
  if (typeof expected === 'number' && typeof got === 'string') return String(expected) === got;
  return expected === got;
}

function checkSlots(
  turn: number | null,
  expected: Record<string, SlotValue> | undefined,
  got: Record<string, SlotValue>,
  out: Failure[],
): void {
  for (const [slot, value] of Object.entries(expected ?? {})) {
    if (!sameSlot(value, got[slot])) out.push({ turn, expectation: `slots.${slot}`, expected: value, got: got[slot] ?? null });
  }
}

function checkCost(turn: number | null, max: number | undefined, got: number, out: Failure[]): void {
  if (max !== undefined && got > max) out.push({ turn, expectation: 'max_cost_inr', expected: `at most ${max}`, got });
}

/** The expectations of one turn (`n`, 1-based) that `got` does not meet. */
export function checkTurn(n: number, expect: TurnExpect | undefined, got: TurnObservation): Failure[] {
  const out: Failure[] = [];
  if (!expect) return out;
  const reply = got.reply.toLowerCase();
  const contains = expect.reply_contains === undefined ? [] : [expect.reply_contains].flat();
  for (const part of contains) {
    if (!reply.includes(part.toLowerCase())) out.push({ turn: n, expectation: 'reply_contains', expected: part, got: got.reply });
  }
  if (expect.reply_matches !== undefined && !new RegExp(expect.reply_matches, 'iu').test(got.reply))
    out.push({ turn: n, expectation: 'reply_matches', expected: `/${expect.reply_matches}/i`, got: got.reply });
  if (expect.step !== undefined && expect.step !== got.step)
    out.push({ turn: n, expectation: 'step', expected: expect.step, got: got.step });
  if (expect.layer !== undefined && expect.layer !== got.layer)
    out.push({ turn: n, expectation: 'layer', expected: expect.layer, got: got.layer });
  if (expect.llm_used !== undefined && expect.llm_used !== got.llm_used)
    out.push({ turn: n, expectation: 'llm_used', expected: expect.llm_used, got: got.llm_used });
  checkSlots(n, expect.slots, got.slots, out);
  if (expect.ended !== undefined && expect.ended !== got.ended)
    out.push({ turn: n, expectation: 'ended', expected: expect.ended, got: got.ended });
  checkCost(n, expect.max_cost_inr, got.cost_inr, out);
  return out;
}

/** The scenario's own expectations that the ended session `got` does not meet. */
export function checkSession(expect: ScenarioExpect | undefined, got: SessionObservation): Failure[] {
  const out: Failure[] = [];
  if (!expect) return out;
  if (expect.outcome !== undefined && expect.outcome !== got.outcome)
    out.push({ turn: null, expectation: 'outcome', expected: expect.outcome, got: got.outcome });
  checkSlots(null, expect.slots, got.slots, out);
  if (expect.ended !== undefined && expect.ended !== got.ended)
    out.push({ turn: null, expectation: 'ended', expected: expect.ended, got: got.ended });
  checkCost(null, expect.max_cost_inr, got.cost_inr, out);
  return out;
}

/** A value as a failure line shows it: strings quoted and cut at `max` characters. */
export function shown(value: unknown, max = 160): string {
  if (value === undefined || value === null) return 'nothing';
  if (typeof value !== 'string') return JSON.stringify(value);
  const cut = value.length > max ? `${value.slice(0, max - 1)}…` : value;
  return JSON.stringify(cut);
}

/** `turn 3: step: expected "time", got "day"` (the scenario's own expectations have no turn). */
export function describeFailure(f: Failure): string {
  const where = f.turn === null ? 'end' : `turn ${f.turn}`;
  // A voice run: the recogniser heard the line otherwise, or not at all.
  if (f.expectation === 'heard')
    return f.got === null ? `${where}: not heard: ${shown(f.expected)}` : `${where}: heard ${shown(f.got)} for ${shown(f.expected)}`;
  return `${where}: ${f.expectation}: expected ${shown(f.expected)}, got ${shown(f.got)}`;
}
