/**
 * The `date` extractor (docs/agents.md "Capture and slot types": canonical `YYYY-MM-DD`), relative to the session's
 * reference time in the agent's timezone. English and Hindi/Hinglish:
 *
 * - relative days: today/aaj, tomorrow/kal, day after tomorrow/parso, narso (+3), "in 3 days",
 *   "teen din baad", "in 2 weeks", "two weeks from now", "end of this month" (its last day).
 *   `kal` means both yesterday and tomorrow in Hindi; a booking question looks
 *   ahead, so it is read as tomorrow.
 * - weekdays: "Friday", "this Friday", "next Friday", "on Friday", "agle somvar" → the next
 *   such day after today (never today itself: "next Friday" said on a Friday is a week later);
 *   "Wednesday next week" / "agle hafte budhvar" → that day of next week (weeks start Monday);
 *   "Sunday this week" → that day of this week.
 * - days of a month: "the 14th" (this month, or next month once past), "March 3rd", "3rd of
 *   March", "14 march 2019", "the 3rd of this month", "12th of next month", "15 tarikh",
 *   "agle mahine ki 5 tarikh". Without a year: the next occurrence on or after today.
 * - numbers: "14/3", "3/14" (day first unless that cannot be, as in India), "14-03-2019",
 *   "2019-03-14".
 */
import {
  addDays,
  daysInMonth,
  formatDate,
  isValid,
  localDate,
  nextDayOfMonth,
  nextMonthDay,
  shiftMonth,
  weekday,
  type CivilDate,
} from './calendar.js';
import { DAYPARTS, MONTHS, RELATIVE_DAYS, WEEKDAYS } from './date-words.js';
import { prepare } from './numbers.js';
import { aloneInUtterance } from './time.js';
import { alternation, byPosition, firstLongest, isNegated, normalizeWord, wordRegex, type Hit, type Prepared } from './tokens.js';

/** A date found in an utterance. */
export interface DateHit {
  /** `YYYY-MM-DD`. */
  value: string;
  hit: Hit;
  /** False for a bare ordinal or number ("14th", "14") that only counts in answer mode. */
  strong: boolean;
}

const norm = (r: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(r).map(([k, v]) => [normalizeWord(k), v]));
const MONTH = norm(MONTHS);
const WEEKDAY = norm(WEEKDAYS);
const RELATIVE = norm(RELATIVE_DAYS);

const MON = alternation(Object.keys(MONTHS));
const WD = alternation(Object.keys(WEEKDAYS));
const REL = alternation(Object.keys(RELATIVE_DAYS));
const SUF = '(?:st|nd|rd|th)';
const TARIKH = '(?:tarikh|tareekh|tarik|tariq|तारीख)';
const NEXT_MOD = alternation([
  'next',
  'coming',
  'upcoming',
  'the coming',
  'the next',
  'following',
  'the following',
  'this',
  'this coming',
  'is',
  'agle',
  'agla',
  'aane wale',
  'aanewale',
  'इस',
  'अगले',
  'on',
  'by',
  'for',
  'till',
  'until',
]);
const WEEK = '(?:week|hafte|hafta|हफ्ते)';
const WEEK_MOD = '(?<wk>this|next|agle|is|इस|अगले)';
const YEAR = '(?: ,)?(?: (?<y>\\d{4}))?';

/** Words that may follow a bare ordinal day ("the 7th at 4 pm"); anything else makes it not a date ("2nd floor"). */
const AFTER_ORDINAL = new Set(
  [
    'of',
    'at',
    'for',
    'and',
    'to',
    'until',
    'till',
    'in',
    'on',
    'please',
    'instead',
    'then',
    'or',
    'from',
    'is',
    'would',
    'will',
    'works',
    'work',
    'sounds',
    'should',
    'could',
    'if',
    'but',
    'so',
    'around',
    'by',
    'with',
    'ko',
    'ki',
    'ka',
    'ke',
    'se',
    'tak',
    'hai',
    'ho',
    'chalega',
    'karo',
    'kar',
    'this',
    'next',
    'i',
    'we',
    'it',
    'that',
    'maybe',
    'also',
    'too',
    'as',
    'morning',
    'afternoon',
    'evening',
    'night',
    'month',
    'thanks',
    'thank',
    'ok',
    'okay',
    'yes',
    'no',
    'only',
    'itself',
    'was',
    'fine',
    'good',
    'leaving',
    'returning',
    'checking',
    'arriving',
    ...Object.keys(DAYPARTS),
  ].map(normalizeWord),
);

