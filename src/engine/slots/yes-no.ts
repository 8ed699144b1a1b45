/**
 * Yes/no detection (docs/agents.md "Capture and slot types": `yes_no` → true/false; confirmations), English and
 * Hindi/Hinglish: "yes", "yeah", "correct", "sounds good", "haan", "ji haan", "theek hai",
 * "sahi hai", "bilkul", "हाँ", "जी"; "no", "nope", "nahi", "galat", "नहीं", "no, it's 98…".
 *
 * Rules, in order:
 * 1. Scan left to right for cue phrases (longest phrase at each position); the first strong
 *    cue decides. "Yes please, no subtitles" is yes; "No, that's all, thanks" is no.
 * 2. A yes cue followed by a Hindi negation within two words is no ("theek nahi hai").
 * 3. Closing phrases answer "anything else?" with no: "that's all", "that is all I need",
 *    "that will be all", "I'm good, thanks", "I'm all set"; so do declines that are not a bare
 *    no: "no need", "never mind", "leave it", "maybe later", "not now", "skip it", "I'll pass",
 *    "some other time", "baad mein"; "I'm good" or "I'm fine" alone.
 * 4. Corrections are no when no explicit yes/no follows them: "actually, make it 5 pm",
 *    "change it to …", "wait, …", "sorry, I have a meeting", "on second thought …"; but
 *    "actually, yes" is yes. A lone "sorry?" or "wait" is neither (it asks to repeat or hold).
 * 5. Unsure phrases ("not sure", "maybe", "pata nahi") give neither.
 * 6. With no strong cue, "please" / "go on" lean yes.
 */
import { HINDI_NEGATIONS } from './keywords.js';
import { normalizeWord, tokenize } from './tokens.js';

type Cue = 'yes' | 'no' | 'soft_no' | 'neutral' | 'unsure';

const CUES: Record<Cue, readonly string[]> = {
  yes: [
    'yes',
    'yeah',
    'yea',
    'yep',
    'yup',
    'ya',
    'yah',
    'yess',
    'yesss',
    'sure',
    'surely',
    'ok',
    'okay',
    'okey',
    'okk',
    'alright',
    'all right',
    'correct',
    "that's correct",
    'right',
    "that's right",
    'exactly',
    'absolutely',
    'definitely',
    'certainly',
    'indeed',
    'perfect',
    'great',
    'good',
    'fine',
    'super',
    'awesome',
    'excellent',
    'wonderful',
    'cool',
    'sounds good',
    'works',
    'that works',
    'go ahead',
    'please do',
    'do it',
    'confirm',
    'confirmed',
    'affirmative',
    'of course',
    'why not',
    'i agree',
    'agreed',
    'true',
    'nailed it',
    'no problem',
    'no worries',
    'no doubt',
    'all correct',
    "that's all correct",
    'that is all correct',
    'all good',
    'proceed',
    'book it',
    'please book',
    'haan',
    'han',
    'haa',
    'ha',
    'hanji',
    'haanji',
    'haan ji',
    'ji haan',
    'ji',
    'jee',
    'theek',
    'thik',
    'theek hai',
    'thik hai',
    'tik hai',
    'bilkul',
    'accha',
    'acha',
    'achha',
    'achcha',
    'chalega',
    'chalo',
    'sahi',
    'sahi hai',
    'kar do',
    'kardo',
    'kar dijiye',
    'ho jayega',
    'हाँ',
    'हां',
    'हा',
    'जी',
    'जी हाँ',
    'हाँ जी',
    'ठीक',
    'ठीक है',
    'सही',
    'सही है',
    'बिल्कुल',
    'बिलकुल',
    'अच्छा',
    'चलेगा',
    'ओके',
    'कर दो',
  ],
  no: [
    'no',
    'nope',
    'nah',
    'na',
    'naa',
    'not',
    'never',
    'nothing',
    'nevermind',
    'never mind',
    'wrong',
    'incorrect',
    'negative',
    'cancel',
    "don't",
    'dont',
    'do not',
    "didn't",
    "isn't",
    "wasn't",
    "that's all",
    'that is all',
    'that was all',
    'that would be all',
    "that'll be all",
    "it's all",
    'all i need',
    'all the info i need',
    'all i needed',
    'everything i need',
    'misheard',
    'mistake',
    'not now',
    'no thanks',
    'no thank you',
    'that will be all',
    'that should be all',
    'not needed',
    'not required',
    'not necessary',
    'not interested',
    'not today',
    'leave it',
    'leave that',
    'let it be',
    'forget it',
    'forget about it',
    'skip',
    'skip it',
    'skip that',
    "i'll pass",
    'i will pass',
    'pass on that',
    'later',
    'maybe later',
    'some other time',
    'another time',
    'next time',
    "i'm good thanks",
    "i'm good thank you",
    'i am good thanks',
    "i'm fine thanks",
    "i'm fine thank you",
    "i'm good for now",
    "i'm all set",
    'i am all set',
    "we're good thanks",
    'baad mein',
    'baad me',
    'abhi nahi',
    'बाद में',
    'nahi',
    'nahin',
    'nai',
    'nhi',
    'nahi ji',
    'ji nahi',
    'galat',
    'mat',
    'mat karo',
    'rehne do',
    'rehne dijiye',
    'bilkul nahi',
    'zaroorat nahi',
    'नहीं',
    'नही',
    'ना',
    'गलत',
    'मत',
    'जी नहीं',
    'रहने दो',
  ],
  soft_no: [
    'actually',
    'instead',
    'change it',
    'change the',
    'change that',
    'make it',
    "let's make it",
    'on second thought',
    'on second thoughts',
    'wait',
    'hold on',
    'hold that',
    'sorry',
    "i'm sorry",
    'rather',
    'modify',
    'rename',
    'badal do',
    'badlo',
    'बदल दो',
  ],
  neutral: [
    'right now',
    'right away',
    'good bye',
    'goodbye',
    'good morning',
    'good evening',
    'good night',
    'good afternoon',
    "that's it",
    'that is it',
    'no one',
    'not only',
    'later than',
  ],
  unsure: [
    'not sure',
    "i'm not sure",
    'maybe',
    'perhaps',
    "don't know",
    'dont know',
    'not certain',
    'pata nahi',
    'malum nahi',
    'shayad',
    'पता नहीं',
    'शायद',
  ],
};

