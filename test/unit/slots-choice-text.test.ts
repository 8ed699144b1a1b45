import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const WARD: Capture = {
  slot: 'ward',
  type: 'choice',
  options: [
    { id: 'general_ward', synonyms: ['general'] },
    { id: 'private_room', synonyms: ['private', 'single room', 'apna kamra'] },
    { id: 'icu', synonyms: ['intensive care', 'आईसीयू'] },
  ],
};

function pick(text: string, mode: 'answer' | 'volunteer' = 'answer', capture: Capture = WARD): string | null {
  const r = extractSlot(text, { capture, language: 'en-IN', nowMs: 0, timezone: 'Asia/Kolkata', mode });
  return r === null ? null : String(r.value);
}

describe('choice', () => {
  it.each([
    ['general ward please', 'general_ward'],
    ['private', 'private_room'],
    ['I want a single room', 'private_room'],
    ['private rooms', 'private_room'],
    ['intensive care unit', 'icu'],
    ['ICU', 'icu'],
    ['आईसीयू', 'icu'],
    ['apna kamra chahiye', 'private_room'],
    ['the second one', 'private_room'],
    ['pehla wala', 'general_ward'],
    ['option 3', 'icu'],
    ['the last one', 'icu'],
  ])('%s → %s', (text, expected) => {
    expect(pick(text)).toBe(expected);
  });
  it('returns null when nothing or two options match equally', () => {
    expect(pick('hmm not sure')).toBeNull();
    const twins: Capture = {
      slot: 's',
      type: 'choice',
      options: [
        { id: 'a', synonyms: ['same'] },
        { id: 'b', synonyms: ['same'] },
      ],
    };
    expect(pick('same', 'answer', twins)).toBeNull();
  });
  it('does not count a denied option', () => {
    const delivery: Capture = {
      slot: 'd',
      type: 'choice',
      options: [
        { id: 'keep', synonyms: ['keep', 'no change'] },
        { id: 'cancel', synonyms: ['cancel', 'mat bhejo'] },
      ],
    };
    expect(pick("don't cancel, keep it", 'answer', delivery)).toBe('keep');
    expect(pick('no, cancel it', 'answer', delivery)).toBe('cancel');
    expect(pick('no change', 'answer', delivery)).toBe('keep');
    expect(pick('mat bhejo', 'answer', delivery)).toBe('cancel');
    expect(pick('cancel mat karo', 'answer', delivery)).toBeNull();
  });
  it('volunteers only by name, not by position', () => {
    expect(pick('private please', 'volunteer')).toBe('private_room');
    expect(pick('the second one', 'volunteer')).toBeNull();
  });
});

describe('text', () => {
  const capture: Capture = { slot: 'notes', type: 'text' };
  it('returns the trimmed utterance in answer mode only', () => {
    expect(extractSlot('  back pain since Monday  ', { capture, language: 'en-IN', nowMs: 0, timezone: 'UTC', mode: 'answer' })).toEqual({
      value: 'back pain since Monday',
      matched: 'back pain since Monday',
    });
    expect(extractSlot('   ', { capture, language: 'en-IN', nowMs: 0, timezone: 'UTC', mode: 'answer' })).toBeNull();
    expect(extractSlot('back pain', { capture, language: 'en-IN', nowMs: 0, timezone: 'UTC', mode: 'volunteer' })).toBeNull();
  });
});
