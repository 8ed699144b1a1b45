/**
 * Endpointing and barge-in policy (src/media/endpointing.ts): the end-of-utterance silence per
 * step with defaults, overrides and bounds; the mapper from engine steps; the barge-in decision
 * on noise, backchannels (English, Hinglish, Devanagari), real speech and the switches; and the
 * silence machine's sequences on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { compileAgent, currentStep, initialState } from '../../src/engine/state.js';
import { DEFAULT_EOU_SILENCE_MS, endOfUtteranceSilenceMs, expectationForStep, resolveEouSilence } from '../../src/media/endpointing.js';
import { isBackchannel } from '../../src/media/backchannels.js';
import { decideBargeIn, DEFAULT_BARGE_IN, resolveBargeInConfig, type BargeInInput } from '../../src/media/barge-in.js';
import {
  DEFAULT_SILENCE,
  INITIAL_SILENCE_STATE,
  resolveSilenceConfig,
  SilenceTimer,
  silenceReduce,
  type SilenceAction,
} from '../../src/media/silence-timer.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { SpeechSegmenter, type SpeechEvent } from '../../src/media/vad.js';

describe('end-of-utterance silence', () => {
  it('has the documented defaults: short after yes/no, long for digits and phone numbers', () => {
    expect(endOfUtteranceSilenceMs('yes_no')).toBe(500);
    expect(endOfUtteranceSilenceMs('free')).toBe(700);
    expect(endOfUtteranceSilenceMs('name')).toBe(800);
    expect(endOfUtteranceSilenceMs('digits')).toBe(1200);
    expect(endOfUtteranceSilenceMs('phone')).toBe(1500);
    expect(endOfUtteranceSilenceMs('yes_no')).toBeLessThan(endOfUtteranceSilenceMs('free'));
    expect(endOfUtteranceSilenceMs('free')).toBeLessThan(endOfUtteranceSilenceMs('digits'));
    expect(endOfUtteranceSilenceMs('digits')).toBeLessThan(endOfUtteranceSilenceMs('phone'));
  });

  it('applies per-agent overrides and keeps the other defaults', () => {
    const table = resolveEouSilence({ phone: 2000, yes_no: 400 });
    expect(endOfUtteranceSilenceMs('phone', table)).toBe(2000);
    expect(endOfUtteranceSilenceMs('yes_no', table)).toBe(400);
    expect(endOfUtteranceSilenceMs('digits', table)).toBe(DEFAULT_EOU_SILENCE_MS.digits);
    expect(Object.isFrozen(table)).toBe(true);
    expect(resolveEouSilence(undefined)).toEqual(DEFAULT_EOU_SILENCE_MS);
  });

  it('rejects overrides out of bounds, fractional, of the wrong type or of an unknown kind, naming the field', () => {
    expect(() => resolveEouSilence({ phone: 100 })).toThrow(/phone: must be ≥ 200 ms/);
    expect(() => resolveEouSilence({ digits: 9000 })).toThrow(/digits: must be ≤ 5000 ms/);
    expect(() => resolveEouSilence({ name: 800.5 })).toThrow(/name: must be a whole number/);
    expect(() => resolveEouSilence({ free: '700' })).toThrow(RangeError);
    expect(() => resolveEouSilence({ yesno: 500 })).toThrow(/yesno/);
    expect(() => endOfUtteranceSilenceMs('sentence' as never)).toThrow(/unknown expectation kind "sentence"/);
  });
});

describe('end-of-utterance silence on the speech segmenter', () => {
  /** A phone number read in two groups: 20 ms frames of 900 ms speech, a 1000 ms pause, 900 ms speech, 2 s silence. */
  function segment(minSilenceMs: number): SpeechEvent[] {
    const seg = new SpeechSegmenter({ minSpeechMs: 100 });
    seg.setMinSilenceMs(minSilenceMs);
    const runs: [boolean, number][] = [
      [true, 900],
      [false, 1000],
      [true, 900],
      [false, 2000],
    ];
    const events: SpeechEvent[] = [];
    let t = 0;
    for (const [speech, ms] of runs) {
      for (let end = t + ms; t < end; t += 20) {
        const e = seg.push({ startMs: t, durationMs: 20, speech });
        if (e) events.push(e);
      }
    }
    return events;
  }

  it('keeps a phone number read in groups as one utterance, and cuts after a yes/no pause', () => {
    expect(segment(endOfUtteranceSilenceMs('phone')).map((e) => e.type)).toEqual(['speechStart', 'speechEnd']);
    expect(segment(endOfUtteranceSilenceMs('yes_no')).map((e) => e.type)).toEqual(['speechStart', 'speechEnd', 'speechStart', 'speechEnd']);
  });
});

