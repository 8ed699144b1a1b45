/**
 * Spoken-text normalisation (src/engine/spoken.ts): what a synthesiser is given to say for
 * numbers, amounts, dates, times, phone numbers and codes, in English and Hindi.
 */
import { describe, expect, it } from 'vitest';
import { digitWord, numberToWords, speakAmount, speakDate, speakTime, toSpokenText } from '../../src/engine/spoken.js';

describe('numberToWords', () => {
  it.each([
    [0, 'zero'],
    [7, 'seven'],
    [13, 'thirteen'],
    [20, 'twenty'],
    [42, 'forty-two'],
    [99, 'ninety-nine'],
    [100, 'one hundred'],
    [105, 'one hundred five'],
    [999, 'nine hundred ninety-nine'],
    [1000, 'one thousand'],
    [2500, 'two thousand five hundred'],
    [10_000, 'ten thousand'],
    [99_999, 'ninety-nine thousand nine hundred ninety-nine'],
    [100_000, 'one lakh'],
    [125_000, 'one lakh twenty-five thousand'],
    [1_000_001, 'ten lakh one'],
    [10_000_000, 'one crore'],
    [12_345_678, 'one crore twenty-three lakh forty-five thousand six hundred seventy-eight'],
    [1_000_000_000, 'one hundred crore'],
    [-5, 'minus five'],
  ])('English %d → %s', (n, words) => {
    expect(numberToWords(n, 'en-IN')).toBe(words);
  });

  it.each([
    [0, 'शून्य'],
    [5, 'पाँच'],
    [19, 'उन्नीस'],
    [25, 'पच्चीस'],
    [49, 'उनचास'],
    [79, 'उन्यासी'],
    [99, 'निन्यानबे'],
    [100, 'एक सौ'],
    [500, 'पाँच सौ'],
    [2500, 'दो हज़ार पाँच सौ'],
    [125_000, 'एक लाख पच्चीस हज़ार'],
    [20_000_000, 'दो करोड़'],
    [-3, 'माइनस तीन'],
  ])('Hindi %d → %s', (n, words) => {
    expect(numberToWords(n, 'hi-IN')).toBe(words);
  });

  it('keeps numerals for languages without word tables', () => {
    expect(numberToWords(125000, 'ta-IN')).toBe('125000');
  });

  it('throws RangeError for non-integers', () => {
    expect(() => numberToWords(1.5, 'en')).toThrow(RangeError);
    expect(() => numberToWords(Number.NaN, 'en')).toThrow(RangeError);
    expect(() => numberToWords(2 ** 60, 'en')).toThrow(RangeError);
  });
});

describe('digitWord', () => {
  it('names every digit in English and Hindi', () => {
    expect([...'0123456789'].map((d) => digitWord(d, 'en-IN'))).toEqual([
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
    ]);
    expect([...'0123456789'].map((d) => digitWord(d, 'hi-IN'))).toEqual(['शून्य', 'एक', 'दो', 'तीन', 'चार', 'पाँच', 'छह', 'सात', 'आठ', 'नौ']);
  });
  it('accepts Devanagari digits and keeps numerals for other languages', () => {
    expect(digitWord('९', 'hi-IN')).toBe('नौ');
    expect(digitWord('9', 'ta-IN')).toBe('9');
  });
  it.each(['', '10', 'a', ' '])('rejects %j', (d) => {
    expect(() => digitWord(d, 'en')).toThrow(RangeError);
  });
});

describe('speakDate', () => {
  it('says weekday, ordinal day and month in English', () => {
    expect(speakDate('2025-11-14', 'en-IN')).toBe('Friday, the fourteenth of November');
    expect(speakDate('2026-11-21', 'en-IN')).toBe('Saturday, the twenty-first of November');
    expect(speakDate('2026-01-01', 'en')).toBe('Thursday, the first of January');
    expect(speakDate('2026-03-22', 'en')).toBe('Sunday, the twenty-second of March');
    expect(speakDate('2026-03-23', 'en')).toBe('Monday, the twenty-third of March');
    expect(speakDate('2026-03-30', 'en')).toBe('Monday, the thirtieth of March');
  });
  it('computes the weekday across leap days and centuries', () => {
    expect(speakDate('2024-02-29', 'en')).toBe('Thursday, the twenty-ninth of February');
    expect(speakDate('2000-01-01', 'en')).toBe('Saturday, the first of January');
    expect(speakDate('1999-12-31', 'en')).toBe('Friday, the thirty-first of December');
  });
  it('says the year when asked', () => {
    expect(speakDate('2026-11-21', 'en', { withYear: true })).toBe('Saturday, the twenty-first of November, twenty twenty-six');
    expect(speakDate('2005-06-01', 'en', { withYear: true })).toBe('Wednesday, the first of June, two thousand five');
    expect(speakDate('2026-11-21', 'hi-IN', { withYear: true })).toBe('शनिवार, इक्कीस नवंबर दो हज़ार छब्बीस');
  });
  it('speaks Hindi dates', () => {
    expect(speakDate('2025-11-14', 'hi-IN')).toBe('शुक्रवार, चौदह नवंबर');
    expect(speakDate('2026-08-15', 'hi-IN')).toBe('शनिवार, पंद्रह अगस्त');
  });
  it.each(['2025-02-29', '2026-13-01', '2026-00-10', '2026-04-31', '26-11-21', '2026/11/21', '', 'tomorrow'])('rejects %j', (d) => {
    expect(() => speakDate(d, 'en')).toThrow(RangeError);
  });
});

