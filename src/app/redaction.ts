/**
 * A tenant's redaction of transcripts in its events (docs/events.md "Redaction"): what was
 * heard, said or keyed, and what was captured, masked (`digits`) or left out (`text`).
 */
import { MULTIPLIER_WORDS, SMALL_WORDS } from '../engine/slots/number-words.js';
import { normalizeWord } from '../engine/slots/tokens.js';
import type { TranscriptRedaction } from '../store/index.js';

/** Fields of event data that hold what was heard, said or keyed. */
const TRANSCRIPT_FIELDS = new Set(['heard', 'reply', 'digits', 'text']);
/** Fields whose every value was captured from the caller. */
const CAPTURED_FIELDS = new Set(['extracted']);
/** A digit: ASCII or Devanagari. */
const DIGIT = /[0-9\u0966-\u096f]/g;
/** Words, with what lies between them. */
const WORD = /[\p{L}\p{M}][\p{L}\p{M}']*/gu;
/** What may stand between the words of one spoken number: spaces, hyphens, commas, "and". */
const JOINER = /^[\s,-]*$/;
/** Words said inside a run of digits besides the number words themselves. */
const RUN_WORDS = new Set(['oh', 'double', 'triple', 'and']);

const isNumberWord = (w: string): boolean => {
  const n = normalizeWord(w);
  return SMALL_WORDS.has(n) || MULTIPLIER_WORDS.has(n) || n === 'oh' || n === 'double' || n === 'triple';
};

/**
 * `text` with every digit masked (`•`), and every run of two or more number words ("nine
 * eight seven six", "das hazaar", "double five") masked word by word: a number said in words is
 * as sensitive as its digits, while a lone "one" or "do" (a Hindi two, an English verb) is left.
 */
export function maskNumbers(text: string): string {
  const masked = text.replace(DIGIT, '•');
  const words = [...masked.matchAll(WORD)];
  const hide = new Set<number>();
  let run: number[] = [];
  const close = () => {
    if (run.filter((i) => !RUN_WORDS.has(normalizeWord(words[i]![0]))).length >= 2) for (const i of run) hide.add(i);
    run = [];
  };
  words.forEach((m, i) => {
    const joined = i > 0 && JOINER.test(masked.slice(words[i - 1]!.index + words[i - 1]![0].length, m.index));
    if (!joined) close();
    if (isNumberWord(m[0]) || (run.length > 0 && RUN_WORDS.has(normalizeWord(m[0])))) run.push(i);
    else close();
  });
  close();
  if (hide.size === 0) return masked;
  let out = '';
  let at = 0;
  words.forEach((m, i) => {
    if (!hide.has(i)) return;
    out += masked.slice(at, m.index) + '•'.repeat(m[0].length);
    at = m.index + m[0].length;
  });
  return out + masked.slice(at);
}

/**
 * `data` with its transcript text masked (`digits`: {@link maskNumbers}) or dropped (`text`:
 * null, captured values `{}`), as the tenant's `redact_transcripts` says; as it is for `off`.
 */
export function redact(data: Record<string, unknown>, mode: TranscriptRedaction): Record<string, unknown> {
  if (mode === 'off') return data;
  const mask = (v: unknown): unknown => {
    if (typeof v !== 'string' && typeof v !== 'number') return v;
    return mode === 'digits' ? maskNumbers(String(v)) : null;
  };
  const walk = (v: unknown, captured = false): unknown => {
    if (Array.isArray(v)) return v.map((x) => walk(x, captured));
    if (v === null || typeof v !== 'object') return captured ? mask(v) : v;
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (CAPTURED_FIELDS.has(k)) out[k] = mode === 'text' ? {} : walk(x, true);
      else if (TRANSCRIPT_FIELDS.has(k) && typeof x === 'string') out[k] = mask(x);
      else out[k] = walk(x, captured);
    }
    return out;
  };
  return walk(data) as Record<string, unknown>;
}
