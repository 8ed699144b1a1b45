/**
 * The turn pipeline (DESIGN.md §6): layers in order, first match wins, each recorded in the
 * trace — close-grace → control intents → pending readback → FAQ → step capture (with
 * volunteered later slots) → re-prompt / fallback. Pure: the clock and all values come in.
 */
import type { SlotValue, Step } from '../domain/agent.js';
import { heardBelow, minConfidence } from './confidence.js';
import { detectControlIntent, looksLikeQuestion, matchFaq, normalizeUtterance } from './intents.js';
import { readbackClips } from './readback.js';
import { detectYesNo, extractSlot } from './slots/index.js';
import { currentStep, CURSOR_CLOSING, type ClipSpec, type CompiledAgent, type EngineState, type PendingConfirm } from './state.js';
import { renderTemplate, type TemplateVars } from './template.js';

/** What a turn needs besides the state. */
export interface TurnInput {
  /** The caller's utterance (already transcribed). */
  text: string;
  /** Wall-clock time of the turn, epoch ms (close-grace). */
  nowMs: number;
  /** The session's reference time for relative dates, epoch ms (`context.now` or open time). */
  refMs: number;
  /** `customer_name` and `context` for templates. */
  vars: Pick<TemplateVars, 'customer_name' | 'context'>;
  /**
   * The turn came over a phone call's audio (the media core of a carrier stream or a LiveKit
   * room), not typed: a `digits` step asked again then offers the keypad (docs/agents.md,
   * "Phone calls"). Default false.
   */
  phone?: boolean;
  /**
   * The recogniser's confidence in `text`, 0..1 (the turn's `stt_confidence`); absent or null
   * for typed or keyed text. Below a slot type's threshold a captured value is read back before
   * it is stored (src/engine/confidence.ts).
   */
  sttConfidence?: number | null;
  /**
   * A recogniser heard `text` but gave no confidence (Sarvam): a captured value (but a yes/no)
   * is read back as if heard below its threshold; a yes or no to a readback is taken.
   */
  sttUnmeasured?: boolean;
}

/** One entry of `trace.steps`: which layer looked, and whether it matched. */
export interface TraceStep {
  layer: string;
  result: 'match' | 'miss' | 'skip';
  detail?: string;
  slot?: string;
  type?: string;
  /** `detail: 'low_confidence'`: the recogniser's confidence in the utterance, 0..1. */
  confidence?: number;
  /** `detail: 'low_confidence'`: the slot type's threshold it fell below, 0..1. */
  threshold?: number;
}

/** The outcome of one turn. */
export interface TurnOutput {
  state: EngineState;
  clips: ClipSpec[];
  /** The layer that produced the reply (`trace.layer`). */
  layer: string;
  trace: TraceStep[];
  /** The session closes with this turn (a turn heard in the close-grace window). */
  ended: boolean;
  /** The step under the cursor when the turn began was settled by it. */
  stepDone: boolean;
}

/** True when the close-grace window after the closing line has lapsed at `nowMs`. */
export function graceLapsed(agent: CompiledAgent, state: EngineState, nowMs: number): boolean {
  return state.closing_at_ms !== null && nowMs - state.closing_at_ms > agent.def.close_grace_ms;
}

/** A copy of `s` that the turn may change; clip lists are never mutated in place, so they are shared. */
function cloneState(s: EngineState): EngineState {
  const steps: EngineState['steps'] = {};
  for (const [id, st] of Object.entries(s.steps)) steps[id] = { ...st };
  return { ...s, steps, slots: { ...s.slots }, confirm: s.confirm ? { ...s.confirm } : null };
}

class Turn {
  readonly state: EngineState;
  readonly clips: ClipSpec[] = [];
  readonly trace: TraceStep[] = [];
  private readonly startCursor: string;
  /** The utterance normalised once for the keyword layers (control, FAQ, question). */
  readonly norm: string;

  constructor(
    readonly agent: CompiledAgent,
    prev: EngineState,
    readonly input: TurnInput,
  ) {
    this.norm = normalizeUtterance(input.text);
    this.state = cloneState(prev);
    this.state.turns += 1;
    this.startCursor = prev.cursor;
  }

