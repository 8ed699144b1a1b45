/**
 * The cap on the audio cache's dynamic clips (src/adapters/speech/cache.ts): static
 * and dynamic classes, LRU eviction down to the cap, the keep window, session pins, restarts,
 * the legacy layout, and the offline prune beside a running cache. All on a real temp dir,
 * with an injected clock (no waiting).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AudioCache, type AudioCacheOptions } from '../../src/adapters/speech/cache.js';
import { audioCacheStats, pruneAudioCache } from '../../src/adapters/speech/cache-admin.js';
import { MIN_GRACE_MS } from '../../src/adapters/speech/cache-dynamic.js';
import { resolveAudioCacheCap, DEFAULT_CAP_MAX_BYTES, DEFAULT_CAP_MIN_BYTES, MIB } from '../../src/adapters/speech/cache-limits.js';
import { FakeSynthesizer } from '../../src/adapters/speech/fake.js';
import { SpeechService } from '../../src/adapters/speech/synthesis.js';
import { toWav48k } from '../../src/media/wav.js';

const SECRET = crypto.randomBytes(32);
const HOUR = 3_600_000;
/** Every clip of these tests: 100 ms of 48 kHz PCM16 = 9,644 bytes with its header. */
const CLIP = toWav48k({ samples: new Int16Array(4800).fill(1000), sampleRate: 48000 });
const SIZE = CLIP.length;

let root: string;
let clock: number;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audiocap-'));
  clock = Date.now();
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const key = (text: string) => AudioCache.keyFor('fake', 'fake-en', text);
const open = (options: AudioCacheOptions = {}) => new AudioCache(root, SECRET, { nowMs: () => clock, keepMs: 0, ...options });
/** Moves the clock past the minimum grace, so the clips used before it may be evicted. */
const later = (ms = MIN_GRACE_MS + 1000) => {
  clock += ms;
};
const onDisk = () => audioCacheStats(root);

