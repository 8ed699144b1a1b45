/**
 * The turn pipeline (docs/architecture.md "A text turn"; docs/agents.md), pure: layers, readbacks,
 * corrections, mixed initiative, bounded re-prompts, templates, close-grace and the summary.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { compileAgent, initialState, type EngineState } from '../../src/engine/state.js';
import { buildSummary } from '../../src/engine/summary.js';
import { graceLapsed, openingClips, runTurn, type TurnOutput } from '../../src/engine/turn.js';

const REF = Date.parse('2026-11-21T10:00:00+05:30'); // a Saturday

function agent(extra: Record<string, unknown> = {}) {
  const r = parseAgentDefinition({
    id: 'ag_test',
    name: 'Test',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Hello {{customer_name}}, this is {{context.clinic}}.' }],
    steps: [
      { id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' }, confirm: 'readback' },
      { id: 'day', ask: 'Which day?', capture: { slot: 'visit_date', type: 'date' }, confirm: 'readback' },
      {
        id: 'phone',
        ask: 'Your mobile number?',
        capture: { slot: 'phone', type: 'digits', min_length: 10, max_length: 10 },
        confirm: 'digits',
        max_attempts: 1,
        fallback: 'We will call you back.',
      },
    ],
    faq: [{ intent: 'fees', keywords: ['fee', 'fees', 'how much'], answer: 'Five hundred rupees.' }],
    closing: 'Thanks {{patient_name}}, goodbye!',
    ...extra,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

function talk(a: ReturnType<typeof agent>, lines: string[], start?: EngineState, nowMs = REF): { state: EngineState; outs: TurnOutput[] } {
  let state = start ?? initialState(a);
  const outs: TurnOutput[] = [];
  for (const text of lines) {
    const out = runTurn(a, state, {
      text,
      nowMs,
      refMs: REF,
      vars: { customer_name: 'Priya', context: { clinic: 'Sunrise Clinic' } },
    });
    outs.push(out);
    state = out.state;
  }
  return { state, outs };
}

describe('runTurn', () => {
  it('renders templates in the opening and appends the first question when nothing waits for input', () => {
    const clips = openingClips(agent(), { customer_name: 'Priya', context: { clinic: 'Sunrise Clinic' } });
    expect(clips.map((c) => c.text)).toEqual(['Hello Priya, this is Sunrise Clinic.', 'Your name?']);
    expect(clips.map((c) => c.requires_user_input)).toEqual([false, true]);
    const bare = openingClips(agent(), { context: {} });
    expect(bare[0]!.text).toBe('Hello, this is.');
  });

  it('reads a value back, then moves on after yes with a filler', () => {
    const a = agent();
    const { outs, state } = talk(a, ['I am Priya Sharma', 'yes']);
    expect(outs[0]!.clips).toEqual([{ text: expect.stringContaining('Priya Sharma'), flags: { is_readback: true } }]);
    expect(outs[0]!.layer).toBe('capture');
    expect(outs[1]!.layer).toBe('confirm');
    expect(outs[1]!.clips[0]!.flags.is_filler).toBe(true);
    expect(outs[1]!.clips.at(-1)!.text).toBe('Which day?');
    expect(outs[1]!.stepDone).toBe(true);
    expect(state.cursor).toBe('day');
    expect(state.slots.patient_name).toBe('Priya Sharma');
  });

  it('takes a correction instead of a yes, and re-asks after a plain no', () => {
    const a = agent();
    const { outs, state } = talk(a, ['Priya', 'yes', 'tomorrow', 'no, day after tomorrow', 'yes']);
    expect(outs[3]!.trace.find((s) => s.layer === 'confirm')!.detail).toBe('correction');
    expect(state.slots.visit_date).toBe('2026-11-23');
    const no = talk(a, ['Priya', 'no']);
    expect(no.outs[1]!.clips.at(-1)!.text).toBe('Your name?');
    expect(no.state.slots).not.toHaveProperty('patient_name');
  });

  it('reads digits back one clip per digit and takes "no, it is …" as a correction', () => {
    const a = agent();
    const { outs, state } = talk(a, [
      'Priya',
      'yes',
      'tomorrow',
      'yes',
      'nine eight seven six five four three two one zero',
      'no, it is 9876543211',
      'yes',
    ]);
    const readback = outs[4]!.clips;
    expect(
      readback
        .filter((c) => c.flags.is_digit)
        .map((c) => c.text)
        .join(''),
    ).toBe('9876543210');
    expect(readback.filter((c) => c.flags.is_digit).every((c) => c.speak && c.speak !== c.text)).toBe(true);
    expect(readback.at(-1)!.flags.is_confirm_prompt).toBe(true);
    expect(
      outs[5]!.clips
        .filter((c) => c.flags.is_digit)
        .map((c) => c.text)
        .join(''),
    ).toBe('9876543211');
    expect(state.slots.phone).toBe('9876543211');
    expect(outs[6]!.clips.at(-1)!.text).toBe('Thanks Priya, goodbye!');
    expect(state.closing_at_ms).toBe(REF);
  });

  it('captures a later slot the caller volunteers and confirms it when its step comes', () => {
    const a = agent();
    const { outs, state } = talk(a, ['My name is Priya Sharma and I want to come tomorrow', 'yes']);
    expect(state.slots.visit_date).toBe('2026-11-22');
    expect(outs[0]!.trace.some((s) => s.detail === 'volunteered' && s.slot === 'visit_date')).toBe(true);
    // After the name is confirmed, the volunteered date is read back instead of asked.
    expect(outs[1]!.clips.at(-1)!.flags.is_readback).toBe(true);
    expect(state.cursor).toBe('day');
  });

  it('answers an FAQ and chains the step re-prompt, both marked', () => {
    const { outs, state } = talk(agent(), ['how much is the fee?']);
    expect(outs[0]!.layer).toBe('faq');
    expect(outs[0]!.clips).toEqual([
      { text: 'Five hundred rupees.', flags: { intent_key: 'fees', source: 'faq' } },
      { text: 'Your name?', flags: { intent_key: 'fees', source: 'reprompt' } },
    ]);
    expect(state.steps.name!.attempts).toBe(0);
  });

  it('handles repeat, wait and human control intents', () => {
    const a = agent();
    const first = talk(a, ['Priya']);
    const rep = talk(a, ['can you repeat that'], first.state);
    expect(rep.outs[0]!.layer).toBe('control:repeat');
    expect(rep.outs[0]!.clips.slice(1)).toEqual(first.outs[0]!.clips);
    expect(talk(a, ['ek minute ruko']).outs[0]!.layer).toBe('control:wait');
    const human = talk(a, ['I want to talk to a real person']);
    expect(human.outs[0]!.layer).toBe('control:human');
    expect(human.state.handoff).toBe(true);
    expect(buildSummary(a, human.state).outcome).toBe('handoff');
  });

  it('re-prompts a bounded number of times, then falls back and moves on', () => {
    const a = agent();
    const { outs, state } = talk(a, ['Priya', 'yes', 'tomorrow', 'yes', 'umm', 'I do not know']);
    expect(outs[4]!.layer).toBe('reprompt');
    expect(outs[4]!.clips[0]!.text).toBe('Sorry, I did not catch that.');
    expect(outs[5]!.layer).toBe('fallback');
    expect(outs[5]!.clips.map((c) => c.text)).toEqual(['We will call you back.', 'Thanks Priya, goodbye!']);
    expect(state.steps.phone).toEqual({ status: 'failed', attempts: 2 });
    expect(buildSummary(a, state)).toMatchObject({
      outcome: 'partial',
      extracted: { patient_name: 'Priya', visit_date: '2026-11-22' },
    });
  });

  it('keeps the line open for close_grace_ms after the closing line', () => {
    const a = agent();
    const { state } = talk(a, ['bye']);
    expect(state.closing_at_ms).toBe(REF);
    expect(graceLapsed(a, state, REF + 8000)).toBe(false);
    expect(graceLapsed(a, state, REF + 8001)).toBe(true);
    const heard = talk(a, ['one more thing, what are the fees'], state, REF + 2000);
    expect(heard.outs[0]!.ended).toBe(true);
    expect(heard.outs[0]!.layer).toBe('close_grace');
    expect(heard.outs[0]!.clips[0]!.flags.intent_key).toBe('fees');
  });

  it('does not modify the state it was given', () => {
    const a = agent();
    const s0 = initialState(a);
    const copy = structuredClone(s0);
    talk(a, ['Priya'], s0);
    expect(s0).toEqual(copy);
  });

  it('summarises an abandoned session and leaves unconfirmed values out', () => {
    const a = agent();
    const { state } = talk(a, ['Priya']);
    expect(buildSummary(a, state)).toEqual({
      outcome: 'abandoned',
      steps: [
        { id: 'name', status: 'pending', attempts: 0 },
        { id: 'day', status: 'pending', attempts: 0 },
        { id: 'phone', status: 'pending', attempts: 0 },
      ],
      extracted: {},
      tool_calls: [],
      turns: 1,
    });
  });
});

describe('Hindi agent', () => {
  it('speaks its own lines and understands Hinglish answers', () => {
    const a = agent({
      language: 'hi-IN',
      steps: [
        { id: 'ok', ask: 'क्या आप भुगतान कर पाएँगे?', capture: { slot: 'can_pay', type: 'yes_no' } },
        { id: 'date', ask: 'किस तारीख़ तक?', capture: { slot: 'promise_date', type: 'date' }, confirm: 'readback' },
      ],
      closing: 'धन्यवाद!',
    });
    const { outs, state } = talk(a, ['haan ji', 'parso', 'haan']);
    expect(state.slots.can_pay).toBe(true);
    expect(outs[1]!.clips[0]!.text).toMatch(/सही है\?$/);
    expect(state.slots.promise_date).toBe('2026-11-23');
    expect(outs[2]!.clips.at(-1)!.text).toBe('धन्यवाद!');
  });
});

describe('goodbye with an answer', () => {
  it('keeps the answer to the current question before closing', () => {
    const r = parseAgentDefinition({
      id: 'ag_yn',
      name: 'YN',
      direction: 'outbound',
      language: 'en-IN',
      opening: [{ text: 'Hi.' }],
      steps: [{ id: 'more', ask: 'Anything else?', capture: { slot: 'more', type: 'yes_no' } }],
      closing: 'Bye.',
    });
    if (!r.ok) throw new Error('bad agent');
    const a = compileAgent(r.agent);
    const out = runTurn(a, initialState(a), { text: 'No, that was all. Good bye.', nowMs: REF, refMs: REF, vars: {} });
    expect(out.layer).toBe('control:goodbye');
    expect(buildSummary(a, out.state).extracted).toEqual({ more: false });
  });
});

describe('stop_if', () => {
  it('ends the conversation with its own line when the step settles on the value', () => {
    const r = parseAgentDefinition({
      id: 'ag_stop',
      name: 'Stop',
      direction: 'outbound',
      language: 'en-IN',
      opening: [{ text: 'Hi.' }],
      steps: [
        {
          id: 'identity',
          ask: 'Am I speaking with Ravi?',
          capture: { slot: 'is_ravi', type: 'yes_no' },
          stop_if: { value: false, say: 'Sorry to disturb you. Goodbye.' },
        },
        { id: 'amount', ask: 'Your EMI is due. Can you pay?', capture: { slot: 'can_pay', type: 'yes_no' } },
      ],
      closing: 'Thank you, goodbye.',
    });
    if (!r.ok) throw new Error(JSON.stringify(r.issues));
    const a = compileAgent(r.agent);
    const wrong = runTurn(a, initialState(a), { text: 'no, wrong number', nowMs: REF, refMs: REF, vars: {} });
    expect(wrong.clips.map((c) => c.text)).toEqual(['Sorry to disturb you. Goodbye.']);
    expect(wrong.state.closing_at_ms).toBe(REF);
    expect(buildSummary(a, wrong.state)).toMatchObject({ outcome: 'stopped', extracted: { is_ravi: false } });
    const right = runTurn(a, initialState(a), { text: 'haan ji', nowMs: REF, refMs: REF, vars: {} });
    expect(right.clips.at(-1)!.text).toBe('Your EMI is due. Can you pay?');
    expect(parseAgentDefinition({ ...r.agent, steps: [{ id: 'x', ask: 'Q?', stop_if: { value: false, say: 'Bye.' } }] }).ok).toBe(false);
  });
});
