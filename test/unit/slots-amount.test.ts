import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30');

function amount(text: string, mode: 'answer' | 'volunteer' = 'answer', extra: Partial<Capture> = {}): number | null {
  const r = extractSlot(text, {
    capture: { slot: 'amount', type: 'amount', ...extra },
    language: 'en-IN',
    nowMs: NOW,
    timezone: 'Asia/Kolkata',
    mode,
  });
  return r === null ? null : Number(r.value);
}

describe('amount', () => {
  it.each([
    ['₹1,25,000', 125000],
    ['rs 500', 500],
    ['Rs. 500', 500],
    ['500 rupees', 500],
    ['₹500/-', 500],
    ['Rs. 2,499/-', 2499],
    ['1.5 lakh', 150000],
    ['2 crore', 20000000],
    ['5k', 5000],
    ['eighty nine bucks', 89],
    ['$270', 270],
    ['1,490 bucks', 1490],
    ['ek lakh', 100000],
    ['paanch sau', 500],
    ['paanch sau rupaye', 500],
    ['dedh lakh rupaye', 150000],
    ['saadhe teen hazaar', 3500],
    ['दो हज़ार रुपये', 2000],
    ['pachaas hazaar', 50000],
    ['two thousand four hundred and fifty rupees', 2450],
    ['500', 500],
    ['₹१,५००', 1500],
    ['12.50 rupees', 12.5],
  ])('%s → %d', (text, expected) => {
    expect(amount(text)).toBe(expected);
  });
  it('prefers the number said as money', () => {
    expect(amount('book 2 rooms, the total is rs 4500')).toBe(4500);
    expect(amount('the 3rd at 5 pm, rs 700')).toBe(700);
    expect(amount('I want to pay 2500 on the 5th')).toBe(2500);
  });
  it('volunteers only currency or lakh/crore/thousand', () => {
    expect(amount('send 500 rupees tomorrow', 'volunteer')).toBe(500);
    expect(amount('1.5 lakh', 'volunteer')).toBe(150000);
    expect(amount('500', 'volunteer')).toBeNull();
    expect(amount('book 2 rooms', 'volunteer')).toBeNull();
  });
  it('respects min and max', () => {
    expect(amount('rs 50', 'answer', { min: 100 })).toBeNull();
    expect(amount('rs 5000', 'answer', { max: 1000 })).toBeNull();
    expect(amount('rs 500', 'answer', { min: 100, max: 1000 })).toBe(500);
  });
  it('finds nothing in words without a number', () => {
    expect(amount('I am not sure')).toBeNull();
    expect(amount('')).toBeNull();
  });
});
