import { describe, expect, it } from 'vitest';
import { extractSlot } from '../../src/engine/slots/index.js';

function name(text: string, mode: 'answer' | 'volunteer' = 'answer'): string | null {
  const r = extractSlot(text, {
    capture: { slot: 'patient_name', type: 'person_name' },
    language: 'en-IN',
    nowMs: 0,
    timezone: 'Asia/Kolkata',
    mode,
  });
  return r === null ? null : String(r.value);
}

describe('person_name: answers', () => {
  it.each([
    ['my name is Priya Sharma', 'Priya Sharma'],
    ['This is Rahul', 'Rahul'],
    ["It's Sunita", 'Sunita'],
    ['call me Bob', 'Bob'],
    ['myself Ramesh Kumar', 'Ramesh Kumar'],
    ['the name is Anil Kapoor', 'Anil Kapoor'],
    ['Philip', 'Philip'],
    ['rahul sharma', 'Rahul Sharma'],
    ['Aunty Meena please.', 'Aunty Meena'],
    ['Dr. Mehta', 'Dr Mehta'],
    ['My friend Arjun.', 'Arjun'],
    ['send it to papa please', 'Papa'],
    ['Please send it to Farhan.', 'Farhan'],
    ['Yes, to naveen.', 'Naveen'],
    ['move it to the savings account of Aunty Meera', 'Aunty Meera'],
    ["I'm paying it to Zoya.", 'Zoya'],
    ['It goes to my friend Tara, their savings account', 'Tara'],
    ['to my mom', 'Mom'],
    ['mera naam Amit hai', 'Amit'],
    ['mera naam amit kumar hai', 'Amit Kumar'],
    ['मेरा नाम राहुल है', 'राहुल'],
    ['main Suresh bol raha hoon', 'Suresh'],
    ['Anjali ko bhej do', 'Anjali'],
    ['Rahul ji', 'Rahul'],
  ])('%s → %s', (text, expected) => {
    expect(name(text)).toBe(expected);
  });
  it.each([
    'Yes, move 900 rupees to any of my accounts.',
    "I'd like to pay into a friend's current account.",
    'I am fine',
    'yes',
    'no thanks',
    'Please send 2,300 rupees out of my savings.',
    '₹40 savings account',
    'I want to make a payment to their current account.',
    'send seventy dollars to their account',
    '',
  ])('%j → null', (text) => {
    expect(name(text)).toBeNull();
  });
});

describe('person_name: a question is no name answer', () => {
  it.each([
    'is it wheelchair accessible?',
    'is it wheelchair accessible',
    'is Dr Rao available today?',
    'Sorry, is Dr. Rao available today',
    'do you take UPI?',
    'what are your timings',
    'wheelchair accessible?',
    'Dr Rao aaj milenge kya',
  ])('%j → null', (text) => {
    expect(name(text)).toBeNull();
  });
  it('keeps a self-introduction inside a question, and a name before a later question', () => {
    expect(name('my name is Priya, is the clinic open?')).toBe('Priya');
    expect(name('Hi, this is Rahul, is the clinic open today?')).toBe('Rahul');
    expect(name('can you call me Bob?')).toBe('Bob');
    expect(name('Rahul. Is that ok?')).toBe('Rahul');
    expect(name('It goes to my friend Yumi, but can you send it to their savings account?')).toBe('Yumi');
    expect(name('will be Rahul')).toBe('Rahul');
  });
});

describe('person_name: volunteer mode needs a self-introduction', () => {
  it('accepts "my name is", "mera naam" and a capitalised "I am"', () => {
    expect(name('my name is Priya Sharma and I need a table', 'volunteer')).toBe('Priya Sharma');
    expect(name('mera naam Amit hai, kal ka appointment chahiye', 'volunteer')).toBe('Amit');
    expect(name("I'm Rahul, I want to book", 'volunteer')).toBe('Rahul');
  });
  it('rejects other mentions', () => {
    expect(name('send it to Khadija', 'volunteer')).toBeNull();
    expect(name('i am rahul', 'volunteer')).toBeNull();
    expect(name('I am leaving tomorrow', 'volunteer')).toBeNull();
    expect(name('this is good', 'volunteer')).toBeNull();
    expect(name('Philip', 'volunteer')).toBeNull();
  });
});

describe('person_name: a name is something a person can be called', () => {
  it('refuses a run of one key, a word too long to be a name and letters without a vowel', () => {
    expect(name('b'.repeat(4000))).toBeNull();
    expect(name(`my name is ${'b'.repeat(4000)}`)).toBeNull();
    expect(name(`my name is ${'Ab'.repeat(13)}`)).toBeNull(); // 26 characters
    expect(name('my name is Bbbrt')).toBeNull();
    expect(name('qwrtpsdfg')).toBeNull();
    expect(name('xkcd please')).toBeNull();
    expect(name('Rahul Rahul Rahul Rahul Rahul')).toBeNull(); // more than three words
  });

  it('keeps long, vowel-light and accented names, and names in other scripts', () => {
    expect(name('my name is Venkatasubramanian')).toBe('Venkatasubramanian');
    expect(name('Lynn')).toBe('Lynn');
    expect(name('this is Rhys Flynn')).toBe('Rhys Flynn');
    expect(name('Zoë')).toBe('Zoë');
    expect(name('mera naam राहुल है')).toBe('राहुल');
    expect(name('Aaron')).toBe('Aaron');
  });
});
