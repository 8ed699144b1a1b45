/**
 * The bound of the audio cache's dynamic clips (docs/api-decisions.md "Audio URLs"): the `audio_cache_max_mb`
 * setting, or, unset, a default relative to the disk that holds the state dir.
 *
 * Default rule: 5% of the size of the filesystem holding the state dir (`statfs`: blocks ×
 * block size), clamped to [256 MiB, 16 GiB]; 1 GiB when the filesystem cannot be measured.
 */
import fs from 'node:fs';

/** 1 MiB, bytes: the unit of `audio_cache_max_mb`. */
export const MIB = 1024 * 1024;
/** Share of the state dir's filesystem the default cap allows dynamic clips. */
export const DEFAULT_CAP_DISK_SHARE = 0.05;
/** Smallest default cap, bytes (256 MiB). */
export const DEFAULT_CAP_MIN_BYTES = 256 * MIB;
/** Largest default cap, bytes (16 GiB). */
export const DEFAULT_CAP_MAX_BYTES = 16 * 1024 * MIB;
/** Default cap when the filesystem cannot be measured, bytes (1 GiB). */
export const DEFAULT_CAP_UNKNOWN_DISK_BYTES = 1024 * MIB;

/** The cap on dynamic clips and where it comes from. */
export interface AudioCacheCap {
  /** Most bytes dynamic clips may hold; 0 = no cap. */
  bytes: number;
  /** `setting`: `audio_cache_max_mb`; `disk`: the disk-relative default. */
  source: 'setting' | 'disk';
  /** Size of the state dir's filesystem, bytes, when the default was worked out from it (else null). */
  diskBytes: number | null;
}

/**
 * The cap on dynamic clips: `maxMb` MiB when set (0 = no cap), else 5% of the filesystem
 * holding `stateDir`, clamped to [256 MiB, 16 GiB] (1 GiB when `statfs` fails).
 *
 * @param maxMb    the `audio_cache_max_mb` setting (MiB), or undefined when unset
 * @param stateDir the state dir (it, or its nearest existing parent, is measured)
 */
export function resolveAudioCacheCap(maxMb: number | undefined, stateDir: string): AudioCacheCap {
  if (maxMb !== undefined) return { bytes: Math.floor(maxMb * MIB), source: 'setting', diskBytes: null };
  let diskBytes: number | null = null;
  try {
    const st = fs.statfsSync(stateDir);
    diskBytes = Number(st.blocks) * Number(st.bsize);
  } catch {
    diskBytes = null;
  }
  if (diskBytes === null || !Number.isFinite(diskBytes) || diskBytes <= 0) {
    return { bytes: DEFAULT_CAP_UNKNOWN_DISK_BYTES, source: 'disk', diskBytes: null };
  }
  const share = Math.floor(diskBytes * DEFAULT_CAP_DISK_SHARE);
  return { bytes: Math.min(DEFAULT_CAP_MAX_BYTES, Math.max(DEFAULT_CAP_MIN_BYTES, share)), source: 'disk', diskBytes };
}