describe('expectationForStep', () => {
  const parsed = parseAgentDefinition({
    id: 'ag_clinic',
    name: 'Clinic',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Hello.' }],
    closing: 'Bye.',
    steps: [
      { id: 'consent', ask: 'Is this a good time?', capture: { slot: 'ok', type: 'yes_no' } },
      { id: 'name', ask: 'Your name?', capture: { slot: 'name', type: 'person_name' }, confirm: 'readback' },
      { id: 'day', ask: 'Which day?', capture: { slot: 'day', type: 'date' } },
      { id: 'at', ask: 'What time?', capture: { slot: 'at', type: 'time' } },
      {
        id: 'mobile',
        ask: 'Your mobile number?',
        capture: { slot: 'mobile', type: 'digits', min_length: 10, max_length: 10 },
        confirm: 'digits',
      },
      { id: 'otp', ask: 'The OTP?', capture: { slot: 'otp', type: 'digits', min_length: 4, max_length: 6 } },
      { id: 'contact', ask: 'A phone to reach you?', capture: { slot: 'phone', type: 'digits' } },
      { id: 'amount', ask: 'How much?', capture: { slot: 'amount', type: 'amount' } },
      {
        id: 'plan',
        ask: 'Basic or premium?',
        capture: { slot: 'plan', type: 'choice', options: [{ id: 'basic' }, { id: 'premium' }] },
      },
      { id: 'notes', ask: 'Anything else?', capture: { slot: 'notes', type: 'text' } },
      { id: 'info', ask: 'We open at nine.' },
    ],
  });
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.issues));
  const agent = compileAgent(parsed.agent);
  const step = (id: string) => agent.def.steps.find((s) => s.id === id);

  it('maps every engine slot type to what the agent waits for', () => {
    expect(expectationForStep(currentStep(agent, initialState(agent)))).toBe('yes_no');
    expect(expectationForStep(step('name'))).toBe('name');
    expect(expectationForStep(step('day'))).toBe('date');
    expect(expectationForStep(step('at'))).toBe('time');
    expect(expectationForStep(step('mobile'))).toBe('phone');
    expect(expectationForStep(step('otp'))).toBe('digits');
    expect(expectationForStep(step('contact'))).toBe('phone');
    expect(expectationForStep(step('amount'))).toBe('number');
    expect(expectationForStep(step('plan'))).toBe('choice');
    expect(expectationForStep(step('notes'))).toBe('free');
    expect(expectationForStep(step('info'))).toBe('free');
    expect(expectationForStep(undefined)).toBe('free');
  });

  it('waits for a yes/no while a readback is pending, even on a phone step', () => {
    expect(expectationForStep(step('mobile'), true)).toBe('yes_no');
    expect(expectationForStep(step('name'), true)).toBe('yes_no');
    expect(endOfUtteranceSilenceMs(expectationForStep(step('mobile'), true))).toBe(500);
    expect(endOfUtteranceSilenceMs(expectationForStep(step('mobile'), false))).toBe(1500);
  });
});

