/**
 * Utterance preparation for the slot extractors (step capture): tokens with their
 * offsets in the caller's original words, a normalised lower-case text for pattern matching,
 * and the map back from a match in that text to the words that produced it (for the
 * decision trace).
 *
 * Normalisation: lower case; Devanagari digits → ASCII; Devanagari nukta dropped and
 * chandrabindu written as anusvara (so हाँ = हां); curly apostrophes straightened;
 * `a.m.`/`p.m.` → `am`/`pm`; `o'clock`, `o"clock`, `o clock` → `oclock`; digit groups written
 * with commas (`1,25,000`, `1,490`) lose their commas.
 */
import { EN_ONES, EN_TENS } from '../spoken-words.js';
import { HINDI_NEGATIONS } from './keywords.js';

/** One token of an utterance. Offsets are UTF-16 indices into the original utterance. */
export interface Tok {
  /** Normalised text: a word, a number (`1330`, `1.5`, `10:30`, `3/14`, `3rd`) or one symbol. */
  text: string;
  /** The original characters (case kept), for names and the trace. */
  orig: string;
  /** Start offset (inclusive) in the original utterance. */
  start: number;
  /** End offset (exclusive) in the original utterance. */
  end: number;
  /** `word` (letters), `num` (digits, possibly with separators or an ordinal suffix) or `sym`. */
  kind: 'word' | 'num' | 'sym';
  /** Numeric value of a plain number token (`1,490` → 1490, `1.5` → 1.5, `3rd` → 3); absent for `10:30`, `3/14`. */
  value?: number;
  /** True for ordinals (`3rd`, `third`). */
  ordinal?: boolean;
  /** True when the number was written in words (`one thousand`, `paanch sau`). */
  fromWords?: boolean;
  /** The largest multiplier word in a spoken number (`lakh` → 100000); 0 when none. */
  big?: number;
}

const DEVANAGARI_DIGIT_ZERO = 0x0966;
const NUKTA_PRECOMPOSED: Record<string, string> = {
  '\u0958': '\u0915',
  '\u0959': '\u0916',
  '\u095A': '\u0917',
  '\u095B': '\u091C',
  '\u095C': '\u0921',
  '\u095D': '\u0922',
  '\u095E': '\u092B',
  '\u095F': '\u092F',
  '\u0929': '\u0928',
  '\u0931': '\u0930',
  '\u0934': '\u0933',
};

/**
 * Normalises one word or number for comparison (see the module comment). Used for tokens and
 * for keyword lists alike, so that both sides are written the same way.
 */
export function normalizeWord(s: string): string {
  let out = '';
  for (const ch of s.normalize('NFC').toLowerCase()) {
    const code = ch.codePointAt(0)!;
    if (code >= DEVANAGARI_DIGIT_ZERO && code <= DEVANAGARI_DIGIT_ZERO + 9) out += String(code - DEVANAGARI_DIGIT_ZERO);
    else if (ch === '\u093C')
      continue; // nukta
    else if (ch === '\u0901')
      out += '\u0902'; // chandrabindu → anusvara
    else if (ch === '’' || ch === '‘' || ch === 'ʼ') out += "'";
    else out += NUKTA_PRECOMPOSED[ch] ?? ch;
  }
  return out;
}

