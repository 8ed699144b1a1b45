/**
 * sameWords (src/engine/slots/same-words.ts): two utterances compared as the slot extractors
 * read them, what `vagent call simulate` uses to mark a line the recogniser misheard.
 */
import { describe, expect, it } from 'vitest';
import { comparableWords, sameWords } from '../../src/engine/slots/same-words.js';

describe('sameWords', () => {
  it.each([
    ['five p m', '5 pm'],
    ['five p m', '5 p.m.'],
    ['Priya Sharma.', 'priya sharma'],
    ['My name is Priya Sharma', 'my name is priya sharma'],
    ['nine eight seven six five four three two one zero', '98765 43210'],
    ['twenty five', '25'],
    ["five o'clock", 'five o clock'],
    ['yes', 'Yes!'],
  ])('%j and %j are the same to the extractors', (said, heard) => {
    expect(sameWords(said, heard)).toBe(true);
  });

  it.each([
    ['fever', 'the what'],
    ['fever', ''],
    ['yes', 'yeah'],
    ['Priya Sharma', 'Priya Shah'],
    ['nine eight seven', '9 8 7 6'],
    ['tomorrow', 'tomorrow morning'],
  ])('%j and %j differ', (said, heard) => {
    expect(sameWords(said, heard)).toBe(false);
  });

  it('reads spoken numbers as digits and drops punctuation', () => {
    expect(comparableWords('At five p.m., please')).toEqual(['at', '5', 'pm', 'please']);
    expect(comparableWords('nine eight seven')).toEqual(['987']);
  });
});
