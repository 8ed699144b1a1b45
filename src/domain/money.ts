/**
 * Money (docs/api-decisions.md "Costs"): integer micro-rupees inside (1 INR = 1 000 000 µ₹), INR
 * numbers rounded to 6 decimals at the API edge. Sums of integers never drift; only the
 * conversion at the edge divides.
 */

/** Micro-rupees per rupee. */
export const MICRO_PER_INR = 1_000_000;

/** INR (a number with up to 6 decimals) → integer micro-rupees, rounded half away from zero. */
export function inrToMicro(inr: number): number {
  return Math.sign(inr) * Math.round(Math.abs(inr) * MICRO_PER_INR);
}

/**
 * Integer micro-rupees → INR number for the API (exact to 6 decimals). For a safe integer the
 * quotient is already the double nearest the exact decimal (IEEE division rounds correctly),
 * which is what printing and re-reading it to 6 decimals gives; anything else is rounded so.
 */
export function microToInr(micro: number): number {
  if (Number.isSafeInteger(micro)) return micro === 0 ? 0 : micro / MICRO_PER_INR; // never -0
  return Number((micro / MICRO_PER_INR).toFixed(6));
}

/** A cost split by kind, in micro-rupees. */
export interface CostMicro {
  llm: number;
  tts: number;
  stt: number;
}

/** The zero cost. */
export const ZERO_COST: Readonly<CostMicro> = Object.freeze({ llm: 0, tts: 0, stt: 0 });

/** The total of `c`, micro-rupees. */
export function totalMicro(c: CostMicro): number {
  return c.llm + c.tts + c.stt;
}

/** `{llm_inr, tts_inr, stt_inr, total_inr}` of the API's `cost` object (`CostSchema` in src/contract/common.ts). */
export interface CostInr {
  llm_inr: number;
  tts_inr: number;
  stt_inr: number;
  total_inr: number;
}

/** The API's cost object for a micro-rupee split; the total is summed before conversion. */
export function costView(c: CostMicro): CostInr {
  return {
    llm_inr: microToInr(c.llm),
    tts_inr: microToInr(c.tts),
    stt_inr: microToInr(c.stt),
    total_inr: microToInr(totalMicro(c)),
  };
}

/** `a + b`, per kind. */
export function addCost(a: CostMicro, b: CostMicro): CostMicro {
  return { llm: a.llm + b.llm, tts: a.tts + b.tts, stt: a.stt + b.stt };
}

/**
 * The price of `units` at `pricePerBlockInr` per `blockSize` units, in micro-rupees, rounded
 * to the nearest micro-rupee (e.g. 1 234 characters at ₹0.40 per 1 000 → 494 µ₹·1000 = 493 600).
 */
export function priceMicro(units: number, pricePerBlockInr: number, blockSize: number): number {
  if (units <= 0 || pricePerBlockInr <= 0) return 0;
  return Math.round((units * pricePerBlockInr * MICRO_PER_INR) / blockSize);
}