type Resolver = (g: Hit['groups'], today: CivilDate) => CivilDate | null;

interface Rule {
  re: RegExp;
  resolve: Resolver;
  /** Needs answer mode ("14th" alone). */
  weak?: (h: Hit) => boolean;
}

function year(g: Hit['groups']): number | undefined {
  if (g.y === undefined) return undefined;
  const y = Number(g.y);
  return y < 100 ? 2000 + y : y;
}

function dayMonth(today: CivilDate, d: number, m: number, y: number | undefined): CivilDate | null {
  if (y !== undefined) return isValid(y, m, d) ? { y, m, d } : null;
  return nextMonthDay(today, m, d);
}

function inMonth(today: CivilDate, offset: number, d: number): CivilDate | null {
  const { y, m } = shiftMonth(today, offset);
  return isValid(y, m, d) ? { y, m, d } : null;
}

function monthOffset(rel: string | undefined): number | null {
  if (rel === undefined) return null;
  return /next|coming|agle|agla|अगले/.test(rel) ? 1 : 0;
}

function weekdayDate(today: CivilDate, target: number, week: string | undefined, afterNext: boolean): CivilDate {
  const t = weekday(today);
  if (week !== undefined) {
    const monday = addDays(today, -t);
    const next = /next|agle|अगले/.test(week);
    return addDays(monday, (next ? 7 : 0) + target);
  }
  const delta = (target - t + 7) % 7 || 7;
  return addDays(today, delta + (afterNext ? 7 : 0));
}

function numericDate(g: Hit['groups'], today: CivilDate): CivilDate | null {
  let a = Number(g.a);
  let b = Number(g.b);
  if (a <= 12 && b > 12) [a, b] = [b, a];
  return dayMonth(today, a, b, year(g));
}

const RULES: readonly Rule[] = [
  {
    re: wordRegex(`(?<y>\\d{4}) - (?<m>\\d{1,2}) - (?<d>\\d{1,2})`),
    resolve: (g) => (isValid(Number(g.y), Number(g.m), Number(g.d)) ? { y: Number(g.y), m: Number(g.m), d: Number(g.d) } : null),
  },
  { re: wordRegex(`(?<a>\\d{1,2})/(?<b>\\d{1,2})(?:/(?<y>\\d{2}|\\d{4}))?`), resolve: numericDate },
  {
    re: wordRegex(`(?<a>\\d{1,2}) - (?<b>\\d{1,2}) - (?<y>\\d{4})|(?<a2>\\d{1,2})\\.(?<b2>\\d{1,2})\\.(?<y2>\\d{4})`),
    resolve: (g, t) => numericDate({ a: g.a ?? g.a2, b: g.b ?? g.b2, y: g.y ?? g.y2 }, t),
  },
  {
    re: wordRegex(`(?:the )?(?<d>\\d{1,2})${SUF}? of (?:(?<rel>this|next|the next|the coming|coming|the|is|agle) )?month`),
    resolve: (g, t) => inMonth(t, monthOffset(g.rel) ?? 0, Number(g.d)),
  },
  {
    re: wordRegex(
      `(?<rel>is|agle|agla|next|this|इस|अगले) (?:mahine|mahina|month|महीने) (?:(?:ki|ka|ke|की|के|on the|on|the) )?(?<d>\\d{1,2})${SUF}?(?: ${TARIKH})?`,
    ),
    resolve: (g, t) => inMonth(t, monthOffset(g.rel)!, Number(g.d)),
  },
  {
    re: wordRegex(`(?:the )?(?<d>\\d{1,2})${SUF}?(?: of)? (?<mon>${MON})${YEAR}`),
    resolve: (g, t) => dayMonth(t, Number(g.d), MONTH[g.mon!]!, year(g)),
  },
  {
    re: wordRegex(`(?<mon>${MON}) (?:the )?(?<d>\\d{1,2})${SUF}?${YEAR}`),
    resolve: (g, t) => dayMonth(t, Number(g.d), MONTH[g.mon!]!, year(g)),
  },
  { re: wordRegex(`(?<d>\\d{1,2})${SUF}? ${TARIKH}`), resolve: (g, t) => nextDayOfMonth(t, Number(g.d)) },
  {
    re: wordRegex(`(?:in|after) (?<n>\\d{1,3}) days?|(?<n2>\\d{1,3}) (?:days?|din) (?:from now|from today|later|baad|bad|ke baad|बाद)`),
    resolve: (g, t) => addDays(t, Number(g.n ?? g.n2)),
  },
  {
    re: wordRegex('in (?:a|1) week|(?:a|1) week from (?:today|now)|1 (?:hafte|week) (?:baad|bad|बाद)'),
    resolve: (_g, t) => addDays(t, 7),
  },
  {
    re: wordRegex(`(?:in|after) (?<n>\\d{1,2}) weeks|(?<n2>\\d{1,2}) (?:weeks|hafte) (?:from now|from today|later|baad|bad|ke baad|बाद)`),
    resolve: (g, t) => addDays(t, 7 * Number(g.n ?? g.n2)),
  },
  {
    re: wordRegex(`(?:the )?end of (?<mod>this|the|next) month`),
    resolve: (g, t) => {
      const { y, m } = shiftMonth(t, g.mod === 'next' ? 1 : 0);
      return { y, m, d: daysInMonth(y, m) };
    },
  },
  { re: wordRegex(`(?<rel>${REL})`), resolve: (g, t) => addDays(t, RELATIVE[g.rel!]!) },
  {
    re: wordRegex(`(?:(?<mod>${NEXT_MOD}) )?(?<wd>${WD})(?<an> after next)?(?: ${WEEK_MOD} ${WEEK})?`),
    resolve: (g, t) => weekdayDate(t, WEEKDAY[g.wd!]!, g.wk, Boolean(g.an)),
  },
  {
    re: wordRegex(`(?<wk>next|this|agle|is|इस|अगले) ${WEEK} (?:(?:on|ko|के) )?(?<wd>${WD})`),
    resolve: (g, t) => weekdayDate(t, WEEKDAY[g.wd!]!, g.wk, false),
  },
  {
    re: wordRegex(`(?:(?<pre>on|the|on the|for the|from the|by the|till the|until the) )?(?<d>\\d{1,2})(?<suf>${SUF})`),
    resolve: (g, t) => nextDayOfMonth(t, Number(g.d)),
    weak: (h) => h.groups.pre === undefined,
  },
  {
    re: wordRegex('(?:(?:on|the|on the) )?(?<d>\\d{1,2})'),
    resolve: (g, t) => nextDayOfMonth(t, Number(g.d)),
    weak: () => true,
  },
];

