/**
 * A `digits` step on a phone call (docs/agents.md, "Phone calls"): the first time it is asked
 * again the keypad is offered (`messages.keypad_offer`), once; a typed chat never hears it;
 * keyed digits answer the step; an over-long hearing is never cut into a value; the attempts
 * are bounded and the step's fallback moves the call on, listening for the next step.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { mediaHintsOf } from '../../src/engine/media-hints.js';
import { staticTexts } from '../../src/engine/static-texts.js';
import { compileAgent, initialState, type CompiledAgent, type EngineState } from '../../src/engine/state.js';
import { buildSummary } from '../../src/engine/summary.js';
import { runEventTurn, runTurn, type TurnEventKind } from '../../src/engine/turn.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REF = Date.parse('2026-11-21T10:00:00+05:30');
const VARS = { customer_name: null, context: {} };
const KEYPAD = "Or type it on your phone's keypad and press hash.";
/** The thirteen digits a real voice reading 98765 43210 was heard as. */
const OVERFLOW = 'nine oh eight seven six five four three oh two one one zero';

function load(file: string, extra: Record<string, unknown> = {}): CompiledAgent {
  const raw = parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', file), 'utf8')) as Record<string, unknown>;
  const r = parseAgentDefinition({ ...raw, ...extra });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

const turn = (a: CompiledAgent, s: EngineState, text: string, phone: boolean) =>
  runTurn(a, s, { text, nowMs: REF, refMs: REF, vars: VARS, phone });
const event = (a: CompiledAgent, s: EngineState, kind: TurnEventKind, phone = true) =>
  runEventTurn(a, s, { kind, nowMs: REF, refMs: REF, vars: VARS, phone });
const texts = (out: { clips: Array<{ text: string }> }) => out.clips.map((c) => c.text);

/** The clinic booking (config/agents/ag_clinic_booking.yaml) with the cursor on its `phone` step. */
function atPhone(): { a: CompiledAgent; s: EngineState } {
  const a = load('ag_clinic_booking.yaml');
  return { a, s: atPhoneOf(a) };
}

/** `a`'s state once the caller has given name, day and time (the clinic's steps before `phone`). */
function atPhoneOf(a: CompiledAgent): EngineState {
  let s = initialState(a);
  for (const line of ['Priya Sharma', 'yes', 'tomorrow', 'yes', 'five in the evening', 'yes']) s = turn(a, s, line, true).state;
  expect(s.cursor).toBe('phone');
  return s;
}

describe('the keypad on a phone call', () => {
  it('the first failed attempt at a digits step offers the keypad after the re-prompt; a typed chat does not', () => {
    const { a, s } = atPhone();
    const phone = turn(a, s, OVERFLOW, true);
    expect(texts(phone)).toEqual(['Sorry, I did not catch that.', 'Could you say your ten-digit mobile number again, slowly?', KEYPAD]);
    expect(phone.layer).toBe('reprompt');
    expect(phone.state.steps.phone).toMatchObject({ status: 'pending', attempts: 1 });

    const typed = turn(a, s, OVERFLOW, false);
    expect(texts(typed)).toEqual(['Sorry, I did not catch that.', 'Could you say your ten-digit mobile number again, slowly?']);
    expect(typed.state.steps.phone).toMatchObject({ status: 'pending', attempts: 1 });
  });

  it('thirteen heard digits are never cut to ten: nothing is stored and no readback is asked', () => {
    const { a, s } = atPhone();
    const out = turn(a, s, OVERFLOW, true);
    expect(out.state.slots.phone).toBeUndefined();
    expect(out.state.confirm).toBeNull();
    expect(out.clips.some((c) => c.flags.is_digit)).toBe(false);
  });

  it('offers the keypad once per step: a second failed attempt re-prompts without it', () => {
    const { a, s } = atPhone();
    const first = turn(a, s, OVERFLOW, true);
    const second = turn(a, first.state, 'nine eight seven', true);
    expect(texts(second)).toEqual(['Sorry, I did not catch that.', 'Could you say your ten-digit mobile number again, slowly?']);
    expect(second.state.steps.phone!.attempts).toBe(2);
  });

  it('the keyed number answers the step after the offer: read back digit by digit', () => {
    const { a, s } = atPhone();
    const offered = turn(a, s, OVERFLOW, true).state;
    const keyed = turn(a, offered, '9876543210', true);
    expect(keyed.state.confirm).toMatchObject({ step: 'phone', value: '9876543210' });
    expect(
      keyed.clips
        .filter((c) => c.flags.is_digit)
        .map((c) => c.text)
        .join(''),
    ).toBe('9876543210');
    const yes = turn(a, keyed.state, 'yes', true);
    expect(yes.state.steps.phone!.status).toBe('done');
    expect(yes.state.slots.phone).toBe('9876543210');
  });

  it('silence, an unheard answer or a readback said to be wrong at the digits step offer the keypad too, once', () => {
    for (const kind of ['silence', 'not_heard'] as const) {
      const { a, s } = atPhone();
      const out = event(a, s, kind);
      expect(texts(out).at(-1), kind).toBe(KEYPAD);
      expect(out.state.steps.phone!.attempts, kind).toBe(0);
      expect(texts(event(a, out.state, kind)), kind).not.toContain(KEYPAD);
      expect(texts(event(a, s, kind, false)), kind).not.toContain(KEYPAD);
    }
    const { a, s } = atPhone();
    const heard = turn(a, s, 'nine eight seven six five four three two one one', true);
    expect(heard.state.confirm).toMatchObject({ value: '9876543211' });
    const no = turn(a, heard.state, 'no', true);
    expect(texts(no)).toEqual(['Sorry about that. Could you tell me again?', 'What is your ten-digit mobile number?', KEYPAD]);
  });

  it('never offers the keypad at a step that does not capture digits', () => {
    const a = load('ag_clinic_booking.yaml');
    const out = turn(a, initialState(a), 'hmm', true);
    expect(out.state.cursor).toBe('name');
    expect(texts(out)).not.toContain(KEYPAD);
  });

  it('bounded: when the attempts run out the fallback is said and the call moves on, listening for the next step', () => {
    const { a, s } = atPhone();
    let state = s;
    const replies: string[][] = [];
    // max_attempts: 3 → three re-prompts, then the fallback.
    for (let i = 0; i < 4; i++) {
      const out = turn(a, state, OVERFLOW, true);
      replies.push(texts(out));
      state = out.state;
    }
    expect(replies.flat().filter((t) => t === KEYPAD)).toHaveLength(1);
    expect(replies[3]).toEqual([
      "I'm sorry, I couldn't get the number. Our front desk will confirm your appointment.",
      'Lastly, in a few words, what is the reason for the visit?',
    ]);
    expect(state.steps.phone).toMatchObject({ status: 'failed', attempts: 4 });
    expect(state.cursor).toBe('reason');
    expect(mediaHintsOf(a, state).expectation).toBe('free');
    // The next line is heard as the reason, not as digits.
    const reason = turn(a, state, 'fever and cough', true);
    expect(reason.state.slots.visit_reason).toBe('fever and cough');
    expect(buildSummary(a, reason.state).outcome).toBe('partial');
  });

  it('a line the recogniser never hears does not loop: after max_attempts unheard answers the fallback runs and the call moves on', () => {
    const { a, s } = atPhone();
    let state = s;
    const replies: string[][] = [];
    for (let i = 0; i < 4; i++) {
      const out = event(a, state, 'not_heard');
      replies.push(texts(out));
      state = out.state;
      if (i < 3) expect(out.trace).toEqual([{ layer: 'not_heard', result: 'match' }]);
      else expect(out.trace).toEqual([{ layer: 'not_heard', result: 'match', detail: 'fallback' }]);
    }
    expect(replies.slice(0, 3).every((r) => r[0] === 'Sorry, I did not catch that.')).toBe(true);
    expect(replies[3]).toEqual([
      "I'm sorry, I couldn't get the number. Our front desk will confirm your appointment.",
      'Lastly, in a few words, what is the reason for the visit?',
    ]);
    expect(state.steps.phone).toMatchObject({ status: 'failed', attempts: 0, not_heard: 4 });
    expect(state.cursor).toBe('reason');
    expect(mediaHintsOf(a, state).expectation).toBe('free');
    // Silence is bounded by the media settings' silence re-prompts instead: it never fails the step.
    let quiet = atPhone().s;
    for (let i = 0; i < 6; i++) quiet = event(a, quiet, 'silence').state;
    expect(quiet.steps.phone!.status).toBe('pending');
  });

  it('is a static text of an agent with a digits step (synthesised when applied), and only of such an agent', () => {
    expect(staticTexts(load('ag_clinic_booking.yaml'))).toContain(KEYPAD);
    const noDigits = load('ag_clinic_booking.yaml');
    const steps = noDigits.def.steps.filter((st) => st.capture?.type !== 'digits');
    expect(staticTexts({ ...noDigits, def: { ...noDigits.def, steps } })).not.toContain(KEYPAD);
    const own = load('ag_clinic_booking.yaml', { messages: { keypad_offer: 'Or key it in, then press the hash key.' } });
    expect(staticTexts(own)).toContain('Or key it in, then press the hash key.');
    expect(texts(turn(own, atPhoneOf(own), OVERFLOW, true)).at(-1)).toBe('Or key it in, then press the hash key.');
  });

  it('keys never fill a name or a free-text slot, nor ask the model; they still answer a digits step', () => {
    const keyed = (ag: CompiledAgent, st: EngineState, text: string) =>
      runTurn(ag, st, { text, nowMs: REF, refMs: REF, vars: VARS, phone: true, keyed: true });
    const a = load('ag_clinic_booking.yaml');
    const s = initialState(a);
    expect(s.cursor).toBe('name');
    for (const keys of ['ABC', 'abc', 'D', '123']) {
      const out = keyed(a, s, keys);
      expect(out.layer).toBe('reprompt');
      expect(out.state.slots).toEqual({});
      expect(out.state.confirm).toBeNull();
      expect(texts(out).join(' ')).not.toMatch(/ABC|Abc|right\?/);
    }
    // The same letters typed in a chat are a name (the readback asks).
    expect(turn(a, s, 'Abc', false).state.confirm).toMatchObject({ value: 'Abc' });
    const withLlm = load('ag_clinic_booking.yaml', { llm: { instructions: 'You book visits.' } });
    const out = keyed(withLlm, initialState(withLlm), 'ABC');
    expect(out.llm).toBeUndefined();
    expect(out.trace).toContainEqual({ layer: 'llm', result: 'skip', detail: 'keyed' });
    const digits = keyed(a, atPhoneOf(a), '9876543210');
    expect(digits.layer).toBe('capture');
    expect(digits.state.confirm).toMatchObject({ value: '9876543210' });
  });

  it('keys at the free-text step are no reason for the visit', () => {
    const a = load('ag_clinic_booking.yaml');
    let s = atPhoneOf(a);
    for (const line of ['9876543210', 'yes']) s = turn(a, s, line, true).state;
    expect(s.cursor).toBe('reason');
    const out = runTurn(a, s, { text: '42', nowMs: REF, refMs: REF, vars: VARS, phone: true, keyed: true });
    expect(out.layer).toBe('reprompt');
    expect(out.state.slots.visit_reason).toBeUndefined();
  });
});
