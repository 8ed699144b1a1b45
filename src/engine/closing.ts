/**
 * Closing detection: the caller ends the conversation without saying "bye" — at "anything
 * else?" or in the middle of the workflow (docs/agents.md "Control intents"). English and
 * Hindi/Hinglish, matched on the normalised utterance of `normalizeUtterance` in intents.ts
 * (` … `: lower case, punctuation turned to spaces, apostrophes kept).
 *
 * An utterance is a close when it is not a question, has no digits, has at most
 * {@link MAX_WORDS} words and:
 * 1. holds a **done** phrase: "that's all", "that will be all", "that's everything", "all I
 *    need", "nothing else", "I'm all set", "talk to you later", "bas itna hi", "aur kuch nahi"
 *    ("that's all correct", "that's all right" and "nothing else but …" are not); or
 * 2. holds a **soft done** phrase ("that's it", "it's all", "I'm done", "good to go") together
 *    with thanks or after a decline ("no", "nope", "nothing"), or with nothing else around it:
 *    "Nope, that's it", "Thanks! That's it", but not "yes, that's it"; "I'm good" / "I'm fine"
 *    only with thanks or alone ("I'm good, thanks"; "No, I'm fine" declines an offer); or
 * 3. thanks the agent for its help ("thanks for your help", "you've been very helpful",
 *    "thanks again", "I appreciate it") with nothing else said, or after a decline; or
 * 4. declines with more than a bare thanks: "no, thank you very much", "nope, thanks a lot".
 *
 * A bare "no thank you" or "not now, thanks" is a decline, not a close: at a yes/no step it
 * answers no and the workflow goes on — except at a question that offers more ("Is there
 * anything else I can help you with?", {@link asksForMore}): there a decline or a thanks with
 * nothing else said ("no thank you", "nope", "not really", "thank you so much") closes.
 */
import { findYesNo } from './slots/yes-no.js';

/** Longest utterance (in words) still heard as a closing: longer ones carry content. */
export const MAX_WORDS = 16;

