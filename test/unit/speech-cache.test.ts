/**
 * The content-addressed audio cache (src/adapters/speech/cache.ts): keys, atomic writes, the lazy
 * index, combined clips and malformed keys.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AudioCache } from '../../src/adapters/speech/cache.js';
import { isAudioSha } from '../../src/adapters/speech/cache-keys.js';
import { clipSamples, readWavInfo, toWav48k } from '../../src/media/wav.js';

/** The install's audio secret of these tests. */
const SECRET = crypto.randomBytes(32);

let root: string;
beforeEach(() => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-audio-'));
});
afterEach(() => {
  fs.rmSync(root, { recursive: true, force: true });
});

const clip = (ms: number, value = 1000) => toWav48k({ samples: new Int16Array(Math.round(ms * 48)).fill(value), sampleRate: 48000 });

describe('AudioCache.keyFor', () => {
  it('is a sha256 hex that changes with provider, voice and text', () => {
    const k = AudioCache.keyFor('espeak-ng', 'en', 'hello');
    expect(isAudioSha(k)).toBe(true);
    expect(AudioCache.keyFor('espeak-ng', 'en', 'hello')).toBe(k);
    expect(AudioCache.keyFor('espeak-ng', 'hi', 'hello')).not.toBe(k);
    expect(AudioCache.keyFor('fake', 'en', 'hello')).not.toBe(k);
    expect(AudioCache.keyFor('espeak-ng', 'en', 'hello ')).not.toBe(k);
  });
  it('cannot be confused by moving text between fields', () => {
    expect(AudioCache.keyFor('a', 'b c', 'd')).not.toBe(AudioCache.keyFor('a', 'b', 'c d'));
    expect(AudioCache.keyFor('a"', 'b', 'c')).not.toBe(AudioCache.keyFor('a', '"b', 'c'));
  });
});

describe('AudioCache', () => {
  it('creates its directory with mode 0700', () => {
    const dir = path.join(root, 'state', 'audio');
    new AudioCache(dir, SECRET);
    expect(fs.statSync(dir).mode & 0o777).toBe(0o700);
  });

  it('stores a clip atomically under <sha>.wav, leaving no temporary file', async () => {
    const cache = new AudioCache(root, SECRET);
    const sha = AudioCache.keyFor('fake', 'en', 'hi');
    expect(cache.has(sha)).toBe(false);
    expect(cache.read(sha)).toBeNull();
    const wav = clip(100);
    await cache.put(sha, wav);
    expect(cache.has(sha)).toBe(true);
    expect(cache.path(sha)).toBe(path.join(root, `${sha}.wav`));
    expect(cache.read(sha)!.equals(wav)).toBe(true);
    expect(fs.readdirSync(root).filter((f) => f !== 'dynamic')).toEqual([`${sha}.wav`]);
    expect(fs.statSync(cache.path(sha)!).mode & 0o777).toBe(0o600);
  });

  it('put stores concurrently and idempotently', async () => {
    const cache = new AudioCache(root, SECRET);
    const sha = AudioCache.keyFor('fake', 'en', 'async');
    const wav = clip(100);
    await Promise.all([cache.put(sha, wav), cache.put(sha, wav)]);
    expect(cache.has(sha)).toBe(true);
    expect(cache.read(sha)!.equals(wav)).toBe(true);
    expect(fs.readdirSync(root).filter((f) => f !== 'dynamic')).toEqual([`${sha}.wav`]);
    expect(fs.statSync(cache.path(sha)!).mode & 0o777).toBe(0o600);
    await cache.put(sha, clip(200));
    expect(readWavInfo(cache.read(sha)!).durationMs).toBeCloseTo(100, 5);
    await expect(cache.put('nope', wav)).rejects.toThrow(RangeError);
  });

  it('is idempotent: a second put of the same key keeps the first file', async () => {
    const cache = new AudioCache(root, SECRET);
    const sha = AudioCache.keyFor('fake', 'en', 'x');
    await cache.put(sha, clip(100));
    await cache.put(sha, clip(200));
    expect(readWavInfo(cache.read(sha)!).durationMs).toBeCloseTo(100, 5);
    expect(cache.stats()).toEqual({ files: 1, bytes: clip(100).length });
  });

  it('loads its index from disk lazily and ignores foreign and temporary files', async () => {
    const a = new AudioCache(root, SECRET);
    const sha = AudioCache.keyFor('fake', 'en', 'persisted');
    await a.put(sha, clip(50));
    fs.writeFileSync(path.join(root, 'notes.txt'), 'x');
    const stale = path.join(root, `.${sha}.1.abcd.tmp`);
    fs.writeFileSync(stale, 'partial');
    const old = new Date(Date.now() - 2 * 60 * 60 * 1000);
    fs.utimesSync(stale, old, old);
    const b = new AudioCache(root, SECRET);
    expect(b.has(sha)).toBe(true);
    expect(fs.existsSync(stale)).toBe(false); // a crash's left-over is cleaned up
    expect(b.stats().files).toBe(1);
  });

  it('refuses malformed keys everywhere', async () => {
    const cache = new AudioCache(root, SECRET);
    for (const bad of ['', '../etc/passwd', 'A'.repeat(64), 'a'.repeat(63), `${'a'.repeat(64)}.wav`, `${'a'.repeat(63)}/`]) {
      expect(cache.path(bad)).toBeNull();
      expect(cache.has(bad)).toBe(false);
      expect(cache.read(bad)).toBeNull();
      await expect(cache.put(bad, clip(10))).rejects.toThrow(RangeError);
    }
    await expect(cache.combine(['nope', 'nope'])).rejects.toThrow(RangeError);
  });

  it('combines clips once, under a key of the list, playing them in order', async () => {
    const cache = new AudioCache(root, SECRET);
    const a = AudioCache.keyFor('fake', 'en', 'a');
    const b = AudioCache.keyFor('fake', 'en', 'b');
    await cache.put(a, clip(200, 1000));
    await cache.put(b, clip(300, 2000));
    const ab = await cache.combine([a, b]);
    expect(isAudioSha(ab)).toBe(true);
    expect(ab).toBe(AudioCache.combinedKeyFor([a, b]));
    expect(cache.has(ab)).toBe(true);
    const samples = clipSamples(cache.read(ab)!);
    expect(readWavInfo(cache.read(ab)!).durationMs).toBeCloseTo(650, 5);
    expect(samples[0]).toBe(1000);
    expect(samples[samples.length - 1]).toBe(2000);
    const mtime = fs.statSync(cache.path(ab)!).mtimeMs;
    expect(await cache.combine([a, b])).toBe(ab);
    expect(fs.statSync(cache.path(ab)!).mtimeMs).toBe(mtime);
    expect(await cache.combine([b, a])).not.toBe(ab);
    expect(await cache.combine([a])).toBe(a);
    await expect(cache.combine([])).rejects.toThrow(RangeError);
  });

  it('builds a new combination once for concurrent requests, and retries one that failed', async () => {
    const cache = new AudioCache(root, SECRET);
    const a = AudioCache.keyFor('fake', 'en', 'a');
    const b = AudioCache.keyFor('fake', 'en', 'b');
    await cache.put(a, clip(200, 1000));
    const put = vi.spyOn(cache, 'put');
    // b is missing: every concurrent request fails, and the failure is not remembered.
    const failed = await Promise.allSettled(Array.from({ length: 5 }, () => cache.combine([a, b])));
    expect(failed.every((r) => r.status === 'rejected')).toBe(true);
    await cache.put(b, clip(300, 2000));
    put.mockClear();
    const keys = await Promise.all(Array.from({ length: 20 }, () => cache.combine([a, b])));
    expect(new Set(keys)).toEqual(new Set([AudioCache.combinedKeyFor([a, b])]));
    expect(put).toHaveBeenCalledTimes(1);
    expect(readWavInfo(cache.read(keys[0]!)!).durationMs).toBeCloseTo(650, 5);
    // No temporary file is left behind.
    expect(fs.readdirSync(root).filter((f) => f.startsWith('.'))).toEqual([]);
  });

  it('names a combination without building it only when it is stored already', async () => {
    const cache = new AudioCache(root, SECRET);
    const a = AudioCache.keyFor('fake', 'en', 'a');
    const b = AudioCache.keyFor('fake', 'en', 'b');
    await cache.put(a, clip(200, 1000));
    expect(cache.combinedIfCached([a])).toBe(a);
    expect(cache.combinedIfCached([a, b])).toBeNull(); // b missing
    await cache.put(b, clip(300, 2000));
    expect(cache.combinedIfCached([a, b])).toBeNull(); // not combined yet, and not built here
    expect(cache.has(AudioCache.combinedKeyFor([a, b]))).toBe(false);
    const ab = await cache.combine([a, b]);
    expect(cache.combinedIfCached([a, b])).toBe(ab);
    expect(cache.combinedIfCached([b, a])).toBeNull();
    expect(cache.combinedIfCached([])).toBeNull();
    expect(cache.combinedIfCached(['nope'])).toBeNull();
  });

  it('fails to combine a clip that is not cached', async () => {
    const cache = new AudioCache(root, SECRET);
    const a = AudioCache.keyFor('fake', 'en', 'a');
    await cache.put(a, clip(10));
    await expect(cache.combine([a, AudioCache.keyFor('fake', 'en', 'missing')])).rejects.toThrow(/not in the cache/);
  });
});

