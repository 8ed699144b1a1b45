/**
 * Number words of English and Hindi (romanised and Devanagari), as tables (docs/agents.md "Capture and slot types":
 * "Extractors understand English and Hindi/Hinglish number … words at least").
 *
 * The words below 100 are those speech says (spoken-words.ts: {@link EN_ONES},
 * {@link EN_TENS}, {@link HI_0_99}), so every number the agent says is one the parser hears,
 * plus the other spellings callers and transcribers use. Hindi has an irregular word for
 * every number from 1 to 99, so the Hindi table lists them all, with the common romanised
 * spellings. Every key is passed through {@link normalizeWord} when the maps are built, so
 * Devanagari with or without nukta or chandrabindu matches.
 */
import { EN_ONES, EN_TENS, HI_0_99 } from '../spoken-words.js';
import { normalizeWord } from './tokens.js';

/** How a number word combines with its neighbours in a spoken number. */
export type WordKind = 'unit' | 'teen' | 'tens' | 'hindi';

/** One entry of a number-word table. */
export interface NumberWord {
  value: number;
  kind: WordKind;
}

/** English spellings heard besides the words speech uses ({@link EN_TENS}). */
const EN_TENS_HEARD: Readonly<Record<string, number>> = { fourty: 40 };

/**
 * Hindi 0–99 as callers say and transcribers write it: value → spellings heard besides the
 * Devanagari word speech uses ({@link HI_0_99}), romanised variants first, then other
 * Devanagari spellings.
 */
const HINDI_HEARD: ReadonlyArray<readonly [number, readonly string[]]> = [
  [0, ['shunya', 'shoonya', 'sunya']],
  [1, ['ek']],
  [2, ['do']],
  [3, ['teen']],
  [4, ['char', 'chaar']],
  [5, ['paanch', 'panch', 'paach']],
  [6, ['chhe', 'chhah', 'chah', 'chhai', 'chhey', 'छः', 'छे']],
  [7, ['saat']],
  [8, ['aath']],
  [9, ['nau']],
  [10, ['das', 'dus']],
  [11, ['gyarah', 'gyaarah', 'gyara']],
  [12, ['barah', 'baarah']],
  [13, ['terah']],
  [14, ['chaudah', 'chaudha', 'choudah']],
  [15, ['pandrah', 'pandra', 'pundrah', 'पन्द्रह']],
  [16, ['solah', 'sola']],
  [17, ['satrah', 'satra']],
  [18, ['atharah', 'athaarah', 'athara']],
  [19, ['unnis', 'unnees']],
  [20, ['bees']],
  [21, ['ikkis', 'ikkees']],
  [22, ['bais', 'baees', 'baais']],
  [23, ['teis', 'teyis']],
  [24, ['chaubis', 'chaubees']],
  [25, ['pachchis', 'pachees', 'pachis']],
  [26, ['chhabbis', 'chabbis']],
  [27, ['sattais', 'sattaees']],
  [28, ['atthais', 'athais']],
  [29, ['untis', 'unatis']],
  [30, ['tees']],
  [31, ['ikattis', 'iktees']],
  [32, ['battis', 'battees']],
  [33, ['taintis', 'tentees']],
  [34, ['chautis', 'chountees']],
  [35, ['paintis', 'paintees']],
  [36, ['chhattis', 'chattis']],
  [37, ['saintis', 'saintees']],
  [38, ['artis', 'adtees']],
  [39, ['untalis', 'untaalees']],
  [40, ['chalis', 'chaalees', 'chalees']],
  [41, ['iktalis', 'iktaalees']],
  [42, ['bayalis', 'bayaalees']],
  [43, ['taintalis']],
  [44, ['chavalis', 'chauwalis', 'चौवालीस']],
  [45, ['paintalis', 'paintaalees']],
  [46, ['chhiyalis']],
  [47, ['saintalis']],
  [48, ['artalis', 'adtalis']],
  [49, ['unchas']],
  [50, ['pachas', 'pachaas']],
  [51, ['ikyavan', 'ikyawan']],
  [52, ['bavan', 'baawan']],
  [53, ['tirpan', 'tirepan']],
  [54, ['chauvan', 'chauwan']],
  [55, ['pachpan']],
  [56, ['chhappan']],
  [57, ['sattavan', 'sattawan']],
  [58, ['atthavan', 'atthawan']],
  [59, ['unsath']],
  [60, ['saath']],
  [61, ['iksath']],
  [62, ['basath', 'baasath']],
  [63, ['tirsath', 'तिरसठ']],
  [64, ['chausath']],
  [65, ['painsath']],
  [66, ['chhiyasath']],
  [67, ['sarsath']],
  [68, ['arsath', 'adsath']],
  [69, ['unhattar']],
  [70, ['sattar']],
  [71, ['ikhattar']],
  [72, ['bahattar']],
  [73, ['tihattar']],
  [74, ['chauhattar']],
  [75, ['pachhattar', 'pachattar']],
  [76, ['chhihattar']],
  [77, ['satattar', 'sathattar']],
  [78, ['athattar']],
  [79, ['unasi', 'unnasi', 'उनासी']],
  [80, ['assi']],
  [81, ['ikyasi']],
  [82, ['bayasi']],
  [83, ['tirasi']],
  [84, ['chaurasi']],
  [85, ['pachasi']],
  [86, ['chhiyasi']],
  [87, ['sattasi']],
  [88, ['atthasi']],
  [89, ['navasi', 'nawasi']],
  [90, ['nabbe', 'nabbey']],
  [91, ['ikyanve']],
  [92, ['banve']],
  [93, ['tiranve']],
  [94, ['chauranve']],
  [95, ['pachanve']],
  [96, ['chhiyanve']],
  [97, ['sattanve']],
  [98, ['atthanve']],
  [99, ['ninyanve']],
];

