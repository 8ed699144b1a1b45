/**
 * The SQLite database of a state dir (docs/architecture.md "State directory"; docs/api-decisions.md
 * "Durability") and its group-committed write queue; opening it (pragmas, migrations) is in
 * open-database.ts, the WAL sync that makes a commit durable in wal-sync.ts.
 *
 * Writes go through {@link Store.write}: every write callback queued in the same turn of the
 * event loop runs inside one `BEGIN IMMEDIATE` transaction, each in its own savepoint (so
 * one failing callback rolls back only its own changes; a hot write that cannot fail once it
 * has changed a row may go without, see {@link WriteOptions}), and the batch commits at once. A
 * callback's promise resolves only after that commit is durable, so a response built from it
 * is never acknowledged before it would survive `kill -9` or power loss.
 *
 * Durability is that of `synchronous=FULL`, with the sync moved off the event loop: SQLite
 * runs with `synchronous=NORMAL` (in WAL mode: the commit writes its frames to the WAL, the WAL
 * is synced before every checkpoint, the database after it, and the WAL header when the WAL is
 * reused), and the store itself fdatasyncs the WAL file on libuv's thread pool after each commit
 * ({@link WalSync}), resolving the batch's promises only when that sync has completed.
 */
import type Database from 'better-sqlite3';
import { startCheckpointer, type Checkpointer, type CheckpointerOptions } from './checkpointer.js';
import { migrate, openDatabase, schemaVersion, WAL_AUTOCHECKPOINT_PAGES, WAL_AUTOCHECKPOINT_PAGES_WITH_WORKER } from './open-database.js';
import { AUTO_CONVERT_MAX_BYTES } from './space.js';
import { WalSync, type Settle } from './wal-sync.js';

/** How stale, in milliseconds, {@link Store.externalVersion} may be. */
export const EXTERNAL_CHECK_MS = 100;

/** A better-sqlite3 connection. */
export type Db = Database.Database;

/** What one queued callback did. */
type Outcome = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Resolves or rejects each item with its outcome, or all with `error` (a failed sync). */
function settleAll(items: Queued[], results: Outcome[], error?: unknown): void {
  items.forEach((item, i) => {
    const r = results[i]!;
    if (error !== undefined) item.reject(error);
    else if (r.ok) item.resolve(r.value);
    else item.reject(r.error);
  });
}

/** See {@link Store.onCommit}: called after a commit; returns what to run once it is durable, or null. */
export type CommitHook = () => (() => void) | null;

/** Options of {@link Store.write}. */
export interface WriteOptions {
  /**
   * Run `fn` without a savepoint of its own (default true: with one). A savepoint costs every
   * page `fn` first touches a copy; without it, `fn` must not fail once it has changed a row
   * — should it do so anyway, the whole batch is rolled back and every write in it fails
   * ({@link BatchAbortedError} for the others). A failure before any change costs nothing.
   */
  savepoint?: boolean;
}

/**
 * A write that was rolled back, through no fault of its own, because another write of its
 * batch failed after changing rows without a savepoint. Nothing of it was kept; it may be
 * retried as it is.
 */
export class BatchAbortedError extends Error {
  constructor() {
    super('the write was rolled back with its batch (another write in the batch failed); it can be retried');
    this.name = 'BatchAbortedError';
  }
}

interface Queued {
  fn: () => unknown;
  /** Runs in a savepoint of its own. */
  savepoint: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Options of {@link Store.open}. */
export interface StoreOptions {
  /**
   * Largest database (bytes) that migration 9 converts to incremental auto-vacuum at open
   * (default `AUTO_CONVERT_MAX_BYTES`, 256 MiB; tests use other sizes).
   */
  autoConvertMaxBytes?: number;
}

/** An open state database. */
export class Store {
  readonly db: Db;
  private queue: Queued[] = [];
  private scheduled = false;
  private readonly commitHooks: CommitHook[] = [];
  private readQueue: Queued[] = [];
  private closed = false;
  private readonly dataVersion: Database.Statement;
  private readonly totalChanges: Database.Statement;
  private readonly tx: Record<'begin' | 'beginRead' | 'commit' | 'rollback' | 'savepoint' | 'release' | 'rollbackTo', Database.Statement>;
  private generationCounter = 0;
  private commitCount = 0;
  private writeCount = 0;
  private checkedVersion = -1;
  private checkedAtMs = -Infinity;
  private readonly walFile: string | null;
  private readonly walSync: WalSync;
  private checkpointer: Checkpointer | null = null;
  /** Commits wait while the checkpoint worker copies the WAL's last frames (see checkpointer.ts). */
  private writesHeld = false;
  private converted = false;

