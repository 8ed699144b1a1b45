/**
 * The turn pipeline: layers in order, first match wins, each recorded in the trace —
 * close-grace → control intents → pending readback → FAQ → step capture (with volunteered later
 * slots) → the language model's answer, for an agent with `llm` (llmTurn) → re-prompt / fallback. Pure: the clock and all values come in.
 *
 * The turn's working state is in turn-context.ts, the pending readback layer in confirm-turn.ts,
 * phone-line events in event-turn.ts; this file runs a caller's utterance and opens a session.
 */
import { asksForMore, detectControlIntent, looksLikeQuestion, matchFaq, onlyAsks, type ControlIntent } from './intents.js';
import { checkSlotValue, unsureControl } from './llm-assist.js';
import type { Step } from '../domain/agent.js';
import { currentStep, type ClipSpec, type CompiledAgent, type EngineState } from './state.js';
import { renderTemplate } from './template.js';
import { confirmTurn } from './confirm-turn.js';
import { Turn, type TurnInput, type TurnOutput } from './turn-context.js';

// The engine's turn API in one place (the services and tests import it from here).
export { runEventTurn, TURN_EVENT_KINDS, type EventTurnInput, type TurnEventKind } from './event-turn.js';
export type { TraceStep, TurnInput, TurnOutput } from './turn-context.js';
export type { LlmAsk, LlmAssist } from './llm-assist.js';

/** True when the close-grace window after the closing line has lapsed at `nowMs`. */
export function graceLapsed(agent: CompiledAgent, state: EngineState, nowMs: number): boolean {
  return state.closing_at_ms !== null && nowMs - state.closing_at_ms > agent.def.close_grace_ms;
}

function graceTurn(t: Turn): string {
  const faq = matchFaq(t.norm, t.agent.def.faq);
  if (faq) t.say(faq.faq.answer, { intent_key: faq.faq.intent, source: 'faq' });
  t.say(t.msg.goodbye);
  t.state.closed = true;
  return 'close_grace';
}

function controlTurn(t: Turn): string | null {
  const asked = t.state.confirm ? undefined : currentStep(t.agent, t.state);
  const control = detectControlIntent(t.norm, asked !== undefined && asksForMore(asked.ask));
  t.trace.push({ layer: 'control', result: control ? 'match' : 'miss', ...(control ? { detail: control.intent } : {}) });
  if (!control) return null;
  controlAct(t, control.intent);
  return `control:${control.intent}`;
}

/** What the control layer does for `intent` (the rules' or the model's). */
function controlAct(t: Turn, intent: ControlIntent): void {
  switch (intent) {
    case 'repeat':
      t.say(t.msg.repeat_prefix);
      t.clips.push(...t.state.last_clips.filter((c) => !c.flags.is_filler));
      break;
    case 'wait':
      t.say(t.msg.wait);
      break;
    case 'human':
      t.state.handoff = true;
      t.say(t.msg.human);
      t.close();
      break;
    case 'goodbye': {
      // "No, that's all. Bye." answers the question before it hangs up: keep the answer.
      const step = t.state.confirm ? undefined : currentStep(t.agent, t.state);
      const value = step ? t.extract(step, 'answer') : null;
      const low = step && value !== null ? t.lowConfidence(step, 'capture', 'skip') : null;
      if (low)
        t.trace.push(low); // not stored: nobody is left to confirm it
      else if (step?.capture && value !== null) {
        t.state.slots[step.capture.slot] = value;
        if (step.confirm === 'none') t.state.steps[step.id]!.status = 'done';
        t.trace.push({
          layer: 'capture',
          result: 'match',
          detail: 'before goodbye',
          slot: step.capture.slot,
          type: step.capture.type,
        });
      }
      t.close();
      break;
    }
  }
}

function answerTurn(t: Turn): string {
  const step = currentStep(t.agent, t.state);
  const faq = matchFaq(t.norm, t.agent.def.faq);
  // A question that matches an FAQ is answered whatever else it holds, so the step's slot is
  // extracted only when that is not already settled (extraction is the costliest layer).
  const question = faq !== null && looksLikeQuestion(t.input.text, t.norm);
  const captured = step && !question ? t.extract(step, 'answer') : null;
  const faqWins = faq !== null && (question || captured === null);
  t.trace.push({ layer: 'faq', result: faqWins ? 'match' : 'miss', ...(faq ? { detail: faq.faq.intent } : {}) });
  if (faqWins) {
    t.say(faq.faq.answer, { intent_key: faq.faq.intent, source: 'faq' });
    if (step) t.ask(step, step.ask, { intent_key: faq.faq.intent, source: 'reprompt' });
    else t.say(t.agent.def.closing, { intent_key: faq.faq.intent, source: 'reprompt' });
    return 'faq';
  }
  if (!step) {
    t.close();
    return 'closing';
  }
  // A question volunteers nothing: "is Dr Rao available today?" at the name step is no visit date.
  const volunteered = onlyAsks(t.input.text, t.norm) ? [] : t.volunteer(step);
  if (!step.capture) {
    t.state.steps[step.id]!.status = 'done';
    t.trace.push({ layer: 'capture', result: 'skip', detail: 'no capture' });
    t.advance();
    return 'step';
  }
  t.trace.push({
    layer: 'capture',
    result: captured === null ? 'miss' : 'match',
    slot: step.capture.slot,
    type: step.capture.type,
  });
  if (captured !== null) {
    t.accept(step, captured);
    return 'capture';
  }
  if (volunteered.length > 0) {
    t.filler();
    t.ask(step);
    return 'capture';
  }
  return llmTurn(t, step);
}