function buildSmall(): Map<string, NumberWord> {
  const m = new Map<string, NumberWord>();
  for (const [value, words] of HINDI_HEARD) for (const w of [...words, HI_0_99[value]!]) m.set(normalizeWord(w), { value, kind: 'hindi' });
  EN_ONES.forEach((w, value) => m.set(w, { value, kind: value < 10 ? 'unit' : 'teen' }));
  EN_TENS.forEach((w, tens) => {
    if (w !== '') m.set(w, { value: tens * 10, kind: 'tens' });
  });
  for (const [w, value] of Object.entries(EN_TENS_HEARD)) m.set(w, { value, kind: 'tens' });
  return m;
}

/** Number words below 100 (English units, teens and tens; Hindi 1–99), normalised key → entry. */
export const SMALL_WORDS: ReadonlyMap<string, NumberWord> = buildSmall();

function normalizedMap(entries: Record<string, number>): ReadonlyMap<string, number> {
  return new Map(Object.entries(entries).map(([k, v]) => [normalizeWord(k), v]));
}

/** Multiplier words: hundred/sau, thousand/hazaar, lakh, million, crore, billion (and `k` after digits). */
export const MULTIPLIER_WORDS: ReadonlyMap<string, number> = normalizedMap({
  hundred: 100,
  hundreds: 100,
  sau: 100,
  सौ: 100,
  thousand: 1000,
  thousands: 1000,
  hazaar: 1000,
  hazar: 1000,
  hajar: 1000,
  hajaar: 1000,
  hazzar: 1000,
  हज़ार: 1000,
  हजार: 1000,
  lakh: 1e5,
  lakhs: 1e5,
  lac: 1e5,
  lacs: 1e5,
  laakh: 1e5,
  lak: 1e5,
  लाख: 1e5,
  million: 1e6,
  millions: 1e6,
  crore: 1e7,
  crores: 1e7,
  karod: 1e7,
  karor: 1e7,
  cr: 1e7,
  करोड़: 1e7,
  करोड: 1e7,
  billion: 1e9,
});

/** English ordinal words → value (first … thirtieth; `twenty first` combines tens + ordinal). */
export const ORDINAL_WORDS: ReadonlyMap<string, number> = normalizedMap({
  first: 1,
  second: 2,
  third: 3,
  fourth: 4,
  fifth: 5,
  sixth: 6,
  seventh: 7,
  eighth: 8,
  ninth: 9,
  tenth: 10,
  eleventh: 11,
  twelfth: 12,
  thirteenth: 13,
  fourteenth: 14,
  fifteenth: 15,
  sixteenth: 16,
  seventeenth: 17,
  eighteenth: 18,
  nineteenth: 19,
  twentieth: 20,
  thirtieth: 30,
});

/** Stand-alone fractions: dedh (1½), dhai (2½). */
export const FRACTION_WORDS: ReadonlyMap<string, number> = normalizedMap({
  dedh: 1.5,
  derh: 1.5,
  dedd: 1.5,
  डेढ़: 1.5,
  डेढ: 1.5,
  dhai: 2.5,
  dhaai: 2.5,
  adhai: 2.5,
  arhai: 2.5,
  ढाई: 2.5,
  अढ़ाई: 2.5,
});

/** Fraction prefixes added to the next number: saadhe (+½), sava (+¼), paune (−¼). */
export const FRACTION_PREFIXES: ReadonlyMap<string, number> = normalizedMap({
  saadhe: 0.5,
  sadhe: 0.5,
  saade: 0.5,
  sade: 0.5,
  saadhey: 0.5,
  साढ़े: 0.5,
  साढे: 0.5,
  sava: 0.25,
  savaa: 0.25,
  sawa: 0.25,
  sawaa: 0.25,
  सवा: 0.25,
  paune: -0.25,
  pone: -0.25,
  paone: -0.25,
  pauney: -0.25,
  पौने: -0.25,
});

/** Words that stand for a whole count: `a couple` (2), `dozen` (12), `both` (2 in "both of us"). */
export const COUNT_WORDS: ReadonlyMap<string, number> = normalizedMap({ couple: 2, dozen: 12, pair: 2 });

/** English words that make `one` a pronoun rather than a number ("this one", "no one"). */
export const ONE_PRONOUN_BEFORE: ReadonlySet<string> = new Set([
  'this',
  'that',
  'the',
  'which',
  'any',
  'each',
  'every',
  'no',
  'another',
  'other',
  'same',
  'last',
  'next',
  'first',
  'right',
  'wrong',
  'good',
  'better',
  'best',
  'new',
  'old',
  'some',
  'someone',
  'cheaper',
  'cheapest',
  'bigger',
  'smaller',
]);

/** Possessives after which Hindi `saath` means "with", not sixty ("mere saath"). */
export const SAATH_WITH_BEFORE: ReadonlySet<string> = new Set(
  [
    'ke',
    'ki',
    'mere',
    'meri',
    'hamare',
    'humare',
    'tumhare',
    'aapke',
    'apke',
    'unke',
    'iske',
    'uske',
    'inke',
    'sab',
    'ek',
    'के',
    'मेरे',
    'हमारे',
    'आपके',
  ].map(normalizeWord),
);
