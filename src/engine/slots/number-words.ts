/**
 * Number words of English and Hindi (romanised and Devanagari), as tables (DESIGN.md §6:
 * "Extractors understand English and Hindi/Hinglish number … words at least").
 *
 * Hindi has an irregular word for every number from 1 to 99, so the Hindi table lists them
 * all, with the common romanised spellings. Every key is passed through
 * {@link normalizeWord} when the maps are built, so Devanagari with or without nukta or
 * chandrabindu matches.
 */
import { normalizeWord } from './text.js';

/** How a number word combines with its neighbours in a spoken number. */
export type WordKind = 'unit' | 'teen' | 'tens' | 'hindi';

/** One entry of a number-word table. */
export interface NumberWord {
  value: number;
  kind: WordKind;
}

const EN_UNITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];
const EN_TEENS = ['ten', 'eleven', 'twelve', 'thirteen', 'fourteen', 'fifteen', 'sixteen', 'seventeen', 'eighteen', 'nineteen'];
const EN_TENS: Record<string, number> = { twenty: 20, thirty: 30, forty: 40, fourty: 40, fifty: 50, sixty: 60, seventy: 70, eighty: 80, ninety: 90 };

/** Hindi 0–99: value → spellings (romanised variants, then Devanagari). */
const HINDI: Array<[number, string[]]> = [
  [0, ['shunya', 'shoonya', 'sunya', 'शून्य']], [1, ['ek', 'एक']], [2, ['do', 'दो']], [3, ['teen', 'तीन']], [4, ['char', 'chaar', 'चार']],
  [5, ['paanch', 'panch', 'paach', 'पांच']], [6, ['chhe', 'chhah', 'chah', 'chhai', 'chhey', 'छह', 'छः', 'छे']],
  [7, ['saat', 'सात']], [8, ['aath', 'आठ']], [9, ['nau', 'नौ']], [10, ['das', 'dus', 'दस']],
  [11, ['gyarah', 'gyaarah', 'gyara', 'ग्यारह']], [12, ['barah', 'baarah', 'बारह']], [13, ['terah', 'तेरह']],
  [14, ['chaudah', 'chaudha', 'choudah', 'चौदह']], [15, ['pandrah', 'pandra', 'pundrah', 'पंद्रह', 'पन्द्रह']],
  [16, ['solah', 'sola', 'सोलह']], [17, ['satrah', 'satra', 'सत्रह']], [18, ['atharah', 'athaarah', 'athara', 'अठारह']],
  [19, ['unnis', 'unnees', 'उन्नीस']], [20, ['bees', 'बीस']], [21, ['ikkis', 'ikkees', 'इक्कीस']], [22, ['bais', 'baees', 'baais', 'बाईस']],
  [23, ['teis', 'teyis', 'तेईस']], [24, ['chaubis', 'chaubees', 'चौबीस']], [25, ['pachchis', 'pachees', 'pachis', 'पच्चीस']],
  [26, ['chhabbis', 'chabbis', 'छब्बीस']], [27, ['sattais', 'sattaees', 'सत्ताईस']], [28, ['atthais', 'athais', 'अट्ठाईस']],
  [29, ['untis', 'unatis', 'उनतीस']], [30, ['tees', 'तीस']], [31, ['ikattis', 'iktees', 'इकतीस']], [32, ['battis', 'battees', 'बत्तीस']],
  [33, ['taintis', 'tentees', 'तैंतीस']], [34, ['chautis', 'chountees', 'चौंतीस']], [35, ['paintis', 'paintees', 'पैंतीस']],
  [36, ['chhattis', 'chattis', 'छत्तीस']], [37, ['saintis', 'saintees', 'सैंतीस']], [38, ['artis', 'adtees', 'अड़तीस']],
  [39, ['untalis', 'untaalees', 'उनतालीस']], [40, ['chalis', 'chaalees', 'chalees', 'चालीस']], [41, ['iktalis', 'iktaalees', 'इकतालीस']],
  [42, ['bayalis', 'bayaalees', 'बयालीस']], [43, ['taintalis', 'तैंतालीस']], [44, ['chavalis', 'chauwalis', 'चौवालीस', 'चवालीस']],
  [45, ['paintalis', 'paintaalees', 'पैंतालीस']], [46, ['chhiyalis', 'छियालीस']], [47, ['saintalis', 'सैंतालीस']],
  [48, ['artalis', 'adtalis', 'अड़तालीस']], [49, ['unchas', 'उनचास']], [50, ['pachas', 'pachaas', 'पचास']],
  [51, ['ikyavan', 'ikyawan', 'इक्यावन']], [52, ['bavan', 'baawan', 'बावन']], [53, ['tirpan', 'tirepan', 'तिरेपन']],
  [54, ['chauvan', 'chauwan', 'चौवन']], [55, ['pachpan', 'पचपन']], [56, ['chhappan', 'छप्पन']], [57, ['sattavan', 'sattawan', 'सत्तावन']],
  [58, ['atthavan', 'atthawan', 'अट्ठावन']], [59, ['unsath', 'उनसठ']], [60, ['saath', 'साठ']], [61, ['iksath', 'इकसठ']],
  [62, ['basath', 'baasath', 'बासठ']], [63, ['tirsath', 'तिरसठ']], [64, ['chausath', 'चौंसठ']], [65, ['painsath', 'पैंसठ']],
  [66, ['chhiyasath', 'छियासठ']], [67, ['sarsath', 'सड़सठ']], [68, ['arsath', 'adsath', 'अड़सठ']], [69, ['unhattar', 'उनहत्तर']],
  [70, ['sattar', 'सत्तर']], [71, ['ikhattar', 'इकहत्तर']], [72, ['bahattar', 'बहत्तर']], [73, ['tihattar', 'तिहत्तर']],
  [74, ['chauhattar', 'चौहत्तर']], [75, ['pachhattar', 'pachattar', 'पचहत्तर']], [76, ['chhihattar', 'छिहत्तर']],
  [77, ['satattar', 'sathattar', 'सतहत्तर']], [78, ['athattar', 'अठहत्तर']], [79, ['unasi', 'unnasi', 'उन्यासी', 'उनासी']],
  [80, ['assi', 'अस्सी']], [81, ['ikyasi', 'इक्यासी']], [82, ['bayasi', 'बयासी']], [83, ['tirasi', 'तिरासी']], [84, ['chaurasi', 'चौरासी']],
  [85, ['pachasi', 'पचासी']], [86, ['chhiyasi', 'छियासी']], [87, ['sattasi', 'सत्तासी']], [88, ['atthasi', 'अट्ठासी']],
  [89, ['navasi', 'nawasi', 'नवासी']], [90, ['nabbe', 'nabbey', 'नब्बे']], [91, ['ikyanve', 'इक्यानबे']], [92, ['banve', 'बानबे']],
  [93, ['tiranve', 'तिरानबे']], [94, ['chauranve', 'चौरानबे']], [95, ['pachanve', 'पचानबे']], [96, ['chhiyanve', 'छियानबे']],
  [97, ['sattanve', 'सत्तानबे']], [98, ['atthanve', 'अट्ठानबे']], [99, ['ninyanve', 'निन्यानबे']],
];

