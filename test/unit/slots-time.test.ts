import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30');
const capture: Capture = { slot: 'visit_time', type: 'time' };

function time(text: string, mode: 'answer' | 'volunteer' = 'answer'): string | null {
  const r = extractSlot(text, { capture, language: 'en-IN', nowMs: NOW, timezone: 'Asia/Kolkata', mode });
  return r === null ? null : String(r.value);
}

describe('time: English', () => {
  it.each([
    ['10:30', '10:30'],
    ['10.30 am', '10:30'],
    ['5pm', '17:00'],
    ['5 p.m.', '17:00'],
    ['12 am', '00:00'],
    ['12:15 pm', '12:15'],
    ['half past ten', '10:30'],
    ['quarter to 5 pm', '16:45'],
    ['a quarter past 4 in the evening', '16:15'],
    ['twenty past six', '18:20'],
    ['10 minutes to 5', '16:50'],
    ['5 in the evening', '17:00'],
    ['one in the afternoon', '13:00'],
    ['eleven in the morning', '11:00'],
    ['afternoon 3:45', '15:45'],
    ['this afternoon 12:30', '12:30'],
    ['evening 5', '17:00'],
    ['noon', '12:00'],
    ['12 noon', '12:00'],
    ['midnight', '00:00'],
    ['seven thirty in the evening', '19:30'],
    ['7 30 pm', '19:30'],
    ["1 o'clock in the afternoon", '13:00'],
    ['9 at night', '21:00'],
    ['2 at night', '02:00'],
    ['18:45 please', '18:45'],
    ['09:30', '09:30'],
  ])('%s → %s', (text, expected) => {
    expect(time(text)).toBe(expected);
  });
});

describe('time: am/pm spelled as letters, as speech recognisers write it', () => {
  it.each([
    ['five p m', '17:00'],
    ['at 7 p m', '19:00'],
    ['five a m please', '05:00'],
    ['ten thirty p m', '22:30'],
  ])('%s → %s', (text, expected) => {
    expect(time(text)).toBe(expected);
  });
  it.each(['i am a m', 'plan a m', 'p m'])('%s: no time', (text) => {
    expect(time(text)).toBeNull();
  });
});

describe('time: Hindi and Hinglish', () => {
  it.each([
    ['subah das baje', '10:00'],
    ['shaam 5 baje', '17:00'],
    ['dopahar 2 baje', '14:00'],
    ['raat 9 baje', '21:00'],
    ['raat 12 baje', '00:00'],
    ['saade das baje', '10:30'],
    ['sava gyarah baje', '11:15'],
    ['paune paanch baje', '16:45'],
    ['dedh baje', '13:30'],
    ['dhai baje', '14:30'],
    ['shaam ko 6 baje', '18:00'],
    ['6 baje shaam', '18:00'],
    ['शाम ५ बजे', '17:00'],
    ['सुबह दस बजे', '10:00'],
    ['साढ़े दस बजे', '10:30'],
    ['kal subah 10 baje', '10:00'],
  ])('%s → %s', (text, expected) => {
    expect(time(text)).toBe(expected);
  });
});

describe('time: an hour without am/pm reads as daytime', () => {
  it.each([
    ['at 4', '16:00'],
    ['4', '16:00'],
    ['at 7', '19:00'],
    ['at 8', '08:00'],
    ['11:30', '11:30'],
    ['12:45', '12:45'],
    ['5 baje', '17:00'],
    ['around 7:45', '19:45'],
  ])('%s → %s', (text, expected) => {
    expect(time(text)).toBe(expected);
  });
});

describe('time: what is not a time', () => {
  it.each(['for 4 people', 'table for 2', 'the 7th', '3 star hotel', 'room 12 please', 'hello', '', '14/3', 'rs 500'])(
    '%j → null',
    (text) => {
      expect(time(text)).toBeNull();
    },
  );
  it('prefers the time over the count in the same sentence', () => {
    expect(time('Book it for two in the afternoon for 5 guests.')).toBe('14:00');
    expect(time('A table for 2 at morning 10:45 please')).toBe('10:45');
    expect(time('Could you book the 9th at 3 pm?')).toBe('15:00');
  });
});

describe('time: spoken minutes and denials', () => {
  it.each([
    ['ten fifteen', '10:15'],
    ['not 5, 6 pm', '18:00'],
    ['5 baje nahi, 6 baje', '18:00'],
  ])('%s → %s', (text, expected) => {
    expect(time(text)).toBe(expected);
  });
});

describe('time: volunteer mode needs a clear time', () => {
  it('accepts clock times and parts of the day', () => {
    expect(time('book 2 tickets for 5:30 pm', 'volunteer')).toBe('17:30');
    expect(time('kal shaam 7 baje', 'volunteer')).toBe('19:00');
  });
  it('takes a part of the day set apart by a comma', () => {
    expect(time('Tomorrow evening, around five.', 'volunteer')).toBe('17:00');
    expect(time('at five, in the evening', 'volunteer')).toBe('17:00');
    expect(time('tomorrow morning, at 9', 'volunteer')).toBe('09:00');
  });
  it('rejects bare hours', () => {
    expect(time('at 4', 'volunteer')).toBeNull();
    expect(time('4', 'volunteer')).toBeNull();
  });
});

describe('time: matched words', () => {
  it('returns the original words', () => {
    const r = extractSlot('OK, Quarter to 5 PM works', {
      capture,
      language: 'en-IN',
      nowMs: NOW,
      timezone: 'Asia/Kolkata',
      mode: 'answer',
    });
    expect(r).toEqual({ value: '16:45', matched: 'Quarter to 5 PM' });
  });
});
