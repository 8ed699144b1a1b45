/**
 * The `person_name` extractor (docs/agents.md "Capture and slot types": a string, as said, proper-cased): "my name is
 * Priya Sharma", "this is Rahul", "mera naam Amit hai", "मेरा नाम राहुल है", "send it to
 * Khadija", "my friend Yumi", "Uncle Richard please", "to mom" → "Mom", "Aunt Jenny", "share it
 * with Kavya", "pay Sandeep", "the recipient is Arjun", "Isabella is the name of the receiver".
 *
 * A name is one to three name-like words after a cue: not a function word, verb, number or
 * other known non-name ({@link NOT_NAME}), and sayable: a word of at most 24 characters, with a
 * vowel when written in Latin letters, no letter three times in a row. When the caller's text carries case information
 * (some capitalised word other than a sentence start), a name must be capitalised too, or
 * be a kinship word (mom, dad …). In answer mode a short reply that is nothing but a name
 * ("Philip", "Uncle Richard please", "Rahul ji") is accepted without a cue.
 *
 * A question is no answer ("is it wheelchair accessible?", "is Dr Rao available today?", "do you
 * take UPI?"): it is read as in volunteer mode, so only a self-introduction inside it counts
 * ("my name is Priya, is the clinic open?"), and the rest goes on to the FAQ and the model
 * (docs/llm.md).
 */
import { MONTHS, WEEKDAYS } from './date-words.js';
import { FILLERS } from './keywords.js';
import { MULTIPLIER_WORDS, ORDINAL_WORDS, SMALL_WORDS } from './number-words.js';
import { normalizeWord, tokenize, type Tok } from './tokens.js';
import { YES_NO_WORDS } from './yes-no.js';

/** Cues after which the caller names themselves; `strong` ones count in volunteer mode without capitals. */
const SELF_CUES: Array<{ words: string; strong: boolean }> = [
  ...[
    'my name is',
    "my name's",
    'my name',
    'name is',
    'call me',
    'myself',
    'mera naam',
    'mera nam',
    'meraa naam',
    'mera name',
    'मेरा नाम',
    'नाम',
  ].map((w) => ({ words: w, strong: true })),
  ...['this is', "i'm", 'i am', 'im', 'it is', "it's", 'main', 'mai', 'मैं'].map((w) => ({ words: w, strong: false })),
];
/** Cues after which the caller names someone else (answer mode only). */
const OTHER_CUES = [
  'to',
  'for',
  'of',
  'named',
  'called',
  'with',
  'pay',
  'recipient is',
  'receiver is',
  'payee is',
  'beneficiary is',
  'recipient will be',
  'receiver will be',
  'friend',
  'son',
  'daughter',
  'colleague',
  'cousin',
  'nephew',
  'niece',
  'boss',
  'neighbour',
  'neighbor',
  'partner',
  'roommate',
  'dost',
  'wife',
  'husband',
  'mother',
  'father',
  'brother',
  'sister',
  'mom',
  'dad',
  'bhai',
  'behen',
  'patni',
  'pati',
];
/** Titles kept as part of a name ("Aunt Jenny", "Dr Mehta"). */
const TITLES = new Set(
  [
    'aunt',
    'auntie',
    'aunty',
    'uncle',
    'mr',
    'mrs',
    'ms',
    'miss',
    'dr',
    'doctor',
    'prof',
    'shri',
    'shrimati',
    'smt',
    'kumari',
    'sri',
    'mister',
    'grandma',
    'grandpa',
  ].map(normalizeWord),
);
/** Kinship words that are a name by themselves ("send to mom"). */
const KIN = new Set(
  [
    'mom',
    'mum',
    'mommy',
    'mummy',
    'mother',
    'dad',
    'daddy',
    'father',
    'papa',
    'mama',
    'grandma',
    'grandpa',
    'granny',
    'grandmother',
    'grandfather',
    'nani',
    'nana',
    'dadi',
    'dada',
    'bhaiya',
    'didi',
    'mummyji',
    'papaji',
  ].map(normalizeWord),
);

