/**
 * Spoken-text normalisation (readbacks, digit clips, and every text sent to a
 * synthesiser): numbers, amounts, dates, times, phone numbers and codes written the way a
 * synthesiser should say them, in English or Hindi. Pure: no I/O, no clock.
 *
 * English uses the Indian grouping ("one lakh twenty-five thousand rupees"); Hindi uses
 * Devanagari number words ("एक लाख पच्चीस हज़ार रुपये"). Other languages keep numerals (which
 * the synthesiser reads in its own voice's language); only their digit strings are spaced out
 * so they are read digit by digit.
 */
import { type NumberWords, englishOrdinal, englishYear, spokenLanguage, wordsFor } from './spoken-words.js';
import { normaliseText } from './spoken-text.js';

/**
 * Text as it should be spoken by a synthesiser for `language` (BCP-47: 'en-IN', 'hi-IN').
 *
 * - phone numbers (`+91 98765 43210`, `9876543210`), OTPs and codes (5 or more digits, a
 *   leading zero, or digit groups written with spaces/dashes) → digit by digit, groups
 *   separated by a comma pause ("plus nine one, nine eight seven six five, …");
 * - amounts `₹1,25,000`, `Rs. 500/-`, `INR 2,500.50`, `₹1.5 lakh`, `500 rupees` → amount words
 *   with rupees and paise ({@link speakAmount});
 * - ISO dates `2026-11-21` and Indian `21/11/2026` → weekday, day, month and year;
 * - times `10:30`, `17:00`, `5 pm`, `10:30 a.m.`, ranges `9:00-17:00` → {@link speakTime};
 * - plain numbers up to 4 digits, Indian/Western comma groups, decimals, `50%`, English
 *   ordinals `14th` → words; year ranges `2024-25`, small ranges `10-12` → "… to …";
 * - other text unchanged; whitespace collapsed and trimmed. Devanagari digits count as digits.
 *
 * Never throws; text it cannot interpret is left as written.
 */
export function toSpokenText(text: string, language: string): string {
  return normaliseText(text, language, { digitWord, numberToWords, speakAmount, speakDate, speakTime });
}

const DEVANAGARI_ZERO = 0x0966;

/**
 * The word for one digit 0-9 in the language: 'nine' (English), 'नौ' (Hindi); other languages
 * get the numeral itself, which their synthesiser voice reads natively.
 *
 * @param digit one character: an ASCII or Devanagari digit
 * @throws RangeError when `digit` is not a single digit
 */
export function digitWord(digit: string, language: string): string {
  let d = -1;
  if (/^[0-9]$/.test(digit)) d = digit.charCodeAt(0) - 48;
  else if (/^[\u0966-\u096F]$/.test(digit)) d = digit.charCodeAt(0) - DEVANAGARI_ZERO;
  if (d < 0) throw new RangeError(`not a digit: ${JSON.stringify(digit)}`);
  return wordsFor(spokenLanguage(language)).cardinal(d);
}

/**
 * An integer in words, Indian grouping (thousand, lakh, crore): 125000 → "one lakh
 * twenty-five thousand" / "एक लाख पच्चीस हज़ार"; negative numbers start with "minus"/"माइनस".
 * Other languages get the numeral ("125000").
 *
 * @throws RangeError when `n` is not a safe integer
 */
export function numberToWords(n: number, language: string): string {
  if (!Number.isSafeInteger(n)) throw new RangeError(`not a safe integer: ${n}`);
  const family = spokenLanguage(language);
  const words = wordsFor(family);
  if (n >= 0) return words.cardinal(n);
  return family === 'numeric' ? String(n) : `${words.minus} ${words.cardinal(-n)}`;
}

/**
 * An amount in rupees spoken in the Indian system, rounded to paise:
 * 125000 → "one lakh twenty-five thousand rupees"; 2500.5 → "two thousand five hundred
 * rupees and fifty paise"; 1 → "one rupee"; 0.75 → "seventy-five paise". Hindi:
 * "एक लाख पच्चीस हज़ार रुपये", "… रुपये और पचास पैसे", "एक रुपया". Other languages: "₹2500.50".
 *
 * @throws RangeError when `rupees` is not finite or too large to count in paise exactly
 */
export function speakAmount(rupees: number, language: string): string {
  if (!Number.isFinite(rupees)) throw new RangeError(`not an amount: ${rupees}`);
  const totalPaise = Math.round(Math.abs(rupees) * 100);
  if (!Number.isSafeInteger(totalPaise)) throw new RangeError(`amount too large: ${rupees}`);
  const whole = Math.floor(totalPaise / 100);
  const paise = totalPaise % 100;
  const family = spokenLanguage(language);
  if (family === 'numeric')
    return `${rupees < 0 && totalPaise > 0 ? '-' : ''}₹${whole}${paise ? `.${String(paise).padStart(2, '0')}` : ''}`;
  const w = wordsFor(family);
  const hi = family === 'hi';
  const rupeePart = `${w.cardinal(whole)} ${hi ? (whole === 1 ? 'रुपया' : 'रुपये') : whole === 1 ? 'rupee' : 'rupees'}`;
  const paisePart = `${w.cardinal(paise)} ${hi ? (paise === 1 ? 'पैसा' : 'पैसे') : paise === 1 ? 'paisa' : 'paise'}`;
  let said: string;
  if (paise === 0) said = rupeePart;
  else if (whole === 0) said = paisePart;
  else said = `${rupeePart} ${hi ? 'और' : 'and'} ${paisePart}`;
  return rupees < 0 && totalPaise > 0 ? `${w.minus} ${said}` : said;
}

