/**
 * Speech for API tests: the real speech service and audio cache (in a temp dir, with its own
 * audio secret) over the fake synthesiser, whose mode can make calls crash, hang or fail.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer, type FakeMode } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';

/** Cache dirs made by {@link testSpeech} in this test file, removed after its last test. */
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** A speech service over a {@link FakeSynthesizer}; `fake` switches its mode. */
export function testSpeech(mode: FakeMode = 'ok', timeoutMs = 2000): SpeechService & { fake: FakeSynthesizer } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
  dirs.push(dir);
  const fake = new FakeSynthesizer({ mode, msPerChar: 5 });
  const service = new SpeechService(fake, new AudioCache(dir, crypto.randomBytes(32)), { timeoutMs }) as SpeechService & {
    fake: FakeSynthesizer;
  };
  service.fake = fake;
  return service;
}