const DONE = [
  "that(?:'s| is| was|'ll be| will be|'d be| would be| should be) all(?! (?:correct|right|good|fine|ok|okay|wrong|of them|three|the)\\b)",
  "that(?:'s| is| was) everything",
  "(?:that(?:'s| is)|it's|that should be|that'll be|that will be) it for (?:now|today)",
  "that(?:'ll be| will be|'d be| should be| would be) it",
  "that(?:'ll| will|'d| would| should) do(?: it)?",
  'that (?:does|did) it',
  'that covers (?:it|everything)',
  "(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay|set) for (?:now|today)",
  'all (?:that )?i need(?:ed)?(?! to\\b)',
  'all the (?:info|information|help) i need(?:ed)?',
  'everything i need(?:ed)?',
  'nothing (?:else|more|further)(?! (?:but|than|except|other)\\b)',
  'no more questions',
  "(?:i'm|i am|we're|we are) all set",
  'talk to you later',
  'take care',
  'see (?:you|ya)(?: later| soon)?',
  "(?:i|we) (?:don't|do not|won't|will not) need any(?:thing)? ?(?:else|more|further)",
  "there's nothing else",
  "(?:i'm|i am|we're|we are) (?:all )?(?:done|finished) (?:for now|for today|here)",
  'no (?:other|further) (?:help|assistance|questions|requests)',
  "(?:that's|that is|that'll do|that will do|it's) (?:about|pretty much) it",
  "(?:that's|that is) all for (?:me|now|today)",
  "(?:that's|that is|it's|it is) (?:good|fine|ok|okay) for now",
  'nothing (?:for now|at the moment|at this time)',
  'all done',
  'all i (?:wanted|was looking for)',
  "(?:that's|that is|just|exactly) what i (?:needed|wanted|was looking for)",
  "(?:i've got|i have|i got) what i need(?:ed)?",
  '(?:answered|covered) (?:all )?(?:of )?my questions',
  'have a (?:good|nice|great) (?:weekend|week)',
  '(?:good ?)?bye(?: bye)?',
  'have a (?:good|nice|great) (?:day|evening|night|one)',
  'bas itna(?: hi)?',
  'aur kuch nahi',
  'kuch aur nahi',
  'और कुछ नहीं',
  'बस इतना(?: ही)?',
];
const SOFT_DONE = [
  "that(?:'s| is) it",
  "it(?:'s| is) all",
  "(?:i'm|i am|we're|we are) (?:all )?(?:done|set|sorted|satisfied)",
  "(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay) to go",
  'good to go',
  "that(?:'s| is| will be|'ll be) enough",
  'ho gaya',
  'bas',
  'बस',
];
/** "I'm good": a close with thanks or alone ("I'm good, thanks"); after a bare no it only declines ("No, I'm fine"). */
const FINE = ["(?:i'm|i am|we're|we are) (?:all )?(?:good|fine|ok|okay)", 'all good'];
const THANKS = [
  'thanks?(?: you)?',
  'thank u',
  'thx',
  'cheers',
  'appreciate(?:d)?(?: it)?',
  'dhanyavaad',
  'dhanyavad',
  'dhanyawad',
  'shukriya',
  'धन्यवाद',
  'शुक्रिया',
];
const SERVICE_THANKS = [
  'for (?:the|your|all the|all your|all of your) (?:help|assistance|information|info|time|support|details|update|patience)',
  'for (?:helping(?: me)?|letting me know|checking|looking (?:into|it up)|sorting (?:it|that) out)',
  "(?:you've|you have|you're|you are) (?:been )?(?:a |so |very |really |such a )?(?:great |big |good |huge )?(?:help|helpful)",
  "you're appreciated",
  'thanks? (?:you )?again',
  "you(?:'ve| have)? helped(?: (?:me|a lot|so much))*",
  "(?:that|this) (?:was|has been|is|'s) (?:very |really |so |super )?helpful",
  'that help(?:s|ed)(?: a lot)?',
  "(?:you've|you have) been (?:great|wonderful|awesome|amazing|fantastic|brilliant|very kind|so kind)",
  'appreciate (?:it|that|your help|the help)',
  'i appreciate',
];
const INTENSE_THANKS = ['thanks? (?:you )?(?:very much|so much|a lot|a ton|much)', 'many thanks', 'thanks a bunch'];
const DECLINE_LEAD = /^ (?:(?:ok|okay|um|uh|oh|well) )?(?:no|nope|nah|nothing|na|nahi|ji nahi|नहीं)\b/;
/** Words that may surround closing phrases without carrying content. */
const FILLER = [
  'ok',
  'okay',
  'alright',
  'all right',
  'well',
  'um',
  'uh',
  'oh',
  'so',
  'great',
  'awesome',
  'nice',
  'cool',
  'perfect',
  'really',
  'just',
  'and',
  'i guess',
  'i think',
  'for now',
  'very much',
  'so much',
  'a lot',
  'ji',
  'sir',
  'madam',
  'ma am',
  'bye',
];

const alt = (list: string[]): string => list.join('|');
const word = (body: string): RegExp => new RegExp(` (?:${body})(?= )`, 'u');
const wordAll = (body: string): RegExp => new RegExp(` (?:${body})(?= )`, 'gu');

const DONE_RE = word(alt(DONE));
const SOFT_RE = word(alt(SOFT_DONE));
const FINE_RE = word(alt(FINE));
const THANKS_RE = word(alt(THANKS));
const SERVICE_RE = word(alt(SERVICE_THANKS));
const INTENSE_RE = word(alt(INTENSE_THANKS));
/** Every closing-material phrase, longest alternatives first within each list, for the "nothing else said" test. */
const MATERIAL_RE = wordAll(alt([...SERVICE_THANKS, ...INTENSE_THANKS, ...SOFT_DONE, ...FINE, ...THANKS, ...FILLER]));
const QUESTION_START =
  /^ (?:what|when|where|how|which|who|why|is|are|do|does|did|can|could|will|would|should|shall|kya|kab|kahan|kitna|kaise|kaun|क्या|कब|कहाँ|कैसे|कौन)\b/;

/** True when nothing but closing material (thanks, soft done phrases, fillers) is said. */
function onlyMaterial(norm: string, material: RegExp = MATERIAL_RE): boolean {
  let rest = norm;
  for (let i = 0; i < 3; i++) rest = ` ${rest.replace(material, ' ').replace(/\s+/g, ' ').trim()} `;
  return rest.trim() === '';
}

