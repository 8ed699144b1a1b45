/**
 * The content-addressed audio cache (DESIGN.md §6: "every static text … is synthesised when
 * the agent is applied or a session opens, so most replies are cache hits"; §4
 * `GET /v1/audio/{name}.wav`). One 48 kHz mono PCM16 WAV per key, stored as
 * `<dir>/<key>.wav`, where the key is a SHA-256 of what was spoken, by which engine and
 * voice — so a key is computed without touching the disk, and a file, once written, never
 * changes.
 *
 * Keys stay inside the daemon: anyone can compute one from a guessed text. Clients see a
 * clip's *name*, HMAC-SHA256 of its key under the install's secret (`<state-dir>/audio.key`),
 * which only this install can compute; the audio route serves names, never keys. The files
 * keep their key names, so a cache from before names existed serves as is, and a new secret
 * revokes every URL without a clip being synthesised again.
 *
 * Writes are atomic (temporary file, fsync, rename, fsync of the directory): a crash leaves
 * either the whole clip or nothing under its name.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { concatWavs, DEFAULT_GAP_MS } from './wav.js';

const SHA_RE = /^[0-9a-f]{64}$/;
const FILE_RE = /^([0-9a-f]{64})\.wav$/;
const TMP_SUFFIX = '.tmp';
/** Temporary files older than this are left-overs of a crash and removed on load, ms. */
const STALE_TMP_MS = 60 * 60 * 1000;
/** Version of the key encoding and of the clip format; changing either changes every key. */
const KEY_VERSION = 'vagent-audio-v1 wav-48k-mono-pcm16';

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

/** A directory of WAV clips named by their keys. Synchronous; one daemon process writes it. */
export class AudioCache {
  /** Cached clips: key → public name (loaded from the directory on first use). */
  private index: Map<string, string> | null = null;
  /** Cached clips: public name → key. */
  private readonly byName = new Map<string, string>();
  /** Combined clips being built, by key (see {@link AudioCache.combine}). */
  private readonly combining = new Map<string, Promise<string>>();
  readonly #secret: Buffer;
  readonly dir: string;

