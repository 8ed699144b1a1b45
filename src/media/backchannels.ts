/**
 * Backchannels: the words and phrases a listener says to show they are following, not to take
 * the turn ("haan ji", "okay okay", "hmm", "अच्छा"), and how recogniser text is matched against
 * them. The barge-in policy (./barge-in.ts) lets a caller's backchannel during playout pass.
 */

/**
 * Words and phrases a listener says to show they are following, not to take the turn
 * ("backchannels"): English, Hindi in Latin script as Indian callers and recognisers spell it,
 * and Devanagari. Matched on whole normalised tokens; runs of letters are folded first, so
 * "hmmm", "mmmm", "okkk" and "haaan" match too.
 */
export const BACKCHANNELS: readonly string[] = [
  // English
  'ok',
  'okay',
  'okey',
  'k',
  'uh huh',
  'uhhuh',
  'mhm',
  'mm',
  'hm',
  'hmm',
  'mm hmm',
  'um',
  'uh',
  'ah',
  'oh',
  'right',
  'alright',
  'all right',
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'i see',
  'got it',
  'fine',
  'cool',
  'go on',
  'yes yes',
  // Hindi / Hinglish, Latin script
  'ha',
  'haa',
  'haan',
  'han',
  'hanji',
  'haanji',
  'haan ji',
  'han ji',
  'ha ji',
  'ji',
  'jee',
  'ji haan',
  'ji han',
  'achha',
  'acha',
  'accha',
  'achchha',
  'theek',
  'thik',
  'theek hai',
  'thik hai',
  'thik he',
  'sahi',
  'sahi hai',
  'bilkul',
  // Devanagari
  'हाँ',
  'हां',
  'हा',
  'जी',
  'हाँ जी',
  'हां जी',
  'जी हाँ',
  'जी हां',
  'अच्छा',
  'ठीक',
  'ठीक है',
  'सही',
  'बिल्कुल',
  'हम्म',
  'हम',
];

/**
 * Backchannels that also answer a yes/no question: while the playing clip asks one (a confirm
 * prompt or readback), these are the answer and interrupt.
 */
export const ANSWER_BACKCHANNELS: readonly string[] = [
  'ok',
  'okay',
  'okey',
  'k',
  'uh huh',
  'uhhuh',
  'mhm',
  'mm hmm',
  'right',
  'alright',
  'all right',
  'yes',
  'yeah',
  'yep',
  'yup',
  'sure',
  'yes yes',
  'fine',
  'ha',
  'haa',
  'haan',
  'han',
  'hanji',
  'haanji',
  'haan ji',
  'han ji',
  'ha ji',
  'ji',
  'jee',
  'ji haan',
  'ji han',
  'theek hai',
  'thik hai',
  'thik he',
  'sahi',
  'sahi hai',
  'bilkul',
  'हाँ',
  'हां',
  'हा',
  'जी',
  'हाँ जी',
  'हां जी',
  'जी हाँ',
  'जी हां',
  'ठीक है',
  'सही',
  'बिल्कुल',
];

/**
 * Normalises recogniser text into tokens: lower case, Unicode NFC, punctuation and hyphens to
 * spaces, runs of one Latin letter folded to at most two ("hmmm" → "hmm", "haaan" → "haan",
 * "okkk" → "okk" → "ok" by a small fold table).
 */
export function backchannelTokens(text: string): string[] {
  const folded = text
    .normalize('NFC')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\s]+/gu, ' ')
    .replace(/([a-z])\1{2,}/g, '$1$1');
  return folded
    .split(/\s+/)
    .filter((t) => t !== '')
    .map((t) => FOLD.get(t) ?? t);
}

/** Spellings folded onto one token after letter runs are cut to two. */
const FOLD = new Map<string, string>([
  ['okk', 'ok'],
  ['hhmm', 'hmm'],
  ['hann', 'han'],
  ['yess', 'yes'],
  ['uhh', 'uh'],
  ['umm', 'um'],
  ['ohh', 'oh'],
  ['ahh', 'ah'],
]);

function phraseSet(list: readonly string[]): { phrases: Set<string>; longest: number } {
  const phrases = new Set<string>();
  let longest = 1;
  for (const p of list) {
    const toks = backchannelTokens(p);
    phrases.add(toks.join(' '));
    longest = Math.max(longest, toks.length);
  }
  return { phrases, longest };
}
const ALL_BACKCHANNELS = phraseSet(BACKCHANNELS);
const ANSWERS = phraseSet(ANSWER_BACKCHANNELS);

/** True when `tokens` split entirely into phrases of `set` (longest phrase first). */
function coveredBy(tokens: string[], set: { phrases: Set<string>; longest: number }): boolean {
  let i = 0;
  outer: while (i < tokens.length) {
    for (let n = Math.min(set.longest, tokens.length - i); n >= 1; n--) {
      if (set.phrases.has(tokens.slice(i, i + n).join(' '))) {
        i += n;
        continue outer;
      }
    }
    return false;
  }
  return true;
}

/**
 * True when the whole of `text` is backchannel ("haan ji", "okay okay", "hmm", "अच्छा"), false
 * when it says anything more ("haan ji, but make it Tuesday") or nothing at all.
 */
export function isBackchannel(text: string): boolean {
  const toks = backchannelTokens(text);
  return toks.length > 0 && isBackchannelTokens(toks);
}

/** True when tokens from {@link backchannelTokens} split entirely into {@link BACKCHANNELS} phrases. */
export function isBackchannelTokens(tokens: string[]): boolean {
  return coveredBy(tokens, ALL_BACKCHANNELS);
}

/** True when tokens from {@link backchannelTokens} split entirely into {@link ANSWER_BACKCHANNELS} phrases. */
export function isAnswerTokens(tokens: string[]): boolean {
  return coveredBy(tokens, ANSWERS);
}
