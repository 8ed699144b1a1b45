/**
 * `npm run fake-elevenlabs` (dist/devtools/fake-elevenlabs-main.js) as a new user runs it: it
 * prints the two exports vagent needs, speaks (with the embedded engine) for the ElevenLabs voice
 * configured from them, logs each request without the key, and stops on SIGTERM.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ElevenLabsSynthesizer } from '../../src/adapters/speech/elevenlabs.js';
import { ROOT, requireBuild } from '../support/daemon.js';

const MAIN = path.join(ROOT, 'dist', 'devtools', 'fake-elevenlabs-main.js');
let child: ChildProcess | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
});

describe('fake-elevenlabs CLI', () => {
  it('prints the exports and answers the ElevenLabs voice with speech', async () => {
    requireBuild();
    child = spawn(process.execPath, [MAIN, '--port', '0', '--api-key', 'xi_dev_key_123'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const vars = await new Promise<Record<string, string>>((resolve, reject) => {
      let out = '';
      child!.stdout!.on('data', (b: Buffer) => {
        out += b.toString();
        const v = Object.fromEntries([...out.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
        if (v.ELEVENLABS_API_KEY && v.VAGENT_ELEVENLABS_URL) resolve(v);
      });
      child!.once('exit', (code) => reject(new Error(`fake-elevenlabs exited with ${code}: ${out}`)));
    });
    expect(vars.ELEVENLABS_API_KEY).toBe('xi_dev_key_123');
    expect(vars.VAGENT_ELEVENLABS_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const voice = new ElevenLabsSynthesizer({ apiKey: vars.ELEVENLABS_API_KEY!, baseUrl: vars.VAGENT_ELEVENLABS_URL! });
    const audio = await voice.synthesize('Hello from the fake.', 'elevenlabs/eleven_multilingual_v2/JBFqnCBsd6RMkjVDRZzb/en-IN', {
      timeoutMs: 20_000,
    });
    expect(audio.sampleRate).toBe(24_000);
    expect(audio.samples.length).toBeGreaterThan(4800);
    expect(err).toMatch(/POST \/v1\/text-to-speech\/JBFqnCBsd6RMkjVDRZzb → 200/);
    expect(err).not.toContain('xi_dev_key_123');
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
    expect(err).toMatch(/usage:/);
  });
});
