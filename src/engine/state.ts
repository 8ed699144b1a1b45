/**
 * The engine's per-session state and the shapes a turn produces (docs/agents.md "How a call runs").
 * Everything here is plain JSON: the service stores it in SQLite after every turn.
 */
import type { AgentDefinition, SlotValue, Step } from '../domain/agent.js';
import { messagesFor, type EngineMessages } from './messages.js';

/** Status of one step: `done` means it captured something (docs/api-decisions.md "Sessions": `state.step_progress.steps`). */
export type StepStatus = 'pending' | 'done' | 'failed' | 'skipped';

/** Cursor values past the last step. */
export const CURSOR_CLOSING = '$closing';

/** Optional clip fields passed through to the API unchanged (`Clip` in src/contract/sessions.ts). */
export interface ClipFlags {
  is_filler?: true;
  is_readback?: true;
  is_digit?: true;
  is_confirm_prompt?: true;
  intent_key?: string;
  source?: string;
  /**
   * `false` on a clip the caller must hear whole on a phone line (an opening line or a step's
   * question marked `barge_in: false` in the agent): caller speech does not interrupt it.
   * Absent otherwise (barge-in allowed).
   */
  barge_in?: false;
}

/** One clip of a reply, before audio: its display text, what to speak if different, flags. */
export interface ClipSpec {
  text: string;
  /** Text for the synthesiser when it differs from `text` (a digit's word); else `text` is spoken. */
  speak?: string;
  flags: ClipFlags;
}

/** Where one step stands. */
export interface StepState {
  status: StepStatus;
  /** Wrong or unclear answers so far (each uses one of the step's `max_attempts`). */
  attempts: number;
  /** A phone call's `digits` step has offered the keypad (`messages.keypad_offer`): it is offered once. */
  keypad_offered?: true;
  /** Answers the recogniser could not hear (phone line `not_heard` events); they do not count as attempts. */
  not_heard?: number;
}

/** A value awaiting the caller's yes (readback or digit readback). */
export interface PendingConfirm {
  step: string;
  value: SlotValue;
  /** Unclear answers to this readback so far; at the step's `max_attempts` the value is dropped and the step asked again. */
  attempts: number;
  /**
   * Set when the value was heard below its slot type's confidence threshold (src/engine/confidence.ts):
   * the confidence it was heard at, or null when the recogniser gives none. Such a value is not
   * in `slots` until the caller's yes, and the readback is asked at most the step's
   * `max_attempts` times before the step is asked again.
   */
  heard?: number | null;
}

/** The whole engine state of one session. */
export interface EngineState {
  /** Current step id, or {@link CURSOR_CLOSING} once every step is settled. */
  cursor: string;
  steps: Record<string, StepState>;
  /** Captured canonical values by slot name (never published on `/v1`; the summary has them). */
  slots: Record<string, SlotValue>;
  confirm: PendingConfirm | null;
  /** Reference-clock ms when the closing line was said; the close-grace window starts here. */
  closing_at_ms: number | null;
  /** True once the engine has closed the session (a turn heard in the grace window). */
  closed: boolean;
  /** The caller asked for a person. */
  handoff: boolean;
  /** The step whose `stop_if` ended the conversation, if one did. */
  stopped_at?: string;
  /** The last reply's clips (for "repeat"). */
  last_clips: ClipSpec[];
  /** Turns run so far. */
  turns: number;
}

/** An agent prepared for the engine: its definition, resolved lines and step lookup. */
export interface CompiledAgent {
  def: AgentDefinition;
  messages: EngineMessages;
  stepIndex: Map<string, number>;
}

/** Prepares an agent definition for {@link EngineState} handling. */
export function compileAgent(def: AgentDefinition): CompiledAgent {
  return { def, messages: messagesFor(def), stepIndex: new Map(def.steps.map((s, i) => [s.id, i])) };
}

/** The state of a new session: the cursor on the first step. */
export function initialState(agent: CompiledAgent): EngineState {
  const steps: EngineState['steps'] = {};
  for (const s of agent.def.steps) steps[s.id] = { status: 'pending', attempts: 0 };
  return {
    cursor: agent.def.steps[0]?.id ?? CURSOR_CLOSING,
    steps,
    slots: {},
    confirm: null,
    closing_at_ms: null,
    closed: false,
    handoff: false,
    last_clips: [],
    turns: 0,
  };
}

/** The step under the cursor, or undefined past the last step. */
export function currentStep(agent: CompiledAgent, state: EngineState): Step | undefined {
  const i = agent.stepIndex.get(state.cursor);
  return i === undefined ? undefined : agent.def.steps[i];
}

/** `state.step_progress` of a turn result (`StepProgress` in src/contract/sessions.ts): done, total, pct, steps. */
export function stepProgress(
  agent: CompiledAgent,
  state: EngineState,
): { done: number; total: number; pct: number; steps: Record<string, StepStatus> } {
  const steps: Record<string, StepStatus> = {};
  let done = 0;
  for (const s of agent.def.steps) {
    const status = state.steps[s.id]?.status ?? 'pending';
    steps[s.id] = status;
    if (status === 'done') done += 1;
  }
  const total = agent.def.steps.length;
  return { done, total, pct: total === 0 ? 100 : Math.round((done / total) * 100), steps };
}
