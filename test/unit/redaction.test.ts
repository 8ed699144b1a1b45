/**
 * Redaction of transcripts in events (src/app/redaction.ts; docs/events.md "Redaction"): digits
 * and numbers said in words are masked; lone number words and other text stay.
 */
import { describe, expect, it } from 'vitest';
import { maskNumbers, redact } from '../../src/app/redaction.js';

describe('maskNumbers', () => {
  it('masks digits, ASCII and Devanagari', () => {
    expect(maskNumbers('PIN 4321, खाता ९८७६')).toBe('PIN ••••, खाता ••••');
  });

  it('masks a number said in words, English or Hindi, joined by spaces, hyphens, commas or "and"', () => {
    expect(maskNumbers('my number is nine eight seven six five, four three two one zero')).toBe(
      'my number is •••• ••••• ••••• ••• ••••, •••• ••••• ••• ••• ••••',
    );
    expect(maskNumbers('double five oh two')).toBe('•••••• •••• •• •••');
    expect(maskNumbers('twenty-five thousand and fifty rupees')).toBe('••••••-•••• •••••••• ••• ••••• rupees');
    expect(maskNumbers('das hazaar bhej dunga')).toBe('••• •••••• bhej dunga');
  });

  it('leaves a lone number word and other text as they are', () => {
    expect(maskNumbers('do you have one appointment left?')).toBe('do you have one appointment left?');
    expect(maskNumbers('yes, that one')).toBe('yes, that one');
  });
});

describe('redact', () => {
  it('masks transcript fields and captured values for digits, drops them for text, keeps the rest', () => {
    const data = {
      heard: 'call me on nine eight seven six',
      reply: 'Noted 9876.',
      layer: 'capture',
      extracted: { phone: '9876543210' },
      turn: 3,
    };
    expect(redact(data, 'digits')).toEqual({
      heard: 'call me on •••• ••••• ••••• •••',
      reply: 'Noted ••••.',
      layer: 'capture',
      extracted: { phone: '••••••••••' },
      turn: 3,
    });
    expect(redact(data, 'text')).toEqual({ heard: null, reply: null, layer: 'capture', extracted: {}, turn: 3 });
    expect(redact(data, 'off')).toBe(data);
  });
});
