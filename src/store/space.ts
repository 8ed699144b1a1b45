/**
 * Disk space of the state database (README.md "What grows on disk, and what bounds it"): SQLite's `auto_vacuum` mode, the
 * conversion of a database created without it, the background reclaim of free pages, and the
 * figures of `vagent admin db stats`.
 *
 * A database created by this vagent is `auto_vacuum = INCREMENTAL` (set before its first table,
 * see `Store.open`): pages freed by deletes (expired idempotency records, retention purges) go
 * to SQLite's free list, and {@link reclaimFreePages} gives them back to the file system a few
 * at a time. A database created earlier is `NONE` (its free pages are reused, never given
 * back) until a `VACUUM` converts it: migration 9 does that at open for a small file, and
 * `vagent admin db vacuum` (daemon stopped) for any file.
 */
import fs from 'node:fs';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type Database from 'better-sqlite3';

type Db = Database.Database;

/** What the space functions use of the store (`Store` of ./database.ts satisfies it): its connection, write queue and schema version. */
export interface SpaceStore {
  readonly db: Db;
  write<T>(fn: () => T, options?: { savepoint?: boolean }): Promise<T>;
  schemaVersion(): number;
}

/** SQLite's `auto_vacuum` modes (`PRAGMA auto_vacuum`: 0, 1, 2). */
export type AutoVacuumMode = 'none' | 'full' | 'incremental';

const MODES: readonly AutoVacuumMode[] = ['none', 'full', 'incremental'];

/**
 * Largest database (bytes in use: page count × page size) that opening it converts to
 * incremental auto-vacuum by itself (migration 9): the `VACUUM` rewrites the whole file,
 * ~15 ms per MiB measured on a 2-core VPS (bench/idempotency-space.mjs), so about 4 s at this
 * size, once, and start-up must not wait much longer. A bigger file
 * is left as it is, with `vacuumNotice` (config/notices.ts) at every start.
 */
export const AUTO_CONVERT_MAX_BYTES = 256 * 1024 * 1024;

/** The database's `auto_vacuum` mode. */
export function autoVacuumMode(db: Db): AutoVacuumMode {
  return MODES[db.pragma('auto_vacuum', { simple: true }) as number] ?? 'none';
}

