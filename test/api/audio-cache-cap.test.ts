/**
 * The audio cache cap through the API (docs/architecture.md "Speech and the audio cache": the cap
 * holds under a load of distinct readbacks and never evicts a clip an open session needs): many
 * sessions each read a distinct name back, with a small cap on dynamic clips. Open sessions' clips
 * stay fetchable; ended sessions' clips are evicted (their URLs answer 404 not_found), and a later
 * turn needing an evicted text synthesises it again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { audioCacheStats } from '../../src/adapters/speech/cache-admin.js';
import { MIN_GRACE_MS } from '../../src/adapters/speech/cache-dynamic.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { makeTestApp, type TestApp } from '../support/app.js';

const AGENT = {
  id: 'ag_name_readback',
  name: 'Name readback',
  direction: 'inbound',
  language: 'en-IN',
  opening: [{ text: 'Hello from the clinic.' }],
  steps: [
    {
      id: 'patient',
      ask: "What is the patient's name?",
      capture: { slot: 'patient_name', type: 'person_name' },
      confirm: 'readback',
    },
  ],
  closing: 'Thank you, goodbye.',
};

const FIRST = ['Priya', 'Ravi', 'Asha', 'Sunita', 'Arjun', 'Meena'];
const LAST = ['Sharma', 'Kumar', 'Rao', 'Iyer', 'Menon'];
/** 30 distinct names. */
const NAMES = FIRST.flatMap((f) => LAST.map((l) => `${f} ${l}`));
/** Cap on dynamic clips: a handful of readbacks (a fake readback of a name is ~13–16 KB). */
const CAP = 80 * 1024;

let t: TestApp | undefined;
let audioDir: string | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
  if (audioDir) fs.rmSync(audioDir, { recursive: true, force: true });
});