describe('AudioCache cap on dynamic clips', () => {
  it('holds the cap under a load of distinct dynamic clips, evicted clips answering as not cached', async () => {
    const cap = 10 * SIZE;
    const cache = open({ maxBytes: cap });
    const keys: string[] = [];
    for (let i = 0; i < 100; i++) {
      const k = key(`That is customer number ${i}, right?`);
      keys.push(k);
      await cache.put(k, CLIP, 'dynamic');
      later();
      await cache.evict();
      expect(onDisk().dynamic.bytes).toBeLessThanOrEqual(cap);
      expect(cache.dynamicUsage().bytes).toBe(onDisk().dynamic.bytes);
    }
    // The newest clips stay; the oldest were evicted, names and all.
    expect(cache.has(keys[99]!)).toBe(true);
    const gone = keys[0]!;
    const name = cache.nameOf(gone);
    expect(cache.has(gone)).toBe(false);
    expect(cache.fileOfName(name)).toBeNull();
    expect(fs.existsSync(path.join(root, 'dynamic', `${gone}.wav`))).toBe(false);
    expect(onDisk().dynamic.clips).toBeLessThanOrEqual(10);
    expect(onDisk().dynamic.clips).toBeGreaterThanOrEqual(9);
  });

  it('evicts least recently used first: a clip used again outlives older ones', async () => {
    const cache = open({ maxBytes: 3 * SIZE });
    await cache.evict(); // the start-up scan (which sorts by last use) is behind us
    const [a, b, c, d] = ['a', 'b', 'c', 'd'].map(key) as [string, string, string, string];
    for (const k of [a, b, c]) {
      await cache.put(k, CLIP, 'dynamic');
      later();
    }
    expect(cache.has(a)).toBe(true); // a use: a is now the most recent
    later();
    await cache.put(d, CLIP, 'dynamic');
    later();
    const r = await cache.evict();
    // Down to 90% of the cap (2.7 clips): two clips go, b then c; a and d stay.
    expect(r.removed).toBe(2);
    expect([a, b, c, d].map((k) => cache.classOf(k))).toEqual(['dynamic', null, null, 'dynamic']);
  });

  it('never evicts a clip within the keep window of its last use, and warns that the cap cannot hold', async () => {
    const warnings: Array<Record<string, number>> = [];
    const cache = open({ maxBytes: 2 * SIZE, keepMs: 2 * HOUR, onWarning: (_m, d) => warnings.push(d) });
    const keys = ['k1', 'k2', 'k3', 'k4'].map(key);
    for (const k of keys) await cache.put(k, CLIP, 'dynamic');
    clock += HOUR;
    expect((await cache.evict()).removed).toBe(0);
    expect(keys.every((k) => cache.classOf(k) === 'dynamic')).toBe(true);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ dynamic_bytes: 4 * SIZE, cap_bytes: 2 * SIZE });
    await cache.evict();
    expect(warnings).toHaveLength(1); // rate-limited
    clock += 1.5 * HOUR; // past the window
    expect((await cache.evict()).removed).toBe(3);
    expect(onDisk().dynamic.clips).toBe(1);
  });

  it('never evicts a clip pinned by an open session; unpinned, it goes like any other', async () => {
    const cache = open({ maxBytes: 2 * SIZE });
    const pinned = key('That is Sunita Rao, right?');
    await cache.put(pinned, CLIP, 'dynamic');
    cache.pin('se_1', [pinned]);
    later();
    for (let i = 0; i < 20; i++) {
      await cache.put(key(`other ${i}`), CLIP, 'dynamic');
      later();
      await cache.evict();
    }
    expect(cache.has(pinned)).toBe(true);
    expect(fs.existsSync(path.join(root, 'dynamic', `${pinned}.wav`))).toBe(true);
    expect(onDisk().dynamic.bytes).toBeLessThanOrEqual(2 * SIZE);
    cache.unpin('se_1');
    later();
    for (let i = 20; i < 23; i++) {
      await cache.put(key(`other ${i}`), CLIP, 'dynamic');
      later();
    }
    await cache.evict();
    expect(cache.has(pinned)).toBe(false);
  });

  it('never evicts or counts static clips; a combination is static only when all its clips are', async () => {
    const cache = open({ maxBytes: 2 * SIZE });
    const statics = ['s1', 's2', 's3', 's4'].map(key);
    for (const k of statics) await cache.put(k, CLIP, 'static');
    const dyn = key('d');
    await cache.put(dyn, CLIP, 'dynamic');
    const both = await cache.combine([statics[0]!, statics[1]!]);
    const mixed = await cache.combine([statics[0]!, dyn]);
    expect(cache.classOf(both)).toBe('static');
    expect(cache.classOf(mixed)).toBe('dynamic');
    for (let i = 0; i < 10; i++) {
      await cache.put(key(`x${i}`), CLIP, 'dynamic');
      later();
      await cache.evict();
    }
    expect([...statics, both].every((k) => cache.classOf(k) === 'static')).toBe(true);
    expect(onDisk().static.clips).toBe(5);
    expect(onDisk().dynamic.bytes).toBeLessThanOrEqual(2 * SIZE);
  });

  it('keeps classes and an approximate LRU order across a restart (last uses in file mtimes)', async () => {
    const first = open();
    const [x, y, s] = ['x', 'y', 's'].map(key) as [string, string, string];
    await first.put(x, CLIP, 'dynamic');
    clock += 1000;
    await first.put(y, CLIP, 'dynamic');
    await first.put(s, CLIP, 'static');
    clock += 2 * HOUR;
    expect(first.has(x)).toBe(true); // x used two hours later: its mtime says so
    clock += MIN_GRACE_MS * 2;
    const second = open({ maxBytes: 1.5 * SIZE });
    expect([x, y, s].map((k) => second.classOf(k))).toEqual(['dynamic', 'dynamic', 'static']);
    const r = await second.evict();
    expect(r.removed).toBe(1);
    expect(second.has(y)).toBe(false); // least recently used before the restart
    expect(second.has(x)).toBe(true);
    expect(second.has(s)).toBe(true);
  });

  it('works with a cache from before classes: clips served as before, pre-synthesis promotes the static ones', async () => {
    const statik = AudioCache.keyFor('fake', 'fake-en', 'Hello from the clinic.');
    const live = AudioCache.keyFor('fake', 'fake-en', 'That is Ravi Kumar, right?');
    for (const k of [statik, live]) fs.writeFileSync(path.join(root, `${k}.wav`), CLIP);
    expect(onDisk()).toMatchObject({ legacyLayout: true, dynamic: { clips: 2 }, static: { clips: 0 } });
    const cache = open({ maxBytes: 100 * SIZE });
    const names = [statik, live].map((k) => cache.nameOf(k));
    expect(fs.readFileSync(cache.fileOfName(names[0]!)!).equals(CLIP)).toBe(true);
    expect(fs.readFileSync(cache.fileOfName(names[1]!)!).equals(CLIP)).toBe(true);
    const fake = new FakeSynthesizer();
    const speech = new SpeechService(fake, cache);
    expect(await speech.prepare(['Hello from the clinic.'], 'fake-en')).toEqual({ ready: 1, failed: 0 });
    expect(fake.calls).toBe(0); // promoted, not synthesised again
    expect(cache.classOf(statik)).toBe('static');
    expect(cache.classOf(live)).toBe('dynamic');
    expect(cache.fileOfName(names[0]!)).toBe(path.join(root, `${statik}.wav`));
    // After a restart the classes stand, names unchanged.
    const again = open();
    expect(again.classOf(statik)).toBe('static');
    expect(again.classOf(live)).toBe('dynamic');
    expect(again.nameOf(statik)).toBe(names[0]);
    expect(onDisk()).toMatchObject({ legacyLayout: false, static: { clips: 1 }, dynamic: { clips: 1 } });
  });

  it('stores live synthesis as dynamic and pre-synthesis as static; a live clip pre-synthesised later is promoted', async () => {
    const cache = open();
    const speech = new SpeechService(new FakeSynthesizer(), cache);
    const live = await speech.ensure('That is Asha Rao, right?', 'fake-en');
    expect(cache.classOf(live.key)).toBe('dynamic');
    await speech.prepare(['Is now a good time?'], 'fake-en');
    expect(cache.classOf(key('Is now a good time?'))).toBe('static');
    await speech.prepare(['Hello Asha Rao.'], 'fake-en', { dynamic: true });
    expect(cache.classOf(key('Hello Asha Rao.'))).toBe('dynamic');
    await speech.prepare(['That is Asha Rao, right?'], 'fake-en');
    expect(cache.classOf(live.key)).toBe('static');
  });
});

