/**
 * `npm run fake-sarvam` (dist/devtools/fake-sarvam-main.js) as a new user runs it: it prints the
 * three exports vagent needs, serves the scripted transcripts (a JSON script in Devanagari and
 * Latin script) to the Sarvam recogniser configured from those exports, speaks for the Sarvam
 * voice configured from them, and stops on SIGTERM.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SarvamRecognizer } from '../../src/adapters/recognizers/sarvam.js';
import { SarvamSynthesizer } from '../../src/adapters/speech/sarvam.js';
import type { FinalTranscript } from '../../src/media/recognizer.js';
import { startFakeCli, stopFakeClis } from '../support/fake-cli.js';

let dir: string | undefined;
afterEach(() => {
  stopFakeClis();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('fake-sarvam CLI', () => {
  it('prints the exports and answers the recogniser with the scripted transcripts', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-sarvam-'));
    const script = path.join(dir, 'script.json');
    writeFileSync(script, JSON.stringify(['हाँ, मैं कल भुगतान कर दूँगा', 'haan main kal payment kar dunga']));
    const fake = startFakeCli('fake-sarvam', ['--port', '0', '--api-key', 'sk_dev_key', '--script', script]);
    const vars = await fake.exports(['SARVAM_API_KEY', 'VAGENT_SARVAM_URL', 'VAGENT_SARVAM_TTS_URL']);
    expect(vars.SARVAM_API_KEY).toBe('sk_dev_key');
    expect(vars.VAGENT_SARVAM_URL).toMatch(/^ws:\/\/127\.0\.0\.1:\d+\/speech-to-text\/ws$/);

    const rec = new SarvamRecognizer({ apiKey: vars.SARVAM_API_KEY!, url: vars.VAGENT_SARVAM_URL! });
    const texts: string[] = [];
    for (let i = 0; i < 2; i++) {
      const stream = rec.start({ language: 'hi-IN', sampleRateHz: 16000 });
      const final = new Promise<FinalTranscript>((resolve, reject) => {
        stream.on('final', resolve);
        stream.on('error', reject);
      });
      stream.push(Int16Array.from({ length: 8000 }, (_, j) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * j) / 16000))));
      stream.finish();
      texts.push((await final).text);
    }
    expect(texts).toEqual(['हाँ, मैं कल भुगतान कर दूँगा', 'haan main kal payment kar dunga']);
    expect(vars.VAGENT_SARVAM_TTS_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const voice = new SarvamSynthesizer({ apiKey: vars.SARVAM_API_KEY!, baseUrl: vars.VAGENT_SARVAM_TTS_URL! });
    const audio = await voice.synthesize('नमस्ते', 'sarvam/bulbul:v2/anushka/hi-IN', { timeoutMs: 20_000 });
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.samples.length).toBeGreaterThan(2400);
    expect(await fake.stop()).toBe(0);
  }, 30_000);

  it('exits 2 with the usage on a bad flag', async () => {
    const fake = startFakeCli('fake-sarvam', ['--port', 'x']);
    expect(await fake.exited).toBe(2);
    expect(fake.stderr()).toMatch(/--port must be a whole number/);
    expect(fake.stderr()).toMatch(/usage:/);
  });
});
