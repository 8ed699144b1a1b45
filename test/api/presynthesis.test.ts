/**
 * Agent pre-synthesis (src/app/agents.ts): the daemon stops it before the store closes,
 * because pre-synthesis reads agent revisions from the store; and it makes every agent's
 * opening first, for the media workers to convert ahead of the first call (docs/media.md).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { staticOpeningTexts } from '../../src/engine/static-texts.js';
import { toSpokenText } from '../../src/engine/spoken.js';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
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
    const sweep = agents.presynthesizeAll().catch((err: unknown) => {
      sweepError = err;
    });
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

describe('AgentService.presynthesizeAll: the openings first', () => {
  it("synthesises the opening of every agent before any other text, and hands each opening's clip files to the listener", async () => {
    audioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
    const fake = new FakeSynthesizer({ msPerChar: 1 });
    const speech = new SpeechService(fake, new AudioCache(audioDir, crypto.randomBytes(32)), { timeoutMs: 2000 });
    t = await makeTestApp({}, { speech });
    const agents = t.runtime.services.agents;
    const told: string[][] = [];
    agents.onOpeningReady((files) => told.push(files));
    expect(agents.cachedOpeningFiles()).toEqual([]);

    await agents.presynthesizeAll();

    // The example agents of a fresh state dir: their openings' spoken texts, per voice.
    const digests = t.runtime.services.repos.agents.currentDigests();
    const openings = new Set(
      digests.flatMap((d) => {
        const agent = agents.compiledRevision(d);
        return staticOpeningTexts(agent).map((text) => `${fake.voiceFor(agent.def.language)}|${toSpokenText(text, agent.def.language)}`);
      }),
    );
    expect(openings.size).toBeGreaterThan(digests.length); // several agents, some with two opening clips
    const order = fake.requests.map((r) => `${r.voice}|${r.text}`);
    expect(new Set(order.slice(0, openings.size))).toEqual(openings);
    expect(order.length).toBeGreaterThan(openings.size); // and the other texts after them

    // One notice per agent whose opening has static clips, each with the files now cached.
    const files = told.flat();
    expect(told.length).toBeGreaterThan(1);
    expect(new Set(files).size).toBe(openings.size);
    for (const f of files) expect(fs.existsSync(f)).toBe(true);
    expect(new Set(agents.cachedOpeningFiles())).toEqual(new Set(files));
  });
});
