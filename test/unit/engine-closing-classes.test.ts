/**
 * The classes of closing turns the rules generalise to (src/engine/closing.ts,
 * src/engine/closing-phrases.ts; docs/agents.md "Control intents"), each with the near misses
 * that must not close: mid-flow (a yes/no step that is not the last) and at "anything else?".
 */
import { describe, expect, it } from 'vitest';
import { asksForMore, detectClosing, MAX_WORDS } from '../../src/engine/closing.js';
import { detectControlIntent, normalizeUtterance } from '../../src/engine/intents.js';

const closes = (text: string, atMore = false) => detectControlIntent(normalizeUtterance(text), atMore)?.intent === 'goodbye';

describe('done phrases', () => {
  it.each([
    "I think that's everything",
    'that should do it',
    "that'll be everything, thanks",
    'that should be everything',
    'that about covers it',
    "that's it for me",
    'that is all for the moment',
    "I don't have any more questions",
    'there is nothing else',
    "I've got everything I need, thanks",
    "No, you've answered my question",
  ])('%s closes mid-flow', (text) => {
    expect(closes(text)).toBe(true);
  });

  it.each([
    "that's all I know about it",
    'yes, that is all of it',
    "that's everything I ordered",
    "that's all I have in my account",
    "I'm all set for Friday",
    "we're all set for Tuesday",
    'that should do it for the kitchen',
    'we are all done with the forms, thanks',
    'that would be all three of us',
    'there is nothing wrong with it',
  ])('%s is an answer, not a close', (text) => {
    expect(closes(text)).toBe(false);
  });
});

describe('done and fine, with thanks or after a decline', () => {
  it.each([
    'nope, I am done',
    'nope, I am finished',
    'all good, thanks',
    "I'm all good now, thanks",
    "everything's fine, thank you",
    "I'm happy, thanks",
    "I'll be fine, thanks",
  ])('%s closes mid-flow', (text) => {
    expect(closes(text)).toBe(true);
  });

  it.each([
    "I'm good with that, thanks",
    "I'm happy with the first one, thanks",
    "I'm happy to wait, thanks",
    "I'm finished with the form",
  ])('%s answers the question', (text) => {
    expect(closes(text)).toBe(false);
  });
});

describe('thanks for the service', () => {
  it.each([
    "you've been most helpful, thank you",
    'thanks for everything',
    'you were a lot of help',
    'thank you for your kind help',
    'thanks for your time and help',
    "that's very helpful, thanks",
    'thank you for being so patient',
  ])('%s closes mid-flow', (text) => {
    expect(closes(text)).toBe(true);
  });

  it('a bare thank-you, however warm, still does not close mid-flow', () => {
    expect(closes('thank you very much')).toBe(false);
    expect(closes('much appreciated')).toBe(false);
  });
});

describe('spellings and length', () => {
  it.each(['thats all thx', 'nope im good thx', 'cheers thats everything', 'NO THATS IT THANKS', 'thnak you, thats all'])(
    '%s closes',
    (text) => {
      expect(closes(text)).toBe(true);
    },
  );

  it('thanks are not counted in the length of a close', () => {
    const text = 'no thank you so much for all of your help today, I really appreciate it, that is all I need';
    expect(normalizeUtterance(text).trim().split(' ').length).toBeGreaterThan(MAX_WORDS);
    expect(closes(text)).toBe(true);
    expect(detectClosing(` ${'that is all '.repeat(6)}`)).toBeNull();
  });
});

describe('a question or a new request said with a close', () => {
  it.each([
    "no, that's all, but what time do you open",
    "that's all, where is the clinic",
    'thanks, can you also send the address',
    "I'm good, thanks, could you text me the details",
    "that's it, one more thing though",
    "that's all for now, I also need a receipt",
  ])('%s does not close, wherever it is said', (text) => {
    expect(closes(text)).toBe(false);
    expect(closes(text, true)).toBe(false);
  });
});

describe('at "anything else?"', () => {
  it.each([
    'sounds good, thanks',
    'got it, thank you',
    'no, I am all good',
    'nothing at all, thanks',
    'no more, thanks',
    'thank you for booking that',
    'much appreciated',
    'thank you kindly',
    "no thanks, I'll call back if I need anything",
    "nope, I'll go check it out, thanks",
    'no, not for the moment',
    'not at all, thanks',
    'thnak you so much',
    'no thats fine thank u',
    "I don't need anything, thanks",
    "no, I'm fine with that, thank you",
    'no, that will be fine',
    'maybe later, thanks',
  ])('%s closes there', (text) => {
    expect(closes(text, true)).toBe(true);
  });

  it.each([
    'okay',
    'sounds good',
    'great',
    'no, I need another appointment',
    'thanks, one more thing',
    "no thanks, I'll need a taxi as well",
    "no, I'll go with the later slot",
    'yes, book me a cab too',
    'thank you, what is the address',
  ])('%s does not', (text) => {
    expect(closes(text, true)).toBe(false);
  });

  it('"What else can I do for you?" offers more too', () => {
    expect(asksForMore('What else can I do for you?')).toBe(true);
    expect(asksForMore('What else should I note for the doctor')).toBe(false);
  });
});