describe('audio cache cap under distinct readbacks', () => {
  it("holds the cap, never evicts an open session's clips, and synthesises an evicted text again", async () => {
    audioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
    let clock = Date.now();
    const cache = new AudioCache(audioDir, crypto.randomBytes(32), { maxBytes: CAP, keepMs: 0, nowMs: () => clock });
    const fake = new FakeSynthesizer({ msPerChar: 5 });
    t = await makeTestApp({}, { speech: new SpeechService(fake, cache, { timeoutMs: 2000 }) });
    expect((await t.call('PUT', `/v1/agents/${AGENT.id}`, AGENT)).statusCode).toBeLessThan(300);
    const fetchAudio = (url: string) => t!.call('GET', new URL(url).pathname, undefined, { key: null });

    /** Opens a session and says `name`; returns its id and every audio URL it was given. */
    const readback = async (name: string) => {
      const opened = await t!.call('POST', '/v1/sessions', { agent_id: AGENT.id });
      expect(opened.statusCode).toBe(201);
      const o = opened.json() as { session_id: string; opening: { clips: Array<{ audio_url: string | null }> } };
      const turn = await t!.call('POST', `/v1/sessions/${o.session_id}/turn`, { text: `my name is ${name}` });
      expect(turn.statusCode).toBe(200);
      const r = turn.json() as { audio_url: string | null; text: string; clips: Array<{ audio_url: string | null }> };
      expect(r.text).toContain(name);
      expect(r.audio_url).not.toBeNull();
      const urls = [r.audio_url!, ...r.clips.map((c) => c.audio_url!), ...o.opening.clips.map((c) => c.audio_url!)];
      return { id: o.session_id, readbackUrl: r.audio_url!, urls };
    };

    const open: Array<Awaited<ReturnType<typeof readback>>> = [];
    const ended: Array<Awaited<ReturnType<typeof readback>>> = [];
    for (const [i, name] of NAMES.entries()) {
      const s = await readback(name);
      // The first three sessions stay open all along (the oldest clips: first in LRU order).
      if (i < 3) open.push(s);
      else {
        expect((await t.call('POST', `/v1/sessions/${s.id}/end`)).statusCode).toBe(200);
        ended.push(s);
      }
      clock += MIN_GRACE_MS + 1000;
      await cache.evict();
      expect(audioCacheStats(audioDir).dynamic.bytes).toBeLessThanOrEqual(CAP);
    }
    expect(fake.calls).toBeGreaterThanOrEqual(NAMES.length);

    // Every clip of an open session is still served.
    for (const s of open) {
      for (const url of s.urls) expect((await fetchAudio(url)).statusCode).toBe(200);
    }
    // Ended sessions' readbacks were evicted: their URLs answer 404 in the spec's error shape.
    const gone = await fetchAudio(ended[0]!.readbackUrl);
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toMatchObject({ error: { code: 'not_found' } });
    const recent = await fetchAudio(ended[ended.length - 1]!.readbackUrl);
    expect(recent.statusCode).toBe(200);

    // A new session reading back an evicted name synthesises it again: its URL works.
    const calls = fake.calls;
    const again = await readback(NAMES[3]!);
    expect(fake.calls).toBeGreaterThan(calls);
    expect(again.readbackUrl).toBe(ended[0]!.readbackUrl); // same text, same name
    expect((await fetchAudio(again.readbackUrl)).statusCode).toBe(200);

    // Ending the open sessions drops their pins: their clips may go now.
    for (const s of open) expect((await t.call('POST', `/v1/sessions/${s.id}/end`)).statusCode).toBe(200);
    expect(cache.pinOwners()).toBe(1); // only `again`, still open
    for (const first of FIRST) {
      const s = await readback(`${first} Pillai`);
      expect((await t.call('POST', `/v1/sessions/${s.id}/end`)).statusCode).toBe(200);
      clock += MIN_GRACE_MS + 1000;
      await cache.evict();
    }
    expect((await fetchAudio(open[0]!.readbackUrl)).statusCode).toBe(404);
    expect((await fetchAudio(again.readbackUrl)).statusCode).toBe(200); // still open
  }, 60_000);

  it("stores a session's rendered prompts (its customer's name) as dynamic clips, pinned while it is open", async () => {
    audioDir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
    const cache = new AudioCache(audioDir, crypto.randomBytes(32), { maxBytes: CAP, keepMs: 0 });
    const fake = new FakeSynthesizer({ msPerChar: 5 });
    t = await makeTestApp({}, { speech: new SpeechService(fake, cache, { timeoutMs: 2000 }) });
    const agent = {
      ...AGENT,
      id: 'ag_named_ask',
      steps: [
        {
          ...AGENT.steps[0]!,
          ask: 'Is {{customer_name}} the patient?',
          capture: { slot: 'ok', type: 'yes_no' },
          confirm: 'none',
        },
      ],
    };
    expect((await t.call('PUT', `/v1/agents/${agent.id}`, agent)).statusCode).toBeLessThan(300);
    // Pre-synthesis of the agent's static texts is done.
    for (let i = 0; i < 200; i++) {
      const a = (await t.call('GET', `/v1/agents/${agent.id}`)).json() as {
        audio: { total: number; ready: number; failed: number };
      };
      if (a.audio.ready + a.audio.failed === a.audio.total) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const statics = audioCacheStats(audioDir).static.clips;
    const opened = await t.call('POST', '/v1/sessions', { agent_id: agent.id, customer_name: 'Meena Iyer' });
    expect(opened.statusCode).toBe(201);
    const spoken = 'Is Meena Iyer the patient?';
    const key = AudioCache.keyFor('fake', 'fake-en', spoken);
    for (let i = 0; i < 200 && !fake.requests.some((r) => r.text === spoken); i++) await new Promise((resolve) => setTimeout(resolve, 20));
    for (let i = 0; i < 200 && cache.classOf(key) === null; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(cache.classOf(key)).toBe('dynamic');
    expect(audioCacheStats(audioDir).static.clips).toBe(statics);
    expect(cache.pinOwners()).toBe(1);
    const id = (opened.json() as { session_id: string }).session_id;
    expect((await t.call('POST', `/v1/sessions/${id}/end`)).statusCode).toBe(200);
    expect(cache.pinOwners()).toBe(0);
  });
});
