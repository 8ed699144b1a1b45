/**
 * The patterns the API publishes are the rules the server applies (docs/api-decisions.md "Errors" ›
 * Request shapes): each is checked against the rule it stands for, over generated strings.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CALLS_CURSOR } from '../../src/domain/cursor.js';
import { isSipAddress, MAX_SIP_ADDRESS_LENGTH, SIP_ADDRESS_PATTERN } from '../../src/domain/sip.js';
import { ISO_TIME_PATTERN, isoTimeMs } from '../../src/domain/time.js';
import { NON_BLANK_TEXT, UNICODE_TEXT } from '../../src/contract/common.js';

const options = { seed: 14, numRuns: 2000 };

describe('published patterns', () => {
  it('context.now: every string the pattern matches is a time Date.parse reads', () => {
    fc.assert(
      fc.property(fc.stringMatching(ISO_TIME_PATTERN), (s) => isoTimeMs(s) !== null),
      options,
    );
    for (const s of [
      '2026-11-21',
      '2026-11-21T10:30',
      '2026-11-21T10:30:00.123456789+05:30',
      '2026-11-21t10:30z',
      '2026-11-21T10:30+0530',
    ]) {
      expect(isoTimeMs(s), s).not.toBeNull();
    }
    for (const s of ['2026-11-21 10:30', '2026-11-21T24:00', '2026-13-01', '2026-11-21T10Z', 'tomorrow'])
      expect(isoTimeMs(s), s).toBeNull();
  });

  it('address: the pattern (within the length limit) is the whole rule, ports 1–65535 without leading zeros', () => {
    fc.assert(
      fc.property(fc.stringMatching(SIP_ADDRESS_PATTERN), (s) => isSipAddress(s) === s.length <= MAX_SIP_ADDRESS_LENGTH),
      options,
    );
    for (const port of [1, 5060, 9999, 10000, 59999, 60000, 64999, 65499, 65529, 65535])
      expect(isSipAddress(`sip.example.in:${port}`), String(port)).toBe(true);
    for (const port of ['0', '05060', '65536', '70000', '100000']) expect(isSipAddress(`sip.example.in:${port}`), port).toBe(false);
  });

  it('turn text: non-blank and free of lone surrogates, exactly', () => {
    const loneSurrogate = /[\uD800-\uDFFF]/u;
    // White space of several kinds, lone halves and whole pairs of surrogates, other text.
    const unit = fc.constantFrom(
      ' ',
      '\t',
      '\n',
      '\u00a0',
      '\u2028',
      '\u3000',
      '\ufeff',
      '\ud800',
      '\udfff',
      '\ud83d',
      '\ude00',
      'a',
      'é',
      '😀',
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 8 }), (s) => {
        expect(NON_BLANK_TEXT.test(s)).toBe(s.trim().length > 0 && !loneSurrogate.test(s));
        expect(UNICODE_TEXT.test(s)).toBe(!loneSurrogate.test(s));
      }),
      options,
    );
  });

  it('calls cursor: every string the pattern matches decodes, and positions round-trip', () => {
    fc.assert(
      fc.property(fc.stringMatching(CALLS_CURSOR.pattern), (s) => Number.isSafeInteger(CALLS_CURSOR.decode(s))),
      options,
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 15 - 1 }), (n) => CALLS_CURSOR.decode(CALLS_CURSOR.encode(n)) === n),
      options,
    );
    expect(CALLS_CURSOR.decode('Y2FsbHM6NQ')).toBeNull();
  });
});
