/**
 * `npm run fake-deepgram` (the built src/devtools/fake-deepgram-main.ts): it prints the exports
 * vagent needs, serves the scripted transcripts to the Deepgram recogniser, logs handshakes
 * without the key, and stops cleanly on SIGTERM.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { FinalTranscript, RecognizerError } from '../../src/media/recognizer.js';
import { DeepgramRecognizer } from '../../src/adapters/recognizers/deepgram.js';
import { checkDeepgram } from '../../src/adapters/recognizers/deepgram-check.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const MAIN = path.join(ROOT, 'dist', 'devtools', 'fake-deepgram-main.js');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-fake-deepgram-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const KEY = "dev key with 'quotes' 123";

describe('fake-deepgram command', () => {
  it('prints the exports, serves the script line by line, and logs without the key', { timeout: 20_000 }, async () => {
    expect(fs.existsSync(MAIN), 'build dist/ first (npx tsc -p tsconfig.build.json)').toBe(true);
    const script = path.join(dir, 'script.txt');
    fs.writeFileSync(script, 'namaste, mera naam Priya hai\n\nEMI kal bhar dunga\n');
    const child = spawn(process.execPath, [MAIN, '--port', '0', '--api-key', KEY, '--script', script], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const deadline = Date.now() + 10_000;
      while (!out.includes('VAGENT_DEEPGRAM_URL')) {
        if (Date.now() > deadline) throw new Error(`no exports printed; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      const lines = out.trim().split('\n');
      expect(lines[0]).toBe(`export DEEPGRAM_API_KEY='dev key with '\\''quotes'\\'' 123'`);
      const url = /^export VAGENT_DEEPGRAM_URL=(ws:\/\/127\.0\.0\.1:\d+\/v1\/listen)$/.exec(lines[1]!)?.[1];
      expect(url).toBeDefined();
      expect(await checkDeepgram({ apiKey: KEY, url })).toMatchObject({ ok: true });

      const stream = new DeepgramRecognizer({ apiKey: KEY, url }).start({ language: 'hi-IN', sampleRateHz: 8000 });
      const finals: FinalTranscript[] = [];
      const errors: RecognizerError[] = [];
      stream.on('final', (f) => finals.push(f));
      stream.on('error', (e) => errors.push(e));
      const pcm = new Int16Array(8000); // 600 ms of tone, 400 ms of silence
      for (let i = 0; i < 4800; i++) pcm[i] = Math.round(8000 * Math.sin(i / 4));
      stream.push(pcm);
      while (finals.length + errors.length === 0) {
        if (Date.now() > deadline) throw new Error('no final');
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(errors).toEqual([]);
      expect(finals[0]).toMatchObject({ text: 'namaste, mera naam Priya hai', endOfUtterance: true });
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(err).toMatch(/\[fake-deepgram\] 101 model=nova-3 language=multi sample_rate=8000 encoding=linear16/);
    expect(err).toContain('closing after 2 stream(s), 1 utterance(s) unheard');
    expect(err + out.split('\n').slice(1).join('\n')).not.toContain('quotes');
  });

  it('refuses a missing script file with a usage error', async () => {
    expect(fs.existsSync(MAIN), 'build dist/ first (npx tsc -p tsconfig.build.json)').toBe(true);
    const child = spawn(process.execPath, [MAIN, '--port', '0', '--script', path.join(dir, 'missing.txt')], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    expect(code).toBe(2);
    expect(err).toContain('cannot read --script');
    expect(err).toContain('ENOENT');
  });
});
