/**
 * Stopping agent pre-synthesis (src/services/agents.ts; issue 14 item 9): the daemon stops it
 * before the store closes, because pre-synthesis reads agent revisions from the store.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/speech/cache.js';
import { FakeSynthesizer } from '../../src/speech/fake.js';
import { SpeechService } from '../../src/speech/synthesis.js';
import { makeTestApp, type TestApp } from '../support/app.js';

let t: TestApp | undefined;
let audioDir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (audioDir) fs.rmSync(audioDir, { recursive: true, force: true });
});

describe('AgentService.stopPresynthesis', () => {
  it('stops the start-up sweep between texts and agents; nothing starts after it, and the store can close', async () => {
    audioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
    const fake = new FakeSynthesizer({ delayMs: 30 });
    const speech = new SpeechService(fake, new AudioCache(audioDir, crypto.randomBytes(32)), { timeoutMs: 2000 });
    t = await makeTestApp({}, { speech });
    const agents = t.runtime.services.agents;
    // The example agents of a fresh state dir: several revisions, dozens of texts.
    let sweepError: unknown;
    const sweep = agents.presynthesizeAll().catch((err: unknown) => { sweepError = err; });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const started = fake.calls;
    expect(started).toBeGreaterThan(0);
    await agents.stopPresynthesis();
    // Everything under way has settled: the store may close now.
    t.runtime.close();
    await sweep;
    expect(sweepError).toBeUndefined();
    expect(fake.calls).toBe(started);
    expect(fake.calls).toBeLessThan(10);
    // A pre-synthesis asked for afterwards (an agent applied during shutdown) does nothing.
    await agents.presynthesize('0'.repeat(64));
    expect(fake.calls).toBe(started);
  });
});