describe('barge-in decision', () => {
  const during = (over: Partial<BargeInInput>): BargeInInput => ({ playing: true, speaking: true, speechMs: 300, ...over });

  it('waits on short noise and interrupts real speech at the 250 ms threshold', () => {
    expect(decideBargeIn(during({ speechMs: 120 }))).toEqual({ action: 'wait', reason: 'too_short' });
    expect(decideBargeIn(during({ speechMs: 249 }))).toEqual({ action: 'wait', reason: 'too_short' });
    expect(decideBargeIn(during({ speechMs: 250 }))).toEqual({ action: 'interrupt', reason: 'speech' });
  });

  it('does nothing when nothing plays or nobody speaks', () => {
    expect(decideBargeIn(during({ playing: false, speechMs: 2000 }))).toEqual({ action: 'ignore', reason: 'not_playing' });
    expect(decideBargeIn(during({ speaking: false, speechMs: 2000 }))).toEqual({ action: 'ignore', reason: 'not_speaking' });
  });

  it('ignores English, Hinglish and Devanagari backchannels', () => {
    for (const text of [
      'okay',
      'Ok.',
      'uh-huh',
      'Hmmm',
      'mm',
      'right',
      'haan',
      'Haan ji',
      'ha',
      'achha',
      'accha',
      'ji',
      'theek hai',
      'हाँ जी',
      'अच्छा',
      'ठीक है',
      'okay okay',
      'haan haan achha',
      'Okkk',
      'जी',
    ]) {
      expect(isBackchannel(text), text).toBe(true);
      expect(decideBargeIn(during({ speechMs: 400, partialText: text })), text).toEqual({
        action: 'ignore',
        reason: 'backchannel',
      });
    }
  });

  it('treats "yes" as a backchannel while the agent explains, but as an answer to a question', () => {
    expect(decideBargeIn(during({ partialText: 'yes' }))).toEqual({ action: 'ignore', reason: 'backchannel' });
    expect(decideBargeIn(during({ partialText: 'yes', clip: { is_confirm_prompt: true } }))).toEqual({
      action: 'interrupt',
      reason: 'answer',
    });
    expect(decideBargeIn(during({ partialText: 'haan ji', clip: { is_readback: true } }))).toEqual({
      action: 'interrupt',
      reason: 'answer',
    });
    // A filler is no answer even to a question.
    expect(decideBargeIn(during({ partialText: 'hmm', clip: { is_confirm_prompt: true } }))).toEqual({
      action: 'ignore',
      reason: 'backchannel',
    });
  });

  it('interrupts when the caller says more than a backchannel, or keeps on talking', () => {
    expect(isBackchannel('haan ji but make it Tuesday')).toBe(false);
    expect(isBackchannel('')).toBe(false);
    expect(decideBargeIn(during({ partialText: 'haan ji, but make it Tuesday' }))).toEqual({
      action: 'interrupt',
      reason: 'speech_beyond_backchannel',
    });
    expect(decideBargeIn(during({ partialText: 'okay wait' }))).toEqual({
      action: 'interrupt',
      reason: 'speech_beyond_backchannel',
    });
    expect(decideBargeIn(during({ partialText: 'nahi nahi' }))).toEqual({
      action: 'interrupt',
      reason: 'speech_beyond_backchannel',
    });
    expect(decideBargeIn(during({ partialText: 'haan', speechMs: 1499 }))).toEqual({ action: 'ignore', reason: 'backchannel' });
    expect(decideBargeIn(during({ partialText: 'haan', speechMs: 1500 }))).toEqual({
      action: 'interrupt',
      reason: 'long_backchannel',
    });
  });

  it('waits briefly for a partial when a streaming recogniser runs, then interrupts (250 + 50 ms)', () => {
    expect(decideBargeIn(during({ speechMs: 260, partialsExpected: true }))).toEqual({
      action: 'wait',
      reason: 'awaiting_partial',
    });
    expect(decideBargeIn(during({ speechMs: 300, partialsExpected: true }))).toEqual({ action: 'interrupt', reason: 'speech' });
    expect(decideBargeIn(during({ speechMs: 260, partialsExpected: true, partialText: 'acha' }))).toEqual({
      action: 'ignore',
      reason: 'backchannel',
    });
  });

  it('never interrupts when the agent switch is off or the clip says barge_in: false', () => {
    const off = resolveBargeInConfig({ enabled: false });
    expect(decideBargeIn(during({ speechMs: 5000, partialText: 'stop stop I want a human' }), off)).toEqual({
      action: 'ignore',
      reason: 'agent_disabled',
    });
    expect(decideBargeIn(during({ speechMs: 5000, clip: { barge_in: false } }))).toEqual({
      action: 'ignore',
      reason: 'clip_disabled',
    });
    expect(decideBargeIn(during({ speechMs: 5000, clip: { barge_in: true } }))).toEqual({
      action: 'interrupt',
      reason: 'speech',
    });
  });

  it('takes overrides within bounds and rejects the rest', () => {
    const cfg = resolveBargeInConfig({ minSpeechMs: 400 });
    expect(cfg).toEqual({ ...DEFAULT_BARGE_IN, minSpeechMs: 400 });
    expect(decideBargeIn(during({ speechMs: 300 }), cfg)).toEqual({ action: 'wait', reason: 'too_short' });
    expect(decideBargeIn(during({ speechMs: 400 }), cfg)).toEqual({ action: 'interrupt', reason: 'speech' });
    expect(() => resolveBargeInConfig({ minSpeechMs: 50 })).toThrow(/minSpeechMs/);
    expect(() => resolveBargeInConfig({ backchannelMaxMs: 20_000 })).toThrow(/backchannelMaxMs/);
    expect(() => resolveBargeInConfig({ enabled: 'no' })).toThrow(/enabled/);
    expect(() => resolveBargeInConfig({ minSpeech: 300 })).toThrow(/minSpeech/);
    expect(() => resolveBargeInConfig({ minSpeechMs: 1000, backchannelMaxMs: 500 })).toThrow(
      /backchannelMaxMs \(500 ms\) must be ≥ minSpeechMs/,
    );
    expect(() => decideBargeIn(during({ speechMs: -1 }))).toThrow(RangeError);
    expect(() => decideBargeIn(during({ speechMs: Number.NaN }))).toThrow(RangeError);
  });
});

