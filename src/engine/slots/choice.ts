/**
 * The `choice` extractor (docs/agents.md "Capture and slot types": `options: [{id, synonyms}]` → the option id).
 *
 * An option is picked by its id (`general_ward` is also heard as "general ward") or any of its
 * synonyms, matched as whole words, case-insensitively, with plural `s` ignored; a denied
 * phrase ("don't cancel", "cancel mat karo") does not count. The longest matching phrase
 * wins, then the earliest. In answer mode, with no phrase matched, "the first
 * one" / "option 2" / "pehla" / "doosra" pick by position.
 */
import type { ChoiceOption } from '../../domain/agent.js';
import { normalizeWord, tokenize } from './tokens.js';

const ORDINAL_PICK: Record<string, number> = Object.fromEntries(
  Object.entries({
    first: 0,
    '1st': 0,
    pehla: 0,
    pehli: 0,
    pahla: 0,
    pahli: 0,
    पहला: 0,
    पहली: 0,
    second: 1,
    '2nd': 1,
    doosra: 1,
    dusra: 1,
    doosri: 1,
    dusri: 1,
    दूसरा: 1,
    दूसरी: 1,
    third: 2,
    '3rd': 2,
    teesra: 2,
    tisra: 2,
    teesri: 2,
    tisri: 2,
    तीसरा: 2,
    तीसरी: 2,
    fourth: 3,
    '4th': 3,
    chautha: 3,
    chauthi: 3,
    चौथा: 3,
    चौथी: 3,
    fifth: 4,
    '5th': 4,
    paanchva: 4,
    paanchvi: 4,
    last: -1,
    aakhri: -1,
    akhri: -1,
    आखिरी: -1,
  }).map(([k, v]) => [normalizeWord(k), v]),
);

const NEGATE_BEFORE = new Set(['not', "don't", 'dont', 'no', 'never', "didn't", 'na', 'mat', 'nahi', 'नहीं', 'मत'].map(normalizeWord));
const NEGATE_AFTER = new Set(['mat', 'nahi', 'nahin', 'मत', 'नहीं'].map(normalizeWord));

function stem(w: string): string {
  return /^[a-z]{4,}s$/.test(w) ? w.slice(0, -1) : w;
}

function words(text: string): string[] {
  return tokenize(text.replace(/_/g, ' '))
    .filter((t) => t.kind !== 'sym')
    .map((t) => stem(t.text));
}

/**
 * Extracts a choice.
 *
 * @param options the slot's options (from the capture)
 * @param mode `answer` also accepts picks by position; `volunteer` needs an id or synonym
 * @returns the option id and the words that picked it, or null (also when two options match
 *          equally well). Never throws.
 */
export function extractChoice(
  utterance: string,
  options: readonly ChoiceOption[],
  mode: 'answer' | 'volunteer',
): { value: string; matched: string } | null {
  const all = tokenize(utterance);
  const toks = all.filter((t) => t.kind !== 'sym');
  const fullIndex = all.map((t, i) => (t.kind === 'sym' ? -1 : i)).filter((i) => i >= 0);
  const said = toks.map((t) => stem(t.text));
  /** "don't cancel", "cancel mat karo": the phrase at [i, i+len) is denied (punctuation in between breaks it). */
  const negated = (i: number, len: number): boolean =>
    NEGATE_BEFORE.has(all[fullIndex[i]! - 1]?.text ?? '') || NEGATE_AFTER.has(all[fullIndex[i + len - 1]! + 1]?.text ?? '');
  let best: { id: string; len: number; at: number } | null = null;
  let tie = false;
  for (const option of options) {
    for (const phrase of [option.id, ...option.synonyms]) {
      const ph = words(phrase);
      if (ph.length === 0) continue;
      for (let i = 0; i + ph.length <= said.length; i++) {
        if (!ph.every((w, k) => said[i + k] === w) || negated(i, ph.length)) continue;
        if (!best || ph.length > best.len || (ph.length === best.len && i < best.at)) {
          best = { id: option.id, len: ph.length, at: i };
          tie = false;
        } else if (ph.length === best.len && i === best.at && option.id !== best.id) {
          tie = true;
        }
        break;
      }
    }
  }
  if (best && !tie) return { value: best.id, matched: utterance.slice(toks[best.at]!.start, toks[best.at + best.len - 1]!.end) };
  if (mode === 'volunteer') return null;
  for (let i = 0; i < toks.length; i++) {
    const w = toks[i]!.text;
    let idx = ORDINAL_PICK[w];
    let len = 1;
    if (idx === undefined && (w === 'option' || w === 'number' || w === 'no') && /^\d+$/.test(toks[i + 1]?.text ?? '')) {
      idx = Number(toks[i + 1]!.text) - 1;
      len = 2;
    }
    if (idx === undefined) continue;
    const option = idx < 0 ? options[options.length - 1] : options[idx];
    if (option) return { value: option.id, matched: utterance.slice(toks[i]!.start, toks[i + len - 1]!.end) };
  }
  return null;
}