function buildSmall(): Map<string, NumberWord> {
  const m = new Map<string, NumberWord>();
  for (const [value, words] of HINDI) for (const w of words) m.set(normalizeWord(w), { value, kind: 'hindi' });
  EN_UNITS.forEach((w, value) => m.set(w, { value, kind: 'unit' }));
  EN_TEENS.forEach((w, i) => m.set(w, { value: 10 + i, kind: 'teen' }));
  for (const [w, value] of Object.entries(EN_TENS)) m.set(w, { value, kind: 'tens' });
  return m;
}

/** Number words below 100 (English units, teens and tens; Hindi 1–99), normalised key → entry. */
export const SMALL_WORDS: ReadonlyMap<string, NumberWord> = buildSmall();

function normalizedMap(entries: Record<string, number>): ReadonlyMap<string, number> {
  return new Map(Object.entries(entries).map(([k, v]) => [normalizeWord(k), v]));
}

/** Multiplier words: hundred/sau, thousand/hazaar, lakh, million, crore, billion (and `k` after digits). */
export const MULTIPLIER_WORDS: ReadonlyMap<string, number> = normalizedMap({
  hundred: 100, hundreds: 100, sau: 100, 'सौ': 100,
  thousand: 1000, thousands: 1000, hazaar: 1000, hazar: 1000, hajar: 1000, hajaar: 1000, hazzar: 1000, 'हज़ार': 1000, 'हजार': 1000,
  lakh: 1e5, lakhs: 1e5, lac: 1e5, lacs: 1e5, laakh: 1e5, lak: 1e5, 'लाख': 1e5,
  million: 1e6, millions: 1e6,
  crore: 1e7, crores: 1e7, karod: 1e7, karor: 1e7, cr: 1e7, 'करोड़': 1e7, 'करोड': 1e7,
  billion: 1e9,
});

