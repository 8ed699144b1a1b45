/**
 * Token masks shared by the number-like extractors: a number that is part of a time ("at 4
 * pm", "one in the afternoon") or a date ("the 3rd", "March 11") is not a count, an amount or
 * a digit string (step capture).
 */
import { localDate } from './calendar.js';
import { findDates } from './date.js';
import { prepare } from './numbers.js';
import type { Prepared } from './tokens.js';
import { findTimes } from './time.js';

/** A text range `[start, end)` of the original utterance. */
type Span = readonly [number, number];

/**
 * The last utterance's time and date spans: one turn runs several number-like extractors over
 * the same words (count, amount, digits), and each would otherwise find them again.
 */
let lastSpans: { raw: string; nowMs: number; timezone: string; spans: readonly Span[] } | null = null;

/** Original-offset spans of the strong times (and "at 4"), and the strong dates, of `raw`. */
function timeAndDateSpans(raw: string, nowMs: number, timezone: string): readonly Span[] {
  if (lastSpans && lastSpans.raw === raw && lastSpans.nowMs === nowMs && lastSpans.timezone === timezone) return lastSpans.spans;
  const plain = prepare(raw);
  const spans: Span[] = [];
  for (const t of findTimes(plain)) {
    if (t.strong || t.hit.groups.at) spans.push([plain.toks[t.hit.tokStart]!.start, plain.toks[t.hit.tokEnd - 1]!.end]);
  }
  for (const d of findDates(plain, localDate(nowMs, timezone))) {
    if (d.strong) spans.push([plain.toks[d.hit.tokStart]!.start, plain.toks[d.hit.tokEnd - 1]!.end]);
  }
  lastSpans = { raw, nowMs, timezone, spans };
  return spans;
}

/**
 * Indices of the tokens of `p` that belong to a time or a date expression (strong ones, and
 * bare hours introduced by "at/around/by"). Times and dates are found on the utterance
 * prepared without fractions; tokens are mapped by their original offsets. The spans of the
 * most recent utterance are kept, so the extractors of one turn find them once.
 *
 * @param nowMs the session reference time, epoch ms (dates resolve against it; only spans are used)
 * @param timezone the agent's IANA zone
 */
export function maskedTokens(p: Prepared, nowMs: number, timezone: string): Set<number> {
  const spans = timeAndDateSpans(p.raw, nowMs, timezone);
  const out = new Set<number>();
  p.toks.forEach((t, i) => {
    if (spans.some(([s, e]) => t.start < e && t.end > s)) out.add(i);
  });
  return out;
}
