/**
 * `npm run fake-sarvam` (dist/devtools/fake-sarvam-main.js) as a new user runs it: it prints the
 * three exports vagent needs, serves the scripted transcripts (a JSON script in Devanagari and
 * Latin script) to the Sarvam recogniser configured from those exports, speaks for the Sarvam
 * voice configured from them, and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SarvamRecognizer } from '../../src/adapters/recognizers/sarvam.js';
import { SarvamSynthesizer } from '../../src/adapters/speech/sarvam.js';
import type { FinalTranscript } from '../../src/media/recognizer.js';
import { ROOT, requireBuild } from '../support/daemon.js';

const MAIN = path.join(ROOT, 'dist', 'devtools', 'fake-sarvam-main.js');
let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Reads stdout until the three export lines arrived. */
function exportsOf(proc: ChildProcess): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const vars = Object.fromEntries([...out.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      if (vars.SARVAM_API_KEY && vars.VAGENT_SARVAM_URL && vars.VAGENT_SARVAM_TTS_URL) resolve(vars);
    });
    proc.once('exit', (code) => reject(new Error(`fake-sarvam exited with ${code}: ${out}`)));
  });
}

describe('fake-sarvam CLI', () => {
  it('prints the exports and answers the recogniser with the scripted transcripts', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-sarvam-'));
    const script = path.join(dir, 'script.json');
    writeFileSync(script, JSON.stringify(['हाँ, मैं कल भुगतान कर दूँगा', 'haan main kal payment kar dunga']));
    child = spawn(process.execPath, [MAIN, '--port', '0', '--api-key', 'sk_dev_key', '--script', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const vars = await exportsOf(child);
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
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;
  }, 30_000);

  it('exits 2 with the usage on a bad flag', async () => {
    requireBuild();
    child = spawn(process.execPath, [MAIN, '--port', 'x'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((resolve) => child!.once('exit', resolve));
    expect(code).toBe(2);
    expect(err).toMatch(/--port must be a whole number/);
    expect(err).toMatch(/usage:/);
  });
});