const STOP_WORDS = `a an the my your his her their our its this that these those me him them us you i we they it he she
any some all every each no not none one two three four five six seven eight nine ten hundred thousand lakh crore
and or but so if then than to for of from in on at by with without into onto out over under about as is am are was were be been being
do does did done have has had having will would shall should can could may might must let lets let's please thanks thank yes yeah no nope ok okay sure
want wanted like need needed make made send sent sending transfer transferring transferred pay paying paid give giving gave book booking
get getting got go going went come coming call calling called tell told say said see know think help find put take move
money amount funds fund payment balance account accounts savings saving checking current bank cash rupees dollars bucks
friend friends friend's family someone somebody anyone person people here there now today tomorrow also too just only
again actually really very much more less same other else another own please kindly
hello hi hey good fine great well sorry correct right wrong alright nothing everything something
speaking hello calling back later soon up sometime asap
mera meri mere naam nam hai hain ka ki ke ko se mein me main mai ji haan nahi aap aapka apna hum tum wo woh yeh ye hoon hun hu bol raha rahi rahe baat kar
bhejo bhej bhejna dena do dijiye karna karo paise paisa rupaye khata
है हैं का की के को से में मैं मेरा मेरी नाम जी हाँ नहीं`.split(/\s+/);
/** Words that are never part of a name. */
const NOT_NAME: ReadonlySet<string> = new Set(
  [...STOP_WORDS, ...FILLERS, ...YES_NO_WORDS, ...Object.keys(MONTHS), ...Object.keys(WEEKDAYS)].map(normalizeWord),
);

function compile(list: string[]): string[][] {
  return list.map((p) => tokenize(p).map((t) => t.text)).sort((a, b) => b.length - a.length);
}
const SELF = SELF_CUES.map((c) => ({ words: tokenize(c.words).map((t) => t.text), strong: c.strong })).sort(
  (a, b) => b.words.length - a.words.length,
);
const OTHER = compile(OTHER_CUES);

function startsWith(words: string[], i: number, cue: string[]): boolean {
  return cue.every((w, k) => words[i + k] === w);
}

function isCapitalised(t: Tok): boolean {
  return /^\p{Lu}/u.test(t.orig);
}

/** True when capitals carry information: some capitalised word that does not start a sentence. */
function caseInformative(toks: Tok[]): boolean {
  return toks.some((t, i) => t.kind === 'word' && i > 0 && isCapitalised(t) && t.text !== 'i' && !/^[.!?]$/.test(toks[i - 1]!.text));
}

/** The longest word a name may have, in characters ("Venkatasubramanian" has 18). */
const MAX_NAME_WORD_LENGTH = 24;

/**
 * True when `word` could be said as a name: at most {@link MAX_NAME_WORD_LENGTH} characters, no
 * letter three times in a row, and a word in Latin letters has a vowel (`y` counts: "Lynn",
 * "Rhys"; accents are ignored: "Zoë"). A run of one key ("bbbbbbbb…") or a keyboard mash is no name.
 */
function sayable(word: string): boolean {
  if (word.length > MAX_NAME_WORD_LENGTH || /(\p{L})\1\1/u.test(word)) return false;
  const bare = word.normalize('NFD').replace(/\p{M}/gu, '');
  return !/[a-z]/.test(bare) || /[aeiouy]/.test(bare);
}

function nameLike(t: Tok | undefined): boolean {
  if (t === undefined || t.kind !== 'word' || t.text.length < 2 || NOT_NAME.has(t.text) || /(?:ing|ed|'[dmst]|'ll|'ve|'re)$/.test(t.text))
    return false;
  return !SMALL_WORDS.has(t.text) && !MULTIPLIER_WORDS.has(t.text) && !ORDINAL_WORDS.has(t.text) && sayable(t.text);
}

