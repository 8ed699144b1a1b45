/**
 * The `amount` extractor (docs/agents.md "Capture and slot types": a number in rupees; understands ₹, rs, rupees, k,
 * lakh, crore, "eighty nine bucks"): "₹1,25,000", "rs. 500", "500 rupees", "1.5 lakh",
 * "2 crore", "5k", "$270", "1,490 bucks", "ek lakh", "paanch sau rupaye", "dedh lakh",
 * "saadhe teen hazaar".
 *
 * The value is the number as said; a currency word only marks it as money ("$270" → 270:
 * the service books in rupees and does not convert).
 */
import type { Capture } from '../../domain/agent.js';
import { CURRENCY_AFTER, CURRENCY_BEFORE } from './keywords.js';
import { prepare } from './numbers.js';
import { normalizeWord, type Prepared, type Tok } from './tokens.js';
import { maskedTokens } from './mask.js';

const BEFORE = new Set(CURRENCY_BEFORE.map(normalizeWord));
const AFTER = new Set(CURRENCY_AFTER.map(normalizeWord));

/** A number in an utterance with how strongly it reads as money. */
interface Candidate {
  index: number;
  value: number;
  /** 3: currency said; 2: lakh/crore/thousand said; 1: a bare number. */
  score: number;
  from: number;
  to: number;
}

function isAmountNumber(t: Tok): boolean {
  return t.kind === 'num' && t.value !== undefined && !t.ordinal;
}

/** The currency token before number `i` ("rs . 500", "₹ 500"), as its token index, or -1. */
function currencyBefore(p: Prepared, i: number): number {
  let j = i - 1;
  if (p.toks[j]?.text === '.') j -= 1;
  return j >= 0 && BEFORE.has(p.toks[j]!.text) ? j : -1;
}

/** The currency token after number `i` ("500 rupees", "500 /-"), as its token index, or -1. */
function currencyAfter(p: Prepared, i: number): number {
  const next = p.toks[i + 1];
  if (next && AFTER.has(next.text)) return i + 1;
  if (next?.text === '/' && p.toks[i + 2]?.text === '-') return i + 2;
  return -1;
}

function candidates(p: Prepared, nowMs: number, timezone: string): Candidate[] {
  if (!p.toks.some(isAmountNumber)) return [];
  const masked = maskedTokens(p, nowMs, timezone);
  const out: Candidate[] = [];
  p.toks.forEach((t, i) => {
    if (!isAmountNumber(t)) return;
    const before = currencyBefore(p, i);
    const after = currencyAfter(p, i);
    if (masked.has(i) && before < 0 && after < 0) return;
    const score = before >= 0 || after >= 0 ? 3 : (t.big ?? 0) >= 1000 ? 2 : 1;
    out.push({ index: i, value: t.value!, score, from: before >= 0 ? before : i, to: (after >= 0 ? after : i) + 1 });
  });
  return out;
}

/**
 * Extracts an amount from an utterance.
 *
 * @param capture `min`/`max` bound the accepted value (inclusive)
 * @param nowMs the session reference time, epoch ms (to recognise, and skip, dates)
 * @param timezone the agent's IANA zone
 * @param mode `answer` also accepts a bare number ("500"); `volunteer` needs a currency word
 *        or a lakh/crore/thousand
 * @returns the best amount (currency said > multiplier said > bare; earliest first) with the
 *          words that said it, or null. Never throws.
 */
export function extractAmount(
  utterance: string,
  capture: Capture,
  mode: 'answer' | 'volunteer',
  nowMs: number,
  timezone: string,
): { value: number; matched: string } | null {
  const p = prepare(utterance, { fractions: true });
  const inRange = (v: number): boolean =>
    (capture.min === undefined || v >= capture.min) && (capture.max === undefined || v <= capture.max);
  const minScore = mode === 'answer' ? 1 : 2;
  const best = candidates(p, nowMs, timezone)
    .filter((c) => c.score >= minScore && inRange(c.value))
    .sort((a, b) => b.score - a.score || a.index - b.index)[0];
  return best ? { value: best.value, matched: p.origOf(best.from, best.to) } : null;
}