  private constructor(db: Db, file: string) {
    this.db = db;
    this.walFile = file === ':memory:' ? null : `${file}-wal`;
    this.walSync = new WalSync(this.walFile);
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.totalChanges = db.prepare('SELECT total_changes()').pluck();
    this.tx = {
      begin: db.prepare('BEGIN IMMEDIATE'),
      beginRead: db.prepare('BEGIN'),
      commit: db.prepare('COMMIT'),
      rollback: db.prepare('ROLLBACK'),
      savepoint: db.prepare('SAVEPOINT w'),
      release: db.prepare('RELEASE w'),
      rollbackTo: db.prepare('ROLLBACK TO w'),
    };
  }

  /**
   * A number that changes after another process (a `vagent admin` command) has committed to
   * the database (SQLite's `PRAGMA data_version`). The pragma takes a read of the WAL index,
   * which costs as much as a small query, so it is asked at most every
   * {@link EXTERNAL_CHECK_MS}: another process's commit is seen within that time.
   */
  externalVersion(): number {
    const now = performance.now();
    if (now - this.checkedAtMs >= EXTERNAL_CHECK_MS) {
      const version = this.dataVersion.get() as number;
      if (version !== this.checkedVersion) {
        this.checkedVersion = version;
        this.generationCounter += 1;
      }
      this.checkedAtMs = now;
    }
    return this.checkedVersion;
  }

  /**
   * A number that changes after any commit, by this process or another: caches of query
   * results stay valid while it is unchanged.
   */
  generation(): number {
    this.externalVersion();
    return this.generationCounter;
  }

  /**
   * Opens (creating if needed) the database file, sets pragmas and applies migrations
   * (open-database.ts).
   *
   * @param file Path of the SQLite file, or `:memory:` for tests.
   * @throws Error when the file is not a vagent database or a migration fails.
   */
  static open(file: string, options: StoreOptions = {}): Store {
    const db = openDatabase(file);
    const store = new Store(db, file);
    try {
      store.converted = migrate(db, { autoConvertMaxBytes: options.autoConvertMaxBytes ?? AUTO_CONVERT_MAX_BYTES });
    } catch (err) {
      db.close();
      throw err;
    }
    return store;
  }

  /** True when this open converted the database to incremental auto-vacuum (migration 9). */
  get convertedAtOpen(): boolean {
    return this.converted;
  }

  /** The newest schema version applied to this database. */
  schemaVersion(): number {
    return schemaVersion(this.db);
  }

  /**
   * Runs `fn` inside the next group commit and resolves with its result once the commit is
   * durable. `fn` must be synchronous and touch only this database.
   *
   * @throws whatever `fn` throws (its changes are rolled back; other callbacks in the batch
   *         are unaffected), or the commit's error.
   */
  write<T>(fn: () => T, options: WriteOptions = {}): Promise<T> {
    return this.enqueue(this.queue, fn, options.savepoint ?? true);
  }

  /**
   * Runs a read-only `fn` in the next read batch (one transaction for all reads queued in the
   * same turn of the event loop: a lone read outside a transaction takes SQLite's WAL read lock
   * on its own, which costs more than sharing it) and resolves at once: a read has nothing to
   * make durable, so it never waits for a write batch's sync. It may see a commit whose sync
   * is still running; call {@link Store.whenDurable} before acting on what it saw.
   *
   * @throws whatever `fn` throws.
   */
  read<T>(fn: () => T): Promise<T> {
    return this.enqueue(this.readQueue, fn, false);
  }

