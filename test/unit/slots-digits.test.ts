import { describe, expect, it } from 'vitest';
import type { Capture } from '../../src/domain/agent.js';
import { extractSlot } from '../../src/engine/slots/index.js';

const NOW = Date.parse('2019-03-01T12:00:00+05:30');
const PHONE: Partial<Capture> = { min_length: 10, max_length: 10 };

function digits(text: string, extra: Partial<Capture> = PHONE, mode: 'answer' | 'volunteer' = 'answer'): string | null {
  const r = extractSlot(text, {
    capture: { slot: 'phone', type: 'digits', ...extra },
    language: 'en-IN',
    nowMs: NOW,
    timezone: 'Asia/Kolkata',
    mode,
  });
  return r === null ? null : String(r.value);
}

describe('digits: phone numbers', () => {
  it.each([
    ['98765 43210', '9876543210'],
    ['my number is 98765 43210', '9876543210'],
    ['+91 98765-43210', '9876543210'],
    ['09876543210', '9876543210'],
    ['919876543210', '9876543210'],
    ['९८७६५ ४३२१०', '9876543210'],
    ['nine eight seven six five four three two one zero', '9876543210'],
    ['nine eight seven six five double four three two one', '9876544321'],
    ['ninety eight seven six five four three two one zero', '9876543210'],
    ['nau aath saat chhe paanch chaar teen do ek shunya', '9876543210'],
    ['नौ आठ सात छह पांच चार तीन दो एक शून्य', '9876543210'],
    ["it's 98765 uh 43210", '9876543210'],
    ['no, it is 98765 43210', '9876543210'],
  ])('%s → %s', (text, expected) => {
    expect(digits(text)).toBe(expected);
  });
  it('rejects a wrong length', () => {
    expect(digits('98765')).toBeNull();
    expect(digits('98765 43210 12')).toBeNull();
  });
});

describe('digits: codes', () => {
  const OTP: Partial<Capture> = { min_length: 4, max_length: 6 };
  it.each([
    ['my otp is 4 5 6 7', '4567'],
    ['one two three four', '1234'],
    ['oh five triple nine', '05999'],
    ['ek do teen char', '1234'],
    ['PIN 0042', '0042'],
  ])('%s → %s', (text, expected) => {
    expect(digits(text, OTP)).toBe(expected);
  });
  it('takes the first run that fits', () => {
    expect(digits('room 12, code 4321', OTP)).toBe('4321');
  });
  it('without bounds accepts any digits in answer mode', () => {
    expect(digits('7', {})).toBe('7');
  });
});

describe('digits: volunteer mode', () => {
  it('needs the full length and skips times and dates', () => {
    expect(digits('tomorrow at 10:30, my number is 98765 43210', PHONE, 'volunteer')).toBe('9876543210');
    expect(digits('book for 4 people at 5 pm', {}, 'volunteer')).toBeNull();
    expect(digits('on the 14th at 1030', { min_length: 4, max_length: 4 }, 'volunteer')).toBe('1030');
    expect(digits('12', { min_length: 1, max_length: 4 }, 'volunteer')).toBeNull();
  });
});
