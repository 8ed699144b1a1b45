/**
 * The dynamic clips of the audio cache (`<dir>/dynamic/<key>.wav`): their index in least
 * recently used order with sizes and last uses, the pins of open sessions, and eviction down to
 * the cap — debounced after a put, periodic in the background, and never of a clip used within
 * the keep window (or the last minute) or pinned (see "How long a URL answers" in
 * docs/api-decisions.md).
 *
 * Last uses are kept in memory and written to the file's mtime at most once an hour per clip,
 * asynchronously, so a restart keeps an approximate LRU order. A clip last persisted more than
 * `keep + 1 h` ago could have been removed by an offline prune (which removes only clips whose
 * mtime is older than `keep + 2 h`): using such a clip first re-stamps its mtime synchronously,
 * which also checks that it still exists.
 *
 * The whole index (keys and public names of both classes) is {@link AudioCache}'s; this class
 * reaches it through the {@link ClipIndex} it is given.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isNoEnt, LOW_WATER, PERSIST_EVERY_MS, PRUNED_MARKER } from './cache-disk.js';

/** No dynamic clip is evicted within this long of its last use, whatever the keep window, ms. */
export const MIN_GRACE_MS = 60 * 1000;
/** Default keep window of dynamic clips (`audio_url_keep_hours`), ms (24 h). */
export const DEFAULT_KEEP_MS = 24 * 60 * 60 * 1000;
/** Delay of the eviction pass after a put pushed the dynamic bytes over the cap, ms. */
const EVICT_DEBOUNCE_MS = 250;
/** Default interval of the periodic eviction pass, ms (10 min). */
export const DEFAULT_MAINTENANCE_MS = 10 * 60 * 1000;
/** Least time between two warnings that protected clips alone exceed the cap, ms (1 h). */
const WARN_EVERY_MS = 60 * 60 * 1000;
/** Files stat'ed or removed at once by background passes. */
const IO_BATCH = 64;

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
export interface DynamicEntry {
  /** File size, bytes; -1 until the start-up scan has stat'ed it. */
  size: number;
  /** Last use, epoch ms (0: unknown until scanned). */
  lastUse: number;
  /** Last use written to the file's mtime, epoch ms (0: unknown). */
  persisted: number;
}

/** The cache's whole index, as the dynamic clips need it. */
export interface ClipIndex {
  /** Loads the index from the directories when not loaded yet. */
  load(): void;
  /** Drops clip `key` from the index (its file is gone, or it is being evicted), dynamic entry included. */
  forget(key: string): void;
}

/** The bound of the dynamic clips and its reporting. */
export interface DynamicClipsOptions {
  /** Most bytes the dynamic clips may hold; 0 = no cap. */
  maxBytes: number;
  /** A dynamic clip is never evicted within this long of its last use, ms. */
  keepMs: number;
  /** Clock, epoch ms. */
  now: () => number;
  /** Told (rate-limited, once an hour) when protected clips alone exceed the cap. */
  onWarning: (message: string, details: Record<string, number>) => void;
}

/** The dynamic clips of one cache directory: LRU index, pins and eviction (see the module comment). */
export class DynamicClips {
  /** Dynamic clips, least recently used first. */
  private readonly entries = new Map<string, DynamicEntry>();
  /** Bytes of the dynamic clips whose size is known. */
  private bytes = 0;
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

  /**
   * @param dir     the directory of the dynamic clips, `<cache>/dynamic`
   * @param index   the cache's whole index
   * @param options the cap, keep window, clock and warnings
   */
  constructor(
    readonly dir: string,
    private readonly index: ClipIndex,
    private readonly options: DynamicClipsOptions,
  ) {}

  /** The file of dynamic clip `key`. */
  fileOf(key: string): string {
    return path.join(this.dir, `${key}.wav`);
  }

  /** True when `key` is a dynamic clip in the index. */
  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The entry of dynamic clip `key`, or undefined when it is not one. */
  entry(key: string): DynamicEntry | undefined {
    return this.entries.get(key);
  }

  /** The deletion under way of evicted clip `key`, if any: a new copy is renamed in only after. */
  deletion(key: string): Promise<void> | undefined {
    return this.deleting.get(key);
  }

  /** Adds a clip found on load: its size and last use come from the background scan. */
  addFound(key: string): void {
    this.entries.set(key, { size: -1, lastUse: 0, persisted: 0 });
  }

  /** Notes the offline prune's marker as seen on load. */
  notePruneMarker(): void {
    try {
      this.prunedSeen = fs.statSync(path.join(this.dir, PRUNED_MARKER)).mtimeMs;
    } catch {
      this.prunedSeen = null;
    }
  }

  /** Adds a clip just stored (`size` bytes, used now); schedules an eviction when over the cap. */
  addStored(key: string, size: number): void {
    const now = this.options.now();
    this.entries.set(key, { size, lastUse: now, persisted: now });
    this.bytes += size;
    this.scheduleEviction();
  }

  /** Removes `key` from the dynamic index (the clip may stay indexed, as a static one). */
  drop(key: string): void {
    const e = this.entries.get(key);
    if (e === undefined) return;
    this.entries.delete(key);
    if (e.size > 0) this.bytes -= e.size;
  }

