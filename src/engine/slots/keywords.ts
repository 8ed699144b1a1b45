/**
 * Keyword lists of the slot extractors, per meaning, each in English, romanised Hindi
 * (Hinglish) and Devanagari (DESIGN.md §6). Every agent hears all of them whatever its own
 * language: Indian callers mix languages within one sentence.
 *
 * Lists are plain arrays of phrases; {@link normalizeWord} is applied where they are compiled.
 */

/** Nouns that make a number a count ("4 people", "do log", "three bed rooms"). */
export const COUNT_NOUNS: readonly string[] = [
  'people', 'person', 'persons', 'peoples', 'pax', 'guest', 'guests', 'adult', 'adults', 'kid', 'kids', 'child', 'children', 'infant', 'infants',
  'member', 'members', 'passenger', 'passengers', 'rider', 'riders', 'traveler', 'travelers', 'traveller', 'travellers', 'seniors', 'students',
  'ticket', 'tickets', 'seat', 'seats', 'room', 'rooms', 'bed', 'beds', 'bedroom', 'bedrooms', 'bath', 'baths', 'bathroom', 'bathrooms',
  'bag', 'bags', 'suitcase', 'suitcases', 'luggage', 'table', 'tables', 'car', 'cars', 'cab', 'cabs', 'item', 'items', 'piece', 'pieces',
  'unit', 'units', 'plate', 'plates', 'box', 'boxes', 'packet', 'packets', 'bottle', 'bottles', 'copies', 'copy', 'pass', 'passes',
  'day', 'days', 'night', 'nights', 'week', 'weeks', 'month', 'months', 'year', 'years', 'hour', 'hours', 'minute', 'minutes', 'times',
  'log', 'logon', 'logo', 'logg', 'jane', 'vyakti', 'aadmi', 'bande', 'bachche', 'bacche', 'baccha', 'kamra', 'kamre', 'kamron',
  'din', 'dino', 'dinon', 'raat', 'raaten', 'hafte', 'mahine', 'saal', 'ghante', 'ghanta', 'minat', 'ticketein', 'tikat',
  'लोग', 'लोगों', 'व्यक्ति', 'आदमी', 'बच्चे', 'टिकट', 'सीट', 'कमरा', 'कमरे', 'दिन', 'रात', 'हफ्ते', 'महीने', 'साल', 'घंटे',
];

/** Words right after a number that make it something other than a count ("3 star", "one way"). */
export const NOT_COUNT_AFTER: readonly string[] = [
  'star', 'stars', 'way', 'stop', 'stops', 'layover', 'layovers', '%', 'percent', 'am', 'pm', 'oclock', 'baje', 'बजे',
  'dollars', 'dollar', 'bucks', 'rupees', 'rupee', 'rs', 'rupaye', 'rupay', 'rupiya', 'inr', 'k',
  'street', 'st', 'road', 'rd', 'avenue', 'ave', 'drive', 'boulevard', 'blvd', 'lane', 'floor', 'sector', 'block', 'cross',
];

/** Currency written before an amount: ₹, $, rs, inr. */
export const CURRENCY_BEFORE: readonly string[] = ['₹', '$', 'rs', 'inr', 'rupees', 'rupee', 'usd', 'रु', 'रू'];

/** Currency said after an amount: rupees, rupaye, bucks, dollars, /-. */
export const CURRENCY_AFTER: readonly string[] = [
  'rupees', 'rupee', 'rupaye', 'rupaiye', 'rupay', 'rupye', 'rupiya', 'rupiye', 'rupya', 'rs', 'inr', 'bucks', 'buck',
  'dollars', 'dollar', 'usd', 'रुपये', 'रुपए', 'रुपया', 'रुपैया', 'रु', 'रू',
];

/** Parts of the day and the canonical part they name. */
export const DAYPARTS: Readonly<Record<string, 'morning' | 'afternoon' | 'evening' | 'night' | 'noon' | 'midnight'>> = {
  morning: 'morning', mornings: 'morning', subah: 'morning', subha: 'morning', suba: 'morning', savere: 'morning', sawere: 'morning', 'सुबह': 'morning', 'सवेरे': 'morning',
  afternoon: 'afternoon', dopahar: 'afternoon', dopehar: 'afternoon', dophar: 'afternoon', dopaher: 'afternoon', dupahar: 'afternoon', 'दोपहर': 'afternoon',
  evening: 'evening', eve: 'evening', shaam: 'evening', sham: 'evening', 'शाम': 'evening',
  night: 'night', tonight: 'night', raat: 'night', rat: 'night', 'रात': 'night',
};