/**
 * The rules missed the step's answer (docs/llm.md "Where the model acts"): without an `llm`
 * block, or on the first run, the rules' re-prompt; with the model's answer (`input.assist`), an
 * off-script reply then the step's question, a slot value checked by the slot's own type and
 * read back by the same rules as the rules' values, or a control intent acted on. Every
 * decision is a trace entry of layer `llm`; an answer that does not fit leaves the re-prompt.
 */
function llmTurn(t: Turn, step: Step): string {
  if (!t.agent.def.llm || t.agent.def.llm.max_calls_per_session === 0) {
    t.trace.push({ layer: 'llm', result: 'skip', detail: 'not configured' });
    return t.reprompt(step);
  }
  if (t.input.keyed === true) {
    t.trace.push({ layer: 'llm', result: 'skip', detail: 'keyed' }); // keys are no words to interpret
    return t.reprompt(step);
  }
  const kind = looksLikeQuestion(t.input.text, t.norm) ? 'reply' : unsureControl(t.norm) ? 'intent' : 'slot';
  const assist = t.input.assist;
  if (assist === undefined) {
    const question = t.render(step.ask);
    t.llmAsk = kind === 'slot' ? { kind, step: step.id, question, capture: step.capture! } : { kind, step: step.id, question };
    t.trace.push({ layer: 'llm', result: 'skip', detail: 'no answer' });
    return t.reprompt(step);
  }
  if (assist.kind === 'none' || assist.kind !== kind) {
    const status = assist.kind === 'none' && assist.status !== undefined ? { status: assist.status } : {};
    t.trace.push({ layer: 'llm', result: 'miss', detail: assist.kind === 'none' ? assist.detail : 'mismatch', ...status });
    return t.reprompt(step);
  }
  switch (assist.kind) {
    case 'reply':
      t.trace.push({ layer: 'llm', result: 'match', detail: 'reply' });
      t.clips.push({ text: assist.text, flags: { source: 'llm' } }); // said as given: a model's text is no template
      t.ask(step, step.ask, { source: 'reprompt' });
      return 'llm';
    case 'intent':
      if (assist.intent === 'none') {
        t.trace.push({ layer: 'llm', result: 'miss', detail: 'no intent' });
        return t.reprompt(step);
      }
      t.trace.push({ layer: 'llm', result: 'match', detail: assist.intent });
      controlAct(t, assist.intent);
      return `llm:${assist.intent}`;
    case 'slot': {
      const capture = step.capture!;
      const value =
        assist.value === null
          ? null
          : checkSlotValue(assist.value, { capture, language: t.lang, nowMs: t.input.refMs, timezone: t.agent.def.timezone });
      const about = { slot: capture.slot, type: capture.type };
      if (value === null) {
        t.trace.push({ layer: 'llm', result: 'miss', detail: assist.value === null ? 'empty' : 'wrong_type', ...about });
        return t.reprompt(step);
      }
      t.trace.push({ layer: 'llm', result: 'match', detail: 'slot', ...about });
      t.accept(step, value);
      return 'llm';
    }
  }
}

/**
 * Runs one caller turn through the layers.
 *
 * @param prev the session's state before the turn (not modified)
 * @returns the new state, the reply clips (templates rendered), the deciding layer and trace.
 *          A caller turn on a closed session is the service's to refuse; here it gets the
 *          goodbye line again with `ended: true`.
 */
export function runTurn(agent: CompiledAgent, prev: EngineState, input: TurnInput): TurnOutput {
  const t = new Turn(agent, prev, input);
  let layer: string;
  if (prev.closed || prev.closing_at_ms !== null) {
    layer = graceTurn(t);
  } else {
    layer = controlTurn(t) ?? confirmTurn(t) ?? answerTurn(t);
  }
  if (!layer.startsWith('control:repeat')) t.state.last_clips = t.clips;
  const out: TurnOutput = { state: t.state, clips: t.clips, layer, trace: t.trace, ended: t.state.closed, stepDone: t.stepDone() };
  if (t.llmAsk !== null) out.llm = t.llmAsk;
  return out;
}

/** The clip flags of a line marked `barge_in: false` (else none). */
function noBargeIn(bargeIn: false | undefined): ClipSpec['flags'] {
  return bargeIn === false ? { barge_in: false } : {};
}

/**
 * The opening clips of a session: the agent's opening
 * lines rendered, and the first step's question appended when no opening line waits for the
 * caller. `display_order` and `requires_user_input` are set on each.
 */
export function openingClips(agent: CompiledAgent, vars: TurnInput['vars']): Array<ClipSpec & { requires_user_input: boolean }> {
  const out: Array<ClipSpec & { requires_user_input: boolean }> = agent.def.opening
    .map((o) => ({
      text: renderTemplate(o.text, vars),
      flags: noBargeIn(o.barge_in),
      requires_user_input: o.requires_user_input,
    }))
    .filter((c) => c.text.length > 0);
  const first = agent.def.steps[0];
  if (first && !out.some((c) => c.requires_user_input)) {
    out.push({ text: renderTemplate(first.ask, vars), flags: noBargeIn(first.barge_in), requires_user_input: true });
  }
  return out;
}
