/**
 * The state database's space, for `vagent admin db stats|vacuum` (README.md "What grows on disk, and what bounds it"): sizes,
 * free pages, auto-vacuum mode and rows per table; and the one-off conversion of a database to
 * incremental auto-vacuum, which rewrites the file and so runs only with the daemon stopped.
 */
import fs from 'node:fs';
import { statePaths } from '../config/paths.js';
import { vacuumNotice } from '../config/notices.js';
import { Store } from '../store/database.js';
import {
  autoVacuumMode,
  convertToIncremental,
  databaseBytes,
  databaseStats,
  liveBytes,
  type AutoVacuumMode,
  type DatabaseStats,
} from '../store/space.js';
import { acquireDaemonLock, StateDirError } from './state-dir.js';

/** {@link DatabaseStats} and, while the database gives no space back, the notice saying what to do. */
export interface DatabaseReport extends DatabaseStats {
  /** The `vagent admin db vacuum` advice, or null when the database is in incremental mode. */
  notice: string | null;
}

/** A state dir that cannot be vacuumed now: a daemon runs on it, or the disk is too full. */
export class VacuumRefusedError extends Error {
  constructor(
    message: string,
    readonly hint: string,
  ) {
    super(message);
    this.name = 'VacuumRefusedError';
  }
}

/**
 * Figures of the state dir's database (works beside a running daemon: reads only, apart from
 * the migrations any open applies). The caller checks the database exists.
 */
export function databaseReport(stateDir: string): DatabaseReport {
  const file = statePaths(stateDir).database;
  const store = Store.open(file);
  try {
    const stats = databaseStats(store, file);
    return { ...stats, notice: stats.auto_vacuum === 'none' ? vacuumNotice(stateDir, databaseBytes(store.db)) : null };
  } finally {
    store.close();
  }
}

/** What {@link vacuumDatabase} did. */
export interface VacuumResult {
  file: string;
  /** Database file size before and after (bytes). */
  before_bytes: number;
  after_bytes: number;
  /** Mode before, and after (always `incremental`). */
  auto_vacuum_before: AutoVacuumMode;
  auto_vacuum: AutoVacuumMode;
}

/**
 * Converts the state dir's database to incremental auto-vacuum and compacts it (`PRAGMA
 * auto_vacuum = INCREMENTAL` + `VACUUM`), holding the daemon lock throughout so no daemon
 * starts meanwhile. SQLite's temporary copy goes to the state dir unless `SQLITE_TMPDIR` names
 * another directory; with the WAL, the disk needs free space of about twice the live data
 * (checked first). A database already incremental is compacted all the same.
 * @throws VacuumRefusedError while a daemon serves the state dir, or when the disk lacks the
 *         space (nothing changed); SqliteError when `VACUUM` fails (the database is unchanged).
 */
export function vacuumDatabase(stateDir: string): VacuumResult {
  let lock;
  try {
    lock = acquireDaemonLock(stateDir);
  } catch (err) {
    if (!(err instanceof StateDirError)) throw err;
    throw new VacuumRefusedError(
      `${err.message.replace(/; stop it first.*$/, '')}: vacuum rewrites the whole database, so it runs only with the daemon stopped`,
      'stop vagent serve (SIGTERM, or systemctl stop vagent), run this again, then start it',
    );
  }
  try {
    const file = statePaths(stateDir).database;
    // Read by SQLite when this process opens its first database: here, as admin commands open one database each.
    process.env.SQLITE_TMPDIR ??= stateDir;
    const store = Store.open(file);
    try {
      const { db } = store;
      const before = fs.statSync(file).size;
      const modeBefore = autoVacuumMode(db);
      const live = liveBytes(db);
      const need = Math.ceil(2.1 * live);
      const st = fs.statfsSync(stateDir);
      const free = st.bavail * st.bsize;
      if (free < need) {
        throw new VacuumRefusedError(
          `not enough free disk in ${stateDir} to vacuum: ${free} bytes free, about ${need} needed (twice the live data)`,
          'free some disk space (or set SQLITE_TMPDIR to a directory on another disk with room for one copy), then run this again',
        );
      }
      convertToIncremental(db);
      return {
        file,
        before_bytes: before,
        after_bytes: fs.statSync(file).size,
        auto_vacuum_before: modeBefore,
        auto_vacuum: autoVacuumMode(db),
      };
    } finally {
      store.close();
    }
  } finally {
    lock.release();
  }
}
