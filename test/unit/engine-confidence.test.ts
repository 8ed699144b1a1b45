/**
 * The recogniser's confidence in the turn pipeline (src/engine/confidence.ts; docs/agents.md
 * "Recogniser confidence"): a value heard below its slot type's threshold is read back and stored
 * only on a clear yes; typed turns are taken as they are; the trace says why.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { DEFAULT_MIN_CONFIDENCE } from '../../src/engine/confidence.js';
import { compileAgent, initialState, type EngineState } from '../../src/engine/state.js';
import { buildSummary } from '../../src/engine/summary.js';
import { runTurn, type TurnOutput } from '../../src/engine/turn.js';

const REF = Date.parse('2026-11-21T10:00:00+05:30');

function agent(extra: Record<string, unknown> = {}) {
  const r = parseAgentDefinition({
    id: 'ag_test',
    name: 'Test',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Hello.' }],
    steps: [
      { id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' } },
      { id: 'count', ask: 'How many people?', capture: { slot: 'people', type: 'number' }, max_attempts: 1 },
      {
        id: 'reason',
        ask: 'The reason for the visit?',
        capture: { slot: 'visit_reason', type: 'text' },
        optional: true,
        max_attempts: 1,
      },
    ],
    closing: 'Goodbye!',
    ...extra,
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

/** Runs `lines` ([text, confidence] or typed text) from `start`. */
function talk(
  a: ReturnType<typeof agent>,
  lines: Array<string | [string, number]>,
  start?: EngineState,
): { state: EngineState; outs: TurnOutput[] } {
  let state = start ?? initialState(a);
  const outs: TurnOutput[] = [];
  for (const line of lines) {
    const [text, sttConfidence] = typeof line === 'string' ? [line, null] : line;
    const out = runTurn(a, state, { text, nowMs: REF, refMs: REF, vars: { context: {} }, sttConfidence });
    outs.push(out);
    state = out.state;
  }
  return { state, outs };
}

const texts = (o: TurnOutput) => o.clips.map((c) => c.text);