describe('silence policy', () => {
  it('has defaults and validated overrides', () => {
    expect(resolveSilenceConfig()).toEqual(DEFAULT_SILENCE);
    expect(DEFAULT_SILENCE).toEqual({ noSpeechMs: 6000, maxReprompts: 2 });
    expect(resolveSilenceConfig({ noSpeechMs: 4000 })).toEqual({ noSpeechMs: 4000, maxReprompts: 2 });
    expect(() => resolveSilenceConfig({ noSpeechMs: 500 })).toThrow(/noSpeechMs/);
    expect(() => resolveSilenceConfig({ maxReprompts: 6 })).toThrow(/maxReprompts/);
    expect(() => resolveSilenceConfig({ maxReprompts: 1.5 })).toThrow(/maxReprompts/);
    expect(() => resolveSilenceConfig({ timeout: 5 })).toThrow(/timeout/);
  });

  it('re-prompts after N s of silence, M times, then falls back and hangs up (fake clock)', () => {
    const clock = new FakeClock(1000);
    const timer = new SilenceTimer(clock, { noSpeechMs: 5000, maxReprompts: 2 });
    const actions: (SilenceAction | null)[] = [];
    timer.promptStarted();
    clock.advance(3000);
    expect(timer.tick()).toBeNull(); // the opening is still playing: no timer
    timer.promptFinished();
    expect(timer.deadlineMs).toBe(9000);
    clock.advance(4999);
    expect(timer.tick()).toBeNull();
    clock.advance(1);
    actions.push(timer.tick());
    expect(actions[0]).toEqual({ type: 'reprompt', attempt: 1, silentMs: 5000 });
    expect(timer.deadlineMs).toBeNull(); // idle while the re-prompt plays
    clock.advance(10_000);
    expect(timer.tick()).toBeNull();
    timer.promptStarted();
    timer.promptFinished();
    clock.advance(5000);
    expect(timer.tick()).toEqual({ type: 'reprompt', attempt: 2, silentMs: 5000 });
    timer.promptFinished();
    clock.advance(6000);
    expect(timer.tick()).toEqual({ type: 'fallback_hangup', reprompts: 2, silentMs: 6000 });
    expect(timer.state.phase).toBe('ended');
    timer.promptFinished();
    clock.advance(60_000);
    expect(timer.tick()).toBeNull();
  });

  it('starts the count over when the caller speaks', () => {
    const clock = new FakeClock(0);
    const timer = new SilenceTimer(clock, { noSpeechMs: 2000, maxReprompts: 1 });
    timer.promptFinished();
    clock.advance(2000);
    expect(timer.tick()).toEqual({ type: 'reprompt', attempt: 1, silentMs: 2000 });
    timer.promptFinished();
    clock.advance(1500);
    timer.speechStart();
    expect(timer.state).toEqual({ phase: 'idle', sinceMs: 3500, reprompts: 0 });
    clock.advance(5000);
    expect(timer.tick()).toBeNull(); // a turn is running: no silence counted
    timer.promptFinished(); // the reply played
    clock.advance(2000);
    expect(timer.tick()).toEqual({ type: 'reprompt', attempt: 1, silentMs: 2000 });
    timer.promptFinished();
    clock.advance(2500);
    expect(timer.tick()).toEqual({ type: 'fallback_hangup', reprompts: 1, silentMs: 2500 });
  });

  it('stops counting while the agent speaks again (an FAQ answer, a filler)', () => {
    const clock = new FakeClock(0);
    const timer = new SilenceTimer(clock, { noSpeechMs: 3000 });
    timer.promptFinished();
    clock.advance(2000);
    timer.promptStarted();
    expect(timer.deadlineMs).toBeNull();
    clock.advance(5000);
    expect(timer.tick()).toBeNull();
    timer.promptFinished();
    expect(timer.deadlineMs).toBe(10_000);
    clock.advance(3000);
    expect(timer.tick()).toEqual({ type: 'reprompt', attempt: 1, silentMs: 3000 });
  });

  it('with no re-prompts allowed, the first silence ends the call; the reducer is pure', () => {
    const start = { ...INITIAL_SILENCE_STATE };
    const a = silenceReduce(start, { type: 'promptFinished', atMs: 100 }, { noSpeechMs: 1000, maxReprompts: 0 });
    expect(start).toEqual(INITIAL_SILENCE_STATE);
    expect(a).toEqual({ state: { phase: 'waiting', sinceMs: 100, reprompts: 0 }, action: null });
    const b = silenceReduce(a.state, { type: 'tick', atMs: 1100 }, { noSpeechMs: 1000, maxReprompts: 0 });
    expect(b.action).toEqual({ type: 'fallback_hangup', reprompts: 0, silentMs: 1000 });
    expect(() => silenceReduce(a.state, { type: 'tick', atMs: Number.NaN })).toThrow(RangeError);
  });
});
