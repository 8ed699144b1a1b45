/**
 * Money (DESIGN.md §4 "Costs"): integer micro-rupees, no float drift.
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
