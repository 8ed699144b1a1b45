/**
 * The `time` extractor (docs/agents.md "Capture and slot types": canonical `HH:MM`, 24 h), English and Hindi/Hinglish:
 * "10:30", "10.30 am", "5pm", "half past ten", "quarter to 5 pm", "5 in the evening",
 * "afternoon 3:45", "noon", "subah das baje" → 10:00, "shaam 5 baje" → 17:00, "dopahar 2 baje"
 * → 14:00, "raat 9 baje" → 21:00, "saade das baje" → 10:30, "paune 5" → 16:45, "dedh baje" → 13:30.
 *
 * Reading of an hour without am/pm or a part of the day: 1–7 → pm (13:00–19:00), 8–11 → am,
 * 12 → noon; "09:30" (zero-padded) and 13–23 are 24-hour times.
 * This is the daytime reading people mean when booking: "at 4" is 16:00, "11:30" is 11:30.
 */
import { DAYPARTS } from './date-words.js';
import { FILLERS, COUNT_NOUNS } from './keywords.js';
import { prepare } from './numbers.js';
import { alternation, byPosition, firstLongest, isNegated, normalizeWord, wordRegex, type Hit, type Prepared } from './tokens.js';

/** A time found in an utterance. */
export interface TimeHit {
  /** `HH:MM`, 24 h. */
  value: string;
  /** The match in the prepared text. */
  hit: Hit;
  /** False for a bare number ("at 4", "4"), which only counts in answer mode. */
  strong: boolean;
}

type Daypart = (typeof DAYPARTS)[string];

const DP = alternation(Object.keys(DAYPARTS));
const AT = '(?:at|around|about|by|@|till|until|from|before|after|approx|approximately|roughly|lagbhag|करीब)';
const ANCHOR = `(?:am|pm|oclock|baje|bje|bajey|बजे|in|at|${DP})`;
// A part of the day before or after the time may stand apart from it by a comma ("tomorrow
// evening, around five"; "at five, in the evening"): the prepared text keeps it as " , ".
const PRE = `(?:(?<pre>${DP})(?: ,)? (?:(?:ko|mein|me|ke|at|around|about|by|of|को|में) )?)?`;
const AMPM = '(?: (?<ap>am|pm))?';
const OC = '(?: (?<oc>oclock|baje|bje|bajey|bajkar|बजे))?';
const POST = `(?:(?: ,)? (?:(?:in the|in|at|this|of the|ko|को) )?(?<post>${DP}))?`;
const CORE = `(?<h>\\d{1,2})(?:[:.](?<m>\\d{2})| (?<m2>[0-5]\\d)(?= ${ANCHOR}(?: |$)|$))?`;
/** Fraction prefixes of an hour → minutes added to it (saadhe: +30, sava: +15, paune: −15). */
const FRAC_MINUTES: Record<string, number> = Object.fromEntries([
  ...['saadhe', 'sadhe', 'saade', 'sade', 'saadhey', 'साढ़े', 'साढे'].map((w) => [normalizeWord(w), 30]),
  ...['sava', 'savaa', 'sawa', 'sawaa', 'सवा'].map((w) => [normalizeWord(w), 15]),
  ...['paune', 'pone', 'paone', 'पौने'].map((w) => [normalizeWord(w), -15]),
]);
/** Stand-alone fraction hours → [hour, minute] (dedh: 1 and a half, dhai: 2 and a half). */
const FRAC_WORD_TIME: Record<string, [number, number]> = Object.fromEntries([
  ...['dedh', 'derh', 'डेढ़'].map((w) => [normalizeWord(w), [1, 30]]),
  ...['dhai', 'dhaai', 'adhai', 'ढाई'].map((w) => [normalizeWord(w), [2, 30]]),
]);

const FRAC = alternation(Object.keys(FRAC_MINUTES));
const FRAC_WORD = alternation(Object.keys(FRAC_WORD_TIME));

const PATTERNS: readonly RegExp[] = [
  wordRegex(`${PRE}(?:(?<at>${AT}) )?${CORE}${AMPM}${OC}${POST}`),
  wordRegex(
    `${PRE}(?:(?<at>${AT}) )?(?:(?<half>half) past|(?:a )?(?<qp>quarter) (?:past|after)|(?:a )?(?<qt>quarter) (?:to|till|before|of)|(?<mp>\\d{1,2}) (?:minutes? )?past|(?<mt>\\d{1,2}) minutes? (?:to|till|before)) (?<h>\\d{1,2})${AMPM}(?: oclock)?${POST}`,
  ),
  wordRegex(`${PRE}(?<fr>${FRAC}) (?<h>\\d{1,2})${OC}${POST}`),
  wordRegex(`${PRE}(?<fw>${FRAC_WORD}) (?<oc>baje|bje|bajey|बजे)${POST}`),
  wordRegex('(?:(?:at|around|by) )?(?:12 )?(?<nw>noon|midday|midnight)'),
];

/** Hour on the 24-hour clock for `h` said with am/pm, a part of the day, or neither. */
function hour24(h: number, ap: string | undefined, dp: Daypart | undefined, zeroPadded: boolean): number | null {
  if (h > 23) return null;
  if (ap) {
    if (h > 12) return h;
    if (h === 0) return null;
    return ap === 'am' ? h % 12 : (h % 12) + 12;
  }
  if (dp && h <= 12) {
    const byPart: Record<Daypart, number> = {
      morning: h % 12,
      noon: 12,
      afternoon: h === 12 ? 12 : h + 12,
      evening: h === 12 ? 12 : h + 12,
      night: h === 12 ? 0 : h < 5 ? h : h + 12,
      midnight: 0,
    };
    return byPart[dp];
  }
  if (zeroPadded || h === 0 || h >= 13) return h;
  return h <= 7 ? h + 12 : h;
}

