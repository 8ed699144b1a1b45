/**
 * Audio URLs are capabilities (docs/api-decisions.md "Audio URLs"): a clip's public
 * name is a keyed MAC under the install's secret (`<state-dir>/audio.key`), so the same text
 * has different URLs on two installs, the plain SHA-256 of engine, voice and text (which
 * anyone can compute from a guess) is never served, and a cache written before names existed
 * keeps serving its clips under the new names.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { statePaths } from '../../src/config/paths.js';
import { toSpokenText } from '../../src/engine/spoken.js';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { toWav48k } from '../../src/media/wav.js';
import { loadAudioKey } from '../../src/daemon/state-dir.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';

const OPENING = 'Hello from the test agent.';
const VOICE = 'fake-en';

/**
 * What a guesser computes, and what the previous version named a clip file and its URL:
 * SHA-256 of the key version, 'clip', engine, voice and the spoken text, as a JSON array.
 */
function plainHash(text: string): string {
  const spoken = toSpokenText(text, 'en-IN');
  return createHash('sha256')
    .update(JSON.stringify(['vagent-audio-v1 wav-48k-mono-pcm16', 'clip', 'fake', VOICE, spoken]))
    .digest('hex');
}

const apps: TestApp[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** An install: a state dir (optionally prepared by `before`) opened as the daemon opens speech. */
async function install(before?: (stateDir: string) => void): Promise<{ t: TestApp; fake: FakeSynthesizer; stateDir: string }> {
  const stateDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-install-'));
  dirs.push(stateDir);
  before?.(stateDir);
  const fake = new FakeSynthesizer({ msPerChar: 5 });
  const speech = new SpeechService(fake, new AudioCache(statePaths(stateDir).audio, loadAudioKey(stateDir)), { timeoutMs: 2000 });
  const t = await makeTestApp({ state_dir: stateDir }, { speech });
  apps.push(t);
  await t.agent('ag_names');
  return { t, fake, stateDir };
}

/** The audio URL path of the opening clip `OPENING` of a new session. */
async function openingClipPath(t: TestApp): Promise<string> {
  const res = await t.call('POST', '/v1/sessions', { agent_id: 'ag_names' });
  expect(res.statusCode).toBe(201);
  const clip = (res.json().opening.clips as Array<{ text: string; audio_url: string | null }>).find((c) => c.text === OPENING);
  expect(clip?.audio_url).toMatch(/\/v1\/audio\/[0-9a-f]{64}\.wav$/);
  return new URL(clip!.audio_url!).pathname;
}

const get = (t: TestApp, url: string) => t.app.inject({ method: 'GET', url });

describe('audio URLs', () => {
  it('name the same text differently on two installs; each install serves only its own names', async () => {
    const a = await install();
    const b = await install();
    const urlA = await openingClipPath(a.t);
    const urlB = await openingClipPath(b.t);
    expect(urlA).not.toBe(urlB);
    const fromA = await get(a.t, urlA);
    const fromB = await get(b.t, urlB);
    expect([fromA.statusCode, fromB.statusCode]).toEqual([200, 200]);
    expect(fromA.rawPayload.equals(fromB.rawPayload)).toBe(true); // the same clip
    expectError(await get(b.t, urlA), 404, 'not_found', 'file');
    expectError(await get(a.t, urlB), 404, 'not_found', 'file');
    expect(fs.statSync(statePaths(a.stateDir).audioKey).mode & 0o777).toBe(0o600);
  });

  it("name joined clips (a turn's whole reply) the same way", async () => {
    const { t } = await install();
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_names' })).json();
    const turn = (await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'what?' })).json();
    expect(turn.clips.length).toBeGreaterThan(1);
    const whole = new URL(turn.audio_url).pathname;
    expect(turn.clips.map((c: { audio_url: string }) => new URL(c.audio_url).pathname)).not.toContain(whole);
    expect((await get(t, whole)).statusCode).toBe(200);
  });

  it('are not the plain SHA-256 of engine, voice and text: a guessed text gets 404', async () => {
    const { t, stateDir } = await install();
    const url = await openingClipPath(t);
    const guess = plainHash(OPENING);
    // The guess is right about the content: the clip is stored under that key…
    expect(fs.existsSync(path.join(statePaths(stateDir).audio, `${guess}.wav`))).toBe(true);
    // …but neither the URL nor the route gives it away.
    expect(url).not.toContain(guess);
    expectError(await get(t, `/v1/audio/${guess}.wav`), 404, 'not_found', 'file');
    expectError(await get(t, `/v1/audio/${plainHash('Sunita Rao')}.wav`), 404, 'not_found', 'file');
    expect((await get(t, url)).statusCode).toBe(200);
  });

  it('a cache from before names existed (files named by the plain hash, no audio.key) serves its clips under the new names', async () => {
    const oldClip = toWav48k({ samples: new Int16Array(48 * 777).fill(1234), sampleRate: 48_000 });
    const guess = plainHash(OPENING);
    const { t, fake, stateDir } = await install((dir) => {
      fs.mkdirSync(statePaths(dir).audio, { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(statePaths(dir).audio, `${guess}.wav`), oldClip, { mode: 0o600 });
      expect(fs.existsSync(statePaths(dir).audioKey)).toBe(false); // the old layout had none
    });
    expect(fs.statSync(statePaths(stateDir).audioKey).mode & 0o777).toBe(0o600);
    const url = await openingClipPath(t);
    const served = await get(t, url);
    expect(served.statusCode).toBe(200);
    expect(served.rawPayload.equals(oldClip)).toBe(true); // the old file, not a new synthesis
    expect(fake.requests.map((r) => r.text)).not.toContain(toSpokenText(OPENING, 'en-IN'));
    expect(url).not.toContain(guess);
    expectError(await get(t, `/v1/audio/${guess}.wav`), 404, 'not_found', 'file');
  });
});
