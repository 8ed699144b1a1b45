/**
 * Reads beside a running daemon: the bench opens the daemon's SQLite file read-only (WAL mode
 * lets a reader in while the daemon writes), so that what it checks or copies never goes
 * through the daemon's API or into its memory.
 */
import Database from 'better-sqlite3';

/**
 * Runs `fn` on a read-only connection to `file` and closes it.
 * @template T
 * @param {string} file an existing SQLite database
 * @param {(db: import('better-sqlite3').Database) => T} fn
 * @returns {T}
 */
export function readDatabase(file, fn) {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}
