/**
 * Spoken numbers → digits: the numeraliser rewrites every run of number words
 * in a token list into one number token, so the typed extractors match digits only.
 *
 * English: "one thousand three hundred and thirty" → 1330, "twenty-five" → 25, "a hundred" →
 * 100, "a couple" → 2, "third" → 3rd. Hindi: "paanch sau" → 500, "ek lakh pachees hazaar" →
 * 125000, "dedh lakh" → 150000, "saadhe teen hazaar" → 3500. Mixed: "1.5 lakh", "5k", "2 crore".
 * Two small numbers in a row stay apart ("nine eight" → 9 8, "nau aath" → 9 8), which is how
 * digit strings are read out.
 */
import { COUNT_NOUNS, CURRENCY_AFTER } from './keywords.js';
import {
  COUNT_WORDS,
  FRACTION_PREFIXES,
  FRACTION_WORDS,
  MULTIPLIER_WORDS,
  ONE_PRONOUN_BEFORE,
  ORDINAL_WORDS,
  SAATH_WITH_BEFORE,
  SMALL_WORDS,
  type WordKind,
} from './number-words.js';
import { normalizeWord, Prepared, tokenize, type Tok } from './tokens.js';

/** Options of {@link numeralize}. */
export interface NumeralizeOptions {
  /** Read dedh/dhai, saadhe/sava/paune and "and a half" as fractions (amounts, counts). Time reads them itself. */
  fractions?: boolean;
  /** Digit-string reading: `oh` is 0, `double five` is 55, `triple seven` is 777. */
  digitMode?: boolean;
}

const DO_WORDS = new Set(['do', normalizeWord('दो')]);
const DO_CONTEXT = new Set(
  [...COUNT_NOUNS, ...CURRENCY_AFTER, 'baje', 'bje', 'bajey', 'बजे', 'tarikh', 'tareekh', 'tarik', 'तारीख', 'hi', 'hee', 'ही'].map(
    normalizeWord,
  ),
);
const DO_AFTER = new Set(['sirf', 'bas', 'hum', 'humlog', 'total', 'only', 'just', 'सिर्फ', 'बस', 'हम'].map(normalizeWord));
const ARTICLES = new Set(['a', 'an']);
const SECOND_NOT_ORDINAL_BEFORE = new Set(['a', 'one', '1', 'per', 'ek', 'this', 'just', 'half']);
const COUNT_NOUN_SET: ReadonlySet<string> = new Set(COUNT_NOUNS);
/** Digit-mode words that repeat the next digit ("double five" → 55), with how many times. */
const REPEAT_WORDS: ReadonlyMap<string, number> = new Map([
  ['double', 2],
  ['triple', 3],
  ['dabal', 2],
  ['डबल', 2],
]);

type Last = 'none' | WordKind | 'digit' | 'hundred' | 'big' | 'frac' | 'article';

interface Group {
  value: number;
  end: number;
  ordinal: boolean;
  big: number;
  text?: string;
}

function isNumberish(t: Tok | undefined): boolean {
  if (!t) return false;
  if (t.kind === 'num') return t.value !== undefined && !t.ordinal;
  return (SMALL_WORDS.has(t.text) && !DO_WORDS.has(t.text)) || MULTIPLIER_WORDS.has(t.text);
}

function isUnitWord(t: Tok | undefined, opts: NumeralizeOptions): boolean {
  if (!t) return false;
  if (opts.digitMode && t.text === 'oh') return true;
  const w = SMALL_WORDS.get(t.text);
  if (w) return w.value < 10;
  return t.kind === 'num' && /^\d$/.test(t.text);
}

/** Whether the small number word at `j` is really a number here (do, one, saath are also ordinary words). */
function smallWordHere(toks: Tok[], j: number): boolean {
  const w = toks[j]!.text;
  const prev = toks[j - 1];
  const next = toks[j + 1];
  if (DO_WORDS.has(w)) {
    if (isNumberish(next) || isNumberish(prev) || (next && DO_CONTEXT.has(next.text)) || (prev && DO_AFTER.has(prev.text))) return true;
    return toks.filter((t) => t.kind !== 'sym').length === 1;
  }
  if (w === 'one' && prev && ONE_PRONOUN_BEFORE.has(prev.text)) {
    return isNumberish(next) || (next !== undefined && COUNT_NOUN_SET.has(next.text));
  }
  if (w === 'saath' && prev && SAATH_WITH_BEFORE.has(prev.text)) return false;
  return true;
}

