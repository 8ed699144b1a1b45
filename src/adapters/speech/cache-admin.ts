/**
 * The audio cache seen from outside the daemon (`vagent admin cache stats|prune`): what each
 * class of clips holds on disk, and an offline eviction of dynamic clips that is safe beside a
 * running daemon (see "How long a URL answers" in docs/api-decisions.md, and README.md).
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  DYNAMIC_DIR,
  isNoEnt,
  LAYOUT_MARKER,
  listClips,
  LOW_WATER,
  migrateLegacyLayout,
  PERSIST_EVERY_MS,
  PRUNED_MARKER,
} from './cache-disk.js';

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
