/**
 * One turn's working state in the engine: what a turn takes in and gives back
 * ({@link TurnInput}, {@link TurnOutput}, its trace), and the {@link Turn} the layers share — the
 * session state it changes, the reply clips it builds, and the moves every layer makes (say, ask,
 * extract a slot, accept or read back a value, advance, re-prompt, give up a step, close).
 * The layers are in turn.ts (a caller's utterance), confirm-turn.ts (a pending readback) and
 * event-turn.ts (a phone-line event).
 */
import type { SlotValue, Step } from '../domain/agent.js';
import { heardBelow, minConfidence } from './confidence.js';
import type { LlmAsk, LlmAssist } from './llm-assist.js';
import { normalizeUtterance } from './intents.js';
import { readbackClips } from './readback.js';
import { extractSlot } from './slots/index.js';
import { CURSOR_CLOSING, type ClipSpec, type CompiledAgent, type EngineState, type PendingConfirm } from './state.js';
import { renderTemplate, type TemplateVars } from './template.js';

/**
 * Slot types keyed digits (DTMF) can answer (docs/media.md "DTMF"): a number of some kind, a
 * yes or no, a choice. Keys never fill a `person_name`, `text`, `date` or `time` slot.
 */
const KEYPAD_TYPES: ReadonlySet<string> = new Set(['digits', 'number', 'amount', 'yes_no', 'choice']);

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
   * The text was keyed on the phone's keypad (DTMF), not said: it answers only a slot a keypad
   * can fill ({@link KEYPAD_TYPES}; docs/media.md "DTMF"), never a name or free text, and it
   * asks nothing of the language model. Default false.
   */
  keyed?: boolean;
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
  /**
   * The language model's answer to what the same turn asked (`TurnOutput.llm`), when the
   * service ran the turn once without it and called the model (docs/llm.md "Where the model
   * acts"); absent on the first run. A turn with an answer never asks again.
   */
  assist?: LlmAssist;
}

/** One entry of `trace.steps`: which layer looked, and whether it matched. */
export type TraceStep = {
  layer: string;
  result: 'match' | 'miss' | 'skip';
  detail?: string;
  slot?: string;
  type?: string;
  /** `detail: 'low_confidence'`: the recogniser's confidence in the utterance, 0..1. */
  confidence?: number;
  /** `detail: 'low_confidence'`: the slot type's threshold it fell below, 0..1. */
  threshold?: number;
  /** Layer `llm`, `result: 'miss'`: the HTTP status the model's endpoint answered a failed request with. */
  status?: number;
};

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
  /**
   * What the agent's language model could do where the rules missed (only for an agent with an
   * `llm` block, and only on a run without `assist`): the service may call the model and run the
   * turn again with its answer. The rest of this output is the rules' own path, which stands
   * when it does not.
   */
  llm?: LlmAsk;
}

/** A copy of `s` that the turn may change; clip lists are never mutated in place, so they are shared. */
function cloneState(s: EngineState): EngineState {
  const steps: EngineState['steps'] = {};
  for (const [id, st] of Object.entries(s.steps)) steps[id] = { ...st };
  return { ...s, steps, slots: { ...s.slots }, confirm: s.confirm ? { ...s.confirm } : null };
}

/** The working state of one turn; the layers read and change it. */
export class Turn {
  readonly state: EngineState;
  readonly clips: ClipSpec[] = [];
  readonly trace: TraceStep[] = [];
  /** What the turn asks of the language model, if anything (`TurnOutput.llm`). */
  llmAsk: LlmAsk | null = null;
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
    if (this.input.keyed === true && !KEYPAD_TYPES.has(step.capture.type)) return null;
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

/**
 * How a pending confirmation is read back: digit by digit for a `confirm: digits` step, the
 * `heard_readback` line for a value heard below its confidence threshold (or a step that does
 * not confirm), else the step's `readback` sentence.
 */
export function pendingMode(step: Step, pending: PendingConfirm): 'readback' | 'digits' | 'heard' {
  if (step.confirm === 'digits') return 'digits';
  return pending.heard !== undefined || step.confirm === 'none' ? 'heard' : 'readback';
}