function smallAt(toks: Tok[], j: number, opts: NumeralizeOptions): { value: number; kind: WordKind | 'digit' } | null {
  const t = toks[j]!;
  if (t.kind === 'num') return t.value !== undefined && !t.ordinal ? { value: t.value, kind: 'digit' } : null;
  if (opts.digitMode && t.text === 'oh') return { value: 0, kind: 'unit' };
  const w = SMALL_WORDS.get(t.text);
  return w && smallWordHere(toks, j) ? w : null;
}

function ordinalSuffix(n: number): string {
  if (n % 100 >= 11 && n % 100 <= 13) return 'th';
  return ['th', 'st', 'nd', 'rd'][n % 10] ?? 'th';
}

/** A double/triple digit ("double five" → "55"), digit mode only. */
function repeatedDigit(toks: Tok[], i: number, opts: NumeralizeOptions): Group | null {
  const times = REPEAT_WORDS.get(toks[i]!.text);
  const next = toks[i + 1];
  if (!opts.digitMode || times === undefined || !isUnitWord(next, opts)) return null;
  const d = next!.kind === 'num' ? next!.text : String(next!.text === 'oh' ? 0 : SMALL_WORDS.get(next!.text)!.value);
  const text = d.repeat(times);
  return { value: Number(text), end: i + 2, ordinal: false, big: 0, text };
}

/** Whether a small number may continue a spoken number whose last part was `last`. */
function canFollow(last: Last, small: { value: number; kind: WordKind | 'digit' }, current: number, lastBig: number): boolean {
  switch (last) {
    case 'none':
      return true;
    case 'tens':
      return small.kind === 'unit' && small.value > 0;
    case 'hundred':
      return small.value < 100 && small.kind !== 'digit' && current % 100 === 0;
    case 'big':
      return current === 0 && small.value < Math.min(lastBig, 1000);
    default:
      return false;
  }
}

/** Reads one spoken number starting at token `i`; null when none starts there. */
function parseGroup(toks: Tok[], i: number, opts: NumeralizeOptions): Group | null {
  const rep = repeatedDigit(toks, i, opts);
  if (rep) return rep;
  let total = 0;
  let current = 0;
  let last: Last = 'none';
  let lastBig = Infinity;
  let big = 0;
  let pendingFrac = 0;
  let words = false;
  let j = i;
  const started = (): boolean => last !== 'none';
  for (; j < toks.length; j++) {
    const t = toks[j]!;
    const w = t.text;
    const next = toks[j + 1];
    if (started() && w === '-' && last === 'tens' && (isUnitWord(next, opts) || ORDINAL_WORDS.has(next?.text ?? ''))) continue;
    if (started() && (w === 'and' || w === 'aur') && (last === 'hundred' || last === 'big') && next && SMALL_WORDS.has(next.text)) continue;
    if (opts.fractions && started() && w === 'and' && next?.text === 'a' && toks[j + 2]?.text === 'half' && last !== 'article') {
      current += 0.5;
      j += 2;
      words = true;
      continue;
    }
    if (!started() && ARTICLES.has(w) && next && (MULTIPLIER_WORDS.has(next.text) || COUNT_WORDS.has(next.text))) {
      current = 1;
      last = 'article';
      continue;
    }
    if (
      opts.fractions &&
      !started() &&
      pendingFrac === 0 &&
      FRACTION_PREFIXES.has(w) &&
      (isNumberish(next) || (next && SMALL_WORDS.has(next.text)))
    ) {
      pendingFrac = FRACTION_PREFIXES.get(w)!;
      words = true;
      continue;
    }
    if (opts.fractions && !started() && FRACTION_WORDS.has(w)) {
      current = FRACTION_WORDS.get(w)!;
      last = 'frac';
      words = true;
      continue;
    }
    const ord = ORDINAL_WORDS.get(w);
    if (
      ord !== undefined &&
      (!started() || last === 'tens') &&
      !(w === 'second' && (SECOND_NOT_ORDINAL_BEFORE.has(toks[j - 1]?.text ?? '') || next?.text.startsWith('thought')))
    ) {
      const n = total + current + ord;
      return { value: n, end: j + 1, ordinal: true, big, text: `${n}${ordinalSuffix(n)}` };
    }
    const small = smallAt(toks, j, opts);
    if (small) {
      if (!canFollow(last, small, current, lastBig)) break;
      current += small.value + pendingFrac;
      pendingFrac = 0;
      last = small.kind;
      if (small.kind !== 'digit') words = true;
      continue;
    }
    const count = COUNT_WORDS.get(w);
    if (count !== undefined && (last === 'article' || (!started() && w === 'dozen') || (w === 'dozen' && current > 0 && current < 100))) {
      current = w === 'dozen' ? (current || 1) * count : count;
      last = 'unit';
      words = true;
      continue;
    }
    const afterDigits = (w === 'k' || w === 'cr') && started() && last !== 'article';
    const mult = afterDigits || (MULTIPLIER_WORDS.has(w) && w !== 'cr') ? (w === 'k' ? 1000 : MULTIPLIER_WORDS.get(w)!) : undefined;
    if (mult !== undefined && (started() || pendingFrac !== 0 || mult >= 100)) {
      const base = current || 1 + pendingFrac;
      pendingFrac = 0;
      if (mult === 100) {
        if (current >= 100) break;
        current = base * 100;
        last = 'hundred';
      } else {
        if (mult >= lastBig) break;
        total += base * mult;
        current = 0;
        lastBig = mult;
        last = 'big';
      }
      big = Math.max(big, mult);
      words = true;
      continue;
    }
    break;
  }
  if (!started() || last === 'article' || !words) return null;
  return { value: total + current, end: j, ordinal: false, big };
}

