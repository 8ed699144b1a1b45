/**
 * The content-addressed audio cache (DESIGN.md §6: "every static text … is synthesised when
 * the agent is applied or a session opens, so most replies are cache hits"; §4
 * `GET /v1/audio/{name}.wav`). One 48 kHz mono PCM16 WAV per key, where the key is a SHA-256
 * of what was spoken, by which engine and voice — so a key is computed without touching the
 * disk, and a file, once written, never changes.
 *
 * Keys stay inside the daemon: anyone can compute one from a guessed text. Clients see a
 * clip's *name*, HMAC-SHA256 of its key under the install's secret (`<state-dir>/audio.key`),
 * which only this install can compute; the audio route serves names, never keys. The files
 * keep their key names, so a cache from before names existed serves as is, and a new secret
 * revokes every URL without a clip being synthesised again.
 *
 * Two classes of clips (issue 15 item 3), told apart by where the file is, so the class
 * survives restarts:
 * - *static* clips, `<dir>/<key>.wav`: made by pre-synthesis of an agent's static texts, and
 *   combinations made only of static clips. Never evicted.
 * - *dynamic* clips, `<dir>/dynamic/<key>.wav`: synthesised live (a name or number read back,
 *   a session's rendered prompts), and combinations holding a dynamic clip. They are bounded
 *   by a cap in bytes (`audio_cache_max_mb`) and evicted least recently used first, but never
 *   within `audio_url_keep_hours` of their last use, never while pinned by an open session
 *   ({@link AudioCache.pin}), and never within a minute of their last use whatever the setting
 *   (a turn being answered). An evicted clip's name answers 404; a later turn that needs the
 *   same text synthesises it again.
 *
 * Last uses are kept in memory (the dynamic index is in LRU order) and written to the file's
 * mtime at most once an hour per clip, asynchronously, so a restart keeps an approximate LRU
 * order. A clip last persisted more than `keep + 1 h` ago could have been removed by an
 * offline prune ({@link pruneAudioCache}, another process, which removes only clips whose mtime
 * is older than `keep + 2 h`): using such a clip first re-stamps its mtime synchronously, which
 * also checks that it still exists; a missing one is a cache miss, so a URL of a pruned clip is
 * never handed out.
 *
 * A cache from before the classes existed (clips in `<dir>` and no `dynamic/.layout` marker) is
 * moved into `dynamic/` once, on first use; pre-synthesis at start-up then promotes the
 * agents' static clips back (a rename). Every clip keeps its name, so old URLs keep working.
 *
 * Writes are atomic (temporary file, fsync, rename, fsync of the directory): a crash leaves
 * either the whole clip or nothing under its name.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { concatWavs, DEFAULT_GAP_MS } from '../media/wav.js';

const SHA_RE = /^[0-9a-f]{64}$/;
const FILE_RE = /^([0-9a-f]{64})\.wav$/;
const TMP_SUFFIX = '.tmp';
/** Temporary files older than this are left-overs of a crash and removed on load, ms. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Version of the key encoding and of the clip format; changing either changes every key. */
const KEY_VERSION = 'vagent-audio-v1 wav-48k-mono-pcm16';

/** Subdirectory of the dynamic clips. */
export const DYNAMIC_DIR = 'dynamic';
/** Marker (in `dynamic/`) of a cache laid out in classes; missing: a legacy cache, migrated on load. */
const LAYOUT_MARKER = '.layout';
/** Marker (in `dynamic/`) an offline prune rewrites after removing clips: a running daemon re-checks its index. */
const PRUNED_MARKER = '.pruned';
/** A dynamic clip's last use is written to its mtime at most this often, ms (1 h). */
export const PERSIST_EVERY_MS = 60 * 60 * 1000;
/** No dynamic clip is evicted within this long of its last use, whatever the keep window, ms. */
export const MIN_GRACE_MS = 60 * 1000;
/** Eviction removes clips until the dynamic bytes are at most this share of the cap. */
export const LOW_WATER = 0.9;
/** Default keep window of dynamic clips (`audio_url_keep_hours`), ms (24 h). */
export const DEFAULT_KEEP_MS = 24 * 60 * 60 * 1000;
/** Delay of the eviction pass after a put pushed the dynamic bytes over the cap, ms. */
const EVICT_DEBOUNCE_MS = 250;
/** Default interval of the periodic eviction pass, ms (10 min). */
const DEFAULT_MAINTENANCE_MS = 10 * 60 * 1000;
/** Least time between two warnings that protected clips alone exceed the cap, ms (1 h). */
const WARN_EVERY_MS = 60 * 60 * 1000;
/** Files stat'ed or removed at once by background passes. */
const IO_BATCH = 64;