/** Options of {@link speakDate}. */
export interface SpeakDateOptions {
  /** Also say the year ("…, twenty twenty-six"). Default false (a readback of a near date). */
  withYear?: boolean;
}

/**
 * A calendar date 'YYYY-MM-DD' spoken for a readback: "Friday, the fourteenth of November";
 * Hindi "शुक्रवार, चौदह नवंबर"; with `withYear` "…, twenty twenty-five" / "… दो हज़ार
 * पच्चीस". The weekday is computed from the date itself (proleptic Gregorian, UTC calendar
 * arithmetic, no time zone). Other languages: "14/11" or "14/11/2025".
 *
 * @throws RangeError when `isoDate` is not a real date in the form YYYY-MM-DD
 */
export function speakDate(isoDate: string, language: string, options: SpeakDateOptions = {}): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(isoDate);
  const year = Number(m?.[1]);
  const month = Number(m?.[2]);
  const day = Number(m?.[3]);
  const date = new Date(Date.UTC(2000, month - 1, day));
  date.setUTCFullYear(year);
  if (!m || date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    throw new RangeError(`not a date (YYYY-MM-DD): ${JSON.stringify(isoDate)}`);
  }
  const family = spokenLanguage(language);
  const w: NumberWords = wordsFor(family);
  const weekday = w.weekdays[date.getUTCDay()]!;
  const monthName = w.months[month - 1]!;
  const withYear = options.withYear === true;
  if (family === 'en') {
    return `${weekday}, the ${englishOrdinal(day)} of ${monthName}${withYear ? `, ${englishYear(year)}` : ''}`;
  }
  if (family === 'hi') return `${weekday}, ${w.cardinal(day)} ${monthName}${withYear ? ` ${w.cardinal(year)}` : ''}`;
  return `${day}/${month}${withYear ? `/${year}` : ''}`;
}

/** Parses 'H:MM'/'HH:MM' (24 h) into hours and minutes. @throws RangeError when malformed. */
function parseTime(hhmm: string): { h: number; m: number } {
  const match = /^(\d{1,2}):(\d{2})$/.exec(hhmm);
  const h = Number(match?.[1]);
  const m = Number(match?.[2]);
  if (!match || h > 23 || m > 59) throw new RangeError(`not a time (HH:MM, 24 h): ${JSON.stringify(hhmm)}`);
  return { h, m };
}

/** English: "ten thirty in the morning", "ten oh five in the morning", "five PM", "midnight". */
function englishTime(h: number, m: number): string {
  if (m === 0 && h === 0) return 'midnight';
  if (m === 0 && h === 12) return 'twelve noon';
  const hour = wordsFor('en').cardinal(h % 12 || 12);
  const minutes = m === 0 ? '' : m < 10 ? ` oh ${wordsFor('en').cardinal(m)}` : ` ${wordsFor('en').cardinal(m)}`;
  const period = h === 0 ? 'at night' : h < 12 ? 'in the morning' : 'PM';
  return `${hour}${minutes} ${period}`;
}

/** Hindi: "सुबह साढ़े दस बजे", "दोपहर ढाई बजे", "शाम पौने छह बजे", "रात नौ बजकर दस मिनट". */
function hindiTime(h: number, m: number): string {
  const w = wordsFor('hi');
  const period = h >= 4 && h < 12 ? 'सुबह' : h >= 12 && h < 16 ? 'दोपहर' : h >= 16 && h < 20 ? 'शाम' : 'रात';
  const h12 = h % 12 || 12;
  const next12 = (h12 % 12) + 1;
  let said: string;
  if (m === 0) said = `${w.cardinal(h12)} बजे`;
  else if (m === 15) said = `सवा ${w.cardinal(h12)} बजे`;
  else if (m === 30) said = h12 === 1 ? 'डेढ़ बजे' : h12 === 2 ? 'ढाई बजे' : `साढ़े ${w.cardinal(h12)} बजे`;
  else if (m === 45) said = `पौने ${w.cardinal(next12)} बजे`;
  else said = `${w.cardinal(h12)} बजकर ${w.cardinal(m)} मिनट`;
  return `${period} ${said}`;
}

/**
 * A time of day 'HH:MM' (24 h) spoken: English "ten thirty in the morning", "five PM",
 * "two fifteen PM", "twelve noon", "midnight", "twelve thirty at night"; Hindi "सुबह साढ़े
 * दस बजे", "शाम पाँच बजे", "दोपहर सवा दो बजे", "रात पौने बारह बजे". Other languages: "17:00".
 *
 * @throws RangeError when `hhmm` is not a valid 24-hour time
 */
export function speakTime(hhmm: string, language: string): string {
  const { h, m } = parseTime(hhmm);
  const family = spokenLanguage(language);
  if (family === 'en') return englishTime(h, m);
  if (family === 'hi') return hindiTime(h, m);
  return `${h}:${String(m).padStart(2, '0')}`;
}