/** The name starting at token `i`, as token indices [from, to), or null. */
function nameAt(toks: Tok[], i: number, cased: boolean, strictCase: boolean): [number, number] | null {
  let from = i;
  if (toks[from]?.text === 'my' && KIN.has(toks[from + 1]?.text ?? '')) from += 1;
  const first = toks[from];
  if (!first || first.kind !== 'word') return null;
  const ok = (t: Tok | undefined): boolean => nameLike(t) && !KIN.has(t!.text) && (!(cased || strictCase) || isCapitalised(t!));
  let j = from;
  if (TITLES.has(first.text) && ok(toks[from + 1])) j = from + 1;
  else if (KIN.has(first.text)) return [from, from + 1];
  if (!ok(toks[j])) return null;
  let to = j + 1;
  while (to < toks.length && to - from < 3 && ok(toks[to])) to += 1;
  return [from, to];
}

function properCase(toks: Tok[], from: number, to: number): string {
  return toks
    .slice(from, to)
    .map((t) => (/^\p{Ll}/u.test(t.orig) ? t.orig[0]!.toUpperCase() + t.orig.slice(1) : t.orig))
    .join(' ');
}

/** Words a bare-name reply may carry around the name ("Rahul ji", "Uncle Richard please", "naam Sunita hai"). */
const AROUND_BARE = new Set(
  [
    ...FILLERS,
    ...YES_NO_WORDS,
    'name',
    'naam',
    'nam',
    'hello',
    'hi',
    'here',
    'speaking',
    'bol',
    'raha',
    'rahi',
    'hoon',
    'hun',
    'hu',
    'नाम',
    'हूँ',
  ].map(normalizeWord),
);

/** A name said without a cue: the whole reply minus polite fillers, one to three name-like words. */
function bareName(toks: Tok[], cased: boolean): [number, number] | null {
  const idx = toks.map((_t, i) => i).filter((i) => toks[i]!.kind === 'word' && !AROUND_BARE.has(toks[i]!.text));
  if (idx.length === 0 || idx.length > 3) return null;
  const from = idx[0]!;
  const to = idx[idx.length - 1]! + 1;
  if (to - from !== idx.length) return null;
  if (toks.slice(from, to).some((t) => !nameLike(t) && !TITLES.has(t.text) && !KIN.has(t.text))) return null;
  const lead = toks[from]!;
  if (cased && !isCapitalised(lead) && !KIN.has(lead.text)) return null;
  if (idx.length === 1 && TITLES.has(lead.text) && !KIN.has(lead.text)) return null;
  return [from, to];
}

/** Role words a name may be said to be ("Tanvi is the recipient"). */
const ROLES = new Set(['recipient', 'receiver', 'payee', 'beneficiary', 'person', 'one']);

/**
 * A name said before its role: "Isabella is the name of the receiver", "Tanvi is the
 * recipient", "Arjun will be the receiver". The name must open the reply (after fillers).
 */
function nameBeforeRole(toks: Tok[], words: string[], cased: boolean): [number, number] | null {
  const verb = words.findIndex((w, i) => i > 0 && (w === 'is' || (w === 'will' && words[i + 1] === 'be')));
  if (verb < 0) return null;
  let k = verb + (words[verb] === 'will' ? 2 : 1);
  if (words[k] === 'the' || words[k] === 'my') k += 1;
  if (words[k] === 'name' && words[k + 1] === 'of') k += words[k + 2] === 'the' || words[k + 2] === 'my' ? 3 : 2;
  if (!ROLES.has(words[k] ?? '')) return null;
  let from = verb;
  while (from > 0 && verb - from < 3 && nameLike(toks[from - 1]) && (!cased || isCapitalised(toks[from - 1]!))) from -= 1;
  if (from === verb || toks.slice(0, from).some((t) => t.kind === 'word' && !AROUND_BARE.has(t.text))) return null;
  return [from, verb];
}