describe('a value heard below its confidence threshold', () => {
  it('the same utterance is stored at once when heard well, and read back, not stored, when heard badly', () => {
    const a = agent();
    const sure = talk(a, [['my name is Priya Sharma', 0.9]]);
    expect(sure.state.slots.patient_name).toBe('Priya Sharma');
    expect(sure.state.cursor).toBe('count');
    expect(sure.outs[0]!.trace.some((t) => t.detail === 'low_confidence')).toBe(false);

    const unsure = talk(a, [['my name is Priya Sharma', 0.3]]);
    expect(unsure.state.slots).toEqual({}); // nothing stored yet
    expect(unsure.state.cursor).toBe('name');
    expect(unsure.state.confirm).toMatchObject({ step: 'name', value: 'Priya Sharma', heard: 0.3 });
    expect(texts(unsure.outs[0]!)).toEqual(['I heard Priya Sharma. Is that right?']);
    expect(unsure.outs[0]!.clips[0]!.flags.is_readback).toBe(true);
    expect(unsure.outs[0]!.trace).toContainEqual({
      layer: 'confirm',
      result: 'match',
      detail: 'low_confidence',
      slot: 'patient_name',
      type: 'person_name',
      confidence: 0.3,
      threshold: DEFAULT_MIN_CONFIDENCE.person_name,
    });
  });

  it('free text heard at 0.46 (the README booking\'s "the what") is confirmed, and a no re-asks the step', () => {
    const a = agent();
    const start = talk(a, ['I am Priya Sharma', 'two']).state;
    expect(start.cursor).toBe('reason');
    const heard = talk(a, [['the what', 0.46]], start);
    expect(heard.state.slots.visit_reason).toBeUndefined();
    expect(texts(heard.outs[0]!)).toEqual(['I heard the what. Is that right?']);
    const denied = talk(a, [['no', 0.9]], heard.state);
    expect(denied.state.confirm).toBeNull();
    expect(denied.state.slots.visit_reason).toBeUndefined();
    // a failed attempt at the step: asked again (its one re-prompt), then skipped, not asked for ever
    expect(texts(denied.outs[0]!)).toEqual(['Sorry about that. Could you tell me again?', 'The reason for the visit?']);
    expect(denied.state.steps.reason).toEqual({ status: 'pending', attempts: 1 });
    const again = talk(
      a,
      [
        ['the what', 0.4],
        ['no', 0.9],
      ],
      denied.state,
    );
    expect(again.state.steps.reason!.status).toBe('skipped');
    expect(buildSummary(a, again.state).extracted.visit_reason).toBeUndefined();
  });

  it('a clear yes stores the value heard; the step settles and the next one is asked', () => {
    const a = agent();
    const { state, outs } = talk(a, [
      ['my name is Priya Sharma', 0.3],
      ['yes', 0.8],
    ]);
    expect(state.slots.patient_name).toBe('Priya Sharma');
    expect(state.steps.name!.status).toBe('done');
    expect(outs[1]!.layer).toBe('confirm');
    expect(texts(outs[1]!).at(-1)).toBe('How many people?');
  });

  it('a yes heard below the yes_no threshold is no answer: the readback is asked again, and not for ever', () => {
    const a = agent();
    const { state, outs } = talk(a, [
      ['my name is Priya Sharma', 0.3],
      ['yes', 0.1],
    ]);
    expect(state.slots.patient_name).toBeUndefined();
    expect(state.confirm).not.toBeNull();
    expect(outs[1]!.trace[1]).toMatchObject({
      layer: 'confirm',
      result: 'miss',
      detail: 'low_confidence',
      confidence: 0.1,
      threshold: DEFAULT_MIN_CONFIDENCE.yes_no,
    });
    expect(texts(outs[1]!)).toEqual(['Sorry, I did not catch that.', 'I heard Priya Sharma. Is that right?']);
    // max_attempts (2) unclear answers drop the value and re-ask the step itself
    const more = talk(a, [['yes', 0.1]], state);
    expect(more.state.confirm).toBeNull();
    expect(more.state.slots.patient_name).toBeUndefined();
    expect(more.outs[0]!.trace).toContainEqual({ layer: 'confirm', result: 'miss', detail: 'dropped', slot: 'patient_name' });
    expect(texts(more.outs[0]!).at(-1)).toBe('Your name?');
  });

  it('a correction is read back again, and kept out of the slots until a yes', () => {
    const a = agent();
    const { state, outs } = talk(a, [
      ['my name is Priya Sharma', 0.3],
      ['no it is Neha Gupta', 0.9],
    ]);
    expect(outs[1]!.trace[1]).toMatchObject({ layer: 'confirm', detail: 'correction' });
    expect(state.slots.patient_name).toBeUndefined();
    expect(state.confirm).toMatchObject({ value: 'Neha Gupta' });
    expect(texts(outs[1]!)).toEqual(['I heard Neha Gupta. Is that right?']);
    expect(talk(a, [['yes', 0.9]], state).state.slots.patient_name).toBe('Neha Gupta');
  });

  it('a correction heard badly to a confident readback takes the denied value out of the slots until a yes', () => {
    const a = agent({
      steps: [{ id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' }, confirm: 'readback' }],
    });
    const { state, outs } = talk(a, [
      ['my name is Priya Sharma', 0.9],
      ['no it is Neha Gupta', 0.2],
    ]);
    expect(texts(outs[0]!)).toEqual(['That is Priya Sharma, right?']);
    expect(state.slots.patient_name).toBeUndefined();
    expect(texts(outs[1]!)).toEqual(['I heard Neha Gupta. Is that right?']);
    expect(outs[1]!.trace).toContainEqual(
      expect.objectContaining({ layer: 'confirm', detail: 'low_confidence', slot: 'patient_name', confidence: 0.2 }),
    );
  });

  it('any readback answered unclearly max_attempts times drops the value and asks the step again: no endless readback', () => {
    const a = agent({
      steps: [
        {
          id: 'name',
          ask: 'Your name?',
          capture: { slot: 'patient_name', type: 'person_name' },
          confirm: 'readback',
          max_attempts: 2,
        },
      ],
    });
    const { state, outs } = talk(a, ['my name is Priya Sharma', 'hmm', 'hmm']);
    expect(texts(outs[1]!)).toEqual(['Sorry, I did not catch that.', 'That is Priya Sharma, right?']);
    expect(state.confirm).toBeNull();
    expect(state.slots.patient_name).toBeUndefined();
    expect(texts(outs[2]!)).toEqual(['Sorry, I did not catch that.', 'Your name?']);
    expect(state.steps.name).toEqual({ status: 'pending', attempts: 1 });
  });

  it('a recogniser that gives no confidence (Sarvam): every value is read back, but a yes/no answer is taken', () => {
    const a = agent({
      steps: [
        { id: 'ok', ask: 'Shall we go on?', capture: { slot: 'go_on', type: 'yes_no' } },
        { id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' } },
      ],
    });
    const turn = (text: string, state?: EngineState) =>
      runTurn(a, state ?? initialState(a), {
        text,
        nowMs: REF,
        refMs: REF,
        vars: { context: {} },
        sttConfidence: null,
        sttUnmeasured: true,
      });
    const yes = turn('yes');
    expect(yes.state.slots.go_on).toBe(true);
    const name = turn('my name is Priya Sharma', yes.state);
    expect(name.state.slots.patient_name).toBeUndefined();
    expect(name.clips.map((c) => c.text)).toEqual(['I heard Priya Sharma. Is that right?']);
    expect(name.trace).toContainEqual({
      layer: 'confirm',
      result: 'match',
      detail: 'no_confidence',
      slot: 'patient_name',
      type: 'person_name',
    });
    expect(name.state.confirm?.heard).toBeNull();
    expect(turn('yes', name.state).state.slots.patient_name).toBe('Priya Sharma');
  });

  it('typed text (no confidence) is taken as it is', () => {
    const a = agent();
    const { state, outs } = talk(a, ['my name is Priya Sharma']);
    expect(state.slots.patient_name).toBe('Priya Sharma');
    expect(outs[0]!.trace.some((t) => t.detail === 'low_confidence')).toBe(false);
  });

  it('per type: a number needs more than a yes/no, and an agent may set its own thresholds', () => {
    const a = agent();
    const start = talk(a, ['I am Priya Sharma']).state;
    expect(talk(a, [['two', 0.5]], start).state.slots.people).toBeUndefined(); // number: 0.6
    const yesNo = agent({ steps: [{ id: 'ok', ask: 'Shall we go on?', capture: { slot: 'go_on', type: 'yes_no' } }] });
    expect(talk(yesNo, [['yes', 0.5]]).state.slots.go_on).toBe(true); // yes_no: 0.3
    const strict = agent({ media: { min_confidence: { person_name: 0.95 } } });
    expect(talk(strict, [['my name is Priya Sharma', 0.9]]).state.slots.patient_name).toBeUndefined();
    const lax = agent({ media: { min_confidence: { number: 0.2 } } });
    expect(talk(lax, [['two', 0.5]], start).state.slots.people).toBe(2);
  });

  it('a value volunteered for a later step at low confidence is not taken; it is asked at its step', () => {
    const a = agent();
    const { state, outs } = talk(a, [['I am Priya Sharma and we are two people', 0.55]]);
    // the name (0.5) is confident enough; the volunteered number (0.6) is not
    expect(state.slots).toEqual({ patient_name: 'Priya Sharma' });
    expect(outs[0]!.trace).toContainEqual(
      expect.objectContaining({ layer: 'capture', result: 'skip', detail: 'low_confidence', slot: 'people', confidence: 0.55 }),
    );
    expect(state.cursor).toBe('count');
  });

  it('takes media.min_confidence by slot type, and rejects a threshold outside 0..1 or for an unknown type', () => {
    const parse = (min_confidence: unknown) =>
      parseAgentDefinition({
        id: 'ag_test',
        name: 'Test',
        direction: 'inbound',
        language: 'en-IN',
        opening: [{ text: 'Hi.' }],
        steps: [{ id: 'a', ask: 'Yes?', capture: { slot: 'a', type: 'yes_no' } }],
        closing: 'Bye.',
        media: { min_confidence },
      });
    const ok = parse({ digits: 0.7, text: 0 });
    expect(ok.ok && ok.agent.media?.min_confidence).toEqual({ digits: 0.7, text: 0 });
    for (const bad of [{ digits: 1.5 }, { digits: -0.1 }, { phone: 0.5 }, 0.5]) {
      const r = parse(bad);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(JSON.stringify(r.issues)).toMatch(/min_confidence|phone/);
    }
  });
});
