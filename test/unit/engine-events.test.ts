/**
 * Phone-line events in the engine (docs/media.md "How a call behaves"): silence, a recogniser that
 * did not hear, giving up after the silence re-prompts, the call's time limit; the `barge_in:
 * false` clip flag; the media hints of each step; the agent's `media` settings.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { formatIssuePath, mediaSettingsOf, parseAgentDefinition } from '../../src/domain/agent.js';
import { RECOGNITION_GRAMMARS as MEDIA_GRAMMARS } from '../../src/media/recognizer.js';
import { expectationForStep as mediaExpectationForStep } from '../../src/media/endpointing.js';
import { RECOGNITION_GRAMMARS, expectationForStep } from '../../src/domain/media.js';
import { mediaHintsOf } from '../../src/engine/media-hints.js';
import { compileAgent, initialState, type CompiledAgent, type EngineState } from '../../src/engine/state.js';
import { buildSummary } from '../../src/engine/summary.js';
import { openingClips, runEventTurn, runTurn, type TurnEventKind } from '../../src/engine/turn.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const REF = Date.parse('2026-11-21T10:00:00+05:30'); // a Saturday
const VARS = { customer_name: 'Priya', context: {} };

function load(file: string, extra: Record<string, unknown> = {}): CompiledAgent {
  const raw = parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', file), 'utf8')) as Record<string, unknown>;
  const r = parseAgentDefinition({ ...raw, ...extra });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}
const clinic = () => load('ag_clinic_booking.yaml');

function say(a: CompiledAgent, state: EngineState, ...lines: string[]): EngineState {
  for (const text of lines) state = runTurn(a, state, { text, nowMs: REF, refMs: REF, vars: VARS }).state;
  return state;
}
function event(a: CompiledAgent, state: EngineState, kind: TurnEventKind, attempt?: number) {
  return runEventTurn(a, state, { kind, ...(attempt !== undefined ? { attempt } : {}), nowMs: REF, refMs: REF, vars: VARS });
}

describe('runEventTurn', () => {
  it('silence: "are you still there?" then the step re-prompt, attempts untouched', () => {
    const a = clinic();
    const before = initialState(a);
    const out = event(a, before, 'silence', 1);
    expect(out.clips.map((c) => c.text)).toEqual(['Are you still there?', "Could you tell me the patient's full name?"]);
    expect(out.layer).toBe('no_input');
    expect(out.trace).toEqual([{ layer: 'no_input', result: 'match', detail: 'attempt 1' }]);
    expect(out.ended).toBe(false);
    expect(out.stepDone).toBe(false);
    expect(out.state.steps.name).toEqual({ status: 'pending', attempts: 0 });
    expect(out.state.cursor).toBe('name');
    expect(out.state.turns).toBe(1);
    expect(before.turns).toBe(0); // not modified
    // Two more silences still leave the step's attempts alone; a wrong answer then counts as the first.
    const after = event(a, event(a, out.state, 'silence', 2).state, 'silence', 3).state;
    expect(after.steps.name!.attempts).toBe(0);
    expect(runTurn(a, after, { text: '42', nowMs: REF, refMs: REF, vars: VARS }).state.steps.name!.attempts).toBe(1);
  });

  it('silence at an optional step skips it: the closing follows and the booking completes', () => {
    const a = clinic();
    const state = say(a, initialState(a), 'Priya Sharma', 'yes', 'tomorrow', 'yes', '5 pm', 'yes', '9876543210', 'yes');
    expect(state.cursor).toBe('reason');
    const out = event(a, state, 'silence', 1);
    expect(out.trace).toEqual([{ layer: 'no_input', result: 'match', detail: 'skip_optional' }]);
    expect(out.state.steps.reason!.status).toBe('skipped');
    expect(out.clips.map((c) => c.text)).not.toContain('Are you still there?');
    expect(out.clips.at(-1)!.text).toBe(a.def.closing);
    expect(buildSummary(a, out.state).outcome).toBe('completed');
    // A required step is not skipped by silence: it is asked again.
    const first = event(a, initialState(a), 'silence', 1);
    expect(first.state.steps.name!.status).toBe('pending');
  });

  it('silence during a readback re-asks the readback; its attempts untouched', () => {
    const a = clinic();
    const s = say(a, initialState(a), 'My name is Priya Sharma');
    expect(s.confirm).not.toBeNull();
    const out = event(a, s, 'silence', 1);
    expect(out.clips[0]!.text).toBe('Are you still there?');
    expect(out.clips[1]).toEqual({ text: expect.stringContaining('Priya Sharma'), flags: { is_readback: true } });
    expect(out.state.confirm).toEqual(s.confirm);
    // The digit readback re-asks its confirm prompt, flags kept.
    const p = say(a, initialState(a), 'Priya Sharma', 'yes', 'tomorrow', 'yes', '10 am', 'yes', '9845012345');
    const again = event(a, p, 'silence', 1);
    expect(again.clips.at(-1)).toEqual({ text: 'Is that correct?', flags: { is_confirm_prompt: true } });
    expect(again.clips.filter((c) => c.flags.is_digit)).toHaveLength(10);
  });

  it('not_heard: the not-understood line and the re-prompt, attempts untouched', () => {
    const a = clinic();
    const s = say(a, initialState(a), 'Priya Sharma', 'yes');
    const out = event(a, s, 'not_heard');
    expect(out.layer).toBe('not_heard');
    expect(out.trace).toEqual([{ layer: 'not_heard', result: 'match' }]);
    expect(out.clips.map((c) => c.text)).toEqual(['Sorry, I did not catch that.', expect.stringContaining('Which day works for you?')]);
    expect(out.state.steps.day).toEqual({ status: 'pending', attempts: 0, not_heard: 1 });
  });

  it('give_up: the no-input goodbye, and the session closes with the summary (abandoned)', () => {
    const a = clinic();
    const s = say(a, initialState(a), 'Priya Sharma', 'yes');
    const out = event(a, s, 'give_up', 3);
    expect(out.layer).toBe('no_input:give_up');
    expect(out.clips.map((c) => c.text)).toEqual(['I am sorry, I cannot hear you, so I will end this call now. Goodbye!']);
    expect(out.ended).toBe(true);
    expect(out.state.closed).toBe(true);
    expect(out.state.cursor).toBe('day');
    const summary = buildSummary(a, out.state);
    expect(summary.outcome).toBe('abandoned');
    expect(summary.extracted).toEqual({ patient_name: 'Priya Sharma' });
    expect(summary.steps.find((x) => x.id === 'day')).toEqual({ id: 'day', status: 'pending', attempts: 0 });
  });

  it('max_duration: the time-up line and goodbye; closes', () => {
    const a = clinic();
    const out = event(a, initialState(a), 'max_duration');
    expect(out.layer).toBe('max_duration');
    expect(out.clips.map((c) => c.text)).toEqual(['I am sorry, we have run out of time on this call.', 'Thank you. Goodbye!']);
    expect(out.ended).toBe(true);
    expect(out.state.closed).toBe(true);
  });

  it('after the closing line: silence says nothing, give_up and max_duration just say goodbye', () => {
    const a = load('ag_clinic_booking.yaml', { steps: [] });
    const closing = runTurn(a, initialState(a), { text: 'hello', nowMs: REF, refMs: REF, vars: VARS }).state;
    expect(closing.closing_at_ms).not.toBeNull();
    const quiet = event(a, closing, 'silence', 1);
    expect(quiet.clips).toEqual([]);
    expect(quiet.trace).toEqual([{ layer: 'no_input', result: 'skip', detail: 'closing' }]);
    expect(quiet.ended).toBe(false);
    expect(quiet.state.last_clips).toEqual(closing.last_clips);
    expect(quiet.state.last_clips.length).toBeGreaterThan(0);
    expect(event(a, closing, 'give_up').clips.map((c) => c.text)).toEqual(['Thank you. Goodbye!']);
    expect(event(a, closing, 'max_duration').clips.map((c) => c.text)).toEqual(['Thank you. Goodbye!']);
  });

  it("speaks the Hindi lines for a Hindi agent and the agent's own overrides", () => {
    const hi = load('ag_emi_reminder_hi.yaml');
    expect(event(hi, initialState(hi), 'silence', 1).clips[0]!.text).toBe('क्या आप लाइन पर हैं?');
    expect(event(hi, initialState(hi), 'give_up').clips[0]!.text).toContain('कॉल समाप्त');
    const own = load('ag_clinic_booking.yaml', {
      messages: { no_input: 'Hello? Are you there?', no_input_goodbye: 'We will call you later.', time_up: 'Time is up.' },
    });
    expect(event(own, initialState(own), 'silence').clips[0]!.text).toBe('Hello? Are you there?');
    expect(event(own, initialState(own), 'give_up').clips[0]!.text).toBe('We will call you later.');
    expect(event(own, initialState(own), 'max_duration').clips[0]!.text).toBe('Time is up.');
  });

  it('refuses an unknown event or a bad attempt', () => {
    const a = clinic();
    expect(() => event(a, initialState(a), 'shout' as TurnEventKind)).toThrow(/unknown turn event "shout"/);
    expect(() => event(a, initialState(a), 'silence', 0)).toThrow(/attempt must be a whole number/);
    expect(() => event(a, initialState(a), 'silence', 1.5)).toThrow(RangeError);
  });
});

describe('barge_in: false clips', () => {
  const disclaimer = {
    opening: [{ text: 'This call is recorded for quality and training.', barge_in: false }, { text: 'Hello from the clinic.' }],
    steps: [
      {
        id: 'consent',
        ask: 'Do you agree to continue?',
        reprompt: 'Please say yes or no: do you agree?',
        capture: { slot: 'consent', type: 'yes_no' },
        barge_in: false,
      },
      { id: 'name', ask: 'Your name?', capture: { slot: 'patient_name', type: 'person_name' }, confirm: 'readback' },
    ],
  };

  it('flags the opening line, the step question and its re-prompts; other clips are unflagged', () => {
    const a = load('ag_clinic_booking.yaml', disclaimer);
    const opening = openingClips(a, VARS);
    expect(opening.map((c) => c.flags)).toEqual([{ barge_in: false }, {}, { barge_in: false }]);
    const miss = runTurn(a, initialState(a), { text: 'purple', nowMs: REF, refMs: REF, vars: VARS });
    expect(miss.clips).toEqual([
      { text: 'Sorry, I did not catch that.', flags: {} },
      { text: 'Please say yes or no: do you agree?', flags: { barge_in: false } },
    ]);
    expect(event(a, initialState(a), 'silence').clips.at(-1)!.flags).toEqual({ barge_in: false });
    const faq = runTurn(a, initialState(a), { text: 'what are the fees?', nowMs: REF, refMs: REF, vars: VARS });
    expect(faq.clips.at(-1)!.flags).toEqual({ intent_key: 'fees', source: 'reprompt', barge_in: false });
    const next = runTurn(a, initialState(a), { text: 'yes', nowMs: REF, refMs: REF, vars: VARS });
    expect(next.clips.at(-1)).toEqual({ text: 'Your name?', flags: {} });
    // Readbacks keep their own flags (the media core treats them as asking for confirmation).
    expect(runTurn(a, next.state, { text: 'Priya Sharma', nowMs: REF, refMs: REF, vars: VARS }).clips[0]!.flags).toEqual({
      is_readback: true,
    });
  });

  it('the clinic agent has no flagged clip', () => {
    const a = clinic();
    expect(openingClips(a, VARS).every((c) => c.flags.barge_in === undefined)).toBe(true);
  });
});

describe('mediaHintsOf', () => {
  it('follows the clinic agent step by step', () => {
    const a = clinic();
    let s = initialState(a);
    expect(mediaHintsOf(a, s)).toEqual({ expectation: 'name', grammar: 'name', end_of_utterance_ms: 800 });
    s = say(a, s, 'Priya Sharma');
    expect(mediaHintsOf(a, s)).toEqual({ expectation: 'yes_no', grammar: 'yes_no', end_of_utterance_ms: 500 });
    s = say(a, s, 'yes');
    expect(mediaHintsOf(a, s)).toMatchObject({ expectation: 'date', grammar: 'date' });
    s = say(a, s, 'tomorrow', 'yes');
    expect(mediaHintsOf(a, s)).toMatchObject({ expectation: 'time', grammar: 'time' });
    s = say(a, s, '10 am', 'yes');
    expect(mediaHintsOf(a, s)).toEqual({ expectation: 'phone', grammar: 'digits', end_of_utterance_ms: 1500 });
    s = say(a, s, '9845012345');
    expect(mediaHintsOf(a, s).expectation).toBe('yes_no');
    s = say(a, s, 'yes');
    expect(mediaHintsOf(a, s)).toMatchObject({ expectation: 'free', grammar: 'free' });
    s = say(a, s, 'fever');
    expect(s.closing_at_ms).not.toBeNull();
    expect(mediaHintsOf(a, s).expectation).toBe('free');
  });

  it("gives a choice step's option words as phrases, and the agent's end-of-utterance overrides", () => {
    const a = load('ag_clinic_booking.yaml', {
      steps: [
        {
          id: 'plan',
          ask: 'Which plan?',
          capture: {
            slot: 'plan',
            type: 'choice',
            options: [
              { id: 'gold_plus', synonyms: [] },
              { id: 'silver', synonyms: ['silver', 'basic', 'silver'] },
            ],
          },
        },
      ],
      media: { end_of_utterance_ms: { choice: 450 } },
    });
    expect(mediaHintsOf(a, initialState(a))).toEqual({
      expectation: 'choice',
      grammar: 'free',
      end_of_utterance_ms: 450,
      phrases: ['gold plus', 'silver', 'basic'],
    });
  });

  it('shares one mapping with the media core', () => {
    expect([...RECOGNITION_GRAMMARS]).toEqual([...MEDIA_GRAMMARS]);
    expect(mediaExpectationForStep).toBe(expectationForStep);
  });
});

describe('agent media settings', () => {
  const issues = (media: unknown) => {
    const r = parseAgentDefinition({
      ...parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')),
      media,
    });
    return r.ok ? [] : r.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`);
  };

  it('has defaults, with or without the block; an agent without it keeps no media key', () => {
    const a = clinic();
    expect(a.def.media).toBeUndefined();
    expect(mediaSettingsOf(a.def)).toEqual({
      barge_in: true,
      no_speech_timeout_ms: 6000,
      max_silence_reprompts: 2,
      max_call_duration_s: 1800,
      end_of_utterance_ms: {},
    });
    expect(load('ag_clinic_booking.yaml', { media: { barge_in: false } }).def.media).toEqual({
      barge_in: false,
      no_speech_timeout_ms: 6000,
      max_silence_reprompts: 2,
      max_call_duration_s: 1800,
      end_of_utterance_ms: {},
    });
    expect(
      issues({
        barge_in: true,
        no_speech_timeout_ms: 8000,
        max_silence_reprompts: 0,
        max_call_duration_s: 600,
        end_of_utterance_ms: { phone: 2000, yes_no: 400 },
      }),
    ).toEqual([]);
  });

  it('names the field and the bound of each bad value', () => {
    expect(issues({ barge_in: 'no' })).toEqual(['media.barge_in: barge_in must be true or false']);
    expect(issues({ no_speech_timeout_ms: 500 })).toEqual(['media.no_speech_timeout_ms: no_speech_timeout_ms must be at least 1000 ms']);
    expect(issues({ no_speech_timeout_ms: 1500.5 })).toEqual([
      'media.no_speech_timeout_ms: no_speech_timeout_ms must be a whole number of ms',
    ]);
    expect(issues({ max_silence_reprompts: 6 })).toEqual([
      'media.max_silence_reprompts: max_silence_reprompts must be at most 5 re-prompts',
    ]);
    expect(issues({ max_call_duration_s: 5 })).toEqual(['media.max_call_duration_s: max_call_duration_s must be at least 10 seconds']);
    expect(issues({ max_call_duration_s: 21_601 })).toEqual([
      'media.max_call_duration_s: max_call_duration_s must be at most 21600 seconds',
    ]);
    expect(issues({ end_of_utterance_ms: { phone: 100 } })).toEqual([
      'media.end_of_utterance_ms.phone: end_of_utterance_ms must be at least 200 ms',
    ]);
    expect(issues({ end_of_utterance_ms: { phone: 6000 } })).toEqual([
      'media.end_of_utterance_ms.phone: end_of_utterance_ms must be at most 5000 ms',
    ]);
    expect(issues({ end_of_utterance_ms: { fone: 900 } })[0]).toMatch(/^media\.end_of_utterance_ms: .*fone/);
    expect(issues({ end_of_utterance_ms: 700 })).toEqual([
      'media.end_of_utterance_ms: end_of_utterance_ms must be an object of ms by kind (yes_no, digits, phone, number, choice, name, date, time, free)',
    ]);
    expect(issues({ barge_inn: false })[0]).toMatch(/^media: .*barge_inn/);
    expect(issues('loud')).toEqual(['media: media must be an object']);
  });

  it('takes barge_in: false only on opening lines and steps', () => {
    const r = parseAgentDefinition({
      ...parse(fs.readFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), 'utf8')),
      opening: [{ text: 'Hi.', barge_in: true }],
    });
    expect(r.ok ? [] : r.issues.map((i) => `${formatIssuePath(i.path)}: ${i.message}`)).toEqual([
      'opening[0].barge_in: barge_in on an opening line can only be false (leave it out to allow barge-in)',
    ]);
  });
});
