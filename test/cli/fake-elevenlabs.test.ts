/**
 * `npm run fake-elevenlabs` (dist/devtools/fake-elevenlabs-main.js) as a new user runs it: it
 * prints the two exports vagent needs, speaks (with the embedded engine) for the ElevenLabs voice
 * configured from them, logs each request without the key, and stops on SIGTERM.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ElevenLabsSynthesizer } from '../../src/adapters/speech/elevenlabs.js';
import { startFakeCli, stopFakeClis } from '../support/fake-cli.js';

afterEach(stopFakeClis);

describe('fake-elevenlabs CLI', () => {
  it('prints the exports and answers the ElevenLabs voice with speech', async () => {
    const fake = startFakeCli('fake-elevenlabs', ['--port', '0', '--api-key', 'xi_dev_key_123']);
    const vars = await fake.exports(['ELEVENLABS_API_KEY', 'VAGENT_ELEVENLABS_URL']);
    expect(vars.ELEVENLABS_API_KEY).toBe('xi_dev_key_123');
    expect(vars.VAGENT_ELEVENLABS_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const voice = new ElevenLabsSynthesizer({ apiKey: vars.ELEVENLABS_API_KEY!, baseUrl: vars.VAGENT_ELEVENLABS_URL! });
    const audio = await voice.synthesize('Hello from the fake.', 'elevenlabs/eleven_multilingual_v2/JBFqnCBsd6RMkjVDRZzb/en-IN', {
      timeoutMs: 20_000,
    });
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.samples.length).toBeGreaterThan(4800);
    expect(fake.stderr()).toMatch(/POST \/v1\/text-to-speech\/JBFqnCBsd6RMkjVDRZzb → 200/);
    expect(fake.stderr()).not.toContain('xi_dev_key_123');
    expect(await fake.stop()).toBe(0);
  }, 30_000);

  it('exits 2 with the usage on a bad flag', async () => {
    const fake = startFakeCli('fake-elevenlabs', ['--port', 'x']);
    expect(await fake.exited).toBe(2);
    expect(fake.stderr()).toMatch(/usage:/);
  });
});