function fmt(h: number, m: number): string {
  const total = (((h * 60 + m) % 1440) + 1440) % 1440;
  return `${String(Math.floor(total / 60)).padStart(2, '0')}:${String(total % 60).padStart(2, '0')}`;
}

function daypartOf(g: Hit['groups']): Daypart | undefined {
  const w = g.post ?? g.pre;
  return w === undefined ? undefined : DAYPARTS[w];
}

/** Minutes after the hour and hour offset of "half past", "quarter to", "10 minutes past"… */
function relativeMinutes(g: Hit['groups']): { minutes: number; hourShift: number } | null {
  if (g.half) return { minutes: 30, hourShift: 0 };
  if (g.qp) return { minutes: 15, hourShift: 0 };
  if (g.qt) return { minutes: 45, hourShift: -1 };
  if (g.mp !== undefined) return Number(g.mp) < 60 ? { minutes: Number(g.mp), hourShift: 0 } : null;
  if (g.mt !== undefined) return Number(g.mt) < 60 && Number(g.mt) > 0 ? { minutes: 60 - Number(g.mt), hourShift: -1 } : null;
  return null;
}

/** The canonical time of one hit and whether it is strong evidence; null when invalid. */
function resolve(h: Hit): { value: string; strong: boolean } | null {
  const g = h.groups;
  const dp = g.nw ? undefined : daypartOf(g);
  if (g.nw) return { value: g.nw === 'midnight' ? '00:00' : '12:00', strong: true };
  if (g.fw) {
    const [hh, mm] = FRAC_WORD_TIME[g.fw]!;
    const H = hour24(hh, undefined, dp, false);
    return H === null ? null : { value: fmt(H, mm), strong: true };
  }
  const hRaw = g.h!;
  const hNum = Number(hRaw);
  if (g.fr) {
    const shift = FRAC_MINUTES[g.fr]!;
    const H = hour24(hNum, undefined, dp, false);
    if (H === null || hNum === 0 || hNum > 12) return null;
    return { value: fmt(H, shift), strong: Boolean(g.oc || dp) };
  }
  const rel = relativeMinutes(g);
  if (rel) {
    if (hNum === 0 || hNum > 12) return null;
    const H = hour24(hNum, g.ap, dp, false);
    return H === null ? null : { value: fmt(H + rel.hourShift, rel.minutes), strong: true };
  }
  if (g.half || g.qp || g.qt || g.mp || g.mt) return null;
  const minutes = g.m ?? g.m2;
  const m = minutes === undefined ? 0 : Number(minutes);
  if (m > 59) return null;
  const H = hour24(hNum, g.ap, dp, g.m !== undefined && hRaw.length === 2 && hRaw.startsWith('0'));
  if (H === null) return null;
  const strong = Boolean(g.m !== undefined || g.ap || g.oc || dp);
  return { value: fmt(H, m), strong };
}

const FILLER_SET = new Set(FILLERS.map(normalizeWord));
const COUNT_SET = new Set(COUNT_NOUNS.map(normalizeWord));

/** True when every token outside `[from, to)` is a filler word or punctuation. */
export function aloneInUtterance(p: Prepared, from: number, to: number): boolean {
  return p.toks.every((t, i) => (i >= from && i < to) || t.kind === 'sym' || FILLER_SET.has(t.text));
}

/**
 * Every time expression in a prepared utterance (prepared without fractions), earliest first.
 * A bare number is kept (as weak) only when introduced by "at/around/by…" or said alone, and
 * never when a count noun follows it ("4 people"). Denied times ("not 5, 6 pm") are left out.
 */
export function findTimes(p: Prepared): TimeHit[] {
  const out: TimeHit[] = [];
  for (const re of PATTERNS) {
    for (const h of p.hits(re)) {
      const r = resolve(h);
      if (!r) continue;
      if (h.groups.post && p.toks[h.tokEnd]?.kind === 'num') continue; // "for 1 at morning 11:30": the part of day belongs to 11:30
      if (isNegated(p, h)) continue;
      if (!r.strong) {
        const next = p.toks[h.tokEnd];
        if (next && COUNT_SET.has(next.text)) continue;
        if (!h.groups.at && !aloneInUtterance(p, h.tokStart, h.tokEnd)) continue;
        if (p.toks[h.tokStart]?.ordinal) continue;
      }
      out.push({ value: r.value, hit: h, strong: r.strong });
    }
  }
  return out.sort((a, b) => byPosition(a.hit, b.hit));
}

/**
 * Extracts a time (`HH:MM`, 24 h) from an utterance.
 *
 * @param utterance what the caller said
 * @param mode `answer` also accepts a bare hour ("at 4", "4"); `volunteer` needs minutes,
 *        am/pm, o'clock/baje or a part of the day
 * @returns the earliest time and the words that said it, or null. Never throws.
 */
export function extractTime(utterance: string, mode: 'answer' | 'volunteer'): { value: string; matched: string } | null {
  const p = prepare(utterance);
  const found = firstLongest(findTimes(p).filter((t) => t.strong || mode === 'answer'));
  return found ? { value: found.value, matched: p.origOfHit(found.hit) } : null;
}
