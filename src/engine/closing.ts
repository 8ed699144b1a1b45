/**
 * Closing detection: the caller ends the conversation without saying "bye" — at "anything
 * else?" or in the middle of the workflow (docs/agents.md "Control intents"). English and
 * Hindi/Hinglish, matched on the normalised utterance of `normalizeUtterance` in intents.ts
 * (` … `: lower case, punctuation turned to spaces, apostrophes kept), with common spellings
 * made whole first ("thats", "im", "thx", "thnak you"). The phrase lists are in
 * closing-phrases.ts.
 *
 * An utterance is a close when it is not a question, has no digits, asks nothing and makes no
 * new request anywhere ("no, that's all, where is it?", "thanks, can you also …", "one more
 * thing"), has at most {@link MAX_WORDS} words besides its thanks, and:
 * 1. holds a **done** phrase: "that's all", "that will be all", "that's everything", "that
 *    should do it", "that about covers it", "all I need", "nothing else", "I'm all set", "I
 *    don't have any more questions", "talk to you later", "bas itna hi", "aur kuch nahi" —
 *    but not a confirmation or the end of a list ("that's all correct", "that's all of it",
 *    "that's all I know", "that's everything I ordered", "I'm all set for Friday", "nothing
 *    else but …"); or
 * 2. holds a **soft done** phrase ("that's it", "it's all", "I'm done", "all set", "good to
 *    go") together with thanks or after a decline ("no", "nope", "nothing"), or with nothing
 *    else around it: "Nope, that's it", "Thanks! That's it", but not "yes, that's it"; "I'm
 *    good" / "I'm fine" / "all good" / "everything's fine" only with thanks or alone ("I'm
 *    good, thanks"; "No, I'm fine" declines an offer; "I'm good with Tuesday" answers); or
 * 3. thanks the agent for its help ("thanks for your help", "you've been most helpful",
 *    "thanks for everything", "much appreciated") with nothing else said, or after a decline;
 *    or
 * 4. declines with more than a bare thanks: "no, thank you very much", "nope, thanks a lot".
 *
 * A bare "no thank you" or "not now, thanks" is a decline, not a close: at a yes/no step it
 * answers no and the workflow goes on — except at a question that offers more ("Is there
 * anything else I can help you with?", {@link asksForMore}): there a decline, thanks ("thank
 * you for the booking"), "I'm good" or a soft done phrase closes when nothing else is said but
 * acknowledgements ("sounds good", "got it", "that's very helpful"), remarks on the way out
 * ("I'll call back if I need anything") and plans without a request ("no thanks, I'll go check
 * it out"). An acknowledgement alone ("okay", "great") does not.
 */
import {
  ACKS,
  CONTENT,
  DONE,
  FILLER,
  FINE,
  INTENSE_THANKS,
  MORE_DECLINE,
  PLANS,
  REMARKS,
  SERVICE_THANKS,
  SOFT_DONE,
  THANKS,
  THANKS_FOR_ANY,
} from './closing-phrases.js';

/** Longest utterance (in words) still heard as a closing: longer ones carry content. */
export const MAX_WORDS = 16;

const DECLINE_LEAD = /^ (?:(?:ok|okay|um|uh|oh|ah|hmm|well|actually) )?(?:no|nope|nah|nothing|na|nahi|ji nahi|नहीं)\b/;
const alt = (list: string[]): string => list.join('|');
const word = (body: string): RegExp => new RegExp(` (?:${body})(?= )`, 'u');
const wordAll = (body: string): RegExp => new RegExp(` (?:${body})(?= )`, 'gu');

const DONE_RE = word(alt(DONE));
const SOFT_RE = word(alt(SOFT_DONE));
const FINE_RE = word(alt(FINE));
const THANKS_RE = word(alt(THANKS));
const SERVICE_RE = word(alt(SERVICE_THANKS));
const INTENSE_RE = word(alt(INTENSE_THANKS));
const CONTENT_RE = new RegExp(CONTENT, 'u');
/**
 * Every closing-material phrase, for the "nothing else said" test. The alternative tried first
 * at a position wins, so longer phrases come first: thanks for the service before bare thanks
 * ("thanks again"), and so within each list ("no more" before "no").
 */
