/**
 * The engine's model hand-off (docs/llm.md "Where the model acts"), pure: what a turn asks of the
 * model where the rules miss, and how it runs again with the model's answer — a reply then the
 * step's question, a slot value checked by the slot's type and read back by the rules' own
 * readback, a control intent acted on, and every refusal left on the rules' re-prompt.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { compileAgent, initialState, type EngineState } from '../../src/engine/state.js';
import { runTurn, type LlmAssist, type TraceStep, type TurnInput } from '../../src/engine/turn.js';
import { checkSlotValue, slotSchema, unsureControl } from '../../src/engine/llm-assist.js';
import { normalizeUtterance } from '../../src/engine/intents.js';

const REF = Date.parse('2026-11-21T10:00:00+05:30'); // a Saturday

function agent(llm: Record<string, unknown> | null = { instructions: 'We take cash, card and UPI.' }) {
  const r = parseAgentDefinition({
    id: 'ag_test',
    name: 'Test',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Hello.' }],
    steps: [
      { id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' }, confirm: 'readback' },
      { id: 'day', ask: 'Which day?', capture: { slot: 'visit_date', type: 'date' }, confirm: 'none' },
    ],
    faq: [{ intent: 'fees', keywords: ['fee', 'fees'], answer: 'Five hundred rupees.' }],
    closing: 'Goodbye!',
    ...(llm ? { llm } : {}),
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

const input = (text: string, extra: Partial<TurnInput> = {}): TurnInput => ({
  text,
  nowMs: REF,
  refMs: REF,
  vars: { customer_name: null, context: {} },
  ...extra,
});

/** The state at the `day` step (the name given and confirmed). */
function atDay(a: ReturnType<typeof agent>): EngineState {
  let s = initialState(a);
  s = runTurn(a, s, input('My name is Priya Sharma')).state;
  s = runTurn(a, s, input('yes')).state;
  expect(s.cursor).toBe('day');
  return s;
}

const llmTrace = (steps: TraceStep[]) => steps.filter((t) => t.layer === 'llm');

describe('the engine asks the model only where the rules miss', () => {
  it('an agent without llm never asks, and re-prompts as before', () => {
    const a = agent(null);
    const out = runTurn(a, initialState(a), input('do you take UPI?'));
    expect(out.llm).toBeUndefined();
    expect(out.layer).toBe('reprompt');
    expect(llmTrace(out.trace)).toEqual([{ layer: 'llm', result: 'skip', detail: 'not configured' }]);
  });

  it('a question no FAQ matched asks for a reply; a matched FAQ or a captured value asks nothing', () => {
    const a = agent();
    const out = runTurn(a, initialState(a), input('do you take UPI?'));
    expect(out.llm).toEqual({ kind: 'reply', step: 'name', question: 'Your name?' });
    expect(out.layer).toBe('reprompt'); // the rules' path stands until an answer comes
    expect(runTurn(a, initialState(a), input('what are the fees?')).llm).toBeUndefined();
    expect(runTurn(a, initialState(a), input('my name is Priya Sharma')).llm).toBeUndefined();
  });

  it('a statement the capture missed asks for the slot, with the capture', () => {
    const a = agent();
    const s = atDay(a);
    const out = runTurn(a, s, input('sometime after the wedding works'));
    expect(out.llm).toMatchObject({ kind: 'slot', step: 'day', capture: { slot: 'visit_date', type: 'date' } });
  });

  it('a short utterance with a control cue the rules did not place asks for an intent', () => {
    const a = agent();
    expect(runTurn(a, atDay(a), input('okay I reckon we are done')).llm).toMatchObject({ kind: 'intent', step: 'day' });
    expect(unsureControl(normalizeUtterance('that will be all, thanks'))).toBe(true);
    expect(unsureControl(normalizeUtterance('the twentieth of next month please'))).toBe(false);
  });

  it('max_calls_per_session: 0 turns the model off', () => {
    const a = agent({ instructions: 'x', max_calls_per_session: 0 });
    expect(runTurn(a, initialState(a), input('do you take UPI?')).llm).toBeUndefined();
  });
});