/** Words that open a yes/no or wh- question ("is it …", "do you …", "what …", "kya …"). */
const QUESTION_OPENERS: ReadonlySet<string> = new Set(
  `what what's whats when where where's why how how's which who who's whose whom is are am was were do does did can could
will would shall should may might has have isn't aren't don't doesn't can't won't kya kab kahan kahaan kaise kaun kyun
kitna kitni kitne क्या कब कहाँ कैसे कौन क्यों कितना`
    .split(/\s+/)
    .map(normalizeWord),
);
/** Words a question may open with before its question word ("sorry, is it …", "hello, do you …"). */
const QUESTION_LEAD: ReadonlySet<string> = new Set(
  'uh um umm hmm er ah oh well so ok okay sorry hello hi hey and but also excuse me'.split(' ').map(normalizeWord),
);

/**
 * True when the utterance opens with a question: its first clause (after a filler or greeting,
 * up to the first `, . ; ! ?`) ends with `?`, opens with a yes/no or wh- question word, or ends
 * with "kya". "will be Rahul" is no question, nor is "It goes to Yumi, but can you …?".
 */
function isQuestion(toks: Tok[]): boolean {
  let i = 0;
  while (i < toks.length && (toks[i]!.kind === 'sym' || QUESTION_LEAD.has(toks[i]!.text))) i += 1;
  let end = i;
  while (end < toks.length && !/^[,.;!?]$/.test(toks[end]!.text)) end += 1;
  if (toks[end]?.text === '?') return true;
  const words = toks
    .slice(i, end)
    .filter((t) => t.kind === 'word')
    .map((t) => t.text);
  if (words.length === 0) return false;
  if (QUESTION_OPENERS.has(words[0]!) && words[1] !== 'be') return true;
  const last = words[words.length - 1];
  return last === 'kya' || last === normalizeWord('क्या');
}

/**
 * Extracts a person's name from an utterance.
 *
 * @param mode `answer`: any cue ("to X", "my friend X", "this is X") or a bare name;
 *        `volunteer`: only self-introductions ("my name is", "mera naam", "call me"; "I am" /
 *        "this is" only with a capitalised name). A question is always read in volunteer mode.
 * @returns the name, proper-cased, and the words that said it, or null. Never throws.
 */
export function extractPersonName(utterance: string, mode: 'answer' | 'volunteer'): { value: string; matched: string } | null {
  const all = tokenize(utterance).filter((t, i, a) => !(t.text === '.' && TITLES.has(a[i - 1]?.text ?? '')));
  const toks = all.filter((t) => !(t.kind === 'sym' && /^[,'"“”]$/.test(t.text)));
  const words = toks.map((t) => t.text);
  if (isQuestion(all)) mode = 'volunteer';
  const cased = caseInformative(toks);
  const found = (span: [number, number] | null, cueFrom: number): { value: string; matched: string } | null =>
    span ? { value: properCase(toks, span[0], span[1]), matched: utterance.slice(toks[cueFrom]!.start, toks[span[1] - 1]!.end) } : null;
  for (let i = 0; i < toks.length; i++) {
    const self = SELF.find((c) => startsWith(words, i, c.words));
    if (self) {
      const strictCase = mode === 'volunteer' && !self.strong;
      if (strictCase && !cased) continue;
      const r = found(nameAt(toks, i + self.words.length, cased, strictCase), i);
      if (r) return r;
    }
  }
  if (mode === 'volunteer') return null;
  for (let i = 0; i < toks.length; i++) {
    const cue = OTHER.find((c) => startsWith(words, i, c));
    if (!cue) continue;
    const r = found(nameAt(toks, i + cue.length, cased, false), i);
    if (r) return r;
  }
  const role = nameBeforeRole(toks, words, cased);
  if (role) return found(role, role[0]);
  const ko = toks.findIndex((t, i) => i > 0 && (t.text === 'ko' || t.text === normalizeWord('को')));
  if (ko > 0) {
    let from = ko;
    while (from > 0 && ko - from < 3 && nameLike(toks[from - 1]) && (!cased || isCapitalised(toks[from - 1]!))) from -= 1;
    if (from < ko) return found([from, ko], from);
  }
  const bare = bareName(toks, cased);
  return bare ? found(bare, bare[0]) : null;
}
