/**
 * Whether two utterances say the same thing as far as the slot extractors can tell: both are
 * read exactly as the typed extractors read a caller's words ({@link prepare}: lower case,
 * `p.m.`/`p m` after a clock number → `pm`, `o'clock` → `oclock`, Devanagari digits → ASCII,
 * spoken numbers → digits), punctuation and symbols dropped, and a run of digit tokens read as
 * one digit string (how a number is read out digit by digit: "nine eight seven" and "987" are
 * alike). So "five p m" and "5 pm", "Priya Sharma." and "priya sharma" are the same; "fever" and
 * "the what" are not.
 *
 * `vagent call simulate` uses it to mark a line the recogniser misheard (docs/media.md).
 */
import { prepare } from './numbers.js';

/**
 * The words of `text` as the extractors compare them (see the module comment), in order.
 * @example comparableWords('At five p.m., please') // ['at', '5', 'pm', 'please']
 * Never throws.
 */
export function comparableWords(text: string): string[] {
  const out: string[] = [];
  let digitRun = false;
  for (const t of prepare(text).toks) {
    if (t.kind === 'sym') continue;
    const digits = /^\d+$/.test(t.text);
    if (digits && digitRun) out[out.length - 1] += t.text;
    else out.push(t.text);
    digitRun = digits;
  }
  return out;
}

/**
 * True when `heard` says what `said` said once both are read as the extractors read them
 * ({@link comparableWords}). Never throws.
 */
export function sameWords(said: string, heard: string): boolean {
  const a = comparableWords(said);
  const b = comparableWords(heard);
  return a.length === b.length && a.every((w, i) => w === b[i]);
}
