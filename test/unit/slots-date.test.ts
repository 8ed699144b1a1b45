import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

/** Friday 1 March 2019, noon in India. */
const FRI = Date.parse('2019-03-01T12:00:00+05:30');
const capture: Capture = { slot: 'visit_date', type: 'date' };

function date(text: string, opts: { nowMs?: number; timezone?: string; mode?: 'answer' | 'volunteer' } = {}): string | null {
  const r = extractSlot(text, {
    capture,
    language: 'hi-IN',
    nowMs: opts.nowMs ?? FRI,
    timezone: opts.timezone ?? 'Asia/Kolkata',
    mode: opts.mode ?? 'answer',
  });
  return r === null ? null : String(r.value);
}

describe('date: relative days', () => {
  it.each([
    ['today', '2019-03-01'],
    ['later today', '2019-03-01'],
    ['tonight', '2019-03-01'],
    ['aaj', '2019-03-01'],
    ['आज', '2019-03-01'],
    ['tomorrow', '2019-03-02'],
    ['kal', '2019-03-02'],
    ['कल', '2019-03-02'],
    ['day after tomorrow', '2019-03-03'],
    ['parso', '2019-03-03'],
    ['परसों', '2019-03-03'],
    ['in 3 days', '2019-03-04'],
    ['teen din baad', '2019-03-04'],
    ['in a week', '2019-03-08'],
  ])('%s → %s', (text, expected) => {
    expect(date(text)).toBe(expected);
  });
});

describe('date: weekdays (today is a Friday)', () => {
  it.each([
    ['next Friday', '2019-03-08'],
    ['this Friday', '2019-03-08'],
    ['on Friday', '2019-03-08'],
    ['next Monday', '2019-03-04'],
    ['this Sunday', '2019-03-03'],
    ['this saturday', '2019-03-02'],
    ['Wednesday next week', '2019-03-06'],
    ['Friday next week', '2019-03-08'],
    ['next week on Tuesday', '2019-03-05'],
    ['Sunday this week', '2019-03-03'],
    ['agle somvar', '2019-03-04'],
    ['is shanivar', '2019-03-02'],
    ['agle hafte budhvar', '2019-03-06'],
    ['अगले शुक्रवार', '2019-03-08'],
    ['monday after next', '2019-03-11'],
  ])('%s → %s', (text, expected) => {
    expect(date(text)).toBe(expected);
  });
});

describe('date: days of a month', () => {
  it.each([
    ['the 14th', '2019-03-14'],
    ['on the 2nd', '2019-03-02'],
    ['the 1st', '2019-03-01'],
    ['March 3rd', '2019-03-03'],
    ['3rd of March', '2019-03-03'],
    ['14 april', '2019-04-14'],
    ['april 14', '2019-04-14'],
    ['1st of March 2019', '2019-03-01'],
    ['3rd of this month', '2019-03-03'],
    ['12th of next month', '2019-04-12'],
    ['15 tarikh', '2019-03-15'],
    ['pandrah tarikh', '2019-03-15'],
    ['agle mahine ki 5 tarikh', '2019-04-05'],
    ['15 अप्रैल', '2019-04-15'],
    ['the twenty-first', '2019-03-21'],
    ['twenty third of march', '2019-03-23'],
    ['14/3', '2019-03-14'],
    ['3/14', '2019-03-14'],
    ['14/03/2019', '2019-03-14'],
    ['2019-03-14', '2019-03-14'],
  ])('%s → %s', (text, expected) => {
    expect(date(text)).toBe(expected);
  });
  it('rolls a past day or month into the future', () => {
    const mid = Date.parse('2019-03-20T10:00:00+05:30');
    expect(date('the 14th', { nowMs: mid })).toBe('2019-04-14');
    expect(date('February 2nd', { nowMs: mid })).toBe('2020-02-02');
    expect(date('the 31st', { nowMs: Date.parse('2019-04-05T10:00:00+05:30') })).toBe('2019-05-31');
  });
  it('crosses the year end', () => {
    const dec = Date.parse('2019-12-30T10:00:00+05:30');
    expect(date('day after tomorrow', { nowMs: dec })).toBe('2020-01-01');
    expect(date('the 2nd', { nowMs: dec })).toBe('2020-01-02');
    expect(date('next friday', { nowMs: dec })).toBe('2020-01-03');
  });
  it('rejects days that do not exist', () => {
    expect(date('30th of February')).toBeNull();
    expect(date('31/4/2019')).toBeNull();
  });
});

describe('date: the calendar date is local to the agent timezone', () => {
  const lateUtc = Date.parse('2019-03-01T20:00:00Z'); // 1:30 on 2 March in India
  it('uses the timezone', () => {
    expect(date('today', { nowMs: lateUtc })).toBe('2019-03-02');
    expect(date('today', { nowMs: lateUtc, timezone: 'America/Los_Angeles' })).toBe('2019-03-01');
  });
  it('falls back to UTC for an unknown zone', () => {
    expect(date('today', { nowMs: lateUtc, timezone: 'Mars/Olympus_Mons' })).toBe('2019-03-01');
  });
});

describe('date: what is not a date', () => {
  it.each(['2nd floor', 'first class', 'on second thought', 'may I book', 'at 5 pm', '4 people', 'hello', ''])('%j → null', (text) => {
    expect(date(text)).toBeNull();
  });
});

describe('date: answer vs volunteer', () => {
  it('accepts a bare day number only as an answer', () => {
    expect(date('14')).toBe('2019-03-14');
    expect(date('14th')).toBe('2019-03-14');
    expect(date('14', { mode: 'volunteer' })).toBeNull();
    expect(date('14th', { mode: 'volunteer' })).toBeNull();
  });
  it('volunteers clear expressions', () => {
    expect(date('4 people on the 14th', { mode: 'volunteer' })).toBe('2019-03-14');
    expect(date('tomorrow at 5', { mode: 'volunteer' })).toBe('2019-03-02');
  });
  it('takes the longest of overlapping expressions', () => {
    expect(date('on the 1st of next month')).toBe('2019-04-01');
    expect(date('next month on the 3rd')).toBe('2019-04-03');
  });
  it('skips denied dates', () => {
    expect(date('kal nahi, parso')).toBe('2019-03-03');
    expect(date('not tomorrow, friday')).toBe('2019-03-08');
  });
  it('takes the first date said', () => {
    expect(date('from the 10th of March till the 15th of this month')).toBe('2019-03-10');
  });
});
