/**
 * The content-addressed audio cache behind `GET /v1/audio/{name}.wav`: every static text is
 * synthesised when the agent is applied or a session opens, so most replies are cache hits. One
 * 48 kHz mono PCM16 WAV per key, where the key is a SHA-256 of what was spoken, by which engine
 * and voice — so a key is computed without touching the disk ({@link clipKey}), and a file, once
 * written, never changes.
 *
 * Keys stay inside the daemon: clients see a clip's *name*, HMAC-SHA256 of its key under the
 * install's secret (`<state-dir>/audio.key`; {@link clipName}); the audio route serves names,
 * never keys. The files keep their key names, so a new secret revokes every URL without a clip
 * being synthesised again.
 *
 * Two classes of clips (see "How long a URL answers" in docs/api-decisions.md), told apart by
 * where the file is, so the class survives restarts:
 * - *static* clips, `<dir>/<key>.wav`: made by pre-synthesis of an agent's static texts, and
 *   combinations made only of static clips. Never evicted.
 * - *dynamic* clips, `<dir>/dynamic/<key>.wav`: synthesised live (a name or number read back,
 *   a session's rendered prompts), and combinations holding a dynamic clip. They are bounded
 *   by a cap in bytes (`audio_cache_max_mb`) and evicted least recently used first, but never
 *   within `audio_url_keep_hours` of their last use, never while pinned by an open session
 *   ({@link AudioCache.pin}), and never within a minute of their last use whatever the setting
 *   (a turn being answered). An evicted clip's name answers 404; a later turn that needs the
 *   same text synthesises it again. Their index and eviction are {@link DynamicClips}'.
 *
 * A cache from before the classes existed (clips in `<dir>` and no `dynamic/.layout` marker) is
 * moved into `dynamic/` once, on first use; pre-synthesis at start-up then promotes the
 * agents' static clips back (a rename). Every clip keeps its name, so old URLs keep working.
 * The layout on disk and the atomic write of a clip are in `cache-disk.ts`; the offline
 * stats and prune in `cache-admin.ts`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { audioCacheStats } from './cache-admin.js';
import { DYNAMIC_DIR, FILE_RE, isNoEnt, migrateLegacyLayout, removeStaleTmp, writeClipAtomic } from './cache-disk.js';
import { DEFAULT_KEEP_MS, DEFAULT_MAINTENANCE_MS, DynamicClips, type EvictionResult } from './cache-dynamic.js';
import { clipKey, clipName, combinedClipKey, isAudioSha } from './cache-keys.js';
import { concatWavs, DEFAULT_GAP_MS } from '../../media/wav.js';

/** The class of a clip: kept for good (`static`) or bounded by the cap (`dynamic`). */
export type ClipClass = 'static' | 'dynamic';

/** Options of an {@link AudioCache}: the bound of its dynamic clips. */
export interface AudioCacheOptions {
  /** Most bytes the dynamic clips may hold (`audio_cache_max_mb` in bytes); 0 or unset = no cap. */
  maxBytes?: number;
  /** A dynamic clip is never evicted within this long of its last use, ms; default 24 h. */
  keepMs?: number;
  /** Clock, epoch ms (tests); default `Date.now`. */
  nowMs?: () => number;
  /** Told (rate-limited, once an hour) when protected clips alone exceed the cap; never given text. */
  onWarning?: (message: string, details: Record<string, number>) => void;
}

/**
 * A directory of WAV clips named by their keys, static and dynamic (see the module comment).
 * Lookups are synchronous; one daemon process writes it (an offline prune may remove expired
 * dynamic clips meanwhile, see `pruneAudioCache` in `cache-admin.ts`).
 */
export class AudioCache {
  /** Cached clips: key → public name (loaded from the directory on first use). */
  private index: Map<string, string> | null = null;
  /** Cached clips: public name → key. */
  private readonly byName = new Map<string, string>();
  /** The dynamic clips (a subset of {@link index}): LRU order, pins, eviction. */
  private readonly dynamic: DynamicClips;
  /** Combined clips being built, by key (see {@link AudioCache.combine}). */
  private readonly combining = new Map<string, Promise<string>>();
  readonly #secret: Buffer;
  readonly dir: string;
  /** Directory of the dynamic clips, `<dir>/dynamic`. */
  readonly dynamicDir: string;

