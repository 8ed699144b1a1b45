/**
 * The `digits` extractor (docs/agents.md "Capture and slot types": a string of 0-9): phone numbers, OTPs, PINs, account
 * numbers, written or spoken — "98765 43210", "+91 98765-43210", "nine eight seven six …",
 * "double five", "triple seven", "oh" for zero, "nau aath saat …", Devanagari ९८७.
 *
 * Digits are read in runs: number tokens separated only by spaces, punctuation or fillers
 * ("uh", "and"); any other word ends a run. The first run whose length fits
 * `min_length..max_length` wins. A run that is too long only by an Indian country code
 * ("+91 …", "0 …") is accepted without it.
 */
import type { Capture } from '../../domain/agent.js';
import { maskedTokens } from './mask.js';
import { prepare } from './numbers.js';
import { normalizeWord, type Prepared } from './tokens.js';

const JOINERS = new Set(
  ['uh', 'um', 'umm', 'hmm', 'and', 'aur', 'then', 'phir', 'fir', 'is', 'hai', 'its', "it's", 'है'].map(normalizeWord),
);

interface Run {
  digits: string;
  from: number;
  to: number;
}

function runs(p: Prepared, masked: Set<number>): Run[] {
  const out: Run[] = [];
  let cur: Run | null = null;
  p.toks.forEach((t, i) => {
    const isDigits = t.kind === 'num' && /^\d+$/.test(t.text) && !t.ordinal && !masked.has(i);
    if (isDigits) {
      if (cur) {
        cur.digits += t.text;
        cur.to = i + 1;
      } else {
        cur = { digits: t.text, from: i, to: i + 1 };
      }
      return;
    }
    if (cur && (t.kind === 'sym' || JOINERS.has(t.text))) return;
    if (cur) out.push(cur);
    cur = null;
  });
  if (cur) out.push(cur);
  return out;
}

/** `digits` within bounds, or stripped of a leading 91 / 0 country or trunk prefix to fit. */
function fit(digits: string, min: number, max: number): string | null {
  if (digits.length >= min && digits.length <= max) return digits;
  for (const prefix of ['91', '0']) {
    if (digits.length > max && digits.startsWith(prefix)) {
      const rest = digits.slice(prefix.length);
      if (rest.length >= min && rest.length <= max) return rest;
    }
  }
  return null;
}

/**
 * Extracts a digit string from an utterance.
 *
 * @param capture `min_length`/`max_length` (inclusive; default 1..32)
 * @param mode `answer`: the first run of fitting length; `volunteer`: the same, but the run must
 *        have at least 4 digits and may not be part of a time or a date
 * @param nowMs the session reference time, epoch ms (to recognise dates in volunteer mode)
 * @param timezone the agent's IANA zone
 * @returns the digits and the words that said them, or null. Never throws.
 */
export function extractDigits(
  utterance: string,
  capture: Capture,
  mode: 'answer' | 'volunteer',
  nowMs: number,
  timezone: string,
): { value: string; matched: string } | null {
  const p = prepare(utterance, { digitMode: true });
  const masked = mode === 'volunteer' ? maskedTokens(p, nowMs, timezone) : new Set<number>();
  const min = mode === 'volunteer' ? Math.max(capture.min_length ?? 4, 4) : (capture.min_length ?? 1);
  const max = capture.max_length ?? 32;
  for (const run of runs(p, masked)) {
    const value = fit(run.digits, min, max);
    if (value !== null) return { value, matched: p.origOf(run.from, run.to) };
  }
  return null;
}
