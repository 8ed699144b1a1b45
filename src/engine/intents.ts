/**
 * Control intents and FAQ keyword matching (docs/agents.md "How a call runs": the first two layers of a turn).
 *
 * Callers in India mix languages, so every agent hears English, romanised Hindi (Hinglish)
 * and Devanagari forms, whatever its own language.
 */
import type { Faq } from '../domain/agent.js';
import { asksForMore, detectClosing } from './closing.js';

export { asksForMore };

/** A control intent: the caller steers the conversation rather than answering. */
export type ControlIntent = 'goodbye' | 'repeat' | 'wait' | 'human';

/**
 * An utterance (or keyword) lower-cased, typographic apostrophes (’) made plain ('),
 * punctuation turned to spaces, Devanagari kept, words separated by one space and padded with
 * one space each side, so that ` phrase ` matches on word boundaries. A turn normalises its utterance once and passes the result to the
 * functions below.
 */
export function normalizeUtterance(text: string): string {
  return ` ${text
    .toLowerCase()
    .normalize('NFC')
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[^\p{L}\p{M}\p{N}']+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()} `;
}

// Phrases are matched on word boundaries against the normalised utterance (` … `).
const CONTROL_PHRASES: Record<ControlIntent, string[]> = {
  goodbye: [
    'bye',
    'goodbye',
    'good bye',
    'bye bye',
    'alvida',
    'phone rakh',
    'phone rakhta',
    'phone rakhti',
    'call cut',
    'disconnect',
    'hang up',
    'अलविदा',
    'बाय',
    'फ़ोन रखता',
    'फोन रखता',
  ],
  repeat: [
    'repeat',
    'say that again',
    'say again',
    'come again',
    'pardon',
    'what did you say',
    'once more',
    'dobara',
    'phir se',
    'fir se',
    'firse',
    'phirse',
    'dubara',
    'dobara boliye',
    'दोबारा',
    'फिर से',
  ],
  wait: [
    'wait',
    'hold on',
    'one minute',
    'one sec',
    'one second',
    'just a minute',
    'just a second',
    'give me a minute',
    'ek minute',
    'ek second',
    'ruko',
    'rukiye',
    'ruk jao',
    'thoda ruk',
    'रुको',
    'रुकिए',
    'एक मिनट',
  ],
  human: [
    'human',
    'real person',
    'representative',
    'customer care',
    'talk to someone',
    'speak to someone',
    'speak to a person',
    'talk to a person',
    'operator',
    'manager',
    'agent se',
    'insaan',
    'kisi se baat',
    'executive',
    'इंसान',
    'किसी से बात',
  ],
};

const ORDER: ControlIntent[] = ['human', 'repeat', 'wait', 'goodbye'];

/** The control phrases in matching order, each with its padded form (` phrase `), built once. */
const CONTROL_MATCHERS: ReadonlyArray<{ intent: ControlIntent; phrase: string; padded: string }> = ORDER.flatMap((intent) =>
  CONTROL_PHRASES[intent].map((phrase) => ({ intent, phrase, padded: ` ${phrase} ` })),
);

/** Words that negate the control phrase after them: "no need to wait", "don't hang up". */
const NEGATED = / (?:no need to|don't|do not|dont|not|never|mat) $/;

/**
 * The control intent of an utterance (as {@link normalizeUtterance} gives it), or null. An
 * utterance with digits is content, not control: "wait, my number is 98…" is an answer. The
 * phrases above count in utterances of up to eight words; a caller closing the conversation
 * without saying bye ("no, that's all, thank you", "I'm good, thanks", "that will be all") is
 * `goodbye` in utterances of up to sixteen words besides their thanks (rules in closing.ts). A negated phrase ("no
 * need to wait", "don't hang up") is no intent. `atMore`: the question
 * being answered offers more help ("Is there anything else …?", {@link asksForMore}), where a
 * decline with nothing else said ("no thank you", "nope") closes too.
 */
export function detectControlIntent(norm: string, atMore = false): { intent: ControlIntent; phrase: string } | null {
  if (/\d/.test(norm)) return null;
  if (norm.trim().split(' ').length <= 8) {
    for (const m of CONTROL_MATCHERS) {
      const at = norm.indexOf(m.padded);
      if (at >= 0 && !NEGATED.test(norm.slice(0, at + 1))) return { intent: m.intent, phrase: m.phrase };
    }
  }
  const closing = detectClosing(norm, atMore);
  return closing === null ? null : { intent: 'goodbye', phrase: closing };
}

/**
 * Each FAQ entry's keywords normalised and padded (` keyword `, or '' for one with no word),
 * once: entries belong to compiled agents and live as long.
 */
const faqKeywords = new WeakMap<Faq, string[]>();

function keywordsOf(entry: Faq): string[] {
  let k = faqKeywords.get(entry);
  if (!k) {
    k = entry.keywords.map((kw) => {
      const padded = normalizeUtterance(kw);
      return padded.trim() === '' ? '' : padded;
    });
    faqKeywords.set(entry, k);
  }
  return k;
}

/**
 * The first FAQ entry whose keyword appears in the utterance (as {@link normalizeUtterance}
 * gives it; word-boundary match), or null.
 */
export function matchFaq(norm: string, faq: readonly Faq[]): { faq: Faq; keyword: string } | null {
  for (const entry of faq) {
    const keywords = keywordsOf(entry);
    for (let i = 0; i < keywords.length; i++) {
      const k = keywords[i]!;
      if (k && norm.includes(k)) return { faq: entry, keyword: entry.keywords[i]! };
    }
  }
  return null;
}

const QUESTION_WORDS = [
  'what',
  'when',
  'where',
  'how',
  'which',
  'who',
  'why',
  'is',
  'are',
  'do',
  'does',
  'can',
  'could',
  'will',
  'kya',
  'kab',
  'kahan',
  'kahaan',
  'kitna',
  'kitni',
  'kitne',
  'kaise',
  'kaun',
  'kyun',
  'क्या',
  'कब',
  'कहाँ',
  'कितना',
  'कितनी',
  'कैसे',
  'कौन',
];

/**
 * True when the utterance reads as a question: a `?` in the raw `text`, or a question word at
 * the start or end of its normalised form `norm`.
 */
export function looksLikeQuestion(text: string, norm: string): boolean {
  if (text.includes('?')) return true;
  const words = norm.trim().split(' ');
  return QUESTION_WORDS.includes(words[0]!) || ['kya', 'क्या'].includes(words[words.length - 1]!);
}

/** A question that is a polite request: "can you book it for Monday?", "could I come in tomorrow?". */
const REQUEST_QUESTION =
  /^ (?:(?:so|ok|okay|and|also|then|hi|hello|please) )*(?:can|could|may|would|will) (?:you|i|we|u)(?: please| just| also)? (?:book|make|schedule|fix|get|give|put|come|see|set|arrange|move|change|reschedule|visit|take|keep|add|send)\b/;

/**
 * True when an utterance only asks about something: a question ({@link looksLikeQuestion}:
 * `text` raw, `norm` normalised) that is not a polite request. "Is Dr Rao available today?"
 * only asks, so its "today" is no answer to a later step; "can you book me in for Monday?" asks
 * for it, so its "Monday" is.
 */
export function onlyAsks(text: string, norm: string): boolean {
  return looksLikeQuestion(text, norm) && !REQUEST_QUESTION.test(norm);
}