describe('AudioCache names', () => {
  it('names a clip by a keyed MAC: another secret gives another name, the key is not a name', async () => {
    const key = AudioCache.keyFor('fake', 'en', 'That is Sunita Rao, right?');
    const cache = new AudioCache(root, SECRET);
    const other = new AudioCache(fs.mkdtempSync(path.join(root, 'other-')), crypto.randomBytes(32));
    const name = cache.nameOf(key);
    expect(isAudioSha(name)).toBe(true);
    expect(name).toBe(crypto.createHmac('sha256', SECRET).update('vagent-audio-name-v1\u0000').update(key).digest('hex'));
    expect(other.nameOf(key)).not.toBe(name);
    expect(name).not.toBe(key);
    expect(cache.fileOfName(name)).toBeNull(); // not cached yet
    await cache.put(key, clip(50));
    expect(cache.nameOf(key)).toBe(name);
    expect(cache.fileOfName(name)).toBe(cache.path(key));
    expect(cache.fileOfName(key)).toBeNull();
    expect(cache.fileOfName('../x')).toBeNull();
    expect(() => new AudioCache(root, crypto.randomBytes(16))).toThrow(RangeError);
  });

  it('names the clips it finds on disk (a cache written before names existed) when its index loads', async () => {
    const key = AudioCache.keyFor('fake', 'en', 'old clip');
    fs.writeFileSync(path.join(root, `${key}.wav`), clip(30));
    const cache = new AudioCache(root, SECRET);
    const name = cache.nameOf(key);
    // A cache from before clip classes: its clips are dynamic until pre-synthesis promotes them.
    expect(cache.fileOfName(name)).toBe(path.join(root, 'dynamic', `${key}.wav`));
    expect(cache.fileOfName(key)).toBeNull();
    fs.rmSync(path.join(root, 'dynamic', `${key}.wav`));
    expect(cache.read(key)).toBeNull(); // a vanished file is forgotten, name and all
    expect(cache.fileOfName(name)).toBeNull();
  });
});
