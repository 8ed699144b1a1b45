/**
 * Number words for speech (docs/agents.md "Top-level fields": an agent's `language` chooses how
 * numbers, dates and times are spoken): cardinals in

 * the Indian grouping (thousand, lakh, crore), ordinals, digit names, month and weekday names,
 * in English and Hindi. Pure data and arithmetic; {@link ./spoken.ts} builds sentences from it.
 * The word tables below 100 ({@link EN_ONES}, {@link EN_TENS}, {@link HI_0_99}) are also what
 * the slot extractors' number parser reads (slots/number-words.ts), so what is said is heard.
 *
 * Languages other than English and Hindi get {@link NUMERIC}: numerals, which an embedded
 * synthesiser such as eSpeak NG reads in its own voice's language.
 */

/** How one language says numbers, dates and times. Every integer argument is a safe integer. */
export interface NumberWords {
  /** Cardinal words for a non-negative integer. */
  cardinal(n: number): string;
  /** The word for a negative sign ("minus"). */
  minus: string;
  /** The word between the integer and fraction digits of a decimal ("point"). */
  point: string;
  /** The word for "+" in a phone number ("plus"). */
  plus: string;
  /** The word after a percentage ("percent"). */
  percent: string;
  /** Month names, January first. */
  months: readonly string[];
  /** Weekday names, Sunday first (the order of `Date.prototype.getUTCDay`). */
  weekdays: readonly string[];
}

/** English 0..19, indexed by value. */
export const EN_ONES: readonly string[] = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
/** English multiples of ten, indexed by the tens digit ('' for 0 and 1: those are {@link EN_ONES}). */
export const EN_TENS: readonly string[] = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

/** 0..99 in Hindi (Devanagari), indexed by value: the words are irregular, so every one is listed. */
export const HI_0_99: readonly string[] = [
  'शून्य',
  'एक',
  'दो',
  'तीन',
  'चार',
  'पाँच',
  'छह',
  'सात',
  'आठ',
  'नौ',
  'दस',
  'ग्यारह',
  'बारह',
  'तेरह',
  'चौदह',
  'पंद्रह',
  'सोलह',
  'सत्रह',
  'अठारह',
  'उन्नीस',
  'बीस',
  'इक्कीस',
  'बाईस',
  'तेईस',
  'चौबीस',
  'पच्चीस',
  'छब्बीस',
  'सत्ताईस',
  'अट्ठाईस',
  'उनतीस',
  'तीस',
  'इकतीस',
  'बत्तीस',
  'तैंतीस',
  'चौंतीस',
  'पैंतीस',
  'छत्तीस',
  'सैंतीस',
  'अड़तीस',
  'उनतालीस',
  'चालीस',
  'इकतालीस',
  'बयालीस',
  'तैंतालीस',
  'चवालीस',
  'पैंतालीस',
  'छियालीस',
  'सैंतालीस',
  'अड़तालीस',
  'उनचास',
  'पचास',
  'इक्यावन',
  'बावन',
  'तिरेपन',
  'चौवन',
  'पचपन',
  'छप्पन',
  'सत्तावन',
  'अट्ठावन',
  'उनसठ',
  'साठ',
  'इकसठ',
  'बासठ',
  'तिरेसठ',
  'चौंसठ',
  'पैंसठ',
  'छियासठ',
  'सड़सठ',
  'अड़सठ',
  'उनहत्तर',
  'सत्तर',
  'इकहत्तर',
  'बहत्तर',
  'तिहत्तर',
  'चौहत्तर',
  'पचहत्तर',
  'छिहत्तर',
  'सतहत्तर',
  'अठहत्तर',
  'उन्यासी',
  'अस्सी',
  'इक्यासी',
  'बयासी',
  'तिरासी',
  'चौरासी',
  'पचासी',
  'छियासी',
  'सत्तासी',
  'अट्ठासी',
  'नवासी',
  'नब्बे',
  'इक्यानबे',
  'बानबे',
  'तिरानबे',
  'चौरानबे',
  'पचानबे',
  'छियानबे',
  'सत्तानबे',
  'अट्ठानबे',
  'निन्यानबे',
];

/** Scale words of the Indian system, largest first: [value, English, Hindi]. */
const SCALES: ReadonlyArray<readonly [number, string, string]> = [
  [10_000_000, 'crore', 'करोड़'],
  [100_000, 'lakh', 'लाख'],
  [1_000, 'thousand', 'हज़ार'],
  [100, 'hundred', 'सौ'],
];

/**
 * Cardinal words in the Indian grouping, built from `below100` and the scale word of
 * `scaleIndex` (1 = English, 2 = Hindi). Amounts of 100 crore and more say the crore count
 * recursively ("one hundred crore").
 */