function formatNumber(n: number): string {
  return Number.isInteger(n) ? String(n) : String(Math.round(n * 1e6) / 1e6);
}

/**
 * Rewrites each spoken number in `toks` as one `num` token (value, `fromWords`, `big`, and for
 * ordinals `ordinal` with text like `3rd`), spanning the original words it replaces. Tokens
 * that are not part of a spoken number are passed through unchanged. Never throws.
 */
export function numeralize(toks: Tok[], opts: NumeralizeOptions = {}): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < toks.length) {
    const g = parseGroup(toks, i, opts);
    if (!g || g.end <= i) {
      out.push(toks[i]!);
      i += 1;
      continue;
    }
    const first = toks[i]!;
    const lastTok = toks[g.end - 1]!;
    out.push({
      text: g.text ?? formatNumber(g.value),
      orig: toks
        .slice(i, g.end)
        .map((t) => t.orig)
        .join(' '),
      start: first.start,
      end: lastTok.end,
      kind: 'num',
      value: g.value,
      fromWords: true,
      big: g.big,
      ...(g.ordinal ? { ordinal: true } : {}),
    });
    i = g.end;
  }
  return out;
}

/** Tokenises and numeralises an utterance: the form every typed extractor matches against. */
export function prepare(utterance: string, opts: NumeralizeOptions = {}): Prepared {
  // Object.assign rather than a spread: V8 copies a spread object that gains a new key slowly.
  const toks = numeralize(tokenize(utterance), opts).map((t) =>
    t.fromWords ? Object.assign({}, t, { orig: utterance.slice(t.start, t.end) }) : t,
  );
  return new Prepared(utterance, toks);
}

/**
 * The value of a text that is one spoken or written number, in English or Hindi/Hinglish.
 *
 * @example parseNumberWords('one thousand three hundred and thirty') // 1330
 * @example parseNumberWords('dedh lakh') // 150000
 * @example parseNumberWords('₹1,25,000') // null: the symbol is not part of a number (use extractSlot with type amount)
 * @returns the number, or null when the text is not exactly one number ("nine eight" is two). Never throws.
 */
export function parseNumberWords(text: string): number | null {
  const toks = numeralize(tokenize(text), { fractions: true });
  const meaningful = toks.filter((t) => !(t.kind === 'sym' && /^[.,!?;:]$/.test(t.text)));
  if (meaningful.length !== 1) return null;
  const only = meaningful[0]!;
  return only.kind === 'num' && only.value !== undefined && !only.ordinal ? only.value : null;
}

/**
 * The digit string of a spoken or written digit sequence: "nine eight double five" → "9855",
 * "nau aath saat" → "987", "98765 43210" → "9876543210". Words that are not numbers end nothing;
 * they are skipped.
 *
 * @returns the digits, or null when the text holds no digits. Never throws.
 */
export function spokenDigits(text: string): string | null {
  const toks = numeralize(tokenize(text), { digitMode: true });
  const digits = toks
    .filter((t) => t.kind === 'num' && t.value !== undefined && !t.ordinal && /^\d+$/.test(t.text))
    .map((t) => t.text)
    .join('');
  return digits === '' ? null : digits;
}
