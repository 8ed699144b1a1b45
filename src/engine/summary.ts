/**
 * The end-of-session summary (`EndResultSchema` in src/contract/sessions.ts; docs/api-decisions.md "Sessions", **End**):
 * `{outcome, steps: [{id, status, attempts}], extracted: {slot: value}, tool_calls: [], turns}`.
 */
import type { SlotValue } from '../domain/agent.js';
import type { CompiledAgent, EngineState, StepStatus } from './state.js';

/** How the conversation ended. */
export type Outcome = 'completed' | 'partial' | 'stopped' | 'handoff' | 'abandoned';

/** The summary object of `POST /v1/sessions/{id}/end`. */
export type SessionSummary = {
  outcome: Outcome;
  steps: Array<{ id: string; status: StepStatus; attempts: number }>;
  /** Confirmed canonical values by slot (docs/agents.md "Capture and slot types"); a value awaiting its readback is left out. */
  extracted: Record<string, SlotValue>;
  tool_calls: unknown[];
  turns: number;
};

/**
 * Builds the summary of a session from its final engine state.
 *
 * Outcome: `handoff` when the caller asked for a person; `stopped` when a step's `stop_if`
 * ended the conversation (a wrong person answered); `completed` when the closing line
 * was reached with every required step done; `partial` when it was reached with a step
 * failed; `abandoned` when the session ended before the closing line.
 */
export function buildSummary(agent: CompiledAgent, state: EngineState): SessionSummary {
  const steps = agent.def.steps.map((s) => ({
    id: s.id,
    status: state.steps[s.id]?.status ?? 'pending',
    attempts: state.steps[s.id]?.attempts ?? 0,
  }));
  const extracted: Record<string, SlotValue> = {};
  for (const s of agent.def.steps) {
    const slot = s.capture?.slot;
    if (slot === undefined || !(slot in state.slots)) continue;
    const status = state.steps[s.id]?.status;
    // A volunteered value whose step confirms counts only once confirmed.
    if (status === 'done' || s.confirm === 'none') extracted[slot] = state.slots[slot]!;
  }
  let outcome: Outcome;
  if (state.handoff) outcome = 'handoff';
  else if (state.stopped_at !== undefined) outcome = 'stopped';
  else if (state.closing_at_ms === null) outcome = 'abandoned';
  else outcome = steps.some((s) => s.status === 'failed' || s.status === 'pending') ? 'partial' : 'completed';
  return { outcome, steps, extracted, tool_calls: [], turns: state.turns };
}
