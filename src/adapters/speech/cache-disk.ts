/**
 * The audio cache's layout on disk, shared by the daemon's {@link AudioCache} and the offline
 * `vagent admin cache` commands: static clips as `<dir>/<key>.wav`, dynamic clips as
 * `<dir>/dynamic/<key>.wav`, the markers in `dynamic/`, the migration of a cache from before the
 * two classes, and the atomic write of a clip (temporary file, fsync, rename, fsync of the
 * directory: a crash leaves either the whole clip or nothing under its name).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/** A clip file's name: its key and `.wav`. */
export const FILE_RE = /^([0-9a-f]{64})\.wav$/;
const TMP_SUFFIX = '.tmp';
/** Temporary files older than this are left-overs of a crash and removed on load, ms. */
const STALE_TMP_MS = 60 * 60 * 1000;

/** Subdirectory of the dynamic clips. */
export const DYNAMIC_DIR = 'dynamic';
/** Marker (in `dynamic/`) of a cache laid out in classes; missing: a legacy cache, migrated on load. */
export const LAYOUT_MARKER = '.layout';
/** Marker (in `dynamic/`) an offline prune rewrites after removing clips: a running daemon re-checks its index. */
export const PRUNED_MARKER = '.pruned';
/** A dynamic clip's last use is written to its mtime at most this often, ms (1 h). */
export const PERSIST_EVERY_MS = 60 * 60 * 1000;
/** Eviction removes clips until the dynamic bytes are at most this share of the cap. */
export const LOW_WATER = 0.9;

/** True for the error of a file that does not exist. */
export const isNoEnt = (err: unknown) => (err as NodeJS.ErrnoException)?.code === 'ENOENT';

/**
 * Moves the clips of a cache from before classes (in `dir`, no `dynamic/.layout`) into
 * `dynamic/`, then writes the marker. Idempotent and safe to repeat after a crash: clips
 * still in `dir` without the marker are legacy ones. Returns how many clips were moved.
 */
export function migrateLegacyLayout(dir: string): number {
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
export function removeStaleTmp(dir: string, name: string, now: number): void {
  if (!(name.startsWith('.') && name.endsWith(TMP_SUFFIX))) return;
  const tmp = path.join(dir, name);
  try {
    if (now - fs.statSync(tmp).mtimeMs > STALE_TMP_MS) fs.rmSync(tmp, { force: true });
  } catch {
    // gone already
  }
}

/** A clip file found on disk. */
export interface ListedClip {
  key: string;
  file: string;
  size: number;
  mtimeMs: number;
}

/** `.wav` clips of `dir` with size and mtime (missing dir: none). */
export function listClips(dir: string): ListedClip[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch (err) {
    if (isNoEnt(err)) return [];
    throw err;
  }
  const out: ListedClip[] = [];
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
 * Writes clip `sha` as `<dir>/<sha>.wav` atomically: a temporary file in `dir`, synced, renamed
 * (after the promise `beforeRename` returns, when any, has settled), then `dir` synced. The writes and syncs run
 * on libuv's thread pool, so the event loop never stalls on the disk.
 *
 * @throws Error from the filesystem when writing or renaming fails (the temporary file removed)
 */
export async function writeClipAtomic(
  dir: string,
  sha: string,
  wav: Uint8Array,
  beforeRename?: () => Promise<void> | undefined,
): Promise<void> {
  const file = path.join(dir, `${sha}.wav`);
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
    await beforeRename?.();
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
}