/** Bytes the database's pages take (page count × page size; the WAL not included). */
export function databaseBytes(db: Db): number {
  return (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
}

/** Bytes of the database's pages that hold data: its size less its free pages (what a VACUUM keeps). */
export function liveBytes(db: Db): number {
  return (
    databaseBytes(db) - (db.pragma('freelist_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number)
  );
}

/**
 * Converts the database to incremental auto-vacuum and compacts it: `PRAGMA auto_vacuum =
 * INCREMENTAL` then `VACUUM`, which rewrites the whole file through the WAL (free disk of about
 * twice the data's size is needed meanwhile: SQLite's temporary copy and the WAL), then a
 * checkpoint that truncates the WAL. Must run outside any transaction; other connections wait
 * for it (their `busy_timeout`) or fail with SQLITE_BUSY.
 * @throws SqliteError from `VACUUM` (e.g. SQLITE_FULL: disk full; the database is then unchanged).
 */
export function convertToIncremental(db: Db): void {
  db.pragma('auto_vacuum = INCREMENTAL');
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
}

/**
 * Migration 9's step outside its transaction: converts a database still at `auto_vacuum =
 * NONE` when it is no bigger than `maxBytes` (default {@link AUTO_CONVERT_MAX_BYTES}); a
 * bigger one is left for `vagent admin db vacuum`.
 * @returns true when it converted the database.
 */
export function convertIfSmall(db: Db, maxBytes = AUTO_CONVERT_MAX_BYTES): boolean {
  if (autoVacuumMode(db) !== 'none' || databaseBytes(db) > maxBytes) return false;
  convertToIncremental(db);
  return true;
}

/** Options of {@link reclaimFreePages}. */
export interface ReclaimOptions {
  /** Reclaim only while more pages than this are free (default 1,024: 4 MiB of 4 KiB pages). */
  thresholdPages?: number;
  /** Pages given back per write transaction (default 256: 1 MiB). */
  stepPages?: number;
  /** Stops between steps when aborted (the daemon's shutdown). */
  signal?: AbortSignal;
}

/** What {@link reclaimFreePages} did. */
export interface ReclaimResult {
  /** The database's mode; nothing is reclaimed unless `incremental`. */
  mode: AutoVacuumMode;
  /** Free pages before and after. */
  freeBefore: number;
  freeAfter: number;
  /** Write transactions run (each gave back up to `stepPages`). */
  steps: number;
}

/**
 * Gives free pages back to the file system while more than `thresholdPages` are free:
 * `PRAGMA incremental_vacuum(stepPages)` in one write of the store's queue at a time (so it
 * commits with the requests' writes, durably, and never holds the write lock for long),
 * yielding to the event loop between steps. The file shrinks when the WAL is next checkpointed.
 * Does nothing unless the database is in `incremental` mode (`full` gives pages back at every
 * commit; `none` never does: see `vacuumNotice` in config/notices.ts).
 * @throws RangeError for a threshold or step that is not a positive whole number; the store's
 *         write errors.
 */
export async function reclaimFreePages(store: SpaceStore, options: ReclaimOptions = {}): Promise<ReclaimResult> {
  const threshold = options.thresholdPages ?? 1024;
  const step = options.stepPages ?? 256;
  if (!Number.isInteger(threshold) || threshold < 0) throw new RangeError(`thresholdPages must be a whole number ≥ 0, not ${threshold}`);
  if (!Number.isInteger(step) || step < 1) throw new RangeError(`stepPages must be a whole number ≥ 1, not ${step}`);
  const { db } = store;
  const free = () => db.pragma('freelist_count', { simple: true }) as number;
  const mode = autoVacuumMode(db);
  const freeBefore = free();
  let steps = 0;
  if (mode === 'incremental') {
    while (free() > threshold && !options.signal?.aborted) {
      await store.write(() => db.pragma(`incremental_vacuum(${step})`), { savepoint: false });
      steps += 1;
      await nextTurn();
    }
  }
  return { mode, freeBefore, freeAfter: free(), steps };
}

/** The main tables counted by {@link databaseStats}. */
export const COUNTED_TABLES = ['sessions', 'session_turns', 'calls', 'idempotency', 'audit_events', 'telephony_events'] as const;

/** Figures of `vagent admin db stats` (sizes in bytes). */
export interface DatabaseStats {
  /** Path of the database file. */
  file: string;
  /** Size of the database file on disk. */
  file_bytes: number;
  /** Size of its WAL file (0 when absent). */
  wal_bytes: number;
  page_size: number;
  page_count: number;
  /** Pages on SQLite's free list (reusable; given back to the disk only in `incremental` mode). */
  free_pages: number;
  free_bytes: number;
  auto_vacuum: AutoVacuumMode;
  schema_version: number;
  /** Rows per main table. */
  rows: Record<(typeof COUNTED_TABLES)[number], number>;
}

/**
 * The database's size, free pages, mode and rows per main table. Counting rows reads each
 * table's smallest index: up to ~0.7 s per million rows read from disk (measured), in a read
 * transaction that does not block the daemon's writes.
 */
export function databaseStats(store: SpaceStore, file: string): DatabaseStats {
  const { db } = store;
  const size = (f: string): number => {
    try {
      return fs.statSync(f).size;
    } catch {
      return 0;
    }
  };
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const freePages = db.pragma('freelist_count', { simple: true }) as number;
  const rows = db.transaction(() =>
    Object.fromEntries(COUNTED_TABLES.map((t) => [t, db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number])),
  )() as DatabaseStats['rows'];
  return {
    file,
    file_bytes: size(file),
    wal_bytes: size(`${file}-wal`),
    page_size: pageSize,
    page_count: db.pragma('page_count', { simple: true }) as number,
    free_pages: freePages,
    free_bytes: freePages * pageSize,
    auto_vacuum: autoVacuumMode(db),
    schema_version: store.schemaVersion(),
    rows,
  };
}