describe('speakTime', () => {
  it.each([
    ['10:30', 'ten thirty in the morning'],
    ['17:00', 'five PM'],
    ['14:15', 'two fifteen PM'],
    ['09:05', 'nine oh five in the morning'],
    ['12:00', 'twelve noon'],
    ['00:00', 'midnight'],
    ['00:30', 'twelve thirty at night'],
    ['12:45', 'twelve forty-five PM'],
    ['23:59', 'eleven fifty-nine PM'],
    ['7:00', 'seven in the morning'],
  ])('English %s → %s', (t, said) => {
    expect(speakTime(t, 'en-IN')).toBe(said);
  });
  it.each([
    ['10:30', 'सुबह साढ़े दस बजे'],
    ['17:00', 'शाम पाँच बजे'],
    ['14:15', 'दोपहर सवा दो बजे'],
    ['13:30', 'दोपहर डेढ़ बजे'],
    ['14:30', 'दोपहर ढाई बजे'],
    ['17:45', 'शाम पौने छह बजे'],
    ['23:45', 'रात पौने बारह बजे'],
    ['21:10', 'रात नौ बजकर दस मिनट'],
    ['00:00', 'रात बारह बजे'],
    ['06:00', 'सुबह छह बजे'],
  ])('Hindi %s → %s', (t, said) => {
    expect(speakTime(t, 'hi-IN')).toBe(said);
  });
  it.each(['24:00', '10:60', '1030', 'ten', ''])('rejects %j', (t) => {
    expect(() => speakTime(t, 'en')).toThrow(RangeError);
  });
});

describe('speakAmount', () => {
  it.each([
    [125000, 'one lakh twenty-five thousand rupees'],
    [500, 'five hundred rupees'],
    [1, 'one rupee'],
    [0, 'zero rupees'],
    [2500.5, 'two thousand five hundred rupees and fifty paise'],
    [0.75, 'seventy-five paise'],
    [0.01, 'one paisa'],
    [10_000_000, 'one crore rupees'],
    [89.999, 'ninety rupees'],
    [-200, 'minus two hundred rupees'],
  ])('English %d → %s', (n, said) => {
    expect(speakAmount(n, 'en-IN')).toBe(said);
  });
  it.each([
    [125000, 'एक लाख पच्चीस हज़ार रुपये'],
    [1, 'एक रुपया'],
    [2500.5, 'दो हज़ार पाँच सौ रुपये और पचास पैसे'],
    [0.01, 'एक पैसा'],
  ])('Hindi %d → %s', (n, said) => {
    expect(speakAmount(n, 'hi-IN')).toBe(said);
  });
  it('keeps numerals for other languages and rejects non-finite amounts', () => {
    expect(speakAmount(2500.5, 'ta-IN')).toBe('₹2500.50');
    expect(() => speakAmount(Number.POSITIVE_INFINITY, 'en')).toThrow(RangeError);
  });
});

