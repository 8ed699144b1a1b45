/**
 * The checks of a model step that need no session (src/app/llm-step.ts; docs/llm.md "Where the
 * model acts"): another language's script, the prompt estimate of the budget check, and a
 * completion checked against what was asked.
 */
import { describe, expect, it } from 'vitest';
import { checkCompletion, estimatePromptTokens, MAX_REPLY_CHARS, otherScript } from '../../src/app/llm-step.js';
import { parseAgentDefinition, type AgentDefinition } from '../../src/domain/agent.js';
import type { Completion } from '../../src/app/language-model.js';

const def = (language: string): AgentDefinition => {
  const r = parseAgentDefinition({ id: 'ag_x', name: 'x', direction: 'inbound', language, opening: [{ text: 'Hi.' }], closing: 'Bye.' });
  if (!r.ok) throw new Error('bad agent');
  return r.agent;
};
const done = (text: string, finishReason = 'stop'): Completion => ({
  text,
  finishReason,
  usage: { promptTokens: 1, completionTokens: 1, cachedTokens: 0 },
  latencyMs: 1,
  firstTokenMs: 1,
});
const capture = { slot: 'd', type: 'date' } as const;

describe('otherScript', () => {
  it('allows Latin always and the language own script; refuses another', () => {
    expect(otherScript('Yes, we take UPI.', 'en-IN')).toBe(false);
    expect(otherScript('हाँ, हम UPI लेते हैं।', 'hi-IN')).toBe(false);
    expect(otherScript('Haan, hum UPI lete hain.', 'hi-IN')).toBe(false);
    expect(otherScript('हाँ, हम यूपीआई लेते हैं।', 'en-IN')).toBe(true);
    expect(otherScript('ஆம், நாங்கள் UPI ஏற்கிறோம்', 'hi-IN')).toBe(true);
    expect(otherScript('Dr. Rao — 9 am', 'en-IN')).toBe(false);
    expect(otherScript('12345 !!', 'en-IN')).toBe(false);
  });
});

describe('estimatePromptTokens', () => {
  it('is a character count over 3, rounded up, plus 4 per message', () => {
    expect(
      estimatePromptTokens([
        { role: 'system', content: 'x'.repeat(10) },
        { role: 'user', content: 'y' },
      ]),
    ).toBe(4 + 8);
  });
});

describe('checkCompletion', () => {
  const en = def('en-IN');
  it('a reply: trimmed, or refused as empty, too long, cut or another script', () => {
    expect(checkCompletion({ kind: 'reply', step: 's', question: 'q' }, done('  Yes,\n we do. '), en)).toEqual({
      kind: 'reply',
      text: 'Yes, we do.',
    });
    expect(checkCompletion({ kind: 'reply', step: 's', question: 'q' }, done(' '), en)).toEqual({ kind: 'none', detail: 'empty' });
    expect(checkCompletion({ kind: 'reply', step: 's', question: 'q' }, done('a'.repeat(MAX_REPLY_CHARS + 1)), en)).toMatchObject({
      detail: 'too_long',
    });
    expect(checkCompletion({ kind: 'reply', step: 's', question: 'q' }, done('Yes we', 'length'), en)).toMatchObject({
      detail: 'too_long',
    });
  });
  it('a slot: JSON object with value, else malformed or wrong_type', () => {
    const ask = { kind: 'slot', step: 's', question: 'q', capture } as const;
    expect(checkCompletion(ask, done('{"value":"2026-11-30"}'), en)).toEqual({ kind: 'slot', value: '2026-11-30' });
    expect(checkCompletion(ask, done('{"value":null}'), en)).toEqual({ kind: 'slot', value: null });
    for (const text of ['{"value":"2026-1', '[1]', 'null', '{"other":1}', 'sure! 2026-11-30'])
      expect(checkCompletion(ask, done(text), en)).toEqual({ kind: 'none', detail: 'malformed' });
    expect(checkCompletion(ask, done('{"value":"x"}', 'length'), en)).toEqual({ kind: 'none', detail: 'malformed' });
    expect(checkCompletion(ask, done('{"value":{"y":1}}'), en)).toEqual({ kind: 'none', detail: 'wrong_type' });
  });
  it('an intent: one of the list, else malformed', () => {
    const ask = { kind: 'intent', step: 's', question: 'q' } as const;
    expect(checkCompletion(ask, done('{"intent":"human"}'), en)).toEqual({ kind: 'intent', intent: 'human' });
    expect(checkCompletion(ask, done('{"intent":"none"}'), en)).toEqual({ kind: 'intent', intent: 'none' });
    expect(checkCompletion(ask, done('{"intent":"transfer_money"}'), en)).toEqual({ kind: 'none', detail: 'malformed' });
  });
});
