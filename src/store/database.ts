/**
 * The SQLite database of a state dir (DESIGN.md §8): WAL, `synchronous=FULL`, versioned
 * migrations at open, and group commit for writes.
 *
 * Writes go through {@link Store.write}: every write callback queued in the same turn of the
 * event loop runs inside one `BEGIN IMMEDIATE` transaction, each in its own savepoint (so
 * one failing callback rolls back only its own changes), and the batch commits with a single
 * fsync. A callback's promise resolves only after that commit is durable, so a response
 * built from it is never acknowledged before it would survive `kill -9` or power loss.
 */
import fs from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations.js';

/** A better-sqlite3 connection. */
export type Db = Database.Database;

interface PendingWrite {
  fn: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** An open state database. */
export class Store {
  readonly db: Db;
  private queue: PendingWrite[] = [];
  private scheduled = false;
  private closed = false;

  private constructor(db: Db) {
    this.db = db;
  }

  /**
   * Opens (creating if needed) the database file, sets pragmas and applies migrations.
   *
   * @param file Path of the SQLite file, or `:memory:` for tests.
   * @throws Error when the file is not a vagent database or a migration fails.
   */
  static open(file: string): Store {
    const db = new Database(file);
    if (file !== ':memory:') {
      try { fs.chmodSync(file, 0o600); } catch { /* best effort */ }
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    const store = new Store(db);
    store.migrate();
    return store;
  }

  /** The newest schema version applied to this database. */
  schemaVersion(): number {
    return (this.db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
  }

  private migrate(): void {
    this.db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT`);
    const current = this.schemaVersion();
    const newest = MIGRATIONS[MIGRATIONS.length - 1]?.version ?? 0;
    if (current > newest) {
      throw new Error(`database schema version ${current} is newer than this vagent (${newest}); upgrade vagent`);
    }
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue;
      this.db.transaction(() => {
        this.db.exec(m.sql);
        this.db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
          .run(m.version, m.name, Date.now() / 1000);
      }).immediate();
    }
  }

  /**
   * Runs `fn` inside the next group commit and resolves with its result once the commit is
   * durable. `fn` must be synchronous and touch only this database.
   *
   * @throws whatever `fn` throws (its changes are rolled back; other callbacks in the batch
   *         are unaffected), or the commit's error.
   */
  write<T>(fn: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (v: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Runs `fn` in one immediate transaction right now (admin commands, start-up tasks). */
  writeNow<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  private flush(): void {
    this.scheduled = false;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const results: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const item of batch) {
        this.db.exec('SAVEPOINT w');
        try {
          const value = item.fn();
          this.db.exec('RELEASE w');
          results.push({ ok: true, value });
        } catch (error) {
          this.db.exec('ROLLBACK TO w');
          this.db.exec('RELEASE w');
          results.push({ ok: false, error });
        }
      }
      this.db.exec('COMMIT');
    } catch (error) {
      if (this.db.inTransaction) {
        try { this.db.exec('ROLLBACK'); } catch { /* already rolled back */ }
      }
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, i) => {
      const r = results[i]!;
      if (r.ok) item.resolve(r.value);
      else item.reject(r.error);
    });
  }

  /** Flushes queued writes and closes the connection (checkpointing the WAL). */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }
}