/**
 * Whole replies that decline politely ("I'm good", "I'm fine"): a no only when nothing else is
 * said, since "I'm good with that" agrees.
 */
const FINE_ALONE: ReadonlySet<string> = new Set(
  ["i'm good", 'i am good', "i'm fine", 'i am fine', "i'm ok", "i'm okay", "we're good", "we're fine", "i'm done"].map((p) =>
    tokenize(p)
      .map((t) => t.text)
      .join(' '),
  ),
);

const WEAK_YES = ['please', 'pls', 'plz', 'go on', 'kripya', 'कृपया'];
const HINDI_NEGATION = new Set(HINDI_NEGATIONS.map(normalizeWord));

/** Phrase → cue, phrases as arrays of normalised words. */
const PHRASES: Array<{ words: string[]; cue: Cue }> = (Object.entries(CUES) as Array<[Cue, readonly string[]]>)
  .flatMap(([cue, list]) => list.map((p) => ({ words: tokenize(p).map((t) => t.text), cue })))
  .sort((a, b) => b.words.length - a.words.length);

/** Every word of every yes/no cue (for other extractors: "sahi hai" is no name). */
export const YES_NO_WORDS: ReadonlySet<string> = new Set([...PHRASES.flatMap((p) => p.words), ...WEAK_YES.map(normalizeWord)]);

function matchAt(words: string[], i: number): { cue: Cue; len: number } | null {
  for (const ph of PHRASES) {
    if (ph.words.every((w, k) => words[i + k] === w)) return { cue: ph.cue, len: ph.words.length };
  }
  return null;
}

/** The polarity of an utterance and the words that decided it. */
export interface YesNo {
  value: boolean;
  matched: string;
}

/**
 * Finds the deciding yes/no cue of an utterance (rules in the module comment).
 *
 * @returns the polarity and its cue words, or null when neither. Never throws.
 */
export function findYesNo(utterance: string): YesNo | null {
  const toks = tokenize(utterance).filter((t) => t.kind !== 'sym');
  const words = toks.map((t) => t.text);
  const orig = (i: number, len: number): string => utterance.slice(toks[i]!.start, toks[i + len - 1]!.end);
  if (toks.length > 0 && FINE_ALONE.has(words.join(' '))) return { value: false, matched: orig(0, toks.length) };
  let soft: YesNo | null = null;
  for (let i = 0; i < words.length; i++) {
    const m = matchAt(words, i);
    if (!m) continue;
    if (m.cue === 'neutral' || m.cue === 'soft_no') {
      const alone = m.len === 1 && words.length === 1;
      if (m.cue === 'soft_no' && !alone) soft ??= { value: false, matched: orig(i, m.len) };
      i += m.len - 1;
      continue;
    }
    if (m.cue === 'unsure') return null;
    if (words[i] === 'na' || words[i] === 'naa') {
      if (i !== 0) continue;
    }
    if (m.cue === 'yes') {
      const after = words.slice(i + m.len, i + m.len + 2);
      const neg = after.findIndex((w) => HINDI_NEGATION.has(w));
      if (neg >= 0) return { value: false, matched: orig(i, m.len + neg + 1) };
    }
    return { value: m.cue === 'yes', matched: orig(i, m.len) };
  }
  if (soft) return soft;
  for (let i = 0; i < words.length; i++) {
    const weak = WEAK_YES.find((w) => w.split(' ').every((x, k) => words[i + k] === normalizeWord(x)));
    if (weak) return { value: true, matched: orig(i, weak.split(' ').length) };
  }
  return null;
}

/**
 * Yes/no detection used by confirmations and `yes_no` slots.
 *
 * @example detectYesNo('ji haan, theek hai') // true
 * @example detectYesNo("no, it's 98765 43210") // false
 * @returns true, false, or null when the utterance says neither. Never throws.
 */
export function detectYesNo(utterance: string): boolean | null {
  return findYesNo(utterance)?.value ?? null;
}
