import { describe, expect, it } from 'vitest';
import { detectYesNo, extractSlot } from '../../src/engine/slots/index.js';

describe('detectYesNo: yes', () => {
  it.each([
    'yes',
    'Yeah',
    'yep',
    'correct',
    "that's right",
    'right',
    'sure',
    'okay',
    'sounds good',
    'that works for me',
    'Yes please',
    'perfect',
    'go ahead',
    'no problem',
    'that is all correct',
    'haan',
    'ha',
    'haan ji',
    'ji haan',
    'ji',
    'theek hai',
    'thik hai',
    'sahi hai',
    'bilkul',
    'chalega',
    'haan kar do',
    'हाँ',
    'हां',
    'जी',
    'जी हाँ',
    'ठीक है',
    'सही है',
    'बिल्कुल',
    'Yes please, no onions though',
    'actually yes',
    'please',
  ])('%j → true', (text) => {
    expect(detectYesNo(text)).toBe(true);
  });
});

describe('detectYesNo: no', () => {
  it.each([
    'no',
    'nope',
    'nah',
    'No thanks',
    'not now',
    'wrong',
    'incorrect',
    'never mind',
    'nahi',
    'nahin',
    'na',
    'galat',
    'mat karo',
    'नहीं',
    'ना',
    'गलत',
    "no, it's 98765 43210",
    'theek nahi hai',
    'ji nahi',
    'bilkul nahi',
    'nahi nahi, galat hai',
    "No, that's all. Thank you.",
    'I think that is all I need',
    'Nothing. I am good.',
    'Actually, make it 5 pm',
    'Can you change it to 3:45',
    'Make it for 6 guests.',
    "I'm sorry. I have a meeting that day.",
    'On second thought, make it 7:15',
  ])('%j → false', (text) => {
    expect(detectYesNo(text)).toBe(false);
  });
});

describe('detectYesNo: neither', () => {
  it.each(['hmm', '', 'pata nahi', "I'm not sure", 'maybe', 'what time is it?', 'kal aana na', 'sorry?', 'wait', 'good bye', 'thank you'])(
    '%j → null',
    (text) => {
      expect(detectYesNo(text)).toBeNull();
    },
  );
});

describe('yes_no slots', () => {
  const opts = (mode: 'answer' | 'volunteer') => ({
    capture: { slot: 'consent', type: 'yes_no' as const },
    language: 'hi-IN',
    nowMs: 0,
    timezone: 'Asia/Kolkata',
    mode,
  });
  it('answer mode returns the polarity and its words', () => {
    expect(extractSlot('Haan ji, bilkul', opts('answer'))).toEqual({ value: true, matched: 'Haan ji' });
    expect(extractSlot('No, thank you.', opts('answer'))).toEqual({ value: false, matched: 'No, thank you' });
  });
  it('never volunteers', () => {
    expect(extractSlot('yes', opts('volunteer'))).toBeNull();
  });
});