describe('pruneAudioCache (vagent admin cache prune) beside a running cache', () => {
  it('removes only dynamic clips unused for the keep window + 2 h; a running cache never hands out a removed one', async () => {
    const daemon = open({ maxBytes: 0, keepMs: HOUR });
    const old = ['o1', 'o2', 'o3'].map(key);
    const recent = key('recent');
    const statik = key('static');
    for (const k of old) await daemon.put(k, CLIP, 'dynamic');
    await daemon.put(recent, CLIP, 'dynamic');
    await daemon.put(statik, CLIP, 'static');
    const stamp = (k: string, ms: number) => fs.utimesSync(path.join(root, 'dynamic', `${k}.wav`), ms / 1000, ms / 1000);
    const now = Date.now();
    for (const k of old) stamp(k, now - 5 * HOUR);
    stamp(recent, now - 2.5 * HOUR); // inside keep + 2 h
    // The running cache learns the old stamps from its scan (as after a restart).
    const running = open({ maxBytes: 0, keepMs: HOUR });
    clock = now;
    await running.evict();
    const names = old.map((k) => running.nameOf(k));

    const dry = await pruneAudioCache(root, { capBytes: SIZE, keepMs: HOUR, dryRun: true });
    expect(dry).toMatchObject({ removed: 3, bytes: 3 * SIZE, keptRecent: 1 });
    expect(onDisk().dynamic.clips).toBe(4); // a dry run changes nothing

    const done = await pruneAudioCache(root, { capBytes: SIZE, keepMs: HOUR });
    expect(done).toMatchObject({ removed: 3, keptRecent: 1, dynamicBytesAfter: SIZE });
    expect(onDisk()).toMatchObject({ static: { clips: 1 }, dynamic: { clips: 1 } });
    // The running cache: a pruned clip is a miss (never a URL to a missing file).
    expect(running.fileOfName(names[0]!)).toBeNull();
    expect(running.has(old[1]!)).toBe(false);
    expect(running.has(recent)).toBe(true);
    expect(running.has(statik)).toBe(true);
    // Its next pass forgets the rest of what the prune removed.
    await running.evict();
    expect(running.dynamicUsage()).toEqual({ clips: 1, bytes: SIZE });
  });
});

describe('resolveAudioCacheCap', () => {
  it('takes the setting (0 = no cap), else 5% of the disk clamped to 256 MiB–16 GiB', () => {
    expect(resolveAudioCacheCap(512, root)).toEqual({ bytes: 512 * MIB, source: 'setting', diskBytes: null });
    expect(resolveAudioCacheCap(0, root).bytes).toBe(0);
    const st = fs.statfsSync(root);
    const disk = st.blocks * st.bsize;
    const d = resolveAudioCacheCap(undefined, root);
    expect(d).toMatchObject({ source: 'disk', diskBytes: disk });
    expect(d.bytes).toBe(Math.min(DEFAULT_CAP_MAX_BYTES, Math.max(DEFAULT_CAP_MIN_BYTES, Math.floor(disk * 0.05))));
  });
});