/** A bare ordinal day must be followed by nothing, punctuation, a number or a word of {@link AFTER_ORDINAL}. */
function ordinalFollowOk(p: Prepared, h: Hit): boolean {
  const next = p.toks[h.tokEnd];
  if (next?.text === 'of' && MONTH[p.toks[h.tokEnd + 1]?.text ?? ''] !== undefined) return false; // "30th of February" is that or nothing
  return !next || next.kind !== 'word' || AFTER_ORDINAL.has(next.text);
}

/**
 * Every date expression in a prepared utterance (prepared without fractions), earliest first;
 * denied ones ("not tomorrow", "kal nahi") are left out.
 *
 * @param today the local date of the session's reference time
 */
export function findDates(p: Prepared, today: CivilDate): DateHit[] {
  const out: DateHit[] = [];
  RULES.forEach((rule, idx) => {
    const isBareNumber = idx === RULES.length - 1;
    const isOrdinal = idx === RULES.length - 2;
    for (const h of p.hits(rule.re)) {
      if (isOrdinal && !ordinalFollowOk(p, h)) continue;
      if (isBareNumber && !aloneInUtterance(p, h.tokStart, h.tokEnd)) continue;
      if (isNegated(p, h)) continue;
      const c = rule.resolve(h.groups, today);
      if (!c) continue;
      out.push({ value: formatDate(c), hit: h, strong: !(rule.weak?.(h) ?? false) });
    }
  });
  return out.sort((a, b) => byPosition(a.hit, b.hit));
}

/**
 * Extracts a date (`YYYY-MM-DD`) from an utterance, relative to `nowMs` in `timezone`.
 *
 * @param nowMs the session's reference time, epoch ms
 * @param timezone IANA zone for the local calendar date of `nowMs` (unknown zones: UTC)
 * @param mode `answer` also accepts a bare "14th" or "14"; `volunteer` needs a clear date
 *        expression ("on the 14th", "tomorrow", "March 3rd", "next Friday")
 * @returns the earliest date and the words that said it, or null. Never throws.
 */
export function extractDate(
  utterance: string,
  nowMs: number,
  timezone: string,
  mode: 'answer' | 'volunteer',
): { value: string; matched: string } | null {
  const p = prepare(utterance);
  const today = localDate(nowMs, timezone);
  const found = firstLongest(findDates(p, today).filter((d) => d.strong || mode === 'answer'));
  return found ? { value: found.value, matched: p.origOfHit(found.hit) } : null;
}