/** English ordinal words → value (first … thirtieth; `twenty first` combines tens + ordinal). */
export const ORDINAL_WORDS: ReadonlyMap<string, number> = normalizedMap({
  first: 1, second: 2, third: 3, fourth: 4, fifth: 5, sixth: 6, seventh: 7, eighth: 8, ninth: 9, tenth: 10,
  eleventh: 11, twelfth: 12, thirteenth: 13, fourteenth: 14, fifteenth: 15, sixteenth: 16, seventeenth: 17,
  eighteenth: 18, nineteenth: 19, twentieth: 20, thirtieth: 30,
});

/** Stand-alone fractions: dedh (1½), dhai (2½). */
export const FRACTION_WORDS: ReadonlyMap<string, number> = normalizedMap({
  dedh: 1.5, derh: 1.5, dedd: 1.5, 'डेढ़': 1.5, 'डेढ': 1.5,
  dhai: 2.5, dhaai: 2.5, adhai: 2.5, arhai: 2.5, 'ढाई': 2.5, 'अढ़ाई': 2.5,
});

/** Fraction prefixes added to the next number: saadhe (+½), sava (+¼), paune (−¼). */
export const FRACTION_PREFIXES: ReadonlyMap<string, number> = normalizedMap({
  saadhe: 0.5, sadhe: 0.5, saade: 0.5, sade: 0.5, saadhey: 0.5, 'साढ़े': 0.5, 'साढे': 0.5,
  sava: 0.25, savaa: 0.25, sawa: 0.25, sawaa: 0.25, 'सवा': 0.25,
  paune: -0.25, pone: -0.25, paone: -0.25, pauney: -0.25, 'पौने': -0.25,
});

/** Words that stand for a whole count: `a couple` (2), `dozen` (12), `both` (2 in "both of us"). */
export const COUNT_WORDS: ReadonlyMap<string, number> = normalizedMap({ couple: 2, dozen: 12, pair: 2 });

/** English words that make `one` a pronoun rather than a number ("this one", "no one"). */
export const ONE_PRONOUN_BEFORE: ReadonlySet<string> = new Set([
  'this', 'that', 'the', 'which', 'any', 'each', 'every', 'no', 'another', 'other', 'same', 'last', 'next', 'first',
  'right', 'wrong', 'good', 'better', 'best', 'new', 'old', 'some', 'someone', 'cheaper', 'cheapest', 'bigger', 'smaller',
]);

/** Possessives after which Hindi `saath` means "with", not sixty ("mere saath"). */
export const SAATH_WITH_BEFORE: ReadonlySet<string> = new Set(
  ['ke', 'ki', 'mere', 'meri', 'hamare', 'humare', 'tumhare', 'aapke', 'apke', 'unke', 'iske', 'uske', 'inke', 'sab', 'ek', 'के', 'मेरे', 'हमारे', 'आपके'].map(normalizeWord),
);
