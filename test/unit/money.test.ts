/**
 * Money (docs/api-decisions.md "Costs"): integer micro-rupees, no float drift.
 */
import { describe, expect, it } from 'vitest';
import { addCost, costView, inrToMicro, microToInr, priceMicro, ZERO_COST } from '../../src/domain/money.js';

describe('money', () => {
  it('prices units in whole micro-rupees', () => {
    expect(priceMicro(1234, 0.4, 1000)).toBe(493_600);
    expect(priceMicro(90_000, 0.7, 60_000)).toBe(1_050_000); // 1.5 min at ₹0.70/min
    expect(priceMicro(1, 0.000001, 1000)).toBe(0);
    expect(priceMicro(0, 5, 1000)).toBe(0);
    expect(priceMicro(10, 0, 1000)).toBe(0);
  });

  it('converts at the edge with six decimals', () => {
    expect(microToInr(1)).toBe(0.000001);
    expect(microToInr(123_456_789)).toBe(123.456789);
    expect(inrToMicro(0.1 + 0.2)).toBe(300_000);
  });

  it('gives for every integer the same number as printing it to six decimals and reading it back', () => {
    // A seeded walk over magnitudes from 1 µ₹ to the largest safe integer, both signs.
    let seed = 0x2545f491;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32;
    const samples = [0, 1, -1, 999_999, 1_000_001, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
    for (let i = 0; i < 20_000; i++) {
      const m = Math.floor(next() * 2 ** (1 + Math.floor(next() * 53)));
      samples.push(Math.min(m, Number.MAX_SAFE_INTEGER) * (next() < 0.5 ? -1 : 1));
    }
    for (const m of samples) expect(microToInr(m)).toBe(Number((m / 1_000_000).toFixed(6)));
    expect(microToInr(2.75)).toBe(0.000003); // not an integer: rounded to six decimals
  });

  it('does not drift over 10,000 turns', () => {
    let total = { ...ZERO_COST };
    for (let i = 0; i < 10_000; i++) {
      const turn = { llm: 0, tts: priceMicro(37, 0.3, 1000), stt: priceMicro(1100, 0.7, 60_000) };
      total = addCost(total, turn);
    }
    expect(total.tts).toBe(111_000_000);
    expect(total.stt).toBe(10_000 * 12_833);
    expect(costView(total)).toEqual({ llm_inr: 0, tts_inr: 111, stt_inr: 128.33, total_inr: 239.33 });
  });
});
