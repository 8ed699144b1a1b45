/**
 * Classes the slot rules generalise to (docs/agents.md "Capture and slot types"): names said
 * inside a sentence, declines that are not a bare no, relative days.
 */
import { describe, expect, it } from 'vitest';
import { detectYesNo, extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30'); // a Friday
const slot = (type: 'person_name' | 'date', text: string) =>
  extractSlot(text, { capture: { slot: 'v', type }, language: 'en-IN', nowMs: NOW, timezone: 'Asia/Kolkata', mode: 'answer' })?.value ??
  null;

describe('person names inside a sentence', () => {
  it.each([
    ['send it to Meera', 'Meera'],
    ['the recipient is Arjun', 'Arjun'],
    ['Isabella is the name of the receiver', 'Isabella'],
    ['share it with Kavya please', 'Kavya'],
    ['please share it with Rohan Mehta', 'Rohan Mehta'],
    ['Tanvi is the recipient', 'Tanvi'],
    ['pay Sandeep please', 'Sandeep'],
    ['the name of the receiver is Gopal', 'Gopal'],
    ['the receiver will be Anil', 'Anil'],
    ['share it with kavya', 'Kavya'],
  ])('%s → %s', (text, name) => {
    expect(slot('person_name', text)).toBe(name);
  });

  it.each(['share it with my savings account', 'the recipient is my savings account', 'it is the same one', 'pay it today'])(
    '%s → no name',
    (text) => {
      expect(slot('person_name', text)).toBeNull();
    },
  );

  it('a self-introduction is still not taken from "X is the recipient" in volunteer mode', () => {
    const v = extractSlot('Tanvi is the recipient', {
      capture: { slot: 'v', type: 'person_name' },
      language: 'en-IN',
      nowMs: NOW,
      timezone: 'Asia/Kolkata',
      mode: 'volunteer',
    });
    expect(v).toBeNull();
  });
});

describe('declines that are not a bare no', () => {
  it.each([
    'no need',
    'never mind',
    'leave it',
    'maybe later',
    'not now',
    'we can do that later',
    "I'll pass",
    'skip it',
    'forget it',
    'not interested',
    "I'm good, thanks",
    "I'm good",
    'some other time',
    'not today',
    'that will be all',
    'abhi nahi, baad mein',
  ])('%s → no', (text) => {
    expect(detectYesNo(text)).toBe(false);
  });

  it.each(["I'm good with that", 'yes, no need to wait', 'sure, later is fine', 'okay'])('%s → yes', (text) => {
    expect(detectYesNo(text)).toBe(true);
  });

  it('"maybe" alone stays unsure', () => {
    expect(detectYesNo('maybe')).toBeNull();
  });
});

describe('relative days', () => {
  it.each([
    ['Wednesday next week', '2019-03-06'],
    ['next Monday', '2019-03-04'],
    ['the 20th of this month', '2019-03-20'],
    ['on the 5th of next month', '2019-04-05'],
    ['in 2 weeks', '2019-03-15'],
    ['two weeks from now', '2019-03-15'],
    ['in three weeks', '2019-03-22'],
    ['end of this month', '2019-03-31'],
    ['by the end of next month', '2019-04-30'],
  ])('%s → %s', (text, date) => {
    expect(slot('date', text)).toBe(date);
  });
});
