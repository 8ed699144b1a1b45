/**
 * The `number` extractor (docs/agents.md "Capture and slot types": canonical number), built for counts: "4 people",
 * "for two", "a table for 1", "three rooms", "the four of us", "do log", "hum teen hain",
 * "just me" (1), "a couple" (2).
 *
 * Numbers that belong to a time ("one in the afternoon"), a date ("the 3rd"), an amount
 * ("$153"), a star rating ("3 star hotel"), "one way" or an address are skipped. Among the
 * rest the strongest evidence wins, then the earliest:
 * 4 — a stated total ("total teen", "5 in total", "kul char");
 * 3 — a count noun within two words after ("3 economy class seats", "2 bed rooms") or
 *     "N of us"; 2 — introduced as a count ("for 4", "table for 1", "we are 3", "party of 6");
 * 1 — any other number (answer mode only). With no number at all, answer mode reads "just me"
 * / "akela" as 1 and "both of us" / "hum dono" / "me and my wife" as 2.
 */
import type { Capture } from '../../domain/agent.js';
import { COUNT_NOUNS, CURRENCY_AFTER, CURRENCY_BEFORE, NOT_COUNT_AFTER } from './keywords.js';
import { maskedTokens } from './mask.js';
import { prepare } from './numbers.js';
import { normalizeWord, type Prepared, type Tok } from './tokens.js';
import { aloneInUtterance } from './time.js';

const NOUNS = new Set(COUNT_NOUNS.map(normalizeWord));
const NOT_AFTER = new Set(NOT_COUNT_AFTER.map(normalizeWord));
const MONEY_BEFORE = new Set(CURRENCY_BEFORE.map(normalizeWord));
const MONEY_AFTER = new Set(CURRENCY_AFTER.map(normalizeWord));
const DURATION = new Set(
  [
    'minute',
    'minutes',
    'hour',
    'hours',
    'day',
    'days',
    'week',
    'weeks',
    'month',
    'months',
    'year',
    'years',
    'din',
    'ghante',
    'ghanta',
    'hafte',
    'mahine',
    'saal',
    'minat',
    'दिन',
    'घंटे',
    'हफ्ते',
    'महीने',
    'साल',
  ].map(normalizeWord),
);
const WITHIN = new Set(['in', 'after', 'within', 'baad', 'mein', 'me', 'में'].map(normalizeWord));
const TOTAL = new Set(['total', 'altogether', 'overall', 'kul', 'कुल']);
const INTRO = new Set(
  ['for', 'of', 'are', "we're", 'hum', 'sirf', 'bas', 'only', 'just', 'need', 'want', 'get', 'book', 'reserve', 'buy'].map(normalizeWord),
);
/** "2 other team members" counts others, not the party asked about. */
const OTHERS = new Set(['other', 'others', 'aur', 'dusre', 'doosre']);
const SELF_ONLY =
  /(?:^| )(?:just me|only me|me alone|just myself|myself only|only myself|alone|solo|akela|akele|akeli|sirf main|main akela|main akeli|अकेला|अकेले|सिर्फ मैं)(?: |$)/;

const PAIR =
  /(?:^| )(?:both of us|us both|we both|hum dono|ham dono|dono|हम दोनों|दोनों|me and my (?:wife|husband|friend|partner|son|daughter|mother|father|mom|dad|brother|sister|colleague))(?: |$)/;

interface Candidate {
  index: number;
  value: number;
  score: number;
  /** One past the last token of the evidence ("4 bed rooms"). */
  end: number;
}

/** Whether token `t` is a number that may be a count: a cardinal with a value. */
function isCountNumber(t: Tok): t is Tok & { value: number } {
  return t.kind === 'num' && t.value !== undefined && !t.ordinal;
}

/** Score of the number at token `i` as a count (0: not a count) and where its evidence ends. */
function scoreAt(p: Prepared, i: number): { score: number; end: number } {
  const toks = p.toks;
  const next = toks[i + 1];
  const prev = toks[i - 1];
  const none = { score: 0, end: i + 1 };
  if (next && (NOT_AFTER.has(next.text) || MONEY_AFTER.has(next.text))) return none;
  if (next?.text === '-' && toks[i + 2]?.text === 'star') return none;
  if (prev && MONEY_BEFORE.has(prev.text)) return none;
  if (prev?.text === '#' || prev?.text === 'number') return none;
  if (next && DURATION.has(next.text) && prev && WITHIN.has(prev.text)) return none; // "in 10 minutes" is a time
  if (next && DURATION.has(next.text) && toks[i + 2]?.text === 'old') return { score: 1, end: i + 1 }; // "a 3 year old" is an age
  if (prev && TOTAL.has(prev.text)) return { score: 4, end: i + 1 };
  if (next?.text === 'total' || (next?.text === 'in' && toks[i + 2]?.text === 'total'))
    return { score: 4, end: i + (next.text === 'in' ? 3 : 2) };
  if (next && OTHERS.has(next.text)) return { score: 1, end: i + 1 };
  for (let k = 1; k <= 3; k++) {
    const t = toks[i + k];
    if (!t || t.kind !== 'word') break;
    if (NOUNS.has(t.text)) return { score: 3, end: i + k + 1 };
  }
  if (next?.text === 'of' && (toks[i + 2]?.text === 'us' || toks[i + 2]?.text === 'them')) return { score: 3, end: i + 3 };
  if (prev && INTRO.has(prev.text)) return { score: 2, end: i + 1 };
  if (prev?.text === 'a' && toks[i - 2]?.text === 'for') return { score: 2, end: i + 1 };
  return { score: 1, end: i + 1 };
}

/**
 * Extracts a count (or any number) from an utterance.
 *
 * @param capture `min`/`max` bound the accepted value (inclusive)
 * @param mode `answer` accepts any number that is not something else; `volunteer` needs a
 *        count noun or count phrasing (score ≥ 2)
 * @param nowMs the session reference time, epoch ms (to recognise, and skip, dates)
 * @param timezone the agent's IANA zone
 * @returns the number and the words that said it, or null. Never throws.
 */
export function extractCount(
  utterance: string,
  capture: Capture,
  mode: 'answer' | 'volunteer',
  nowMs: number,
  timezone: string,
): { value: number; matched: string } | null {
  const p = prepare(utterance, { fractions: true });
  const masked = p.toks.some(isCountNumber) ? maskedTokens(p, nowMs, timezone) : new Set<number>();
  const inRange = (v: number): boolean =>
    (capture.min === undefined || v >= capture.min) && (capture.max === undefined || v <= capture.max);
  const found: Candidate[] = [];
  p.toks.forEach((t, i) => {
    if (!isCountNumber(t) || masked.has(i)) return;
    const { score, end } = scoreAt(p, i);
    if (score === 0 || !inRange(t.value)) return;
    if (mode === 'volunteer' && score < 2) return;
    if (score === 1 && t.value >= 1000 && !aloneInUtterance(p, i, i + 1)) return;
    found.push({ index: i, value: t.value, score, end });
  });
  found.sort((a, b) => b.score - a.score || a.index - b.index);
  const best = found[0];
  if (best) return { value: best.value, matched: p.origOf(best.index, best.end) };
  if (mode === 'volunteer') return null;
  const self = SELF_ONLY.exec(p.text);
  if (self && inRange(1)) return { value: 1, matched: self[0].trim() };
  const pair = PAIR.exec(p.text);
  if (pair && inRange(2)) return { value: 2, matched: pair[0].trim() };
  return null;
}