  /**
   * @param dir    the cache directory, normally `<state-dir>/audio`; created (mode 0700,
   *               parents included) when missing
   * @param secret the install's audio secret (`loadAudioKey`), at least 32 bytes: keys the
   *               public names of clips ({@link AudioCache.nameOf})
   * @throws RangeError for a secret shorter than 32 bytes; Error from the filesystem when
   *         `dir` cannot be created
   */
  constructor(dir: string, secret: Uint8Array) {
    if (secret.length < 32) throw new RangeError('the audio secret must be at least 32 bytes');
    this.#secret = Buffer.from(secret);
    this.dir = path.resolve(dir);
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

  /** True when clip `sha` is cached. The directory is listed once, on first use. */
  has(sha: string): boolean {
    return isAudioSha(sha) && this.loaded().has(sha);
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
   * that name (a key, even of a cached clip, is not a name).
   */
  fileOfName(name: string): string | null {
    if (!isAudioSha(name)) return null;
    this.loaded();
    const key = this.byName.get(name);
    return key === undefined ? null : this.path(key);
  }

  /** The file of clip `sha` (whether or not it exists yet), or null when `sha` is not a key. */
  path(sha: string): string | null {
    return isAudioSha(sha) ? path.join(this.dir, `${sha}.wav`) : null;
  }

  /**
   * Stores clip `sha` atomically (a temporary file, synced, renamed, the directory synced); a
   * clip already stored is left as it is (idempotent). The writes and syncs run on libuv's
   * thread pool, so storing a clip never stalls the event loop on the disk.
   *
   * @throws RangeError when `sha` is not a key; Error from the filesystem when writing fails
   */
  async put(sha: string, wav: Uint8Array): Promise<void> {
    const file = this.path(sha);
    if (file === null) throw new RangeError('audio cache key must be 64 lowercase hex characters');
    if (this.has(sha)) return;
    const tmp = path.join(this.dir, `.${sha}.${process.pid}.${randomBytes(4).toString('hex')}${TMP_SUFFIX}`);
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
      await fs.promises.rename(tmp, file);
    } catch (err) {
      await fs.promises.rm(tmp, { force: true });
      throw err;
    }
    try {
      const dir = await fs.promises.open(this.dir, 'r');
      try { await dir.sync(); } finally { await dir.close(); }
    } catch {
      // best effort: not every platform can open a directory (e.g. Windows)
    }
    this.remember(sha);
  }

  /** The WAV bytes of clip `sha`, or null when `sha` is not a key or not cached. */
  read(sha: string): Buffer | null {
    const file = this.path(sha);
    if (file === null) return null;
    try {
      return fs.readFileSync(file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        this.forget(sha);
        return null;
      }
      throw err;
    }
  }

  /**
   * One clip playing `shas` in order, {@link DEFAULT_GAP_MS} apart, stored under
   * {@link AudioCache.combinedKeyFor}`(shas)` the first time and reused after. A single clip is
   * its own combination.
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
    if (this.has(key)) return key;
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
   * single clip being its own combination), else null; never touches the disk.
   */
  combinedIfCached(shas: readonly string[]): string | null {
    if (shas.length === 0 || !shas.every((s) => this.has(s))) return null;
    if (shas.length === 1) return shas[0]!;
    const key = AudioCache.combinedKeyFor(shas);
    return this.has(key) ? key : null;
  }

  /** Joins `shas` and stores the result as clip `key`; returns `key`. */
  private async build(key: string, shas: readonly string[]): Promise<string> {
    const wavs = shas.map((sha) => {
      const wav = this.read(sha);
      if (wav === null) throw new Error(`audio clip ${sha} is not in the cache`);
      return wav;
    });
    await this.put(key, concatWavs(wavs, DEFAULT_GAP_MS));
    return key;
  }

  /** How many clips the cache holds and their total size in bytes (lists the directory). */
  stats(): { files: number; bytes: number } {
    let files = 0;
    let bytes = 0;
    for (const name of fs.readdirSync(this.dir)) {
      if (!FILE_RE.test(name)) continue;
      try {
        bytes += fs.statSync(path.join(this.dir, name)).size;
        files += 1;
      } catch {
        // removed meanwhile
      }
    }
    return { files, bytes };
  }

  /** HMAC-SHA256 hex of `key` under the secret. */
  private mac(key: string): string {
    return createHmac('sha256', this.#secret).update(NAME_PREFIX).update(key).digest('hex');
  }

  /** Adds cached clip `key` to the index, under its name. */
  private remember(key: string): void {
    const index = this.loaded();
    if (index.has(key)) return;
    const name = this.mac(key);
    index.set(key, name);
    this.byName.set(name, key);
  }

  /** Drops clip `key` (its file is gone) from the index. */
  private forget(key: string): void {
    const name = this.loaded().get(key);
    if (name === undefined) return;
    this.index!.delete(key);
    this.byName.delete(name);
  }

  /**
   * The in-memory index, loaded from the directory on first use (stale temp files removed):
   * each clip file's key with its public name (one HMAC per file, once per process).
   */
  private loaded(): Map<string, string> {
    if (this.index) return this.index;
    const index = new Map<string, string>();
    const now = Date.now();
    for (const name of fs.readdirSync(this.dir)) {
      const m = FILE_RE.exec(name);
      if (m) {
        const pub = this.mac(m[1]!);
        index.set(m[1]!, pub);
        this.byName.set(pub, m[1]!);
      }
      else if (name.startsWith('.') && name.endsWith(TMP_SUFFIX)) {
        const tmp = path.join(this.dir, name);
        try {
          if (now - fs.statSync(tmp).mtimeMs > STALE_TMP_MS) fs.rmSync(tmp, { force: true });
        } catch {
          // gone already
        }
      }
    }
    this.index = index;
    return index;
  }
}