  get lang(): string {
    return this.agent.def.language;
  }
  get msg() {
    return this.agent.messages;
  }

  render(text: string): string {
    // Named fields rather than a spread: V8 copies a spread object that gains a new key slowly.
    const { vars } = this.input;
    return renderTemplate(text, { customer_name: vars.customer_name, context: vars.context, slots: this.state.slots });
  }
  say(text: string, flags: ClipSpec['flags'] = {}): void {
    const t = this.render(text);
    if (t) this.clips.push({ text: t, flags });
  }
  /** Says a step's question (`text`: its ask or re-prompt) with the step's `barge_in: false` flag, if it has one. */
  ask(step: Step, text: string = step.ask, flags: ClipSpec['flags'] = {}): void {
    this.say(text, step.barge_in === false ? { ...flags, barge_in: false } : flags);
  }
  /**
   * On a phone call, the first time a `digits` step is asked again (a wrong or unheard answer,
   * silence, a readback the caller said was wrong), says `messages.keypad_offer` after the
   * question: keyed digits (DTMF) reach the step as text like a spoken answer.
   */
  offerKeypad(step: Step): void {
    const st = this.state.steps[step.id]!;
    if (!this.input.phone || step.capture?.type !== 'digits' || st.keypad_offered) return;
    st.keypad_offered = true;
    this.say(this.msg.keypad_offer, step.barge_in === false ? { barge_in: false } : {});
  }
  filler(): void {
    const f = this.msg.fillers;
    this.say(f[(this.state.turns - 1) % f.length]!, { is_filler: true });
  }
  extract(step: Step, mode: 'answer' | 'volunteer'): SlotValue | null {
    if (!step.capture) return null;
    const found = extractSlot(this.input.text, {
      capture: step.capture,
      language: this.lang,
      nowMs: this.input.refMs,
      timezone: this.agent.def.timezone,
      mode,
    });
    return found ? found.value : null;
  }

  /**
   * The trace entry of a value for `step` heard below its type's confidence threshold, or null
   * when the turn was heard well enough (or typed).
   */
  lowConfidence(step: Step, layer: 'confirm' | 'capture', result: TraceStep['result']): TraceStep | null {
    const type = step.capture?.type;
    if (!type) return null;
    if (this.input.sttUnmeasured === true && type !== 'yes_no')
      return { layer, result, detail: 'no_confidence', slot: step.capture!.slot, type };
    const confidence = this.input.sttConfidence;
    if (!heardBelow(this.agent.def, type, confidence)) return null;
    return {
      layer,
      result,
      detail: 'low_confidence',
      slot: step.capture!.slot,
      type,
      confidence: confidence!,
      threshold: minConfidence(this.agent.def, type),
    };
  }

  /** The readback clips of a pending confirmation (see {@link pendingMode}). */
  pendingClips(step: Step, pending: PendingConfirm): ClipSpec[] {
    return readbackClips(pendingMode(step, pending), step.capture!, pending.value, this.lang, this.msg);
  }

  /** Closing line (or `line`); the close-grace window starts now. */
  close(line: string = this.agent.def.closing): void {
    this.state.cursor = CURSOR_CLOSING;
    this.state.confirm = null;
    this.say(line);
    this.state.closing_at_ms = this.input.nowMs;
  }

  /** Marks `step` done; when its `stop_if` matches, says its line and closes. @returns true when stopped. */
  settle(step: Step): boolean {
    this.state.steps[step.id]!.status = 'done';
    const stop = step.stop_if;
    if (!stop || !step.capture || this.state.slots[step.capture.slot] !== stop.value) return false;
    this.state.stopped_at = step.id;
    this.close(stop.say);
    return true;
  }

  /** Moves to the next unsettled step and asks it (or reads back a volunteered value), or closes. */
  advance(): void {
    for (const step of this.agent.def.steps) {
      const st = this.state.steps[step.id]!;
      if (st.status !== 'pending') continue;
      this.state.cursor = step.id;
      const slot = step.capture?.slot;
      if (slot !== undefined && slot in this.state.slots) {
        const value = this.state.slots[slot]!;
        if (step.confirm === 'none') {
          if (this.settle(step)) return;
          continue;
        }
        this.state.confirm = { step: step.id, value, attempts: 0 };
        this.clips.push(...readbackClips(step.confirm, step.capture!, value, this.lang, this.msg));
        return;
      }
      this.ask(step);
      return;
    }
    this.close();
  }

