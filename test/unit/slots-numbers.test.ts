import { describe, expect, it } from 'vitest';
import { parseNumberWords, spokenDigits } from '../../src/engine/slots/index.js';
import { numeralize } from '../../src/engine/slots/numbers.js';
import { tokenize } from '../../src/engine/slots/tokens.js';
import { numberToWords } from '../../src/engine/spoken.js';

/** The numeralised text of an utterance (tokens joined by spaces). */
function numeralized(text: string, opts = {}): string {
  return numeralize(tokenize(text), opts)
    .map((t) => t.text)
    .join(' ');
}

describe('parseNumberWords: English', () => {
  it.each([
    ['one thousand three hundred and thirty', 1330],
    ['one thousand twenty', 1020],
    ['seven hundred and seventy', 770],
    ['twenty-five', 25],
    ['twenty five', 25],
    ['a hundred', 100],
    ['nineteen hundred', 1900],
    ['two lakh fifty thousand', 250000],
    ['one and a half', 1.5],
    ['a dozen', 12],
    ['a couple', 2],
    ['zero', 0],
    ['1,490', 1490],
    ['1.5 lakh', 150000],
    ['2 crore', 20000000],
    ['5k', 5000],
    ['2 lakh 50 thousand', 250000],
  ])('%s → %d', (text, value) => {
    expect(parseNumberWords(text)).toBe(value);
  });
});

describe('parseNumberWords: Hindi and Hinglish', () => {
  it.each([
    ['ek', 1],
    ['do', 2],
    ['teen', 3],
    ['char', 4],
    ['paanch', 5],
    ['chhe', 6],
    ['saat', 7],
    ['aath', 8],
    ['nau', 9],
    ['das', 10],
    ['bees', 20],
    ['pachaas', 50],
    ['sau', 100],
    ['paanch sau', 500],
    ['ek hazaar', 1000],
    ['ek lakh', 100000],
    ['do crore', 20000000],
    ['ek lakh pachees hazaar', 125000],
    ['do hazaar paanch sau', 2500],
    ['dedh lakh', 150000],
    ['dhai sau', 250],
    ['saadhe teen hazaar', 3500],
    ['sava sau', 125],
    ['paune do sau', 175],
    ['nabbe', 90],
    ['ninyanve', 99],
    ['पांच सौ', 500],
    ['पाँच सौ', 500],
    ['दो हज़ार', 2000],
    ['दो हजार', 2000],
    ['तीन', 3],
    ['डेढ़ लाख', 150000],
  ])('%s → %d', (text, value) => {
    expect(parseNumberWords(text)).toBe(value);
  });
});

describe('parseNumberWords hears every number speech says below 100', () => {
  const below100 = Array.from({ length: 100 }, (_v, n) => n);
  it.each(below100)('English %d', (n) => {
    expect(parseNumberWords(numberToWords(n, 'en-IN'))).toBe(n);
  });
  it.each(below100)('Hindi %d', (n) => {
    expect(parseNumberWords(numberToWords(n, 'hi-IN'))).toBe(n);
  });
  it('keeps the other spellings it heard before', () => {
    expect(parseNumberWords('तिरेसठ')).toBe(63);
    expect(parseNumberWords('तिरसठ')).toBe(63);
    expect(parseNumberWords('छः')).toBe(6);
    expect(parseNumberWords('पन्द्रह')).toBe(15);
    expect(parseNumberWords('चौवालीस')).toBe(44);
    expect(parseNumberWords('उनासी')).toBe(79);
    expect(parseNumberWords('fourty two')).toBe(42);
    expect(parseNumberWords('tirsath')).toBe(63);
  });
});

describe('parseNumberWords: not one number', () => {
  it.each(['nine eight', 'nau aath', 'hello', '', 'twenty twenty', '10:30', 'the third'])('%j → null', (text) => {
    expect(parseNumberWords(text)).toBeNull();
  });
});

describe('spokenDigits', () => {
  it.each([
    ['nine eight seven six five four three two one zero', '9876543210'],
    ['double five', '55'],
    ['triple seven two', '7772'],
    ['oh five nine', '059'],
    ['nau aath saat', '987'],
    ['ek do teen char', '1234'],
    ['नौ आठ शून्य', '980'],
    ['98765 43210', '9876543210'],
    ['९८७६५', '98765'],
    ['ninety eight seven', '987'],
  ])('%s → %s', (text, digits) => {
    expect(spokenDigits(text)).toBe(digits);
  });
  it('returns null without digits', () => {
    expect(spokenDigits('no idea')).toBeNull();
  });
  it('repeats a digit only after double/triple, not after words inherited by every object', () => {
    expect(spokenDigits('constructor nine eight seven six')).toBe('9876');
    expect(spokenDigits('toString five five')).toBe('55');
    expect(spokenDigits('dabal char')).toBe('44');
    expect(spokenDigits('डबल पांच')).toBe('55');
  });
});

describe('numeralize: words that are not numbers here', () => {
  it('leaves "do" alone when it is a verb', () => {
    expect(numeralized('kar do')).toBe('kar do');
    expect(numeralized('do you have rooms')).toBe('do you have rooms');
    expect(numeralized('do log')).toBe('2 log');
    expect(numeralized('do hazaar')).toBe('2000');
  });
  it('leaves "one" alone as a pronoun', () => {
    expect(numeralized('this one')).toBe('this one');
    expect(numeralized('no one')).toBe('no one');
    expect(numeralized('one ticket')).toBe('1 ticket');
  });
  it('reads "saath" as with after a possessive', () => {
    expect(numeralized('mere saath do log')).toBe('mere saath 2 log');
    expect(numeralized('saath hazaar')).toBe('60000');
  });
  it('keeps ordinals apart, but not "a second" or "second thought"', () => {
    expect(numeralized('the twenty-first')).toBe('the 21st');
    expect(numeralized('third of march')).toBe('3rd of march');
    expect(numeralized('wait a second')).toBe('wait a second');
    expect(numeralized('on second thought')).toBe('on second thought');
  });
  it('reads fractions only when asked to', () => {
    expect(numeralized('saadhe das', { fractions: true })).toBe('10.5');
    expect(numeralized('saadhe das')).toBe('saadhe 10');
  });
  it('normalises Devanagari digits and Indian digit groups', () => {
    expect(numeralized('₹१,२५,०००')).toBe('₹ 125000');
  });
});
