/**
 * Closing without "bye" (src/engine/closing.ts; docs/agents.md "Control intents"): the caller
 * ends the conversation at "anything else?" or mid-flow, and the goodbye turn keeps the answer.
 */
import { describe, expect, it } from 'vitest';
import { parseAgentDefinition } from '../../src/domain/agent.js';
import { asksForMore, detectClosing } from '../../src/engine/closing.js';
import { detectControlIntent, normalizeUtterance } from '../../src/engine/intents.js';
import { compileAgent, initialState } from '../../src/engine/state.js';
import { buildSummary } from '../../src/engine/summary.js';
import { runTurn } from '../../src/engine/turn.js';

const REF = Date.parse('2026-11-21T10:00:00+05:30');
const intent = (text: string, atMore = false) => detectControlIntent(normalizeUtterance(text), atMore)?.intent ?? null;

describe('closing mid-flow', () => {
  it.each([
    'nothing else, thank you',
    "I'm good, thanks",
    'that will be all',
    'bye',
    "no, that's all, thank you",
    "I'm all set",
    'That’s all I need, thanks',
    'thats it for now',
    "Yes that's fine, thanks. That will be all",
    'No, thank you very much for your help, that is all I need. Bye',
    'nope, thanks a lot',
    'No thanks, you have been very helpful',
    'thanks for your help',
    'Nothing. I appreciate it very much.',
    "we're done for today",
    "I don't need anything else",
    'have a nice day',
    'bas itna hi, dhanyavaad',
    'aur kuch nahi',
  ])('%s → goodbye', (text) => {
    expect(intent(text)).toBe('goodbye');
  });

  it.each([
    'no thank you',
    'not right now, thanks',
    'No, I am fine.',
    'thank you',
    'thank you very much',
    'yes that is it',
    "that's all correct",
    "that's all right",
    "I'm good with Tuesday",
    'is that all I need to bring',
    'I need nothing else but the receipt by email',
    'no, make it Monday',
    'yes please go ahead',
    "that's all, my number is 98765 43210",
    'thanks for the help, what is the fee for a second visit and can I pay by UPI or card at the desk',
  ])('%s → not a close', (text) => {
    expect(intent(text)).toBeNull();
  });
});

describe('closing at a question offering more', () => {
  it.each(['Is there anything else I can help you with?', 'Anything more?', 'Can I help with something else?', 'Aur kuch?', 'कुछ और?'])(
    '%s offers more',
    (ask) => {
      expect(asksForMore(ask)).toBe(true);
    },
  );
  it.each(['Which day would you like?', 'Shall I book it?', 'What else should I note for the doctor'])('%s does not', (ask) => {
    expect(asksForMore(ask)).toBe(false);
  });

  it.each(['no thank you', 'nope', 'not really', "no, that's fine", 'great, thank you', 'okay thanks', 'nahi'])(
    '%s → goodbye there',
    (text) => {
      expect(intent(text, true)).toBe('goodbye');
      expect(intent(text, false)).not.toBe('goodbye');
    },
  );

  it.each(['yes please', 'no, I also need a cab to the airport', 'yes, can you check my balance', 'no wait, change the date first'])(
    '%s → not a close there',
    (text) => {
      expect(intent(text, true)).not.toBe('goodbye');
    },
  );
});

describe('control phrases', () => {
  it('a negated control phrase is no intent', () => {
    expect(intent('yes, no need to wait')).toBeNull();
    expect(intent("please don't hang up")).toBeNull();
    expect(intent('no, wait')).toBe('wait');
  });
  it('is bounded: digits, long utterances and questions are content', () => {
    expect(detectClosing(normalizeUtterance('that is all for 2 people'))).toBeNull();
    expect(detectClosing(normalizeUtterance('what else do I need, is that all'))).toBeNull();
    expect(detectClosing(` ${'that is all '.repeat(6)}`)).toBeNull();
  });
});

function twoSteps(ask: string) {
  const r = parseAgentDefinition({
    id: 'ag_close',
    name: 'Close',
    direction: 'inbound',
    language: 'en-IN',
    opening: [{ text: 'Hi.' }],
    steps: [
      { id: 'first', ask, capture: { slot: 'first', type: 'yes_no' } },
      { id: 'day', ask: 'Which day?', capture: { slot: 'day', type: 'date' } },
    ],
    closing: 'Bye.',
  });
  if (!r.ok) throw new Error(JSON.stringify(r.issues));
  return compileAgent(r.agent);
}

describe('the goodbye turn', () => {
  it('closes mid-flow and keeps the answer ("no, that\'s all" is a no and a close)', () => {
    const a = twoSteps('Shall I send the receipt by SMS?');
    const out = runTurn(a, initialState(a), { text: "No, that's all, thank you", nowMs: REF, refMs: REF, vars: {} });
    expect(out.layer).toBe('control:goodbye');
    expect(out.state.closing_at_ms).toBe(REF);
    expect(buildSummary(a, out.state).extracted).toEqual({ first: false });
  });

  it('a bare "no thank you" mid-flow answers no and the workflow goes on', () => {
    const a = twoSteps('Shall I send the receipt by SMS?');
    const out = runTurn(a, initialState(a), { text: 'No thank you', nowMs: REF, refMs: REF, vars: {} });
    expect(out.layer).toBe('capture');
    expect(out.clips.at(-1)!.text).toBe('Which day?');
    expect(out.state.closing_at_ms).toBeNull();
  });

  it('at "anything else?" the same words close, keeping the no', () => {
    const a = twoSteps('Is there anything else I can help you with?');
    const out = runTurn(a, initialState(a), { text: 'No thank you', nowMs: REF, refMs: REF, vars: {} });
    expect(out.layer).toBe('control:goodbye');
    expect(buildSummary(a, out.state).extracted).toEqual({ first: false });
  });

  it('"I\'m good, thanks" at a yes/no step is kept as no', () => {
    const a = twoSteps('Would you like a reminder call?');
    const out = runTurn(a, initialState(a), { text: "I'm good, thanks", nowMs: REF, refMs: REF, vars: {} });
    expect(out.layer).toBe('control:goodbye');
    expect(buildSummary(a, out.state).extracted).toEqual({ first: false });
  });
});