  /**
   * Accepts `value` for `step`: read back without storing it when it was heard below its
   * confidence threshold; else stored, then read back when the step confirms, else done and onwards.
   */
  accept(step: Step, value: SlotValue): void {
    const low = this.lowConfidence(step, 'confirm', 'match');
    if (low) {
      this.trace.push(low);
      this.state.confirm = { step: step.id, value, attempts: 0, heard: low.confidence ?? null };
      this.clips.push(...this.pendingClips(step, this.state.confirm));
      return;
    }
    this.state.slots[step.capture!.slot] = value;
    if (step.confirm !== 'none') {
      this.state.confirm = { step: step.id, value, attempts: 0 };
      this.clips.push(...readbackClips(step.confirm, step.capture!, value, this.lang, this.msg));
      return;
    }
    if (this.settle(step)) return;
    this.filler();
    this.advance();
  }

  /** Captures later steps' slots the caller volunteered (mixed initiative); returns their names. */
  volunteer(current: Step | undefined): string[] {
    const got: string[] = [];
    const currentType = current?.capture?.type;
    for (const step of this.agent.def.steps) {
      if (step === current || !step.capture || this.state.steps[step.id]!.status !== 'pending') continue;
      if (step.capture.slot in this.state.slots || step.capture.type === currentType) continue;
      const value = this.extract(step, 'volunteer');
      const low = value === null ? null : this.lowConfidence(step, 'capture', 'skip');
      if (low) {
        this.trace.push(low); // asked at its own step instead
        continue;
      }
      if (value !== null) {
        this.state.slots[step.capture.slot] = value;
        got.push(step.capture.slot);
        this.trace.push({
          layer: 'capture',
          result: 'match',
          detail: 'volunteered',
          slot: step.capture.slot,
          type: step.capture.type,
        });
      }
    }
    return got;
  }

  /** Counts a failed attempt at `step`: `line` and the step asked again, or its fallback once the attempts are out. */
  reprompt(step: Step, line: string = this.msg.not_understood): string {
    const st = this.state.steps[step.id]!;
    st.attempts += 1;
    if (st.attempts <= step.max_attempts) {
      this.say(line);
      this.ask(step, step.reprompt ?? step.ask);
      this.offerKeypad(step);
      return 'reprompt';
    }
    this.giveUpStep(step);
    return 'fallback';
  }

  /** The step could not be answered: `failed` (or `skipped`, when optional), its fallback said, the next step asked. */
  giveUpStep(step: Step): void {
    this.state.steps[step.id]!.status = step.optional ? 'skipped' : 'failed';
    if (step.fallback) this.say(step.fallback);
    this.advance();
  }

  stepDone(): boolean {
    const st = this.state.steps[this.startCursor];
    return st !== undefined && st.status !== 'pending';
  }
}

function graceTurn(t: Turn): string {
  const faq = matchFaq(t.norm, t.agent.def.faq);
  if (faq) t.say(faq.faq.answer, { intent_key: faq.faq.intent, source: 'faq' });
  t.say(t.msg.goodbye);
  t.state.closed = true;
  return 'close_grace';
}