  /**
   * A use of dynamic clip `key` (entry `e`): moves it last in LRU order and stamps its mtime,
   * synchronously when an offline prune could have removed it (false and forgotten when it is
   * gone), else at most once an hour in the background.
   */
  touch(key: string, e: DynamicEntry): boolean {
    const now = this.options.now();
    if (e.persisted < now - this.options.keepMs - PERSIST_EVERY_MS) {
      try {
        fs.utimesSync(this.fileOf(key), now / 1000, now / 1000);
      } catch (err) {
        if (!isNoEnt(err)) throw err;
        this.index.forget(key);
        return false;
      }
      e.persisted = now;
    } else if (now - e.persisted >= PERSIST_EVERY_MS) {
      e.persisted = now;
      fs.promises.utimes(this.fileOf(key), now / 1000, now / 1000).catch((err: unknown) => {
        if (isNoEnt(err) && this.entries.get(key) === e) this.index.forget(key);
      });
    }
    e.lastUse = now;
    this.entries.delete(key);
    this.entries.set(key, e);
    return true;
  }

  /** Dynamic clips in the index and their bytes (known sizes). */
  usage(): { clips: number; bytes: number } {
    return { clips: this.entries.size, bytes: this.bytes };
  }

  /** Pins `keys` for `owner` (see {@link AudioCache.pin}). */
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

  /** Drops every pin of `owner`. Unknown owners are fine. */
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

  /** Owners holding pins. */
  pinOwners(): number {
    return this.pins.size;
  }

  /** One eviction pass at a time (see {@link AudioCache.evict}). */
  evict(): Promise<EvictionResult> {
    this.evicting ??= this.runEviction().finally(() => {
      this.evicting = null;
    });
    return this.evicting;
  }

  /** Starts the background passes (see {@link AudioCache.startMaintenance}). */
  startMaintenance(intervalMs: number): void {
    if (this.maintenance) return;
    const pass = () => {
      void this.evict().catch((err: unknown) =>
        this.options.onWarning(`audio cache eviction failed: ${(err as Error)?.message ?? String(err)}`, {}),
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

  /** Schedules an eviction pass shortly when the dynamic clips are over the cap. */
  private scheduleEviction(): void {
    const cap = this.options.maxBytes;
    if (cap <= 0 || this.bytes <= cap || this.evictTimer) return;
    this.evictTimer = setTimeout(() => {
      this.evictTimer = null;
      void this.evict().catch(() => undefined);
    }, EVICT_DEBOUNCE_MS);
    this.evictTimer.unref();
  }

  /** Stats every dynamic clip found on load (size, mtime as last use), then sorts the LRU order. */
  private ensureScanned(): Promise<void> {
    this.index.load();
    this.scanning ??= (async () => {
      const unknown = [...this.entries.keys()].filter((k) => this.entries.get(k)!.size < 0);
      for (let i = 0; i < unknown.length; i += IO_BATCH) {
        await Promise.all(
          unknown.slice(i, i + IO_BATCH).map(async (key) => {
            let st: fs.Stats;
            try {
              st = await fs.promises.stat(this.fileOf(key));
            } catch (err) {
              if (isNoEnt(err) && this.entries.get(key)?.size === -1) this.index.forget(key);
              return;
            }
            const e = this.entries.get(key);
            if (e === undefined || e.size >= 0) return;
            e.size = st.size;
            this.bytes += st.size;
            e.lastUse = Math.max(e.lastUse, st.mtimeMs);
            e.persisted = Math.max(e.persisted, st.mtimeMs);
          }),
        );
      }
      const sorted = [...this.entries].sort((a, b) => a[1].lastUse - b[1].lastUse);
      this.entries.clear();
      for (const [k, e] of sorted) this.entries.set(k, e);
    })();
    return this.scanning;
  }

  /** After an offline prune (its marker changed), forgets the dynamic clips whose files are gone. */
  private async resyncIfPruned(): Promise<void> {
    let mtime: number;
    try {
      mtime = (await fs.promises.stat(path.join(this.dir, PRUNED_MARKER))).mtimeMs;
    } catch {
      return;
    }
    if (mtime === this.prunedSeen) return;
    this.prunedSeen = mtime;
    const listed = new Set(await fs.promises.readdir(this.dir));
    for (const key of [...this.entries.keys()]) {
      if (listed.has(`${key}.wav`)) continue;
      try {
        await fs.promises.access(this.fileOf(key));
      } catch {
        if (this.entries.has(key)) this.index.forget(key);
      }
    }
  }

  private async runEviction(): Promise<EvictionResult> {
    await this.ensureScanned();
    await this.resyncIfPruned();
    const { maxBytes: cap, keepMs } = this.options;
    if (cap <= 0 || this.bytes <= cap) return { removed: 0, bytes: 0, dynamicBytes: this.bytes };
    const target = Math.floor(cap * LOW_WATER);
    const keepBefore = this.options.now() - Math.max(keepMs, MIN_GRACE_MS);
    let total = this.bytes;
    const victims: Array<[string, number]> = [];
    for (const [key, e] of this.entries) {
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
          const e = this.entries.get(key);
          if (e === undefined || e.lastUse > keepBefore || this.pinCount.has(key)) return;
          this.index.forget(key);
          bytes += Math.max(0, size);
          const job = fs.promises
            .rm(this.fileOf(key), { force: true })
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
    if (this.bytes > cap && this.options.now() - this.lastWarning >= WARN_EVERY_MS) {
      this.lastWarning = this.options.now();
      this.options.onWarning(
        'audio cache: dynamic clips that may not be evicted yet (used within audio_url_keep_hours, or by open sessions) exceed audio_cache_max_mb',
        { dynamic_bytes: this.bytes, cap_bytes: cap, keep_hours: keepMs / 3_600_000 },
      );
    }
    return { removed, bytes, dynamicBytes: this.bytes };
  }
}