describe('toSpokenText (English)', () => {
  const en = (text: string) => toSpokenText(text, 'en-IN');

  it('reads phone numbers digit by digit, with a pause between written groups', () => {
    expect(en('Call +91 98765 43210 now')).toBe('Call plus nine one, nine eight seven six five, four three two one zero now');
    expect(en('My number is 9876543210.')).toBe('My number is nine eight seven six five four three two one zero.');
    expect(en('+919876543210')).toBe('plus nine one nine eight seven six five four three two one zero');
    expect(en('1800-123-4567')).toBe('one eight zero zero, one two three, four five six seven');
  });
  it('reads OTPs and codes digit by digit', () => {
    expect(en('Your OTP is 482913')).toBe('Your OTP is four eight two nine one three');
    expect(en('OTP 123 456')).toBe('OTP one two three, four five six');
    expect(en('PIN 1 2 3 4 5')).toBe('PIN one two three four five');
    expect(en('code 0123')).toBe('code zero one two three');
  });
  it('says amounts in rupees and paise', () => {
    expect(en('Pay ₹1,25,000 today')).toBe('Pay one lakh twenty-five thousand rupees today');
    expect(en('Rs. 500/- only')).toBe('five hundred rupees only');
    expect(en('INR 2,500.50 is due')).toBe('two thousand five hundred rupees and fifty paise is due');
    expect(en('₹1.5 lakh')).toBe('one lakh fifty thousand rupees');
    expect(en('₹2 crore')).toBe('two crore rupees');
    expect(en('₹5k')).toBe('five thousand rupees');
    expect(en('Rs 1')).toBe('one rupee');
    expect(en('500 rupees')).toBe('five hundred rupees');
    expect(en('₹125,000')).toBe('one lakh twenty-five thousand rupees');
  });
  it('says ISO and day/month/year dates with weekday and year', () => {
    expect(en('on 2026-11-21 please')).toBe('on Saturday, the twenty-first of November, twenty twenty-six please');
    expect(en('on 21/11/2026')).toBe('on Saturday, the twenty-first of November, twenty twenty-six');
  });
  it('says times, with am/pm, period words and ranges', () => {
    expect(en('at 10:30')).toBe('at ten thirty in the morning');
    expect(en('at 17:00.')).toBe('at five PM.');
    expect(en('5 pm')).toBe('five PM');
    expect(en('5.30 p.m.')).toBe('five thirty PM');
    expect(en('10:30 AM')).toBe('ten thirty in the morning');
    expect(en('12 am')).toBe('midnight');
    expect(en('5:30 in the evening')).toBe('five thirty PM');
    expect(en('open 9:00-17:00')).toBe('open nine in the morning to five PM');
    expect(en('open 9 am to 6 pm')).toBe('open nine in the morning to six PM');
  });
  it('says small numbers, groups, decimals, percentages, ordinals and ranges in words', () => {
    expect(en('I have 3 kids and 42 cats')).toBe('I have three kids and forty-two cats');
    expect(en('1,25,000 people')).toBe('one lakh twenty-five thousand people');
    expect(en('It is 2.5 km, or 2.05')).toBe('It is two point five km, or two point zero five');
    expect(en('50% off')).toBe('fifty percent off');
    expect(en('the 14th, 21st, 2nd and 3rd')).toBe('the fourteenth, twenty-first, second and third');
    expect(en('year 2026')).toBe('year two thousand twenty-six');
    expect(en('10-12 days')).toBe('ten to twelve days');
    expect(en('FY 2024-25')).toBe('FY twenty twenty-four to twenty twenty-five');
  });
  it('leaves other text alone and collapses whitespace', () => {
    expect(en('Namaste, this is Sunrise Clinic.')).toBe('Namaste, this is Sunrise Clinic.');
    expect(en('  lots   of\n space\t')).toBe('lots of space');
    expect(en('A4 paper, flat B12')).toBe('A4 paper, flat B12');
    expect(en('We are open nine to six, Monday to Saturday.')).toBe('We are open nine to six, Monday to Saturday.');
    expect(en('')).toBe('');
  });
  it('leaves invalid dates and times as numbers, never throwing', () => {
    expect(en('2025-02-30')).toBe('two zero two five, zero two, three zero');
    expect(en('25:61')).toBe('twenty-five:sixty-one');
  });
  it('is idempotent on its own output', () => {
    const once = en('Pay ₹1,25,000 by 2026-11-21 at 10:30, call +91 98765 43210');
    expect(en(once)).toBe(once);
  });
});

describe('toSpokenText (Hindi)', () => {
  const hi = (text: string) => toSpokenText(text, 'hi-IN');

  it('uses Devanagari number words', () => {
    expect(hi('आपका OTP 123456 है')).toBe('आपका OTP एक दो तीन चार पाँच छह है');
    expect(hi('₹1,25,000 जमा करें')).toBe('एक लाख पच्चीस हज़ार रुपये जमा करें');
    expect(hi('500 रुपये')).toBe('पाँच सौ रुपये');
    expect(hi('सुबह 10 बजे')).toBe('सुबह दस बजे');
    expect(hi('2.5 किलो')).toBe('दो दशमलव पाँच किलो');
  });
  it('reads Devanagari digits and phone numbers digit by digit', () => {
    expect(hi('९८७६५ ४३२१०')).toBe('नौ आठ सात छह पाँच, चार तीन दो एक शून्य');
    expect(hi('+91 98765 43210')).toBe('प्लस नौ एक, नौ आठ सात छह पाँच, चार तीन दो एक शून्य');
  });
  it('says dates and times the Hindi way, without repeating period words', () => {
    expect(hi('2026-11-21 को')).toBe('शनिवार, इक्कीस नवंबर दो हज़ार छब्बीस को');
    expect(hi('10:30 बजे')).toBe('सुबह साढ़े दस बजे');
    expect(hi('सुबह 10:30')).toBe('सुबह साढ़े दस बजे');
    expect(hi('शाम 5:30 बजे')).toBe('शाम साढ़े पाँच बजे');
    expect(hi('रात 10:15')).toBe('रात सवा दस बजे');
  });
});

describe('toSpokenText (other languages)', () => {
  it('keeps numerals but spaces digit strings out so they are read one by one', () => {
    expect(toSpokenText('Call 98765 43210 at 10:30', 'ta-IN')).toBe('Call 9 8 7 6 5, 4 3 2 1 0 at 10:30');
    expect(toSpokenText('₹500', 'ta-IN')).toBe('₹500');
  });
});
