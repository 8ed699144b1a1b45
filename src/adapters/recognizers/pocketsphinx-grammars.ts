/**
 * The step grammars of the embedded recogniser ({@link ./pocketsphinx.ts}): one JSGF grammar
 * (W3C "JSpeech Grammar Format", https://www.w3.org/TR/jsgf/, the format pocketsphinx's `-jsgf`
 * reads) per {@link RecognitionGrammar} but `free`, and the pronunciation dictionary each needs.
 *
 * A grammar turns an 8 kHz telephone utterance the generic language model mangles ("nine eight
 * seven …" → "ah i sadly six bottles") into one of the answers the step can use, written the way
 * the engine's slot extractors (src/engine/slots/) read them: lower-case words, digits as digit
 * words ("oh", "double five" included), a self-introduction ("my name is priya sharma") for
 * `person_name`, "next monday" / "the fourteenth" for `date`.
 *
 * Dictionaries: pocketsphinx 0.8 takes one `-dict`, so each grammar gets a small dictionary of
 * exactly its words: their CMUdict entries (all pronunciation variants) from the model's
 * `cmudict-en-us.dict`, and for words CMUdict lacks (most Indian names, "haan", "nahi") a
 * pronunciation from {@link romanisedPhones}, a rule-based reading of Indian romanisation. A
 * small dictionary also makes the engine start faster than the 134 000-word one.
 */

/** A grammar with its JSGF source and the words it can produce. */
export interface GrammarSource {
  /** The JSGF text (`#JSGF V1.0;` header, public rule first). */
  jsgf: string;
  /** Every word of the grammar, lower case (for the dictionary). */
  words: string[];
  /** Words that are names (see {@link dictionaryFor}'s `names`). */
  names?: readonly string[];
}

