import { describe, expect, it } from 'vitest';
import { SLOT_TYPES, type Capture, type SlotType } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30');

function captureFor(type: SlotType): Capture {
  if (type === 'choice')
    return {
      slot: 's',
      type,
      options: [
        { id: 'a', synonyms: ['apple'] },
        { id: 'b', synonyms: ['banana'] },
      ],
    };
  return { slot: 's', type };
}

const HOSTILE = [
  '',
  ' ',
  '\n\t',
  '????',
  '-',
  '...',
  '₹',
  '$$$',
  '0',
  '00:00',
  '99:99',
  '31/31',
  '2019-13-45',
  'a'.repeat(5000),
  '9'.repeat(400),
  'one '.repeat(300),
  'double double double',
  'saadhe',
  'paune',
  'the',
  'of of of',
  '\u0000\u0001',
  '🙂 haan 🙂',
  'नमस्ते',
  'o"clock',
  'a.m.',
  'p.m',
  '1,',
  ',1',
  '1.',
  '.5',
  '1..2',
  '٣',
  'Ⅻ',
  'quarter to',
  'half past',
  'next',
  'agle',
  'tarikh',
  'lakh',
  'crore crore',
];

describe('extractSlot never throws and returns well-formed values', () => {
  for (const type of SLOT_TYPES) {
    for (const mode of ['answer', 'volunteer'] as const) {
      it(`${type} (${mode})`, () => {
        for (const text of HOSTILE) {
          const r = extractSlot(text, {
            capture: captureFor(type),
            language: 'en-IN',
            nowMs: NOW,
            timezone: 'Asia/Kolkata',
            mode,
          });
          if (r === null) continue;
          expect(typeof r.matched).toBe('string');
          if (type === 'date') expect(r.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
          if (type === 'time') expect(r.value).toMatch(/^([01]\d|2[0-3]):[0-5]\d$/);
          if (type === 'digits') expect(r.value).toMatch(/^\d+$/);
          if (type === 'number' || type === 'amount') expect(Number.isFinite(r.value)).toBe(true);
        }
      });
    }
  }
});

describe('matched is taken from the utterance', () => {
  it.each([
    ['time', 'Please book it for Quarter Past 5 in the Evening, thanks', 'Quarter Past 5 in the Evening'],
    ['date', 'Could we do Next Friday?', 'Next Friday'],
    ['amount', 'Send ₹1,25,000 today', '₹1,25,000'],
    ['number', 'We are Four People', 'Four People'],
  ] as const)('%s', (type, text, matched) => {
    const r = extractSlot(text, {
      capture: { slot: 's', type },
      language: 'en-IN',
      nowMs: NOW,
      timezone: 'Asia/Kolkata',
      mode: 'answer',
    });
    expect(r?.matched).toBe(matched);
  });
});

describe('the language of the agent does not narrow what is heard', () => {
  it('hears Hinglish on an English agent and English on a Hindi one', () => {
    const base = { nowMs: NOW, timezone: 'Asia/Kolkata', mode: 'answer' as const };
    expect(extractSlot('kal', { ...base, capture: { slot: 'd', type: 'date' }, language: 'en-IN' })?.value).toBe('2019-03-02');
    expect(extractSlot('tomorrow', { ...base, capture: { slot: 'd', type: 'date' }, language: 'hi-IN' })?.value).toBe('2019-03-02');
  });
});
