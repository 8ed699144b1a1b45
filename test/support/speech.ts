/**
 * Speech for API tests: the real speech service and audio cache (in a temp dir) over the fake
 * synthesiser, whose mode can make calls crash, hang or fail.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AudioCache } from '../../src/speech/cache.js';
import { FakeSynthesizer, type FakeMode } from '../../src/speech/fake.js';
import { SpeechService } from '../../src/speech/synthesis.js';

/** A speech service over a {@link FakeSynthesizer}; `fake` switches its mode. */
export function testSpeech(mode: FakeMode = 'ok', timeoutMs = 2000): SpeechService & { fake: FakeSynthesizer } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
  const fake = new FakeSynthesizer({ mode, msPerChar: 5 });
  const service = new SpeechService(fake, new AudioCache(dir), { timeoutMs }) as SpeechService & { fake: FakeSynthesizer };
  service.fake = fake;
  return service;
}