/** Declines that, at a question offering more, say nothing else ("not really", "no, that's fine"). */
const MORE_DECLINE = [
  'no',
  'nope',
  'nah',
  'nothing',
  'not really',
  'not now',
  'not right now',
  'not at the moment',
  'not at this time',
  'not today',
  'no need',
  'never mind',
  'nevermind',
  "i don't think so",
  "that's fine",
  "that's okay",
  "that's ok",
  "it's fine",
  "it's okay",
  "it's ok",
  "that's good",
  'nahi',
  'ji nahi',
  'kuch nahi',
  'नहीं',
  'कुछ नहीं',
];
/** Acknowledgements that, with thanks, close at "anything else?" ("great, thank you", "okay, thanks, that works"). */
const ACKS = [
  "(?:that's|that is|it's) (?:great|perfect|good|fine|wonderful|awesome|excellent|helpful)",
  'that works',
  'ok',
  'okay',
  'great',
  'perfect',
  'awesome',
  'cool',
  'alright',
  'wonderful',
  'excellent',
  'good',
  'fine',
];
const ACKS_RE = wordAll(alt(ACKS));
const MORE_MATERIAL_RE = wordAll(alt([...MORE_DECLINE, ...SERVICE_THANKS, ...INTENSE_THANKS, ...SOFT_DONE, ...FINE, ...THANKS, ...FILLER]));

/**
 * True when a question offers more help, so that a decline answering it ends the conversation:
 * "Is there anything else I can help you with?", "Anything more?", "Can I help with something
 * else?", "Aur kuch?", "कुछ और?". `text` is the question as the agent says it.
 */
export function asksForMore(text: string): boolean {
  return /\b(?:any|some)(?:thing| thing)? (?:else|more|further)\b|\bany (?:other|more|further) (?:help|questions?|assistance)\b|\baur kuch\b|\bkuch aur\b|कुछ और|और कुछ/iu.test(
    text,
  );
}

/** Spellings typed or transcribed without apostrophes, or shortened, mapped to the forms above. */
const SPELLINGS: ReadonlyArray<[RegExp, string]> = [
  [/ thats(?= )/g, " that's"],
  [/ that s(?= )/g, " that's"],
  [/ thatll(?= )/g, " that'll"],
  [/ thatd(?= )/g, " that'd"],
  [/ its(?= all | it )/g, " it's"],
  [/ im(?= )/g, " i'm"],
  [/ i m(?= )/g, " i'm"],
  [/ ive(?= )/g, " i've"],
  [/ youve(?= )/g, " you've"],
  [/ youre(?= )/g, " you're"],
  [/ dont(?= )/g, " don't"],
  [/ thankyou(?= )/g, ' thank you'],
  [/ (?:thanx|thnx|thnks|thks|tnx|ty)(?= )/g, ' thanks'],
];

/** Any of the spellings above, tested once so that most utterances skip the rewrites. */
const MAY_RESPELL = / (?:thats|that s|thatll|thatd|its|im|i m|ive|youve|youre|dont|thankyou|thanx|thnx|thnks|thks|tnx|ty) /;

function respell(norm: string): string {
  if (!MAY_RESPELL.test(norm)) return norm;
  let out = norm;
  for (const [re, to] of SPELLINGS) out = out.replace(re, to);
  return out;
}

/**
 * The closing phrase of an utterance (as `normalizeUtterance` gives it), or null when it is not
 * a close (rules in the module comment). `atMore`: the question being answered offers more
 * help ({@link asksForMore}). Never throws.
 */
export function detectClosing(utterance: string, atMore = false): string | null {
  const norm = respell(utterance);
  if (/\d/.test(norm) || QUESTION_START.test(norm)) return null;
  if (norm.trim().split(' ').length > MAX_WORDS) return null;
  // At "anything else?": a decline, or thanks with acknowledgements, and nothing else said.
  // An explicit yes ("yes", "sure") is no material, so "yes please" never closes here.
  if (atMore && onlyMaterial(` ${norm.replace(ACKS_RE, ' ')} `, MORE_MATERIAL_RE)) {
    const no = findYesNo(norm);
    if (no?.value === false) return no.matched;
    const thanks = THANKS_RE.exec(norm);
    if (thanks) return thanks[0].trim();
  }
  const done = DONE_RE.exec(norm);
  if (done) return done[0].trim();
  const declined = DECLINE_LEAD.test(norm);
  const soft = SOFT_RE.exec(norm);
  if (soft && (declined || THANKS_RE.test(norm) || onlyMaterial(norm))) return soft[0].trim();
  const fine = FINE_RE.exec(norm);
  if (fine && (THANKS_RE.test(norm) || onlyMaterial(norm))) return fine[0].trim();
  const service = SERVICE_RE.exec(norm);
  if (service && (declined || onlyMaterial(norm))) return service[0].trim();
  const intense = INTENSE_RE.exec(norm);
  if (intense && declined) return intense[0].trim();
  return null;
}