  /** Queues `fn` for the next flush (one per turn of the event loop). */
  private enqueue<T>(queue: Queued[], fn: () => T, savepoint: boolean): Promise<T> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise<T>((resolve, reject) => {
      queue.push({ fn, savepoint, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Flushes the queues in the check phase of this turn of the event loop (once). */
  private schedule(): void {
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Resolves once every commit made so far is synced to disk (at once when none is waiting). */
  whenDurable(): Promise<void> {
    return this.walSync.whenDurable();
  }

  /** Group-commit counters since open: `commits` and the `writes` they carried. */
  stats(): { commits: number; writes: number } {
    return { commits: this.commitCount, writes: this.writeCount };
  }

  /** Runs `fn` in one immediate transaction right now and makes it durable before returning (admin commands, start-up tasks). */
  writeNow<T>(fn: () => T): T {
    try {
      const value = this.db.transaction(fn).immediate();
      const durable = this.committed();
      this.walSync.syncNow();
      for (const d of durable) d();
      return value;
    } finally {
      this.generationCounter += 1;
    }
  }

  /**
   * Registers `hook`, called right after each commit (a write batch, a {@link writeNow}) on the
   * committing turn; the callback it returns, if any, runs once that commit is durable (not at
   * all if its sync fails). For what must act only on durable writes: the event stream sends
   * an event only once it cannot be lost (src/app/events.ts).
   */
  onCommit(hook: CommitHook): void {
    this.commitHooks.push(hook);
  }

  /** The durable-callbacks of the commit hooks, for the commit just made. */
  private committed(): Array<() => void> {
    const out: Array<() => void> = [];
    for (const hook of this.commitHooks) {
      const d = hook();
      if (d) out.push(d);
    }
    return out;
  }

  /**
   * Moves WAL checkpoints to a worker thread (the daemon): the committing connection no longer
   * stalls to copy the WAL into the database. Each time the WAL reaches the worker's restart
   * size, commits are held for the few milliseconds of its last pass, so that the WAL starts
   * over (see checkpointer.ts). Falls back to auto-checkpoints if the worker cannot start.
   * @param options shorter intervals and sizes for tests
   */
  startBackgroundCheckpoints(options: CheckpointerOptions = {}): void {
    if (this.checkpointer || this.walFile === null) return;
    try {
      this.checkpointer = startCheckpointer(
        this.walFile.slice(0, -'-wal'.length),
        {
          pause: () => this.holdCommits(),
          resume: () => this.releaseCommits(),
        },
        options,
      );
      this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES_WITH_WORKER}`);
    } catch {
      this.checkpointer = null;
    }
  }

  /**
   * Commits nothing until {@link Store.releaseCommits}: writes queue up (their promises stay
   * pending), reads still run. For the checkpoint worker's last pass before the WAL starts
   * over; {@link Store.close} commits what is queued regardless.
   */
  holdCommits(): void {
    this.writesHeld = true;
  }

  /** Ends {@link Store.holdCommits}: what queued meanwhile commits in the next batch. */
  releaseCommits(): void {
    this.writesHeld = false;
    if (this.queue.length > 0) this.schedule();
  }

  /** Stops the checkpoint worker (before {@link Store.close}). */
  async stopBackgroundCheckpoints(): Promise<void> {
    const c = this.checkpointer;
    this.checkpointer = null;
    if (c) {
      this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      await c.stop();
    }
  }

  /** Runs the queued reads, then the queued writes in one transaction (not while held, unless `force`). */
  private flush(force = false): void {
    this.scheduled = false;
    if (this.readQueue.length > 0) this.flushReads();
    if (this.writesHeld && !force) return;
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    const results: Outcome[] = [];
    const { tx } = this;
    let changesBefore = 0;
    try {
      tx.begin.run();
      changesBefore = this.totalChanges.get() as number;
      for (let i = 0; i < batch.length; i++) {
        const item = batch[i]!;
        if (!item.savepoint) {
          const before = this.totalChanges.get() as number;
          try {
            results.push({ ok: true, value: item.fn() });
          } catch (error) {
            if (this.totalChanges.get() !== before) {
              // Its changes cannot be undone alone: nothing of the batch is kept.
              tx.rollback.run();
              batch.forEach((other, j) => other.reject(j === i ? error : new BatchAbortedError()));
              return;
            }
            results.push({ ok: false, error });
          }
          continue;
        }
        tx.savepoint.run();
        try {
          const value = item.fn();
          tx.release.run();
          results.push({ ok: true, value });
        } catch (error) {
          tx.rollbackTo.run();
          tx.release.run();
          results.push({ ok: false, error });
        }
      }
      tx.commit.run();
      this.generationCounter += 1;
      this.commitCount += 1;
      this.writeCount += batch.length;
    } catch (error) {
      if (this.db.inTransaction) {
        try {
          tx.rollback.run();
        } catch {
          /* already rolled back */
        }
      }
      for (const item of batch) item.reject(error);
      return;
    }
    const durable = this.committed();
    const settle: Settle = (syncError) => {
      settleAll(batch, results, syncError);
      if (syncError === undefined) for (const d of durable) d();
    };
    // A batch that changed nothing (e.g. releasing a claim already gone) wrote nothing to make durable.
    if (this.walFile === null || this.totalChanges.get() === changesBefore) {
      settle();
      return;
    }
    this.walSync.afterCommit(settle);
  }

  private flushReads(): void {
    const reads = this.readQueue;
    this.readQueue = [];
    const results: Outcome[] = [];
    try {
      this.tx.beginRead.run();
      for (const item of reads) {
        try {
          results.push({ ok: true, value: item.fn() });
        } catch (error) {
          results.push({ ok: false, error });
        }
      }
      this.tx.commit.run();
    } catch (error) {
      if (this.db.inTransaction) {
        try {
          this.tx.rollback.run();
        } catch {
          /* already rolled back */
        }
      }
      for (const item of reads) item.reject(error);
      return;
    }
    settleAll(reads, results);
  }

  /** Flushes queued writes, makes them durable, and closes the connection (checkpointing the WAL). */
  close(): void {
    if (this.closed) return;
    this.flush(true);
    this.closed = true;
    this.walSync.close();
    this.db.close();
  }
}
