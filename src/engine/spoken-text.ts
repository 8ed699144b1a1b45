/**
 * The rules behind `toSpokenText` (./spoken.ts): a sequence of patterns, most specific first
 * (amounts, dates, times, phone numbers and codes, then plain numbers). Each match is replaced
 * by a placeholder holding its spoken form, so a later rule never re-reads what an earlier one
 * produced; the placeholders are expanded at the end. Pure.
 */
import { type SpokenLanguage, englishOrdinal, englishYear, spokenLanguage, wordsFor } from './spoken-words.js';

/** The sentence builders of ./spoken.ts that the rules use (passed in to avoid an import cycle). */
export interface Speaker {
  digitWord(digit: string, language: string): string;
  numberToWords(n: number, language: string): string;
  speakAmount(rupees: number, language: string): string;
  speakDate(isoDate: string, language: string, options?: { withYear?: boolean }): string;
  speakTime(hhmm: string, language: string): string;
}

interface Context {
  language: string;
  family: SpokenLanguage;
  say: Speaker;
}

/** The match and capture groups of one regular-expression match. */
type Groups = ReadonlyArray<string | undefined>;

/** A rule: a global regular expression and what a match becomes (null: leave it as written). */
interface Rule {
  re: RegExp;
  /** `m[0]` is the whole match, `m[1]`… its groups (undefined when a group did not take part). */
  speak(m: Groups, ctx: Context): string | null;
  /** Rules that only make sense with word tables (not for numeral languages). */
  wordsOnly?: boolean;
}

const PH_OPEN = '\uE000';
const PH_BASE = 0xe100;
const PH_MAX = 0xf7ff - PH_BASE;
const PH_RE = /\uE000([\uE100-\uF7FF])/g;
/**
 * No letter, digit or combining mark before / after (`\b` is ASCII-only in JS); nor the digits
 * after a decimal point or comma ("2.05" is not "2." and "05").
 */
const B = '(?<![\\p{L}\\p{N}\\p{M}]|\\d[.,])';
const E = '(?![\\p{L}\\p{N}\\p{M}])';
const rx = (source: string): RegExp => new RegExp(source, 'giu');

const MULTIPLIERS: Readonly<Record<string, number>> = {
  k: 1e3,
  l: 1e5,
  lakh: 1e5,
  lakhs: 1e5,
  lac: 1e5,
  lacs: 1e5,
  cr: 1e7,
  crore: 1e7,
  crores: 1e7,
};
const NUM = '(\\d{1,3}(?:,\\d{2,3})+|\\d+)(?:\\.(\\d+))?';
const MULT = '(?:\\s?(k|lakhs?|lacs?|l|crores?|cr)(?![\\p{L}\\p{N}]))?';
const CURRENCY_BEFORE = '(?:₹|rs\\.?|inr|रु\\.?)';
const CURRENCY_AFTER = '(?:rupees?|rs\\.?|inr|₹|रुपये|रुपए|रुपया)';

/** True when `s` is a well-formed Indian (1,25,000) or Western (125,000) comma grouping. */
function validGrouping(s: string): boolean {
  return /^\d{1,3}(?:,\d{3})+$/.test(s) || /^\d{1,2}(?:,\d{2})*,\d{3}$/.test(s);
}

/** An amount's value in rupees from its written parts, or null when it is not a clean amount. */
function amountValue(intPart: string, frac: string | undefined, mult: string | undefined): number | null {
  if (intPart.includes(',') && !validGrouping(intPart)) return null;
  const value = Number(`${intPart.replace(/,/g, '')}${frac ? `.${frac}` : ''}`) * (mult ? (MULTIPLIERS[mult.toLowerCase()] ?? 1) : 1);
  if (!Number.isFinite(value) || !Number.isSafeInteger(Math.round(value * 100))) return null;
  if (!mult && frac && frac.length > 2) return null;
  return value;
}

/** Digits said one by one; groups written apart get a comma pause, a leading '+' is said. */
function digitByDigit(plus: boolean, groups: string[], ctx: Context): string {
  const said = groups.map((g) => [...g].map((d) => ctx.say.digitWord(d, ctx.language)).join(' '));
  const joiner = groups.every((g) => g.length === 1) ? ' ' : ', ';
  return `${plus ? `${wordsFor(ctx.family).plus} ` : ''}${said.join(joiner)}`;
}

/** "… to …" between two spoken values (Hindi "… से …"). */
function range(a: string, b: string, ctx: Context): string {
  return ctx.family === 'hi' ? `${a} से ${b}` : ctx.family === 'en' ? `${a} to ${b}` : `${a} - ${b}`;
}

/** Safe wrapper: a builder that throws (invalid date, time) leaves the text as written. */
function attempt(fn: () => string): string | null {
  try {
    return fn();
  } catch {
    return null;
  }
}