const DIGIT_WORDS = ['zero', 'oh', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const WEEKDAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'];
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];
const ORDINALS = [
  'first',
  'second',
  'third',
  'fourth',
  'fifth',
  'sixth',
  'seventh',
  'eighth',
  'ninth',
  'tenth',
  'eleventh',
  'twelfth',
  'thirteenth',
  'fourteenth',
  'fifteenth',
  'sixteenth',
  'seventeenth',
  'eighteenth',
  'nineteenth',
  'twentieth',
  'twenty first',
  'twenty second',
  'twenty third',
  'twenty fourth',
  'twenty fifth',
  'twenty sixth',
  'twenty seventh',
  'twenty eighth',
  'twenty ninth',
  'thirtieth',
  'thirty first',
];
const UNITS = ['one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const TENS = ['twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/**
 * Common Indian given names (and a few others heard on Indian lines), lower case. Spelled the
 * usual romanised way, which is also what the confirmation read-back will say.
 */
export const FIRST_NAMES =
  `aarav aarti abhay abhishek aditi aditya ajay akash akhil akshay alok aman amar amit amita amol anand ananya anil anita anjali
ankit ankita anu anupam anuradha anusha aparna archana arjun arun aruna arvind asha ashish ashok ashwin avinash ayesha bharat bhavna chandra
chetan deepa deepak deepika dev devika dhruv dilip dinesh divya farhan fatima ganesh gaurav geeta girish gita gopal govind hari harish harsh hema
imran irfan ishaan jaya jyoti kabir kajal kamal kavita kavya kiran krishna kunal lakshmi lalit lata madhu mahesh manish manoj maya meena megha
mohan mohit mukesh murali nandini naveen neeta neha nikhil nisha nitin pallavi pankaj param pooja pradeep prakash pranav prashant pratik
preeti priya rahul raj rajesh rajiv rakesh ram ramesh rani ravi rekha renu rohan rohit sachin sagar sahil sameer sandeep sanjay santosh sarita
saurabh seema shalini shankar sheela shilpa shiv shreya shweta siddharth sneha sonal sonia sudha suman sunil sunita suresh sushma swati tanvi
tarun uma usha varun vidya vijay vikas vikram vinay vinod vishal vivek yash yogesh zoya`.split(/\s+/);

/** Common Indian family names, lower case. */
export const LAST_NAMES =
  `agarwal ahmed ali arora bajaj banerjee bansal bhat bhatia bhatt bose chatterjee chauhan chopra das desai deshmukh deshpande
dubey dutta gandhi ghosh gill gupta hegde iyer jadhav jain joshi kapoor khan khanna kohli krishnan kulkarni kumar malhotra mehta menon mishra modi
mukherjee naidu nair pandey patel patil pawar pillai prasad qureshi rao rathore reddy roy saxena sen sethi shah sharma shetty shinde shukla singh
sinha srinivasan subramanian thakur tiwari trivedi varma verma yadav`.split(/\s+/);

const alt = (items: readonly string[]): string => items.map((w) => (w.includes(' ') ? `( ${w} )` : w)).join(' | ');
const words = (...lists: ReadonlyArray<readonly string[]>): string[] => [...new Set(lists.flat().flatMap((p) => p.split(' ')))];

const header = (name: string): string => `#JSGF V1.0;\ngrammar ${name};\n`;

/** The JSGF grammar and word list of each constrained step grammar (`free` uses the language model). */
export const GRAMMARS: Readonly<Record<'digits' | 'yes_no' | 'name' | 'date' | 'time' | 'number', GrammarSource>> = {
  digits: {
    // "nine eight seven …", "double five", "triple seven", "oh" for zero.
    jsgf: `${header('digits')}public <digits> = <digit>+;\n<digit> = [double | triple] ( ${alt(DIGIT_WORDS)} );\n`,
    words: words(DIGIT_WORDS, ['double', 'triple']),
  },
  yes_no: {
    jsgf: `${header('yes_no')}public <answer> = <yes> | <no>;\n<yes> = ${alt(['yes', 'yeah', 'yes please', 'sure', 'correct', 'right', 'that is right', 'okay', 'haan', 'haan ji'])};\n<no> = ${alt(['no', 'nope', 'no thanks', 'not really', 'wrong', 'nahi', 'nahi ji'])};\n`,
    words: words([
      'yes',
      'yeah',
      'please',
      'sure',
      'correct',
      'right',
      'that',
      'is',
      'okay',
      'haan',
      'ji',
      'no',
      'nope',
      'thanks',
      'not',
      'really',
      'wrong',
      'nahi',
    ]),
  },
  name: {
    // "my name is priya sharma", "this is rahul", "priya sharma".
    jsgf: `${header('name')}public <name> = [<cue>] <first> [<last>];\n<cue> = ${alt(['my name is', 'name is', 'this is', 'i am', 'it is'])};\n<first> = ${alt(FIRST_NAMES)};\n<last> = ${alt(LAST_NAMES)};\n`,
    words: words(['my', 'name', 'is', 'this', 'i', 'am', 'it'], FIRST_NAMES, LAST_NAMES),
    names: [...FIRST_NAMES, ...LAST_NAMES],
  },
  date: {
    // "tomorrow", "next monday", "on friday", "the fourteenth", "fourteenth of november", "november fourteenth".
    jsgf: `${header('date')}public <date> = <relative> | [on | this | next] <weekday> | [on] [the] <ordinal> [of <month>] | <month> [the] <ordinal>;\n<relative> = ${alt(['today', 'tomorrow', 'day after tomorrow'])};\n<weekday> = ${alt(WEEKDAYS)};\n<month> = ${alt(MONTHS)};\n<ordinal> = ${alt(ORDINALS)};\n`,
    words: words(['today', 'tomorrow', 'day', 'after', 'on', 'this', 'next', 'the', 'of'], WEEKDAYS, MONTHS, ORDINALS),
  },
  time: {
    // "five pm", "ten thirty in the morning", "half past four", "quarter to six", "noon".
    jsgf: `${header('time')}public <time> = [at] ( <clock> [<part>] | ( half past | quarter past | quarter to ) <hour> [<part>] | noon | midday );\n<clock> = <hour> [o'clock | <minute>];\n<hour> = ${alt([...UNITS, 'ten', 'eleven', 'twelve'])};\n<minute> = ${alt(['fifteen', 'thirty', 'forty five', 'ten', 'twenty', 'forty', 'fifty', 'five'])};\n<part> = ${alt(['am', 'pm', 'a m', 'p m', 'in the morning', 'in the afternoon', 'in the evening'])};\n`,
    words: words(
      [
        'at',
        'half',
        'past',
        'quarter',
        'to',
        'noon',
        'midday',
        "o'clock",
        'am',
        'pm',
        'a',
        'm',
        'p',
        'in',
        'the',
        'morning',
        'afternoon',
        'evening',
        'forty',
        'fifty',
      ],
      UNITS,
      ['ten', 'eleven', 'twelve', 'fifteen', 'thirty', 'twenty'],
    ),
  },
  number: {
    // 0–9999 in words: "twenty five", "three hundred and ten", "two thousand".
    jsgf: `${header('number')}public <number> = zero | [<units> thousand] [<units> hundred [and]] [<below100>] ;\n<below100> = <units> | ${alt(TEENS)} | ( ${alt(TENS)} ) [<units>];\n<units> = ${alt(UNITS)};\n`,
    words: words(['zero', 'thousand', 'hundred', 'and'], UNITS, TEENS, TENS),
  },
};

/**
 * A pronunciation (CMU/ARPAbet phones, as the en-us acoustic model uses) for a romanised Indian
 * word that CMUdict lacks: "priya" → `P R IY Y AA`, "sunita" → `S UH N IY T AA`. Rules of thumb of
 * Hindi romanisation (aspirated stops as plain ones, "th"/"dh" as T/D, "aa"/"ee"/"oo" long
 * vowels, a final "a" long, "v"/"w" as V); good enough for a grammar, where the alternatives are
 * few.
 * @throws RangeError if `word` is not lower-case a–z
 */
export function romanisedPhones(word: string): string {
  if (!/^[a-z]+$/.test(word)) throw new RangeError(`romanisedPhones takes lower-case a-z letters; got ${JSON.stringify(word)}`);
  const rules: Array<[string, string[]]> = [
    ['chh', ['CH']],
    ['aa', ['AA']],
    ['ee', ['IY']],
    ['oo', ['UW']],
    ['ai', ['AY']],
    ['au', ['AW']],
    ['ei', ['EY']],
    ['ou', ['OW']],
    ['kh', ['K']],
    ['gh', ['G']],
    ['ch', ['CH']],
    ['jh', ['JH']],
    ['th', ['T']],
    ['dh', ['D']],
    ['ph', ['F']],
    ['bh', ['B']],
    ['sh', ['SH']],
    ['ny', ['N', 'Y']],
    ['ck', ['K']],
    ['qu', ['K']],
    ['x', ['K', 'S']],
    ['q', ['K']],
    ['a', ['AH']],
    ['e', ['EY']],
    ['i', ['IH']],
    ['o', ['OW']],
    ['u', ['UH']],
    ['y', ['Y']],
    ['b', ['B']],
    ['c', ['K']],
    ['d', ['D']],
    ['f', ['F']],
    ['g', ['G']],
    ['h', ['HH']],
    ['j', ['JH']],
    ['k', ['K']],
    ['l', ['L']],
    ['m', ['M']],
    ['n', ['N']],
    ['p', ['P']],
    ['r', ['R']],
    ['s', ['S']],
    ['t', ['T']],
    ['v', ['V']],
    ['w', ['V']],
    ['z', ['Z']],
  ];
  const out: string[] = [];
  let i = 0;
  while (i < word.length) {
    const [graph, phones] = rules.find(([g]) => word.startsWith(g, i))!;
    const last = i + graph.length === word.length;
    let ph = phones;
    if (last && graph === 'a') ph = ['AA'];
    else if (last && graph === 'i') ph = ['IY'];
    else if (graph === 'y' && i > 0 && !'aeiou'.includes(word[i - 1]!) && last) ph = ['IY'];
    // a doubled consonant ("pallavi", "bhatt") is said once
    if (!(out.length > 0 && ph.length === 1 && out[out.length - 1] === ph[0] && !/^[AEIOU]/.test(ph[0]!))) out.push(...ph);
    // "h" after a vowel at the end ("shah") is barely said
    if (graph === 'h' && last && out.length > 1) out.pop();
    i += graph.length;
  }
  return out.join(' ');
}

/**
 * The dictionary text (`word PHONES…` lines, variants as `word(2)`) for `wordList`: CMUdict's
 * entries where it has them, else {@link romanisedPhones}.
 * @param cmudict the text of the model's `cmudict-en-us.dict`
 * @param names   words that are names: they also get the romanised reading and a non-rhotic
 *                variant of each pronunciation ("sharma" as `SH AA M AH`, the way British-trained
 *                and many Indian speakers say it), and the romanised reading with long vowels
 * @throws RangeError for a word neither CMUdict nor the romanisation rules can pronounce
 */
export function dictionaryFor(wordList: readonly string[], cmudict: string, names: ReadonlySet<string> = new Set()): string {
  const want = new Set(wordList);
  const found = new Map<string, string[]>();
  // Line by line without splitting the whole 3 MB dictionary (this runs at every media worker's start).
  for (let pos = 0; pos < cmudict.length;) {
    let end = cmudict.indexOf('\n', pos);
    if (end < 0) end = cmudict.length;
    const space = cmudict.indexOf(' ', pos);
    if (space > pos && space < end) {
      const head = cmudict.slice(pos, space);
      const base = head.endsWith(')') ? head.replace(/\(\d+\)$/, '') : head;
      if (want.has(base)) {
        const list = found.get(base) ?? [];
        list.push(cmudict.slice(space + 1, end).trim());
        found.set(base, list);
      }
    }
    pos = end + 1;
  }
  const lines: string[] = [];
  for (const w of [...want].sort()) {
    let prons = found.get(w) ?? [romanisedPhones(w)];
    if (names.has(w)) prons = withNameVariants(w, prons);
    prons.forEach((p, k) => lines.push(`${k === 0 ? w : `${w}(${k + 1})`} ${p}`));
  }
  return `${lines.join('\n')}\n`;
}

const VOWEL = /^(AA|AE|AH|AO|AW|AY|EH|ER|EY|IH|IY|OW|OY|UH|UW)/;

/**
 * `prons` plus the romanised reading of `word` (also with every AH as AA) and non-rhotic variants
 * of all (an R before a consonant or at the end left out), without duplicates.
 */
function withNameVariants(word: string, prons: string[]): string[] {
  const roman = romanisedPhones(word);
  // Hindi's short "a" is often heard as a full AA in a name ("sharma" as SH AA M AA)
  const all = [...prons, roman, roman.replace(/\bAH\b/g, 'AA')];
  for (const p of [...all]) {
    const ph = p.split(' ');
    const nonRhotic = ph.filter((x, i) => !(x === 'R' && (i === ph.length - 1 || !VOWEL.test(ph[i + 1]!))));
    all.push(nonRhotic.join(' '));
  }
  return [...new Set(all)];
}
