/**
 * `vagent admin cache stats|prune` (docs/api-decisions.md "Audio URLs"): the audio cache of a state dir, read and
 * pruned from the disk directly, so they work with or without a running daemon. They never
 * open the database.
 */
import { formatBytes } from '../../config/notices.js';
import { statePaths } from '../../config/paths.js';
import { audioCacheStats, pruneAudioCache, type AudioCacheStats, type PruneResult } from '../../adapters/speech/cache-admin.js';
import { resolveAudioCacheCap, type AudioCacheCap } from '../../adapters/speech/cache-limits.js';
import type { CommandContext } from '../context.js';
import { dim, formatTime, hint, ok, plural, printFields, printJson, say } from '../output.js';
import { existingStateSettings, type AdminFlags } from './admin.js';

/** Flags of `vagent admin cache prune`. */
export interface CachePruneFlags extends AdminFlags {
  dryRun?: boolean;
}

/** The settings of `flags` and the state dir's audio cache; refuses a state dir that does not exist. */
function cacheOf(flags: AdminFlags): { dir: string; cap: AudioCacheCap; keepHours: number } {
  const settings = existingStateSettings(flags);
  return {
    dir: statePaths(settings.state_dir).audio,
    cap: resolveAudioCacheCap(settings.audio_cache_max_mb, settings.state_dir),
    keepHours: settings.audio_url_keep_hours,
  };
}

function capText(cap: AudioCacheCap): string {
  if (cap.bytes === 0) return 'none (audio_cache_max_mb: 0)';
  if (cap.source === 'setting') return `${formatBytes(cap.bytes)} (audio_cache_max_mb)`;
  const disk =
    cap.diskBytes === null ? 'the disk could not be measured' : `5% of the ${formatBytes(cap.diskBytes)} disk, within 256 MiB–16 GiB`;
  return `${formatBytes(cap.bytes)} (default: ${disk}; set audio_cache_max_mb to change)`;
}

/** The JSON of the cap. */
function capJson(cap: AudioCacheCap) {
  return { bytes: cap.bytes, source: cap.source, disk_bytes: cap.diskBytes };
}

/**
 * `vagent admin cache stats [--json]`: static and dynamic clips (count, bytes), the cap and
 * where it comes from, the bytes over it, the keep window and the oldest last use of a
 * dynamic clip. Reads only; a missing audio directory (speech off, nothing said yet) is empty.
 * @throws CliError (exit 1) for a state dir that does not exist; ConfigError for bad settings.
 */
export function cacheStats(ctx: CommandContext, flags: AdminFlags): void {
  const { dir, cap, keepHours } = cacheOf(flags);
  const s: AudioCacheStats = audioCacheStats(dir);
  const over = cap.bytes > 0 ? Math.max(0, s.dynamic.bytes - cap.bytes) : 0;
  if (ctx.json) {
    return printJson({
      dir,
      static: { clips: s.static.clips, bytes: s.static.bytes },
      dynamic: {
        clips: s.dynamic.clips,
        bytes: s.dynamic.bytes,
        oldest_use_at: s.dynamic.oldestUseMs === null ? null : new Date(s.dynamic.oldestUseMs).toISOString(),
      },
      cap: capJson(cap),
      over_cap_bytes: over,
      keep_hours: keepHours,
      legacy_layout: s.legacyLayout,
    });
  }
  printFields([
    ['audio cache', dir],
    ['static clips', `${s.static.clips} (${formatBytes(s.static.bytes)}) ${dim('pre-synthesised agent texts: kept')}`],
    ['dynamic clips', `${s.dynamic.clips} (${formatBytes(s.dynamic.bytes)}) ${dim('synthesised live: bounded by the cap')}`],
    ['cap', capText(cap)],
    ['over the cap', formatBytes(over)],
    ['keep window', `${keepHours} h after a clip's last use (audio_url_keep_hours)`],
    ['oldest last use', s.dynamic.oldestUseMs === null ? dim('-') : formatTime(s.dynamic.oldestUseMs / 1000)],
  ]);
  if (s.legacyLayout && s.dynamic.clips > 0)
    hint(
      "a cache from an earlier vagent: its clips count as dynamic until the daemon starts and pre-synthesis keeps the agents' static ones",
    );
  if (over > 0) hint('the daemon evicts down to the cap in the background; clips used within the keep window or by open sessions are kept');
}

/**
 * `vagent admin cache prune [--dry-run] [--json]`: evicts dynamic clips down to 90% of the cap
 * now, least recently used first. From outside the daemon it cannot see open sessions, so it
 * removes only clips unused for `audio_url_keep_hours` + 2 hours (see `pruneAudioCache`). A
 * running daemon notices and never hands out a removed clip's URL.
 * @throws CliError (exit 1) for a state dir that does not exist; ConfigError for bad settings.
 */
export async function cachePrune(ctx: CommandContext, flags: CachePruneFlags): Promise<void> {
  const { dir, cap, keepHours } = cacheOf(flags);
  const dryRun = flags.dryRun === true;
  const r: PruneResult = await pruneAudioCache(dir, { capBytes: cap.bytes, keepMs: keepHours * 3_600_000, dryRun });
  if (ctx.json) {
    return printJson({
      dry_run: dryRun,
      removed: r.removed,
      removed_bytes: r.bytes,
      dynamic_bytes_before: r.dynamicBytesBefore,
      dynamic_bytes_after: r.dynamicBytesAfter,
      kept_recent: r.keptRecent,
      cap: capJson(cap),
      keep_hours: keepHours,
    });
  }
  if (cap.bytes === 0) {
    say('No cap on the audio cache (audio_cache_max_mb: 0): nothing to prune.');
    return;
  }
  const verb = dryRun ? 'would remove' : 'removed';
  if (r.removed === 0 && r.dynamicBytesBefore <= cap.bytes) {
    ok(`dynamic clips hold ${formatBytes(r.dynamicBytesBefore)}, within the cap of ${formatBytes(cap.bytes)}: nothing to prune`);
    return;
  }
  (dryRun ? say : ok)(
    `${verb} ${plural(r.removed, 'dynamic clip')} (${formatBytes(r.bytes)}); dynamic clips ${dryRun ? 'would hold' : 'now hold'} ${formatBytes(r.dynamicBytesAfter)} of a ${formatBytes(cap.bytes)} cap`,
  );
  if (r.keptRecent > 0) {
    hint(`${plural(r.keptRecent, 'clip')} kept: used within ${keepHours} h + 2 h (audio_url_keep_hours; their URLs may still be in use)`);
  }
  if (dryRun) hint('nothing was removed (--dry-run); run without it to prune');
}