/** 'HH:MM' from a written time, optionally with am/pm; null when it is not a valid time. */
function to24h(hours: string, minutes: string | undefined, meridiem: string | undefined): string | null {
  let h = Number(hours);
  const m = minutes === undefined ? 0 : Number(minutes);
  if (m > 59) return null;
  if (meridiem) {
    if (h < 1 || h > 12) return null;
    const pm = meridiem.toLowerCase().startsWith('p');
    h = (h % 12) + (pm ? 12 : 0);
  } else if (h > 23) return null;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}`;
}

/** A written time: hour, separator, minutes, am/pm ("17:00", "5 pm", "5.30 p.m."). */
const TIME = '(\\d{1,2})(?:([:.])([0-5]\\d))?\\s?(a\\.?m\\.?|p\\.?m\\.?)?';

/** Words around a time that say its half of the day ("शाम 5:30", "5:30 in the evening"). */
const PERIOD_BEFORE = '(?:(सुबह|दोपहर|शाम|रात)\\s?)?';
const PERIOD_AFTER = '(?:\\s?(बजे)|\\s(in the morning|in the afternoon|in the evening|at night))?';
const PM_PERIODS = new Set(['दोपहर', 'शाम', 'in the afternoon', 'in the evening']);
const NIGHT_PERIODS = new Set(['रात', 'at night']);

/** 'am'/'pm' implied by a period word for hour `h` (1–12), or undefined. */
function meridiemOf(period: string | undefined, h: number): string | undefined {
  if (period === undefined || h < 1 || h > 12) return undefined;
  if (PM_PERIODS.has(period)) return 'pm';
  if (NIGHT_PERIODS.has(period)) return h >= 6 && h < 12 ? 'pm' : 'am';
  return 'am';
}

/**
 * A written time from the groups of {@link TIME}; null when it is not one (a bare hour, or
 * "5.30", need am/pm to count as a time). `period` is a period word written beside it.
 */
function timeText(
  ctx: Context,
  h: string | undefined,
  sep: string | undefined,
  m: string | undefined,
  mer: string | undefined,
  period?: string,
): string | null {
  if (h === undefined || (m === undefined && mer === undefined) || (sep === '.' && mer === undefined)) return null;
  const hhmm = to24h(h, m, mer ?? meridiemOf(period?.toLowerCase(), Number(h)));
  return hhmm === null ? null : attempt(() => ctx.say.speakTime(hhmm, ctx.language));
}

/** Rules, in the order they run. */
const RULES: Rule[] = [
  // ₹1,25,000 · Rs. 500/- · INR 2,500.50 · ₹1.5 lakh · रु. 500
  {
    re: rx(`${B}${CURRENCY_BEFORE}\\s?${NUM}${MULT}(?:/-)?(?![\\p{N}])(?:\\s?${CURRENCY_AFTER}${E})?`),
    speak: (m, ctx) => {
      const v = amountValue(m[1]!, m[2], m[3]);
      return v === null ? null : attempt(() => ctx.say.speakAmount(v, ctx.language));
    },
    wordsOnly: true,
  },
  // 500 rupees · 2,500.50 Rs · 2 lakh rupees · 500 रुपये
  {
    re: rx(`${B}${NUM}${MULT}(?:/-)?\\s?${CURRENCY_AFTER}${E}`),
    speak: (m, ctx) => {
      const v = amountValue(m[1]!, m[2], m[3]);
      return v === null ? null : attempt(() => ctx.say.speakAmount(v, ctx.language));
    },
    wordsOnly: true,
  },
  // 2026-11-21 (ISO) · 21/11/2026 (Indian day/month/year)
  {
    re: rx(`${B}(?:(\\d{4})-(\\d{2})-(\\d{2})|(\\d{1,2})/(\\d{1,2})/(\\d{4}))(?![\\p{L}\\p{N}\\p{M}]|[-/]\\d)`),
    speak: (m, ctx) => {
      const iso = m[1] ? `${m[1]}-${m[2]}-${m[3]}` : `${m[6]}-${m[5]!.padStart(2, '0')}-${m[4]!.padStart(2, '0')}`;
      return attempt(() => ctx.say.speakDate(iso, ctx.language, { withYear: true }));
    },
    wordsOnly: true,
  },
  // 9:00-17:00 · 9 am to 5 pm · 10-11 am
  {
    re: rx(`${B}${TIME}\\s?(?:-|–|to)\\s?${TIME}${E}`),
    speak: (m, ctx) => {
      const b = timeText(ctx, m[5], m[6], m[7], m[8]);
      const a = timeText(ctx, m[1], m[2], m[3], m[4] ?? (m[3] === undefined ? m[8] : undefined));
      return a === null || b === null ? null : range(a, b, ctx);
    },
    wordsOnly: true,
  },
  // 10:30 · 17:00 · 5 pm · 10:30 a.m. · शाम 5:30 बजे · 5:30 in the evening
  {
    re: rx(`${B}${PERIOD_BEFORE}${TIME}${PERIOD_AFTER}(?![\\p{L}\\p{N}\\p{M}]|:\\d)`),
    speak: (m, ctx) => timeText(ctx, m[2], m[3], m[4], m[5], m[1] ?? m[7]),
    wordsOnly: true,
  },
  // FY 2024-25 · 2024-2025
  {
    re: rx(`${B}((?:19|20)\\d\\d)\\s?[-–]\\s?(\\d{2}|\\d{4})(?![\\p{L}\\p{N}\\p{M}]|[-–]\\d)`),
    speak: (m, ctx) => {
      const start = Number(m[1]);
      const end = m[2]!.length === 2 ? Math.floor(start / 100) * 100 + Number(m[2]) : Number(m[2]);
      if (end <= start || end - start > 10) return null;
      const year = (y: number) => (ctx.family === 'en' ? englishYear(y) : ctx.say.numberToWords(y, ctx.language));
      return range(year(start), year(end), ctx);
    },
    wordsOnly: true,
  },
  // +91 98765 43210 · 1800-123-4567 · 123 456 (digit groups written apart) · 10-12 (a range)
  {
    re: rx(`${B}(\\+)?(\\d+(?:(?:\\s|-|–)\\d+)+)${E}`),
    speak: (m, ctx) => {
      const plus = m[1] !== undefined;
      const groups = m[2]!.split(/\s|-|–/);
      const total = groups.reduce((n, g) => n + g.length, 0);
      if (plus || total >= 5) return digitByDigit(plus, groups, ctx);
      if (groups.length === 2 && /^\d+[-–]\d+$/.test(m[2]!) && ctx.family !== 'numeric') {
        return range(cardinal(groups[0]!, ctx), cardinal(groups[1]!, ctx), ctx);
      }
      return null;
    },
  },
  // 9876543210 · +919876543210 · OTP 482913 · 0123 (5+ digits or a leading zero)
  {
    re: rx(`${B}(\\+)?(\\d{5,}|0\\d+)(?![\\p{L}\\p{N}\\p{M}]|[.,]\\d)`),
    speak: (m, ctx) => digitByDigit(m[1] !== undefined, [m[2]!], ctx),
  },
  // 1,25,000 · 2.5 · 50% · 14th · 42
  {
    re: rx(`${B}${NUM}(%|st|nd|rd|th)?${E}`),
    speak: (m, ctx) => plainNumber(m[1]!, m[2], m[3], ctx),
    wordsOnly: true,
  },
];

/** An integer written without commas, in words; digit by digit when it is long or starts with 0. */
function cardinal(digits: string, ctx: Context): string {
  if (digits.length > 1 && digits.startsWith('0')) return digitByDigit(false, [digits], ctx);
  const n = Number(digits);
  return Number.isSafeInteger(n) ? ctx.say.numberToWords(n, ctx.language) : digitByDigit(false, [digits], ctx);
}

/** A plain number: comma groups, decimals, a percent sign or an English ordinal suffix. */
function plainNumber(intPart: string, frac: string | undefined, suffix: string | undefined, ctx: Context): string | null {
  const words = wordsFor(ctx.family);
  const suf = suffix?.toLowerCase();
  if (suf && suf !== '%' && (frac || intPart.includes(','))) return null;
  let said: string;
  if (intPart.includes(',')) {
    said = validGrouping(intPart)
      ? cardinal(intPart.replace(/,/g, ''), ctx)
      : intPart
          .split(',')
          .map((g) => cardinal(g, ctx))
          .join(', ');
  } else if (intPart.length >= 5 && !frac && !suf) {
    return digitByDigit(false, [intPart], ctx);
  } else {
    said = cardinal(intPart, ctx);
  }
  if (frac) said += ` ${words.point} ${[...frac].map((d) => ctx.say.digitWord(d, ctx.language)).join(' ')}`;
  if (suf === '%') return `${said} ${words.percent}`;
  if (suf) {
    const n = Number(intPart);
    if (ctx.family !== 'en' || intPart.startsWith('0') || n === 0 || !Number.isSafeInteger(n)) return null;
    return englishOrdinal(n);
  }
  return said;
}

/** Devanagari digits (०-९) as ASCII digits, so every rule sees one kind of digit. */
function asciiDigits(text: string): string {
  return text.replace(/[\u0966-\u096F]/g, (d) => String.fromCharCode(d.charCodeAt(0) - 0x0966 + 48));
}

/**
 * Applies every rule to `text` for `language` and collapses whitespace. Languages without word
 * tables only get the digit-by-digit rules. Never throws.
 */
export function normaliseText(text: string, language: string, say: Speaker): string {
  const family = spokenLanguage(language);
  const ctx: Context = { language, family, say };
  const held: string[] = [];
  const hold = (spoken: string): string => {
    if (held.length > PH_MAX) return spoken;
    held.push(spoken);
    return PH_OPEN + String.fromCharCode(PH_BASE + held.length - 1);
  };
  let out = asciiDigits(text.replace(/\uE000/g, ''));
  for (const rule of RULES) {
    if (rule.wordsOnly && family === 'numeric') continue;
    out = out.replace(rule.re, (...args: unknown[]) => {
      const groups = args.slice(0, -2) as Groups; // drop (offset, whole string)
      const spoken = rule.speak(groups, ctx);
      return spoken === null ? String(groups[0]) : hold(spoken);
    });
  }
  out = out.replace(PH_RE, (_, c: string) => held[c.charCodeAt(0) - PH_BASE] ?? '');
  return out.replace(/\s+/g, ' ').trim();
}