describe('the turn run again with the answer', () => {
  const run = (a: ReturnType<typeof agent>, s: EngineState, text: string, assist: LlmAssist, extra: Partial<TurnInput> = {}) =>
    runTurn(a, s, input(text, { ...extra, assist }));

  it('a reply is said, then the step question follows; no attempt is used and nothing more is asked', () => {
    const a = agent();
    const out = run(a, initialState(a), 'do you take UPI?', { kind: 'reply', text: 'Yes, we take UPI at the desk.' });
    expect(out.layer).toBe('llm');
    expect(out.llm).toBeUndefined();
    expect(out.clips.map((c) => [c.text, c.flags.source])).toEqual([
      ['Yes, we take UPI at the desk.', 'llm'],
      ['Your name?', 'reprompt'],
    ]);
    expect(out.state.steps.name!.attempts).toBe(0);
    expect(llmTrace(out.trace)).toEqual([{ layer: 'llm', result: 'match', detail: 'reply' }]);
  });

  it("a reply's text is said as given, never rendered as a template", () => {
    const a = agent();
    const out = run(a, initialState(a), 'do you take UPI?', { kind: 'reply', text: 'Yes {{patient_name}}.' });
    expect(out.clips[0]!.text).toBe('Yes {{patient_name}}.');
  });

  it('a slot value of the right type is accepted through the rules (date canonicalised, stored when confirm is none)', () => {
    const a = agent();
    const out = run(a, atDay(a), 'sometime after the wedding works', { kind: 'slot', value: '2026-11-30' });
    expect(out.layer).toBe('llm');
    expect(out.state.slots.visit_date).toBe('2026-11-30');
    expect(llmTrace(out.trace)).toEqual([{ layer: 'llm', result: 'match', detail: 'slot', slot: 'visit_date', type: 'date' }]);
  });

  it('a model value heard below the confidence threshold is read back, not stored', () => {
    const a = agent();
    const out = run(a, atDay(a), 'sometime after the wedding works', { kind: 'slot', value: '2026-11-30' }, { sttConfidence: 0.2 });
    expect(out.state.slots.visit_date).toBeUndefined();
    expect(out.state.confirm).toMatchObject({ step: 'day', value: '2026-11-30' });
  });

  it('a name from the model goes to readback like a rules name', () => {
    const a = agent();
    const out = run(a, initialState(a), 'Isabella is the name of the receiver', { kind: 'slot', value: 'Isabella' });
    expect(out.state.confirm).toMatchObject({ step: 'name', value: 'Isabella' });
    expect(out.clips.some((c) => c.flags.is_readback)).toBe(true);
  });

  it('a value of the wrong type is refused and counted; the rules re-prompt stands', () => {
    const a = agent();
    const s = atDay(a);
    for (const value of ['Priya Sharma', true, 42.5]) {
      const out = run(a, s, 'whenever', { kind: 'slot', value });
      expect(out.layer).toBe('reprompt');
      expect(out.state.slots.visit_date).toBeUndefined();
      expect(out.state.steps.day!.attempts).toBe(1);
      expect(llmTrace(out.trace)).toEqual([{ layer: 'llm', result: 'miss', detail: 'wrong_type', slot: 'visit_date', type: 'date' }]);
    }
    expect(llmTrace(run(a, s, 'whenever', { kind: 'slot', value: null }).trace)[0]!.detail).toBe('empty');
  });

  it('an intent is acted on by the control layer; none leaves the re-prompt', () => {
    const a = agent();
    const bye = run(a, atDay(a), 'okay I reckon we are done', { kind: 'intent', intent: 'goodbye' });
    expect(bye.layer).toBe('llm:goodbye');
    expect(bye.state.closing_at_ms).toBe(REF);
    const human = run(a, atDay(a), 'get me somebody', { kind: 'intent', intent: 'human' });
    expect(human.state.handoff).toBe(true);
    const none = run(a, atDay(a), 'okay I reckon we are done', { kind: 'intent', intent: 'none' });
    expect(none.layer).toBe('reprompt');
  });

  it('no answer (a failure) or an answer of another kind keeps the rules path, with why', () => {
    const a = agent();
    for (const detail of ['timeout', 'rate_limited', 'server_error', 'malformed', 'budget', 'session_cap']) {
      const out = run(a, initialState(a), 'do you take UPI?', { kind: 'none', detail });
      expect(out.layer).toBe('reprompt');
      expect(llmTrace(out.trace)).toEqual([{ layer: 'llm', result: 'miss', detail }]);
    }
    const odd = run(a, initialState(a), 'do you take UPI?', { kind: 'slot', value: 'x' });
    expect(llmTrace(odd.trace)[0]!.detail).toBe('mismatch');
  });
});

describe('the rule layer checks a model slot value by type', () => {
  const opts = (capture: Record<string, unknown>) => ({
    capture: capture as never,
    language: 'en-IN',
    nowMs: REF,
    timezone: 'Asia/Kolkata',
  });
  it('canonicalises or refuses', () => {
    expect(checkSlotValue('98765 43210', opts({ slot: 'p', type: 'digits', min_length: 10, max_length: 10 }))).toBe('9876543210');
    expect(checkSlotValue('12345', opts({ slot: 'p', type: 'digits', min_length: 10, max_length: 10 }))).toBeNull();
    expect(checkSlotValue('16:30', opts({ slot: 't', type: 'time' }))).toBe('16:30');
    expect(checkSlotValue(true, opts({ slot: 'y', type: 'yes_no' }))).toBe(true);
    expect(checkSlotValue('yes', opts({ slot: 'y', type: 'yes_no' }))).toBeNull();
    const choice = {
      slot: 'c',
      type: 'choice',
      options: [
        { id: 'cash', synonyms: [] },
        { id: 'upi', synonyms: [] },
      ],
    };
    expect(checkSlotValue('upi', opts(choice))).toBe('upi');
    expect(checkSlotValue('bitcoin', opts(choice))).toBeNull();
    expect(checkSlotValue('x'.repeat(500), opts({ slot: 'n', type: 'person_name' }))).toBeNull();
  });
  it('gives a JSON schema per slot type', () => {
    expect(slotSchema({ slot: 'd', type: 'date' } as never).schema).toMatchObject({ required: ['value'], additionalProperties: false });
  });
});
