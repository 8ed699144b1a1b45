import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30');

function count(text: string, mode: 'answer' | 'volunteer' = 'answer', extra: Partial<Capture> = {}): number | null {
  const r = extractSlot(text, {
    capture: { slot: 'party_size', type: 'number', ...extra },
    language: 'en-IN',
    nowMs: NOW,
    timezone: 'Asia/Kolkata',
    mode,
  });
  return r === null ? null : Number(r.value);
}

describe('number (counts)', () => {
  it.each([
    ['4 people', 4],
    ['for two', 2],
    ['a table for 1', 1],
    ['three rooms', 3],
    ['4 bed rooms', 4],
    ['3 economy class seats', 3],
    ['the four of us', 4],
    ['there are three of us', 3],
    ['a couple', 2],
    ['just me', 1],
    ['both of us', 2],
    ['4 please', 4],
    ['do log', 2],
    ['hum teen log hain', 3],
    ['char logon ke liye', 4],
    ['paanch', 5],
    ['do', 2],
    ['sirf ek', 1],
    ['दो लोग', 2],
    ['तीन टिकट', 3],
    ['hum dono', 2],
    ['main akela hoon', 1],
    ['0 bags', 0],
    ['a dozen', 12],
  ])('%s → %d', (text, expected) => {
    expect(count(text)).toBe(expected);
  });
  it('skips numbers that are times, dates, money, ratings or trip types', () => {
    expect(count('Book it for two in the afternoon for 5 guests.')).toBe(5);
    expect(count('a 3 star hotel, I need 2 rooms')).toBe(2);
    expect(count('five star 2 rooms')).toBe(2);
    expect(count('a one way flight on the 8th, three economy tickets')).toBe(3);
    expect(count('the $153 flight for 2 people')).toBe(2);
    expect(count('at 5 pm on the 3rd')).toBeNull();
  });
  it('prefers stated totals and counted nouns, then the first', () => {
    expect(count('mere saath do log aur hain, total teen')).toBe(3);
    expect(count('I need to bring 2 other team members; find me three seats')).toBe(3);
    expect(count('a table for 5 instead of 3')).toBe(5);
    expect(count('reserve 3 rooms for a 2 night stay')).toBe(3);
  });
  it('does not take "kar do" or "do you" as two', () => {
    expect(count('kar do')).toBeNull();
    expect(count('do you have rooms')).toBeNull();
  });
  it('volunteers only counted phrasing', () => {
    expect(count('tomorrow at 5 for 4 people', 'volunteer')).toBe(4);
    expect(count('for 3', 'volunteer')).toBe(3);
    expect(count('3', 'volunteer')).toBeNull();
    expect(count('tomorrow at 5', 'volunteer')).toBeNull();
    expect(count('just me', 'volunteer')).toBeNull();
  });
  it('respects min and max', () => {
    expect(count('20 people', 'answer', { max: 10 })).toBeNull();
    expect(count('0 people', 'answer', { min: 1 })).toBeNull();
  });
  it('masks a date against the reference time of each call, not of the one before', () => {
    const at = (iso: string): number | null => {
      const r = extractSlot('february 29', {
        capture: { slot: 'party_size', type: 'number' },
        language: 'en-IN',
        nowMs: Date.parse(iso),
        timezone: 'Asia/Kolkata',
        mode: 'answer',
      });
      return r === null ? null : Number(r.value);
    };
    expect(at('2027-01-10T12:00:00+05:30')).toBeNull(); // 29 February 2028 is a date
    expect(at('2025-01-10T12:00:00+05:30')).toBe(29); // no 29 February in 2025 or 2026
    expect(at('2027-01-10T12:00:00+05:30')).toBeNull();
  });
});