const TOKEN_RE = /[\p{L}\p{M}]+(?:['’ʼ][\p{L}\p{M}]+)*|\p{Nd}+(?:[.,:/]\p{Nd}+)*(?:(?:st|nd|rd|th)(?![\p{L}\p{M}]))?|\S/gu;
const GROUPED = /^\d{1,3}(?:,\d{2,3})+(?:\.\d+)?$/;
const PLAIN = /^\d+(?:\.\d+)?$/;
const ORDINAL = /^(\d{1,3})(?:st|nd|rd|th)$/;

function classify(orig: string, start: number): Tok {
  const text = normalizeWord(orig);
  const tok: Tok = { text, orig, start, end: start + orig.length, kind: 'sym' };
  if (/^\d/.test(text)) {
    tok.kind = 'num';
    const ord = ORDINAL.exec(text);
    if (ord) {
      tok.value = Number(ord[1]);
      tok.ordinal = true;
    } else if (GROUPED.test(text)) {
      tok.text = text.replace(/,/g, '');
      tok.value = Number(tok.text);
    } else if (PLAIN.test(text)) {
      tok.value = Number(text);
    }
    if (tok.value !== undefined && !(tok.value <= Number.MAX_SAFE_INTEGER)) delete tok.value; // a digit string, not a quantity
  } else if (/^[\p{L}\p{M}]/u.test(text)) {
    tok.kind = 'word';
  }
  return tok;
}

function merge(toks: Tok[], i: number, n: number, text: string): void {
  const first = toks[i]!;
  const last = toks[i + n - 1]!;
  toks.splice(i, n, { text, orig: '', start: first.start, end: last.end, kind: 'word' });
}

/** Words a clock hour or minute ends with, before a spelled-out "a m" / "p m". */
const CLOCK_WORDS = new Set([...EN_ONES.slice(1, 13), 'fifteen', ...EN_TENS.slice(2, 6), 'oclock', "o'clock", 'clock']);

/**
 * Token-level rewrites: `a . m .` → `am`, `o " clock` → `oclock`, and `p m` / `a m` after a
 * clock number (`five p m`: how speech recognisers write the letters said one by one).
 */
function mergeForms(toks: Tok[], raw: string): void {
  for (let i = 0; i < toks.length; i++) {
    const t = (k: number): string => toks[i + k]?.text ?? '';
    if ((t(0) === 'a' || t(0) === 'p') && t(1) === '.' && t(2) === 'm') {
      merge(toks, i, t(3) === '.' ? 4 : 3, `${t(0)}m`);
    } else if ((t(0) === 'a' || t(0) === 'p') && t(1) === 'm' && i > 0 && (/^\d+$/.test(t(-1)) || CLOCK_WORDS.has(t(-1)))) {
      merge(toks, i, 2, `${t(0)}m`);
    } else if (t(0) === "o'clock" || t(0) === 'oclock') {
      merge(toks, i, 1, 'oclock');
    } else if (t(0) === 'o' && t(1) === 'clock') {
      merge(toks, i, 2, 'oclock');
    } else if (t(0) === 'o' && (t(1) === '"' || t(1) === "'") && t(2) === 'clock') {
      merge(toks, i, 3, 'oclock');
    }
    const tok = toks[i]!;
    if (tok.orig === '') tok.orig = raw.slice(tok.start, tok.end);
  }
}

/** Splits an utterance into normalised tokens with their original offsets. Never throws. */
export function tokenize(raw: string): Tok[] {
  const toks: Tok[] = [];
  for (const m of raw.matchAll(TOKEN_RE)) toks.push(classify(m[0], m.index));
  mergeForms(toks, raw);
  return toks;
}

/** A regex match in {@link Prepared.text} with the original words it covers. */
export interface Hit {
  /** Start and end offsets in {@link Prepared.text}. */
  start: number;
  end: number;
  /** Capture groups by name (undefined when a group did not take part). */
  groups: Record<string, string | undefined>;
  /** Index of the first and one past the last token covered. */
  tokStart: number;
  tokEnd: number;
}

/**
 * An utterance ready for matching: `text` is the tokens' normalised texts joined by single
 * spaces, so patterns write a token boundary as a space (see {@link wordRegex}).
 */
export class Prepared {
  /** The normalised text. */
  readonly text: string;
  private readonly starts: number[] = [];

  /**
   * @param raw the caller's utterance as received
   * @param toks its tokens (possibly rewritten by the numeraliser)
   */
  constructor(
    readonly raw: string,
    readonly toks: Tok[],
  ) {
    let pos = 0;
    for (const t of toks) {
      this.starts.push(pos);
      pos += t.text.length + 1;
    }
    this.text = toks.map((t) => t.text).join(' ');
  }

  /** Index of the token that contains text offset `pos` (the next token for a space). */
  tokenAt(pos: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The original words of tokens `[from, to)`, trimmed. */
  origOf(from: number, to: number): string {
    if (to <= from) return '';
    return this.raw.slice(this.toks[from]!.start, this.toks[to - 1]!.end).trim();
  }

  /**
   * The longest match of `re` starting at each token (so matches may overlap: "1 at morning"
   * and "morning 11:30" are both seen), with token indices.
   */
  hits(re: RegExp): Hit[] {
    const sticky = stickyOf(re);
    const out: Hit[] = [];
    for (const start of this.starts) {
      sticky.lastIndex = start;
      const m = sticky.exec(this.text);
      if (!m || m[0].length === 0) continue;
      const end = start + m[0].length;
      out.push({ start, end, groups: { ...m.groups }, tokStart: this.tokenAt(start), tokEnd: this.tokenAt(end - 1) + 1 });
    }
    return out;
  }

  /** The original words of a hit. */
  origOfHit(h: Hit): string {
    return this.origOf(h.tokStart, h.tokEnd);
  }
}

const stickies = new WeakMap<RegExp, RegExp>();

function stickyOf(re: RegExp): RegExp {
  let s = stickies.get(re);
  if (!s) {
    s = new RegExp(re.source, `${re.flags.replace(/[gy]/g, '')}y`);
    stickies.set(re, s);
  }
  return s;
}

/**
 * A global, unicode regex for `source` anchored on token boundaries of {@link Prepared.text}:
 * the match starts at the text start or after a space and ends at the text end or before one.
 */
export function wordRegex(source: string): RegExp {
  return new RegExp(`(?<=^| )(?:${source})(?= |$)`, 'gu');
}

/** An alternation of phrases for a regex, longest first, with regex characters escaped. */
export function alternation(phrases: Iterable<string>): string {
  const list = [...new Set([...phrases].map((p) => normalizeWord(p)))].sort((a, b) => b.length - a.length);
  return list.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
}

/** Earliest hit first; for equal starts the longest. */
export function byPosition(a: Hit, b: Hit): number {
  return a.start - b.start || b.end - a.end;
}

/**
 * The best of a list of candidates: the earliest, except that a longer candidate that
 * overlaps it wins ("on the 1st" vs "the 1st of next month"). Null for an empty list.
 */
export function firstLongest<T extends { hit: Hit }>(items: readonly T[]): T | null {
  const sorted = [...items].sort((a, b) => byPosition(a.hit, b.hit));
  const first = sorted[0];
  if (!first) return null;
  let best = first;
  for (const c of sorted) {
    if (c.hit.start >= first.hit.end) break;
    if (c.hit.end - c.hit.start > best.hit.end - best.hit.start) best = c;
  }
  return best;
}

const NEGATORS_AFTER = new Set([...HINDI_NEGATIONS, 'not'].map(normalizeWord));

/** True when the words of `h` are denied: "not tomorrow", "kal nahi", "5 baje nahi". */
export function isNegated(p: Prepared, h: Hit): boolean {
  return p.toks[h.tokStart - 1]?.text === 'not' || NEGATORS_AFTER.has(p.toks[h.tokEnd]?.text ?? '');
}