  /**
   * @param dir     the cache directory, normally `<state-dir>/audio`; created (mode 0700,
   *                parents included) when missing
   * @param secret  the install's audio secret (`loadAudioKey`), at least 32 bytes: keys the
   *                public names of clips ({@link AudioCache.nameOf})
   * @param options the cap on dynamic clips and their keep window (default: no cap)
   * @throws RangeError for a secret shorter than 32 bytes or a negative cap or keep window;
   *         Error from the filesystem when `dir` cannot be created
   */
  constructor(dir: string, secret: Uint8Array, options: AudioCacheOptions = {}) {
    if (secret.length < 32) throw new RangeError('the audio secret must be at least 32 bytes');
    const maxBytes = options.maxBytes ?? 0;
    const keepMs = options.keepMs ?? DEFAULT_KEEP_MS;
    if (!(maxBytes >= 0) || !(keepMs >= 0)) throw new RangeError('the audio cache cap and keep window must be 0 or more');
    this.#secret = Buffer.from(secret);
    this.dir = path.resolve(dir);
    this.dynamicDir = path.join(this.dir, DYNAMIC_DIR);
    this.dynamic = new DynamicClips(
      this.dynamicDir,
      { load: () => void this.loaded(), forget: (key) => this.forget(key) },
      { maxBytes, keepMs, now: options.nowMs ?? Date.now, onWarning: options.onWarning ?? (() => {}) },
    );
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** The key of a clip: sha256 (hex) of the engine's pricing key, the voice and the spoken text ({@link clipKey}). */
  static keyFor(provider: string, voice: string, spokenText: string): string {
    return clipKey(provider, voice, spokenText);
  }

  /** The key of clips `shas` joined in order, `gapMs` of silence between ({@link combinedClipKey}). */
  static combinedKeyFor(shas: readonly string[], gapMs: number = DEFAULT_GAP_MS): string {
    return combinedClipKey(shas, gapMs);
  }

  /**
   * True when clip `sha` is cached and may be used. For a dynamic clip this is a use: it
   * becomes the most recently used (its mtime re-stamped at most once an hour), and one an
   * offline prune could have removed is checked on disk first (missing: false, forgotten).
   * The directory is listed once, on first use.
   */
  has(sha: string): boolean {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return false;
    const e = this.dynamic.entry(sha);
    return e === undefined || this.dynamic.touch(sha, e);
  }

  /** The class of cached clip `sha`, or null when it is not cached. Not a use. */
  classOf(sha: string): ClipClass | null {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return null;
    return this.dynamic.has(sha) ? 'dynamic' : 'static';
  }

  /**
   * The public name of clip `key`: HMAC-SHA256 (64 lowercase hex) of the key under the
   * install's secret — what audio URLs carry, so that knowing a text (and so its key) does not
   * give its URL. Looked up for cached clips, computed for others.
   */
  nameOf(key: string): string {
    return this.loaded().get(key) ?? clipName(this.#secret, key);
  }

  /**
   * The file of the cached clip whose public name is `name`, or null when no cached clip has
   * that name (a key, even of a cached clip, is not a name; an evicted clip is not cached).
   * A fetch is a use of a dynamic clip (see {@link AudioCache.has}).
   */
  fileOfName(name: string): string | null {
    if (!isAudioSha(name)) return null;
    this.loaded();
    const key = this.byName.get(name);
    return key === undefined || !this.has(key) ? null : this.path(key);
  }

  /**
   * The file of clip `sha` where it is (`dynamic/<sha>.wav` for a cached dynamic clip, else
   * `<sha>.wav`, whether or not it exists yet), or null when `sha` is not a key.
   */
  path(sha: string): string | null {
    if (!isAudioSha(sha)) return null;
    return this.fileIn(this.loaded() && this.dynamic.has(sha) ? 'dynamic' : 'static', sha);
  }

  /**
   * Stores clip `sha` atomically (a temporary file, synced, renamed, the directory synced) as
   * a clip of class `cls`; a clip already stored is left as it is (idempotent), except that a
   * dynamic clip stored again as static is promoted ({@link AudioCache.promote}). The writes and
   * syncs run on libuv's thread pool, so storing a clip never stalls the event loop on the
   * disk. A dynamic clip that takes the dynamic bytes over the cap schedules an eviction pass.
   *
   * @param cls `static` (default: pre-synthesis) or `dynamic` (live synthesis)
   * @throws RangeError when `sha` is not a key; Error from the filesystem when writing fails
   */
  async put(sha: string, wav: Uint8Array, cls: ClipClass = 'static'): Promise<void> {
    if (!isAudioSha(sha)) throw new RangeError('audio cache key must be 64 lowercase hex characters');
    if (this.has(sha)) {
      if (cls === 'static') this.promote(sha);
      return;
    }
    const dir = cls === 'dynamic' ? this.dynamicDir : this.dir;
    if (cls === 'dynamic') await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    // An evicted copy still being deleted goes first, or its deletion would remove this one.
    await writeClipAtomic(dir, sha, wav, () => this.dynamic.deletion(sha));
    this.remember(sha, cls, wav.length);
  }

  /**
   * Makes cached dynamic clip `sha` static (moves its file; its name and URL stay): pre-synthesis
   * asked for a text that was first synthesised live, or a combination's clips all became
   * static. Returns false when the clip is not cached or its file is gone (then forgotten).
   */
  promote(sha: string): boolean {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return false;
    if (!this.dynamic.has(sha)) return true;
    try {
      fs.renameSync(this.fileIn('dynamic', sha), this.fileIn('static', sha));
    } catch (err) {
      if (!isNoEnt(err)) throw err;
      this.forget(sha);
      return false;
    }
    this.dynamic.drop(sha);
    return true;
  }

  /** The WAV bytes of clip `sha`, or null when `sha` is not a key or not cached. */
  read(sha: string): Buffer | null {
    const file = this.path(sha);
    if (file === null) return null;
    try {
      return fs.readFileSync(file);
    } catch (err) {
      if (isNoEnt(err)) {
        this.forget(sha);
        return null;
      }
      throw err;
    }
  }

  /**
   * One clip playing `shas` in order, {@link DEFAULT_GAP_MS} apart, stored under
   * {@link AudioCache.combinedKeyFor}`(shas)` the first time and reused after. A single clip is
   * its own combination. The combination is static when every clip is, else dynamic. The clips
   * are read as the build starts (synchronously), so an eviction meanwhile cannot break it.
   *
   * @returns the key of the combined clip
   * @throws RangeError when `shas` is empty or holds a malformed key; Error when a clip is not
   *         cached or not a 48 kHz mono PCM16 WAV
   */
  async combine(shas: readonly string[]): Promise<string> {
    if (shas.length === 0) throw new RangeError('combine needs at least one clip');
    const bad = shas.find((s) => !isAudioSha(s));
    if (bad !== undefined) throw new RangeError('audio cache key must be 64 lowercase hex characters');
    if (shas.length === 1) return shas[0]!;
    const key = AudioCache.combinedKeyFor(shas);
    if (this.has(key)) {
      if (this.dynamic.has(key) && shas.every((s) => this.classOf(s) === 'static')) this.promote(key);
      return key;
    }
    // Turns that need the same new combination at once (a campaign's first calls, a load's
    // first requests) share one build: each would otherwise read, join and store it again.
    let job = this.combining.get(key);
    if (job === undefined) {
      job = this.build(key, shas).finally(() => this.combining.delete(key));
      this.combining.set(key, job);
    }
    return job;
  }

  /**
   * The key {@link AudioCache.combine} returns for `shas` when that clip is stored already (a
   * single clip being its own combination), else null; never builds anything. A use of every
   * dynamic clip involved (see {@link AudioCache.has}).
   */
  combinedIfCached(shas: readonly string[]): string | null {
    if (shas.length === 0 || !shas.every((s) => this.has(s))) return null;
    if (shas.length === 1) return shas[0]!;
    const key = AudioCache.combinedKeyFor(shas);
    return this.has(key) ? key : null;
  }

  /**
   * Pins clips `keys` for `owner` (an open session): no eviction removes them until
   * {@link AudioCache.unpin}`(owner)`. Keys not cached (yet) may be pinned too.
   */
  pin(owner: string, keys: readonly string[]): void {
    this.dynamic.pin(owner, keys);
  }

  /** Drops every pin of `owner` (its session ended or left memory). Unknown owners are fine. */
  unpin(owner: string): void {
    this.dynamic.unpin(owner);
  }

  /** Owners holding pins (open sessions with clips), for tests and diagnostics. */
  pinOwners(): number {
    return this.dynamic.pinOwners();
  }

  /**
   * Evicts dynamic clips, least recently used first, until their bytes are at most 90% of the
   * cap, sparing pinned clips and clips used within the keep window (or the last minute). The
   * clips leave the index at once (their names answer 404, a turn needing one synthesises it
   * again); their files are deleted asynchronously. One pass at a time: a call during a pass
   * returns that pass. With protected clips alone over the cap, warns (at most once an hour).
   * Without a cap, does nothing. Never rejects on a file already gone.
   */
  evict(): Promise<EvictionResult> {
    return this.dynamic.evict();
  }

  /**
   * Starts the background passes: the index's scan of sizes and last uses at once, then an
   * eviction pass every `intervalMs` (default 10 min). Timers do not keep the process alive.
   */
  startMaintenance(intervalMs: number = DEFAULT_MAINTENANCE_MS): void {
    this.dynamic.startMaintenance(intervalMs);
  }

  /** Stops the background passes; resolves when a pass under way has finished. */
  stopMaintenance(): Promise<void> {
    return this.dynamic.stopMaintenance();
  }

  /** Dynamic clips in the index and their bytes (known sizes), as this process sees them. */
  dynamicUsage(): { clips: number; bytes: number } {
    this.loaded();
    return this.dynamic.usage();
  }

  /** Joins `shas` and stores the result as clip `key`; returns `key`. */
  private async build(key: string, shas: readonly string[]): Promise<string> {
    const wavs = shas.map((sha) => {
      const wav = this.read(sha);
      if (wav === null) throw new Error(`audio clip ${sha} is not in the cache`);
      return wav;
    });
    const cls: ClipClass = shas.every((s) => this.classOf(s) === 'static') ? 'static' : 'dynamic';
    await this.put(key, concatWavs(wavs, DEFAULT_GAP_MS), cls);
    return key;
  }

  /** How many clips the cache holds and their total size in bytes, both classes (lists the directories). */
  stats(): { files: number; bytes: number } {
    const s = audioCacheStats(this.dir);
    return { files: s.static.clips + s.dynamic.clips, bytes: s.static.bytes + s.dynamic.bytes };
  }

  /** The file of clip `sha` in class `cls`. */
  private fileIn(cls: ClipClass, sha: string): string {
    return cls === 'dynamic' ? path.join(this.dynamicDir, `${sha}.wav`) : path.join(this.dir, `${sha}.wav`);
  }

  /** Adds stored clip `key` (class `cls`, `size` bytes) to the index, under its name. */
  private remember(key: string, cls: ClipClass, size: number): void {
    const index = this.loaded();
    if (index.has(key)) {
      // Another put stored it meanwhile: a static copy wins over a dynamic one.
      const dynamic = this.dynamic.has(key);
      if (cls === 'static' && dynamic) {
        this.dynamic.drop(key);
        void fs.promises.rm(this.fileIn('dynamic', key), { force: true }).catch(() => undefined);
      } else if (cls === 'dynamic' && !dynamic) {
        void fs.promises.rm(this.fileIn('dynamic', key), { force: true }).catch(() => undefined);
      }
      return;
    }
    const name = clipName(this.#secret, key);
    index.set(key, name);
    this.byName.set(name, key);
    if (cls === 'dynamic') this.dynamic.addStored(key, size);
  }

  /** Drops clip `key` (its file is gone, or it is being evicted) from the index. */
  private forget(key: string): void {
    const name = this.loaded().get(key);
    if (name === undefined) return;
    this.index!.delete(key);
    this.byName.delete(name);
    this.dynamic.drop(key);
  }

  /**
   * The in-memory index, loaded from the directories on first use (a legacy layout migrated,
   * stale temp files removed): each clip file's key with its public name (one HMAC per file,
   * once per process). Dynamic clips' sizes and last uses are read by the background scan.
   */
  private loaded(): Map<string, string> {
    if (this.index) return this.index;
    migrateLegacyLayout(this.dir);
    const index = new Map<string, string>();
    const now = Date.now();
    const add = (key: string) => {
      const pub = clipName(this.#secret, key);
      index.set(key, pub);
      this.byName.set(pub, key);
    };
    for (const name of fs.readdirSync(this.dir)) {
      const m = FILE_RE.exec(name);
      if (m) add(m[1]!);
      else removeStaleTmp(this.dir, name, now);
    }
    for (const name of fs.readdirSync(this.dynamicDir)) {
      const m = FILE_RE.exec(name);
      if (!m) {
        removeStaleTmp(this.dynamicDir, name, now);
        continue;
      }
      const key = m[1]!;
      if (index.has(key)) {
        // Both copies (a crash during a promotion): the static one stands.
        fs.rmSync(path.join(this.dynamicDir, name), { force: true });
        continue;
      }
      add(key);
      this.dynamic.addFound(key);
    }
    this.dynamic.notePruneMarker();
    this.index = index;
    return index;
  }
}
