/**
 * Control intents and FAQ keyword matching (DESIGN.md §6, layers 1 and 2).
 *
 * Callers in India mix languages, so every agent hears English, romanised Hindi (Hinglish)
 * and Devanagari forms, whatever its own language.
 */
import type { Faq } from '../domain/agent.js';

/** A control intent: the caller steers the conversation rather than answering. */
export type ControlIntent = 'goodbye' | 'repeat' | 'wait' | 'human';

/** Lower-cased, punctuation turned to spaces, Devanagari kept; words separated by one space. */
export function normalizeUtterance(text: string): string {
  // One turn asks for the same utterance several times (control, FAQ, question): remember the last.
  if (text === lastText) return lastNorm;
  lastText = text;
  lastNorm = ` ${text.toLowerCase().normalize('NFC').replace(/[^\p{L}\p{M}\p{N}']+/gu, ' ').replace(/\s+/g, ' ').trim()} `;
  return lastNorm;
}
let lastText = '';
let lastNorm = '  ';

// Phrases are matched on word boundaries against the normalised utterance (` … `).
const CONTROL_PHRASES: Record<ControlIntent, string[]> = {
  goodbye: ['bye', 'goodbye', 'good bye', 'bye bye', 'alvida', 'phone rakh', 'phone rakhta', 'phone rakhti', 'call cut', 'disconnect', 'hang up', 'अलविदा', 'बाय', 'फ़ोन रखता', 'फोन रखता'],
  repeat: ['repeat', 'say that again', 'say again', 'come again', 'pardon', 'what did you say', 'once more', 'dobara', 'phir se', 'fir se', 'firse', 'phirse', 'dubara', 'dobara boliye', 'दोबारा', 'फिर से'],
  wait: ['wait', 'hold on', 'one minute', 'one sec', 'one second', 'just a minute', 'just a second', 'give me a minute', 'ek minute', 'ek second', 'ruko', 'rukiye', 'ruk jao', 'thoda ruk', 'रुको', 'रुकिए', 'एक मिनट'],
  human: ['human', 'real person', 'representative', 'customer care', 'talk to someone', 'speak to someone', 'speak to a person', 'talk to a person', 'operator', 'manager', 'agent se', 'insaan', 'kisi se baat', 'executive', 'इंसान', 'किसी से बात'],
};

const ORDER: ControlIntent[] = ['human', 'repeat', 'wait', 'goodbye'];

function hasPhrase(norm: string, phrase: string): boolean {
  return norm.includes(` ${phrase} `);
}

/**
 * The control intent of an utterance, or null. An utterance that is long (more than eight
 * words) is taken as content, not control: "wait, my number is 98…" is an answer.
 */
export function detectControlIntent(text: string): { intent: ControlIntent; phrase: string } | null {
  const norm = normalizeUtterance(text);
  if (norm.trim().split(' ').length > 8) return null;
  if (/\d/.test(norm)) return null;
  for (const intent of ORDER) {
    for (const phrase of CONTROL_PHRASES[intent]) if (hasPhrase(norm, phrase)) return { intent, phrase };
  }
  return null;
}

/** The first FAQ entry whose keyword appears in the utterance (word-boundary match), or null. */
export function matchFaq(text: string, faq: readonly Faq[]): { faq: Faq; keyword: string } | null {
  const norm = normalizeUtterance(text);
  for (const entry of faq) {
    for (const kw of entry.keywords) {
      const k = normalizeUtterance(kw).trim();
      if (k && hasPhrase(norm, k)) return { faq: entry, keyword: kw };
    }
  }
  return null;
}

const QUESTION_WORDS = ['what', 'when', 'where', 'how', 'which', 'who', 'why', 'is', 'are', 'do', 'does', 'can', 'could', 'will', 'kya', 'kab', 'kahan', 'kahaan', 'kitna', 'kitni', 'kitne', 'kaise', 'kaun', 'kyun', 'क्या', 'कब', 'कहाँ', 'कितना', 'कितनी', 'कैसे', 'कौन'];

/** True when the utterance reads as a question (a `?`, or a question word at its start or end). */
export function looksLikeQuestion(text: string): boolean {
  if (text.includes('?')) return true;
  const words = normalizeUtterance(text).trim().split(' ');
  return QUESTION_WORDS.includes(words[0]!) || ['kya', 'hai kya', 'क्या'].includes(words[words.length - 1]!);
}
