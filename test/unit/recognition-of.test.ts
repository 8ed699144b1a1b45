/**
 * recognitionOf (src/adapters/recognizers/recognizer-choice.ts): what hears callers of one language, as
 * `GET /v1/health?language=` answers it, and when nothing does, the settings that would serve it
 * (what `vagent call simulate` shows when it refuses to start).
 */
import { describe, expect, it } from 'vitest';
import { recognitionOf, type RecognitionConfig } from '../../src/adapters/recognizers/recognizer-choice.js';

const installed = { available: true };
const missing = {
  available: false,
  reason: 'pocketsphinx is not installed; install it with: sudo apt-get install pocketsphinx pocketsphinx-en-us',
};
const SV_KEY = 'sv-secret-41b2e8';

describe('recognitionOf', () => {
  it('Hindi with only the embedded recogniser: off, naming recognizers.hi-IN and both cloud keys', () => {
    const r = recognitionOf({ recognizer: 'auto' }, 'hi-in', installed);
    expect(r).toMatchObject({ language: 'hi-IN', provider: null, fallback: null, reason: expect.stringContaining('hi-IN') });
    expect(r.fix).toBe(
      'set recognizers.hi-IN: sarvam (VAGENT_RECOGNIZERS=hi-IN=sarvam) with SARVAM_API_KEY exported; ' +
        'or set recognizers.hi-IN: deepgram (VAGENT_RECOGNIZERS=hi-IN=deepgram) with DEEPGRAM_API_KEY exported; then restart vagent serve',
    );
  });

  it('a key already set is not asked for again, and is never shown', () => {
    const r = recognitionOf({ recognizer: 'auto', sarvam: { api_key: SV_KEY } }, 'hi-IN', installed);
    expect(r.provider).toBeNull();
    expect(r.fix).toContain('set recognizers.hi-IN: sarvam (VAGENT_RECOGNIZERS=hi-IN=sarvam);');
    expect(JSON.stringify(r)).not.toContain(SV_KEY);
  });

  it('a language the settings serve: its provider and fallback, no fix', () => {
    const config: RecognitionConfig = { recognizer: 'auto', recognizers: { hi: 'sarvam' }, sarvam: { api_key: SV_KEY } };
    expect(recognitionOf(config, 'hi-IN', installed)).toEqual({ language: 'hi-IN', provider: 'sarvam', fallback: null });
    expect(recognitionOf({ recognizer: 'auto' }, 'en-IN', installed)).toEqual({
      language: 'en-IN',
      provider: 'pocketsphinx',
      fallback: null,
    });
    expect(recognitionOf({ recognizer: 'fake' }, 'hi-IN', installed)).toEqual({
      language: 'hi-IN',
      provider: 'fake',
      fallback: null,
    });
  });

  it('English without the embedded recogniser: install it, or a cloud provider', () => {
    const r = recognitionOf({ recognizer: 'auto' }, 'en-IN', missing);
    expect(r.provider).toBeNull();
    expect(r.fix).toMatch(
      /^install the embedded recogniser \(apt-get install pocketsphinx pocketsphinx-en-us\); or set recognizers\.en-IN: sarvam/,
    );
  });

  it('a language set to off says so', () => {
    const r = recognitionOf({ recognizer: 'auto', recognizers: { 'hi-IN': 'off' } }, 'hi-IN', installed);
    expect(r).toMatchObject({ provider: null, reason: 'recognizers.hi-IN is set to off' });
  });

  it('a malformed tag is a RangeError', () => {
    expect(() => recognitionOf({ recognizer: 'auto' }, 'not a tag', installed)).toThrow(RangeError);
  });
});