/** Combined-clip keys remembered by {@link AudioCache.combinedKeyFor} (oldest dropped first). */
const COMBINED_MEMO_LIMIT = 20_000;
const combinedKeys = new Map<string, string>();

/** Domain separation of clip names from any other use of the audio secret. */
const NAME_PREFIX = 'vagent-audio-name-v1\u0000';

/** sha256 hex of `parts` encoded unambiguously (a JSON array). */
function digest(parts: unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/** True when `sha` has the shape of a cache key or a clip name: 64 lowercase hex characters. */
export function isAudioSha(sha: unknown): sha is string {
  return typeof sha === 'string' && SHA_RE.test(sha);
}

/** The class of a clip: kept for good (`static`) or bounded by the cap (`dynamic`). */
export type ClipClass = 'static' | 'dynamic';

/** Options of an {@link AudioCache}: the bound of its dynamic clips. */
export interface AudioCacheOptions {
  /** Most bytes the dynamic clips may hold (`audio_cache_max_mb` in bytes); 0 or unset = no cap. */
  maxBytes?: number;
  /** A dynamic clip is never evicted within this long of its last use, ms; default 24 h. */
  keepMs?: number;
  /** Clock, epoch ms (tests); default `Date.now`. */
  now?: () => number;
  /** Told (rate-limited, once an hour) when protected clips alone exceed the cap; never given text. */
  onWarning?: (message: string, details: Record<string, number>) => void;
}

/** What an eviction pass did ({@link AudioCache.evict}). */
export interface EvictionResult {
  /** Dynamic clips removed. */
  removed: number;
  /** Their bytes. */
  bytes: number;
  /** Bytes of dynamic clips left. */
  dynamicBytes: number;
}

/** A dynamic clip in the index. */
interface DynamicEntry {
  /** File size, bytes; -1 until the start-up scan has stat'ed it. */
  size: number;
  /** Last use, epoch ms (0: unknown until scanned). */
  lastUse: number;
  /** Last use written to the file's mtime, epoch ms (0: unknown). */
  persisted: number;
}

const isNoEnt = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * Moves the clips of a cache from before classes (in `dir`, no `dynamic/.layout`) into
 * `dynamic/`, then writes the marker. Idempotent and safe to repeat after a crash: clips
 * still in `dir` without the marker are legacy ones. Returns how many clips were moved.
 */
function migrateLegacyLayout(dir: string): number {
  const dyn = path.join(dir, DYNAMIC_DIR);
  const marker = path.join(dyn, LAYOUT_MARKER);
  fs.mkdirSync(dyn, { recursive: true, mode: 0o700 });
  if (fs.existsSync(marker)) return 0;
  let moved = 0;
  for (const name of fs.readdirSync(dir)) {
    if (!FILE_RE.test(name)) continue;
    try {
      fs.renameSync(path.join(dir, name), path.join(dyn, name));
      moved += 1;
    } catch (err) {
      if (!isNoEnt(err)) throw err;
    }
  }
  fs.writeFileSync(marker, 'vagent audio cache layout 2: static clips in the parent directory, dynamic clips here\n', {
    mode: 0o600,
  });
  return moved;
}

/** Removes a crash's left-over temporary file `name` in `dir` when it is old. */
function removeStaleTmp(dir: string, name: string, now: number): void {
  if (!(name.startsWith('.') && name.endsWith(TMP_SUFFIX))) return;
  const tmp = path.join(dir, name);
  try {
    if (now - fs.statSync(tmp).mtimeMs > STALE_TMP_MS) fs.rmSync(tmp, { force: true });
  } catch {
    // gone already
  }
}

/**
 * A directory of WAV clips named by their keys, static and dynamic (see the module comment).
 * Lookups are synchronous; one daemon process writes it (an offline prune may remove expired
 * dynamic clips meanwhile, see {@link pruneAudioCache}).
 */
export class AudioCache {
  /** Cached clips: key → public name (loaded from the directory on first use). */
  private index: Map<string, string> | null = null;
  /** Cached clips: public name → key. */
  private readonly byName = new Map<string, string>();
  /** Dynamic clips, least recently used first (a subset of {@link index}). */
  private readonly dyn = new Map<string, DynamicEntry>();
  /** Bytes of the dynamic clips whose size is known. */
  private dynamicBytes = 0;
  /** Combined clips being built, by key (see {@link AudioCache.combine}). */
  private readonly combining = new Map<string, Promise<string>>();
  /** Keys pinned by each owner (an open session), and how many owners pin each key. */
  private readonly pins = new Map<string, Set<string>>();
  private readonly pinCount = new Map<string, number>();
  /** Deletions of evicted files under way, by key: a new copy is renamed in only after. */
  private readonly deleting = new Map<string, Promise<void>>();
  private scanning: Promise<void> | null = null;
  private evicting: Promise<EvictionResult> | null = null;
  private evictTimer: NodeJS.Timeout | null = null;
  private maintenance: NodeJS.Timeout | null = null;
  private lastWarning = -Infinity;
  /** mtime of `dynamic/.pruned` when last checked (null: none). */
  private prunedSeen: number | null = null;
  readonly #secret: Buffer;
  readonly dir: string;
  /** Directory of the dynamic clips, `<dir>/dynamic`. */
  readonly dynamicDir: string;
  private readonly maxBytes: number;
  private readonly keepMs: number;
  private readonly now: () => number;
  private readonly onWarning: (message: string, details: Record<string, number>) => void;

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
    this.maxBytes = maxBytes;
    this.keepMs = keepMs;
    this.now = options.now ?? Date.now;
    this.onWarning = options.onWarning ?? (() => {});
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /**
   * The key of a clip: sha256 (hex) of the canonical encoding of the key version, the
   * engine's pricing key, the voice and the exact spoken text.
   */
  static keyFor(provider: string, voice: string, spokenText: string): string {
    return digest([KEY_VERSION, 'clip', provider, voice, spokenText]);
  }

  /**
   * The key of the concatenation of clips `shas` (in order) with `gapMs` of silence between.
   * Remembered: a turn's reply is most often a combination seen before (an answer and its
   * re-prompt), and a lookup costs less than hashing again.
   */
  static combinedKeyFor(shas: readonly string[], gapMs: number = DEFAULT_GAP_MS): string {
    const memoKey = `${gapMs}:${shas.join(',')}`;
    let key = combinedKeys.get(memoKey);
    if (key === undefined) {
      key = digest([KEY_VERSION, 'combined', gapMs, ...shas]);
      if (combinedKeys.size >= COMBINED_MEMO_LIMIT) combinedKeys.delete(combinedKeys.keys().next().value!);
      combinedKeys.set(memoKey, key);
    }
    return key;
  }

  /**
   * True when clip `sha` is cached and may be used. For a dynamic clip this is a use: it
   * becomes the most recently used (its mtime re-stamped at most once an hour), and one an
   * offline prune could have removed is checked on disk first (missing: false, forgotten).
   * The directory is listed once, on first use.
   */
  has(sha: string): boolean {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return false;
    const e = this.dyn.get(sha);
    return e === undefined || this.touch(sha, e);
  }

  /** The class of cached clip `sha`, or null when it is not cached. Not a use. */
  classOf(sha: string): ClipClass | null {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return null;
    return this.dyn.has(sha) ? 'dynamic' : 'static';
  }

  /**
   * The public name of clip `key`: HMAC-SHA256 (64 lowercase hex) of the key under the
   * install's secret — what audio URLs carry, so that knowing a text (and so its key) does not
   * give its URL. Looked up for cached clips, computed for others.
   */
  nameOf(key: string): string {
    return this.loaded().get(key) ?? this.mac(key);
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
    return this.fileIn(this.loaded() && this.dyn.has(sha) ? 'dynamic' : 'static', sha);
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
    const file = this.fileIn(cls, sha);
    if (cls === 'dynamic') await fs.promises.mkdir(dir, { recursive: true, mode: 0o700 });
    const tmp = path.join(dir, `.${sha}.${process.pid}.${randomBytes(4).toString('hex')}${TMP_SUFFIX}`);
    const handle = await fs.promises.open(tmp, 'wx', 0o600);
    try {
      await handle.writeFile(wav);
      await handle.sync();
    } catch (err) {
      await handle.close();
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    await handle.close();
    try {
      // An evicted copy still being deleted goes first, or its deletion would remove this one.
      await this.deleting.get(sha);
      await fs.promises.rename(tmp, file);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    try {
      const d = await fs.promises.open(dir, 'r');
      try {
        await d.sync();
      } finally {
        await d.close();
      }
    } catch {
      // best effort: not every platform can open a directory (e.g. Windows)
    }
    this.remember(sha, cls, wav.length);
  }

  /**
   * Makes cached dynamic clip `sha` static (moves its file; its name and URL stay): pre-synthesis
   * asked for a text that was first synthesised live, or a combination's clips all became
   * static. Returns false when the clip is not cached or its file is gone (then forgotten).
   */
  promote(sha: string): boolean {
    if (!isAudioSha(sha) || !this.loaded().has(sha)) return false;
    const e = this.dyn.get(sha);
    if (e === undefined) return true;
    try {
      fs.renameSync(this.fileIn('dynamic', sha), this.fileIn('static', sha));
    } catch (err) {
      if (!isNoEnt(err)) throw err;
      this.forget(sha);
      return false;
    }
    this.dropDynamic(sha, e);
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
      if (this.dyn.has(key) && shas.every((s) => this.classOf(s) === 'static')) this.promote(key);
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
    let set = this.pins.get(owner);
    if (set === undefined) {
      set = new Set();
      this.pins.set(owner, set);
    }
    for (const k of keys) {
      if (set.has(k)) continue;
      set.add(k);
      this.pinCount.set(k, (this.pinCount.get(k) ?? 0) + 1);
    }
  }

  /** Drops every pin of `owner` (its session ended or left memory). Unknown owners are fine. */
  unpin(owner: string): void {
    const set = this.pins.get(owner);
    if (set === undefined) return;
    this.pins.delete(owner);
    for (const k of set) {
      const n = (this.pinCount.get(k) ?? 1) - 1;
      if (n <= 0) this.pinCount.delete(k);
      else this.pinCount.set(k, n);
    }
  }

  /** Owners holding pins (open sessions with clips), for tests and diagnostics. */
  pinOwners(): number {
    return this.pins.size;
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
    this.evicting ??= this.runEviction().finally(() => {
      this.evicting = null;
    });
    return this.evicting;
  }

  /**
   * Starts the background passes: the index's scan of sizes and last uses at once, then an
   * eviction pass every `intervalMs` (default 10 min). Timers do not keep the process alive.
   */
  startMaintenance(intervalMs: number = DEFAULT_MAINTENANCE_MS): void {
    if (this.maintenance) return;
    const pass = () => {
      void this.evict().catch((err: unknown) =>
        this.onWarning(`audio cache eviction failed: ${(err as Error)?.message ?? String(err)}`, {}),
      );
    };
    pass();
    this.maintenance = setInterval(pass, intervalMs);
    this.maintenance.unref();
  }

  /** Stops the background passes; resolves when a pass under way has finished. */
  async stopMaintenance(): Promise<void> {
    if (this.maintenance) clearInterval(this.maintenance);
    if (this.evictTimer) clearTimeout(this.evictTimer);
    this.maintenance = null;
    this.evictTimer = null;
    await this.evicting?.catch(() => undefined);
    await this.scanning?.catch(() => undefined);
  }

  /** Dynamic clips in the index and their bytes (known sizes), as this process sees them. */
  dynamicUsage(): { clips: number; bytes: number } {
    this.loaded();
    return { clips: this.dyn.size, bytes: this.dynamicBytes };
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

  /** HMAC-SHA256 hex of `key` under the secret. */
  private mac(key: string): string {
    return createHmac('sha256', this.#secret).update(NAME_PREFIX).update(key).digest('hex');
  }

  /**
   * A use of dynamic clip `key` (entry `e`): moves it last in LRU order and stamps its mtime,
   * synchronously when an offline prune could have removed it (false and forgotten when it is
   * gone), else at most once an hour in the background.
   */
  private touch(key: string, e: DynamicEntry): boolean {
    const now = this.now();
    if (e.persisted < now - this.keepMs - PERSIST_EVERY_MS) {
      try {
        fs.utimesSync(this.fileIn('dynamic', key), now / 1000, now / 1000);
      } catch (err) {
        if (!isNoEnt(err)) throw err;
        this.forget(key);
        return false;
      }
      e.persisted = now;
    } else if (now - e.persisted >= PERSIST_EVERY_MS) {
      e.persisted = now;
      fs.promises.utimes(this.fileIn('dynamic', key), now / 1000, now / 1000).catch((err: unknown) => {
        if (isNoEnt(err) && this.dyn.get(key) === e) this.forget(key);
      });
    }
    e.lastUse = now;
    this.dyn.delete(key);
    this.dyn.set(key, e);
    return true;
  }

  /** Adds stored clip `key` (class `cls`, `size` bytes) to the index, under its name. */
  private remember(key: string, cls: ClipClass, size: number): void {
    const index = this.loaded();
    if (index.has(key)) {
      // Another put stored it meanwhile: a static copy wins over a dynamic one.
      const e = this.dyn.get(key);
      if (cls === 'static' && e !== undefined) {
        this.dropDynamic(key, e);
        void fs.promises.rm(this.fileIn('dynamic', key), { force: true }).catch(() => undefined);
      } else if (cls === 'dynamic' && e === undefined) {
        void fs.promises.rm(this.fileIn('dynamic', key), { force: true }).catch(() => undefined);
      }
      return;
    }
    const name = this.mac(key);
    index.set(key, name);
    this.byName.set(name, key);
    if (cls === 'dynamic') {
      const now = this.now();
      this.dyn.set(key, { size, lastUse: now, persisted: now });
      this.dynamicBytes += size;
      this.scheduleEviction();
    }
  }

  /** Removes dynamic entry `e` of `key` from the dynamic index (the clip stays indexed). */
  private dropDynamic(key: string, e: DynamicEntry): void {
    this.dyn.delete(key);
    if (e.size > 0) this.dynamicBytes -= e.size;
  }

  /** Drops clip `key` (its file is gone, or it is being evicted) from the index. */
  private forget(key: string): void {
    const name = this.loaded().get(key);
    if (name === undefined) return;
    this.index!.delete(key);
    this.byName.delete(name);
    const e = this.dyn.get(key);
    if (e !== undefined) this.dropDynamic(key, e);
  }

  /** Schedules an eviction pass shortly when the dynamic clips are over the cap. */
  private scheduleEviction(): void {
    if (this.maxBytes <= 0 || this.dynamicBytes <= this.maxBytes || this.evictTimer) return;
    this.evictTimer = setTimeout(() => {
      this.evictTimer = null;
      void this.evict().catch(() => undefined);
    }, EVICT_DEBOUNCE_MS);
    this.evictTimer.unref();
  }

  /** Stats every dynamic clip found on load (size, mtime as last use), then sorts the LRU order. */
  private ensureScanned(): Promise<void> {
    this.loaded();
    this.scanning ??= (async () => {
      const unknown = [...this.dyn.keys()].filter((k) => this.dyn.get(k)!.size < 0);
      for (let i = 0; i < unknown.length; i += IO_BATCH) {
        await Promise.all(
          unknown.slice(i, i + IO_BATCH).map(async (key) => {
            let st: fs.Stats;
            try {
              st = await fs.promises.stat(this.fileIn('dynamic', key));
            } catch (err) {
              if (isNoEnt(err) && this.dyn.get(key)?.size === -1) this.forget(key);
              return;
            }
            const e = this.dyn.get(key);
            if (e === undefined || e.size >= 0) return;
            e.size = st.size;
            this.dynamicBytes += st.size;
            e.lastUse = Math.max(e.lastUse, st.mtimeMs);
            e.persisted = Math.max(e.persisted, st.mtimeMs);
          }),
        );
      }
      const sorted = [...this.dyn].sort((a, b) => a[1].lastUse - b[1].lastUse);
      this.dyn.clear();
      for (const [k, e] of sorted) this.dyn.set(k, e);
    })();
    return this.scanning;
  }

  /** After an offline prune (its marker changed), forgets the dynamic clips whose files are gone. */
  private async resyncIfPruned(): Promise<void> {
    let mtime: number;
    try {
      mtime = (await fs.promises.stat(path.join(this.dynamicDir, PRUNED_MARKER))).mtimeMs;
    } catch {
      return;
    }
    if (mtime === this.prunedSeen) return;
    this.prunedSeen = mtime;
    const listed = new Set(await fs.promises.readdir(this.dynamicDir));
    for (const key of [...this.dyn.keys()]) {
      if (listed.has(`${key}.wav`)) continue;
      try {
        await fs.promises.access(this.fileIn('dynamic', key));
      } catch {
        if (this.dyn.has(key)) this.forget(key);
      }
    }
  }

  private async runEviction(): Promise<EvictionResult> {
    await this.ensureScanned();
    await this.resyncIfPruned();
    const cap = this.maxBytes;
    if (cap <= 0 || this.dynamicBytes <= cap) return { removed: 0, bytes: 0, dynamicBytes: this.dynamicBytes };
    const target = Math.floor(cap * LOW_WATER);
    const keepBefore = this.now() - Math.max(this.keepMs, MIN_GRACE_MS);
    let total = this.dynamicBytes;
    const victims: Array<[string, number]> = [];
    for (const [key, e] of this.dyn) {
      if (total <= target) break;
      // Least recently used first: every clip after one inside the keep window is inside it too.
      if (e.lastUse > keepBefore) break;
      if (this.pinCount.has(key)) continue;
      victims.push([key, e.size]);
      total -= Math.max(0, e.size);
    }
    let bytes = 0;
    for (let i = 0; i < victims.length; i += IO_BATCH) {
      await Promise.all(
        victims.slice(i, i + IO_BATCH).map(async ([key, size]) => {
          // Used again since the pass chose it (between batches): keep it.
          const e = this.dyn.get(key);
          if (e === undefined || e.lastUse > keepBefore || this.pinCount.has(key)) return;
          this.forget(key);
          bytes += Math.max(0, size);
          const job = fs.promises
            .rm(this.fileIn('dynamic', key), { force: true })
            .catch(() => undefined)
            .finally(() => {
              if (this.deleting.get(key) === job) this.deleting.delete(key);
            });
          this.deleting.set(key, job);
          await job;
        }),
      );
    }
    const removed = victims.length;
    if (this.dynamicBytes > cap && this.now() - this.lastWarning >= WARN_EVERY_MS) {
      this.lastWarning = this.now();
      this.onWarning(
        'audio cache: dynamic clips that may not be evicted yet (used within audio_url_keep_hours, or by open sessions) exceed audio_cache_max_mb',
        { dynamic_bytes: this.dynamicBytes, cap_bytes: cap, keep_hours: this.keepMs / 3_600_000 },
      );
    }
    return { removed, bytes, dynamicBytes: this.dynamicBytes };
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
      const pub = this.mac(key);
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
      this.dyn.set(key, { size: -1, lastUse: 0, persisted: 0 });
    }
    try {
      this.prunedSeen = fs.statSync(path.join(this.dynamicDir, PRUNED_MARKER)).mtimeMs;
    } catch {
      this.prunedSeen = null;
    }
    this.index = index;
    return index;
  }
}

/** Clips of one class on disk. */
export interface ClassUsage {
  clips: number;
  bytes: number;
}

/** What {@link audioCacheStats} reports. */
export interface AudioCacheStats {
  static: ClassUsage;
  /** Dynamic clips, with the oldest last use (file mtime, epoch ms; null without clips). */
  dynamic: ClassUsage & { oldestUseMs: number | null };
  /** True for a cache from before classes (not yet migrated): its clips count as dynamic. */
  legacyLayout: boolean;
}

/** `.wav` clips of `dir` with size and mtime (missing dir: none). */
function listClips(dir: string): Array<{ key: string; file: string; size: number; mtimeMs: number }> {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if (isNoEnt(err)) return [];
    throw err;
  }
  const out: Array<{ key: string; file: string; size: number; mtimeMs: number }> = [];
  for (const name of names) {
    const m = FILE_RE.exec(name);
    if (!m) continue;
    const file = path.join(dir, name);
    try {
      const st = fs.statSync(file);
      out.push({ key: m[1]!, file, size: st.size, mtimeMs: st.mtimeMs });
    } catch {
      // removed meanwhile
    }
  }
  return out;
}

/**
 * Static and dynamic clips of the cache in `dir` (`<state-dir>/audio`), read from the disk
 * without changing anything (a missing directory has no clips). For `vagent admin cache stats`;
 * safe beside a running daemon.
 */
export function audioCacheStats(dir: string): AudioCacheStats {
  const legacy = fs.existsSync(dir) && !fs.existsSync(path.join(dir, DYNAMIC_DIR, LAYOUT_MARKER));
  const root = listClips(dir);
  const dyn = listClips(path.join(dir, DYNAMIC_DIR));
  const dynamic = legacy ? [...dyn, ...root] : dyn;
  const sum = (xs: Array<{ size: number }>) => xs.reduce((n, x) => n + x.size, 0);
  return {
    static: legacy ? { clips: 0, bytes: 0 } : { clips: root.length, bytes: sum(root) },
    dynamic: {
      clips: dynamic.length,
      bytes: sum(dynamic),
      oldestUseMs: dynamic.reduce<number | null>((m, c) => (m === null || c.mtimeMs < m ? c.mtimeMs : m), null),
    },
    legacyLayout: legacy,
  };
}

/** Options of {@link pruneAudioCache}. */
export interface PruneOptions {
  /** The cap, bytes (0 = no cap: nothing is removed). */
  capBytes: number;
  /** The keep window (`audio_url_keep_hours`), ms. */
  keepMs: number;
  /** Report what would be removed, remove nothing. */
  dryRun?: boolean;
  /** Clock, epoch ms (tests). */
  now?: () => number;
}

/** What {@link pruneAudioCache} did (or, dry, would do). */
export interface PruneResult {
  /** Dynamic clips removed (or that would be). */
  removed: number;
  /** Their bytes. */
  bytes: number;
  /** Dynamic bytes before and after. */
  dynamicBytesBefore: number;
  dynamicBytesAfter: number;
  /** Dynamic clips kept although over the cap: used within the keep window (+ 2 h, see below). */
  keptRecent: number;
}

/**
 * Evicts dynamic clips of the cache in `dir` down to 90% of `capBytes`, least recently used
 * (oldest mtime) first, from a process other than the daemon (`vagent admin cache prune`).
 * It cannot see a running daemon's open sessions, so it removes only clips whose last use
 * (mtime, which the daemon writes at most once an hour) is older than the keep window plus
 * 2 hours; each file is re-checked just before it is removed. It then rewrites
 * `dynamic/.pruned`, so a running daemon forgets the removed clips; a daemon re-checks on
 * disk any clip it last stamped over `keep + 1 h` ago before handing out its URL. A legacy
 * cache is migrated first (not in a dry run, which counts its clips as dynamic). Nothing
 * changes with `dryRun`.
 *
 * @throws Error from the filesystem (other than files already gone)
 */
export async function pruneAudioCache(dir: string, options: PruneOptions): Promise<PruneResult> {
  const now = options.now ?? Date.now;
  if (!options.dryRun && fs.existsSync(dir)) migrateLegacyLayout(dir);
  const stats = audioCacheStats(dir);
  const clips = (
    stats.legacyLayout ? [...listClips(path.join(dir, DYNAMIC_DIR)), ...listClips(dir)] : listClips(path.join(dir, DYNAMIC_DIR))
  ).sort((a, b) => a.mtimeMs - b.mtimeMs);
  const before = clips.reduce((n, c) => n + c.size, 0);
  const result: PruneResult = { removed: 0, bytes: 0, dynamicBytesBefore: before, dynamicBytesAfter: before, keptRecent: 0 };
  if (options.capBytes <= 0 || before <= options.capBytes) return result;
  const target = Math.floor(options.capBytes * LOW_WATER);
  const expiredBefore = now() - options.keepMs - 2 * PERSIST_EVERY_MS;
  let total = before;
  for (const c of clips) {
    if (total <= target) break;
    if (c.mtimeMs >= expiredBefore) {
      result.keptRecent += 1;
      continue;
    }
    if (!options.dryRun) {
      try {
        // Used by the daemon since it was listed: keep it.
        if (fs.statSync(c.file).mtimeMs >= expiredBefore) {
          result.keptRecent += 1;
          continue;
        }
        await fs.promises.rm(c.file);
      } catch (err) {
        if (!isNoEnt(err)) throw err;
        total -= c.size;
        continue;
      }
    }
    result.removed += 1;
    result.bytes += c.size;
    total -= c.size;
  }
  result.dynamicBytesAfter = total;
  if (!options.dryRun && result.removed > 0) {
    fs.writeFileSync(path.join(dir, DYNAMIC_DIR, PRUNED_MARKER), `${new Date(now()).toISOString()}\n`, { mode: 0o600 });
  }
  return result;
}