const MATERIAL_RE = wordAll(alt([...SERVICE_THANKS, ...INTENSE_THANKS, ...SOFT_DONE, ...FINE, ...THANKS, ...REMARKS, ...FILLER]));
/** Thanks of every kind: not counted in an utterance's length ("No, thank you so much for all of your help, that is all I need"). */
const ALL_THANKS_RE = wordAll(alt([...SERVICE_THANKS, ...INTENSE_THANKS, ...THANKS]));
/** What closes at "anything else?" when nothing else is said: a decline, thanks, a soft done phrase. */
const MORE_CLOSERS = [...SERVICE_THANKS, ...INTENSE_THANKS, ...THANKS_FOR_ANY, ...MORE_DECLINE, ...SOFT_DONE, ...FINE, ...THANKS];
const MORE_CLOSER_RE = word(alt(MORE_CLOSERS));
/** The material at "anything else?": the closers with acknowledgements, remarks, plans and fillers ("great, thank you"). */
const MORE_MATERIAL_RE = wordAll(alt([...MORE_CLOSERS, ...ACKS, ...REMARKS, ...PLANS, ...FILLER]));
const QUESTION_START =
  /^ (?:what|when|where|how|which|who|why|is|are|do|does|did|can|could|will|would|should|shall|kya|kab|kahan|kitna|kaise|kaun|क्या|कब|कहाँ|कैसे|कौन)\b/;

/** Words in a normalised utterance. */
function words(norm: string): number {
  return norm.split(' ').filter(Boolean).length;
}

/** True when nothing but closing material (thanks, soft done phrases, fillers) is said. */
function onlyMaterial(norm: string, material: RegExp = MATERIAL_RE): boolean {
  let rest = norm;
  for (let i = 0; i < 3; i++) rest = ` ${rest.replace(material, ' ').replace(/\s+/g, ' ').trim()} `;
  return rest.trim() === '';
}

/**
 * True when a question offers more help, so that a decline answering it ends the conversation:
 * "Is there anything else I can help you with?", "Anything more?", "Can I help with something
 * else?", "What else can I do for you?", "Aur kuch?", "कुछ और?". `text` is the question as the agent
 * says it.
 */
export function asksForMore(text: string): boolean {
  return /\b(?:any|some)(?:thing| thing)? (?:else|more|further)\b|\bwhat else can i (?:do|help)\b|\bany (?:other|more|further) (?:help|questions?|assistance)\b|\baur kuch\b|\bkuch aur\b|कुछ और|और कुछ/iu.test(
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
  [/ (?:thnak|thak|thnk|tahnk|thanl)(?= )/g, ' thank'],
  [/ (?:thanx|thnx|thnks|thks|tnx|ty|thnaks|thaks|tahnks|thankss|thanxs|thanls)(?= )/g, ' thanks'],
];

/** Any of the spellings above, tested once so that most utterances skip the rewrites. */
const MAY_RESPELL =
  / (?:thats|that s|thatll|thatd|its|im|i m|ive|youve|youre|dont|thankyou|thnak|thak|thnk|tahnk|thanl|thanx|thnx|thnks|thks|tnx|ty|thnaks|thaks|tahnks|thankss|thanxs|thanls) /;

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
  if (/\d/.test(norm) || QUESTION_START.test(norm) || CONTENT_RE.test(norm)) return null;
  if (words(norm) > MAX_WORDS && words(norm.replace(ALL_THANKS_RE, ' ')) > MAX_WORDS) return null;
  // At "anything else?": a decline, thanks or a soft done phrase, with acknowledgements and
  // fillers around it, and nothing else said. An explicit yes ("yes", "sure") is no material,
  // so "yes please" never closes here; nor does an acknowledgement alone ("okay").
  if (atMore && onlyMaterial(norm, MORE_MATERIAL_RE)) {
    const closer = MORE_CLOSER_RE.exec(norm);
    if (closer) return closer[0].trim();
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
