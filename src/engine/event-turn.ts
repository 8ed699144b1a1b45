/**
 * Event turns: what the engine does when a phone line reports something other than an utterance
 * (silence, an unheard line, the silence re-prompts running out, the call's time limit).
 */
import type { Step } from '../domain/agent.js';
import { currentStep, type CompiledAgent, type EngineState } from './state.js';
import { Turn, type TurnInput, type TurnOutput } from './turn-context.js';

/**
 * What happened on a phone line instead of a transcribed utterance for
 * {@link runEventTurn}:
 * - `silence`: the caller said nothing for the no-speech time after the prompt;
 * - `not_heard`: the caller spoke but the recogniser failed or timed out on it;
 * - `give_up`: the silence re-prompts ran out: the agent says goodbye and the session closes;
 * - `max_duration`: the call reached the agent's `media.max_call_duration_s`: closes politely.
 */
export const TURN_EVENT_KINDS = ['silence', 'not_heard', 'give_up', 'max_duration'] as const;
/** One of {@link TURN_EVENT_KINDS}. */
export type TurnEventKind = (typeof TURN_EVENT_KINDS)[number];

/** What an event turn needs: the event, and the clock and values of a caller turn. */
export interface EventTurnInput extends Omit<TurnInput, 'text'> {
  kind: TurnEventKind;
  /** `silence`: which silence re-prompt this is, 1-based (recorded in the trace). */
  attempt?: number;
}

/**
 * Runs one phone-line event through the engine (docs/media.md). Pure, like {@link runTurn},
 * and traced: `trace.layer` is `no_input`, `not_heard`, `no_input:give_up` or `max_duration`.
 *
 * - `silence`: the `no_input` line ("Are you still there?") then the current step's re-prompt
 *   (or its question), or — while a readback awaits the caller's yes — the readback again.
 *   The step's `attempts` (and the readback's) are left alone: silence is not a wrong answer.
 *   At an `optional` step (no readback pending) silence is the caller leaving it unanswered:
 *   the step is `skipped`, its `fallback` said, and the next step (or the closing) follows.
 * - `not_heard`: the `not_understood` line then the same re-ask; attempts untouched too (the
 *   recogniser failed, not the caller). A step that has gone unheard more than its
 *   `max_attempts` times gives up as when its attempts run out: its `fallback`, then the next step.
 * - `give_up`: the `no_input_goodbye` line; the session closes at once (`ended: true`, no
 *   close-grace window); pending steps stay pending, so the summary's outcome is `abandoned`.
 * - `max_duration`: the `time_up` line and `goodbye`; closes like `give_up`.
 *
 * On a session already closing (its closing line said, the close-grace window running)
 * `silence` and `not_heard` say nothing and change nothing but the turn count; `give_up` and
 * `max_duration` say `goodbye` and close.
 *
 * @param prev the session's state before the event (not modified)
 * @throws RangeError for a kind not in {@link TURN_EVENT_KINDS} or an `attempt` that is not a whole number ≥ 1
 */
export function runEventTurn(agent: CompiledAgent, prev: EngineState, input: EventTurnInput): TurnOutput {
  if (!(TURN_EVENT_KINDS as readonly string[]).includes(input.kind)) {
    throw new RangeError(`unknown turn event "${String(input.kind)}": one of ${TURN_EVENT_KINDS.join(', ')}`);
  }
  if (input.attempt !== undefined && !(Number.isInteger(input.attempt) && input.attempt >= 1)) {
    throw new RangeError(`attempt must be a whole number from 1, got ${String(input.attempt)}`);
  }
  const t = new Turn(agent, prev, { ...input, text: '' });
  const closing = prev.closed || prev.closing_at_ms !== null;
  let layer: string;
  switch (input.kind) {
    case 'silence':
    case 'not_heard': {
      layer = input.kind === 'silence' ? 'no_input' : 'not_heard';
      if (closing) {
        t.trace.push({ layer, result: 'skip', detail: 'closing' });
        break;
      }
      const asked = t.state.confirm ? undefined : currentStep(t.agent, t.state);
      if (input.kind === 'silence' && asked?.optional) {
        // An optional question the caller leaves unanswered is skipped, not asked until the
        // silence re-prompts run out and the call is given up (docs/agents.md, "Phone calls").
        t.trace.push({ layer, result: 'match', detail: 'skip_optional' });
        t.giveUpStep(asked);
        break;
      }
      const step = input.kind === 'not_heard' ? asked : undefined;
      if (step && unheardTooOften(t, step)) {
        t.trace.push({ layer, result: 'match', detail: 'fallback' });
        t.giveUpStep(step);
        break;
      }
      t.trace.push({ layer, result: 'match', ...(input.attempt !== undefined ? { detail: `attempt ${input.attempt}` } : {}) });
      t.say(input.kind === 'silence' ? t.msg.no_input : t.msg.not_understood);
      reask(t);
      break;
    }
    case 'give_up':
      layer = 'no_input:give_up';
      t.trace.push({ layer: 'no_input', result: 'match', detail: 'give_up' });
      endNow(t, closing ? t.msg.goodbye : t.msg.no_input_goodbye);
      break;
    case 'max_duration':
      layer = 'max_duration';
      t.trace.push({ layer, result: 'match' });
      if (!closing) t.say(t.msg.time_up);
      endNow(t, t.msg.goodbye);
      break;
  }
  // A reply of nothing (silence while closing) leaves "repeat" with the last thing said.
  if (t.clips.length > 0) t.state.last_clips = t.clips;
  return { state: t.state, clips: t.clips, layer, trace: t.trace, ended: t.state.closed, stepDone: t.stepDone() };
}

/**
 * Counts one answer to `step` the recogniser could not hear; true once there have been more of
 * them than the step's `max_attempts` (a line it never hears must not re-prompt for ever).
 */
function unheardTooOften(t: Turn, step: Step): boolean {
  const st = t.state.steps[step.id]!;
  st.not_heard = (st.not_heard ?? 0) + 1;
  return st.not_heard > step.max_attempts;
}

/** Asks again what the caller was asked: the pending readback, else the current step's re-prompt, else the closing line. */
function reask(t: Turn): void {
  const pending = t.state.confirm;
  if (pending) {
    const step = t.agent.def.steps[t.agent.stepIndex.get(pending.step)!]!;
    t.clips.push(...t.pendingClips(step, pending));
    return;
  }
  const step = currentStep(t.agent, t.state);
  if (!step) {
    t.say(t.agent.def.closing);
    return;
  }
  t.ask(step, step.reprompt ?? step.ask);
  t.offerKeypad(step);
}

/** Says `line` and closes the session now (no close-grace: the call is hung up after it). */
function endNow(t: Turn, line: string): void {
  // The cursor stays where the call stopped (session detail shows it); pending steps stay pending.
  t.state.confirm = null;
  t.say(line);
  t.state.closed = true;
}