/** Months by name (English, romanised Hindi, Devanagari) → 1–12. */
export const MONTHS: Readonly<Record<string, number>> = {
  january: 1, jan: 1, janvari: 1, janwari: 1, 'जनवरी': 1,
  february: 2, feb: 2, febuary: 2, farvari: 2, farwari: 2, 'फरवरी': 2,
  march: 3, mar: 3, maarch: 3, 'मार्च': 3,
  april: 4, apr: 4, aprail: 4, 'अप्रैल': 4,
  may: 5, mai: 5, 'मई': 5,
  june: 6, jun: 6, joon: 6, 'जून': 6,
  july: 7, jul: 7, julai: 7, 'जुलाई': 7,
  august: 8, aug: 8, agast: 8, agust: 8, 'अगस्त': 8,
  september: 9, sept: 9, sep: 9, sitambar: 9, sitamber: 9, 'सितंबर': 9, 'सितम्बर': 9,
  october: 10, oct: 10, aktubar: 10, aktoobar: 10, 'अक्टूबर': 10, 'अक्तूबर': 10,
  november: 11, nov: 11, navambar: 11, navamber: 11, 'नवंबर': 11, 'नवम्बर': 11,
  december: 12, dec: 12, disambar: 12, disamber: 12, 'दिसंबर': 12, 'दिसम्बर': 12,
};

/** Weekdays → 0 (Monday) … 6 (Sunday); `weekend` counts as Saturday. */
export const WEEKDAYS: Readonly<Record<string, number>> = {
  monday: 0, somvar: 0, somwar: 0, 'सोमवार': 0,
  tuesday: 1, tues: 1, mangalvar: 1, mangalwar: 1, 'मंगलवार': 1,
  wednesday: 2, weds: 2, budhvar: 2, budhwar: 2, 'बुधवार': 2,
  thursday: 3, thurs: 3, guruvar: 3, guruwar: 3, brihaspativar: 3, veervar: 3, 'गुरुवार': 3, 'वीरवार': 3,
  friday: 4, shukravar: 4, shukrawar: 4, 'शुक्रवार': 4,
  saturday: 5, shanivar: 5, shaniwar: 5, 'शनिवार': 5, weekend: 5,
  sunday: 6, ravivar: 6, raviwar: 6, itvar: 6, itwar: 6, etwar: 6, 'रविवार': 6, 'इतवार': 6,
};

/** Relative days → offset from today. `kal` is read as tomorrow (see date.ts). */
export const RELATIVE_DAYS: Readonly<Record<string, number>> = {
  today: 0, tonight: 0, 'later today': 0, 'this morning': 0, 'this afternoon': 0, 'this evening': 0, 'today itself': 0,
  aaj: 0, aj: 0, 'आज': 0, 'aaj raat': 0,
  tomorrow: 1, tomorow: 1, tommorow: 1, tommorrow: 1, tmrw: 1, tmr: 1, 'tomorrow morning': 1, kal: 1, 'कल': 1,
  'day after tomorrow': 2, 'the day after tomorrow': 2, 'day after tmrw': 2, parso: 2, parson: 2, parsoon: 2, parsu: 2, 'परसों': 2, 'परसो': 2,
  narso: 3, narson: 3, 'नरसों': 3,
  yesterday: -1,
};

/** Hindi words of denial ("kal nahi", "theek nahi hai"), romanised and Devanagari. */
export const HINDI_NEGATIONS: readonly string[] = ['nahi', 'nahin', 'nai', 'nhi', 'नहीं', 'नही'];

/** Words said around an answer that carry no value ("uh", "please", "ji"). */
export const FILLERS: readonly string[] = [
  'uh', 'um', 'umm', 'hmm', 'er', 'ah', 'oh', 'well', 'so', 'ok', 'okay', 'please', 'pls', 'plz', 'just', 'only', 'sirf', 'bas', 'ji', 'jee',
  'sir', 'madam', 'maam', 'hai', 'hain', 'thanks', 'thank', 'you', 'it', 'is', "it's", 'its', 'be', 'will', 'would', 'make', 'the', 'on',
  'at', 'for', 'around', 'about', 'by', 'yes', 'yeah', 'haan', 'ha', 'na', 'to', 'karo', 'kar', 'dijiye', 'chahiye', 'ko', 'tak',
  'जी', 'है', 'हैं', 'कृपया',
];