function indianCardinal(n: number, below100: (n: number) => string, scaleIndex: 1 | 2): string {
  if (n < 100) return below100(n);
  const parts: string[] = [];
  let rest = n;
  for (const scale of SCALES) {
    const value = scale[0];
    if (rest >= value) {
      const count = Math.floor(rest / value);
      parts.push(`${value === 10_000_000 ? indianCardinal(count, below100, scaleIndex) : below100(count)} ${scale[scaleIndex]}`);
      rest -= count * value;
    }
  }
  if (rest > 0) parts.push(below100(rest));
  return parts.join(' ');
}

function englishBelow100(n: number): string {
  if (n < 20) return EN_ONES[n]!;
  const tens = EN_TENS[Math.floor(n / 10)]!;
  return n % 10 === 0 ? tens : `${tens}-${EN_ONES[n % 10]!}`;
}

/** English number words, Indian grouping ("one lakh twenty-five thousand"). */
const ENGLISH: NumberWords = {
  cardinal: (n) => indianCardinal(n, englishBelow100, 1),
  minus: 'minus',
  point: 'point',
  plus: 'plus',
  percent: 'percent',
  months: ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'],
  weekdays: ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'],
};

/** Hindi number words in Devanagari ("एक लाख पच्चीस हज़ार"). */
const HINDI: NumberWords = {
  cardinal: (n) => indianCardinal(n, (k) => HI_0_99[k]!, 2),
  minus: 'माइनस',
  point: 'दशमलव',
  plus: 'प्लस',
  percent: 'प्रतिशत',
  months: ['जनवरी', 'फ़रवरी', 'मार्च', 'अप्रैल', 'मई', 'जून', 'जुलाई', 'अगस्त', 'सितंबर', 'अक्टूबर', 'नवंबर', 'दिसंबर'],
  weekdays: ['रविवार', 'सोमवार', 'मंगलवार', 'बुधवार', 'गुरुवार', 'शुक्रवार', 'शनिवार'],
};

/** Numerals for languages without word tables: the synthesiser reads them in its own language. */
const NUMERIC: NumberWords = {
  cardinal: (n) => String(n),
  minus: '-',
  point: '.',
  plus: '+',
  percent: '%',
  months: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12'],
  weekdays: ['', '', '', '', '', '', ''],
};

/** Which word table a language uses: `'en'`, `'hi'` or `'numeric'` (every other language). */
export type SpokenLanguage = 'en' | 'hi' | 'numeric';

/** The word table family of a BCP-47 tag, from its primary subtag ('hi-IN' → 'hi'). */
export function spokenLanguage(language: string): SpokenLanguage {
  const primary = language.trim().toLowerCase().split(/[-_]/)[0];
  if (primary === 'hi') return 'hi';
  if (primary === 'en' || primary === '') return 'en';
  return 'numeric';
}

/** The word table for `family`. */
export function wordsFor(family: SpokenLanguage): NumberWords {
  return family === 'hi' ? HINDI : family === 'en' ? ENGLISH : NUMERIC;
}

const EN_ORDINAL_IRREGULAR: Readonly<Record<string, string>> = {
  one: 'first',
  two: 'second',
  three: 'third',
  five: 'fifth',
  eight: 'eighth',
  nine: 'ninth',
  twelve: 'twelfth',
};

/** English ordinal words for a positive integer: 1 → "first", 21 → "twenty-first", 40 → "fortieth". */
export function englishOrdinal(n: number): string {
  const cardinal = ENGLISH.cardinal(n);
  const m = /^(.*?)([a-z]+)$/.exec(cardinal);
  if (!m) return cardinal;
  const [, head = '', last = ''] = m;
  const irregular = EN_ORDINAL_IRREGULAR[last];
  if (irregular) return head + irregular;
  if (last.endsWith('y')) return `${head}${last.slice(0, -1)}ieth`;
  return `${head}${last}th`;
}

/**
 * A year as English speakers say it: 2026 → "twenty twenty-six", 1984 → "nineteen
 * eighty-four", 2005 → "two thousand five", 1900 → "nineteen hundred".
 */
export function englishYear(year: number): string {
  if (year >= 2000 && year <= 2009) return ENGLISH.cardinal(year);
  if (year >= 1100 && year <= 9999) {
    const hi = Math.floor(year / 100);
    const lo = year % 100;
    if (lo === 0) return `${englishBelow100(hi)} hundred`;
    return `${englishBelow100(hi)} ${lo < 10 ? `oh ${EN_ONES[lo]!}` : englishBelow100(lo)}`;
  }
  return ENGLISH.cardinal(year);
}