function controlTurn(t: Turn): string | null {
  const control = detectControlIntent(t.norm);
  t.trace.push({ layer: 'control', result: control ? 'match' : 'miss', ...(control ? { detail: control.intent } : {}) });
  if (!control) return null;
  switch (control.intent) {
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
  return `control:${control.intent}`;
}

function confirmTurn(t: Turn): string | null {
  const pending = t.state.confirm;
  if (!pending) return null;
  const step = t.agent.def.steps[t.agent.stepIndex.get(pending.step)!]!;
  const slot = step.capture!.slot;
  let yes = detectYesNo(t.input.text);
  // A yes or no heard below the yes_no threshold is no answer: the readback is asked again.
  const lowYes = yes !== null && heardBelow(t.agent.def, 'yes_no', t.input.sttConfidence);
  if (lowYes) yes = null;
  // A yes/no step's own answer is the yes or no above, never a correction; nor is a yes or no to
  // a free-text readback (the text extractor would take "no" itself as the new text).
  const type = step.capture!.type;
  const corrected = type === 'yes_no' || (type === 'text' && detectYesNo(t.input.text) !== null) ? null : t.extract(step, 'answer');
  const isNew = corrected !== null && corrected !== pending.value;
  const detail = isNew ? 'correction' : lowYes ? 'low_confidence' : yes === null ? 'unclear' : yes ? 'yes' : 'no';
  const heard = lowYes ? { confidence: t.input.sttConfidence!, threshold: minConfidence(t.agent.def, 'yes_no') } : {};
  t.trace.push({ layer: 'confirm', result: yes !== null || isNew ? 'match' : 'miss', detail, slot, ...heard });
  if (isNew) {
    const low = t.lowConfidence(step, 'confirm', 'match');
    if (low) t.trace.push(low);
    pending.value = corrected;
    pending.attempts = 0;
    // a value heard below its threshold (now or before) waits for the caller's yes
    if (low) pending.heard = low.confidence ?? null;
    if (pending.heard === undefined) t.state.slots[slot] = corrected;
    else delete t.state.slots[slot]; // the value it replaces was denied
    t.clips.push(...t.pendingClips(step, pending));
    return 'confirm';
  }
  if (yes === true) {
    t.state.slots[slot] = pending.value;
    t.state.confirm = null;
    if (!t.settle(step)) {
      t.filler();
      t.advance();
    }
    return 'confirm';
  }
  if (yes === false) {
    t.state.confirm = null;
    delete t.state.slots[slot];
    // A value heard badly and denied is a failed attempt at the step: bounded by its max_attempts.
    if (pending.heard !== undefined) return t.reprompt(step, t.msg.correction);
    t.say(t.msg.correction);
    t.ask(step);
    t.offerKeypad(step);
    return 'confirm';
  }
  const faq = matchFaq(t.norm, t.agent.def.faq);
  if (faq) {
    t.say(faq.faq.answer, { intent_key: faq.faq.intent, source: 'faq' });
    for (const c of t.pendingClips(step, pending)) {
      t.clips.push({ ...c, flags: { ...c.flags, intent_key: faq.faq.intent, source: 'reprompt' } });
    }
    return 'faq';
  }
  pending.attempts += 1;
  if (pending.attempts >= step.max_attempts) {
    // No clear yes after the step's attempts: the value is dropped and the step asked again (or its fallback).
    t.state.confirm = null;
    delete t.state.slots[slot];
    t.trace.push({ layer: 'confirm', result: 'miss', detail: 'dropped', slot });
    return t.reprompt(step);
  }
  t.say(t.msg.not_understood);
  t.clips.push(...t.pendingClips(step, pending));
  return 'reprompt';
}

/**
 * How a pending confirmation is read back: digit by digit for a `confirm: digits` step, the
 * `heard_readback` line for a value heard below its confidence threshold (or a step that does
 * not confirm), else the step's `readback` sentence.
 */
function pendingMode(step: Step, pending: PendingConfirm): 'readback' | 'digits' | 'heard' {
  if (step.confirm === 'digits') return 'digits';
  return pending.heard !== undefined || step.confirm === 'none' ? 'heard' : 'readback';
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
  const volunteered = t.volunteer(step);
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
  t.trace.push({ layer: 'llm', result: 'skip', detail: 'not configured' });
  return t.reprompt(step);
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
  return { state: t.state, clips: t.clips, layer, trace: t.trace, ended: t.state.closed, stepDone: t.stepDone() };
}

/** The clip flags of a line marked `barge_in: false` (else none). */
function noBargeIn(bargeIn: false | undefined): ClipSpec['flags'] {
  return bargeIn === false ? { barge_in: false } : {};
}

/**
 * What happened on a phone line instead of a transcribed utterance (issue 16), for
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
 * Runs one phone-line event through the engine (issue 16; DESIGN.md §6). Pure, like {@link runTurn},
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

/**
 * The opening clips of a session (spec: Session (opened); DESIGN.md §4): the agent's opening
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
