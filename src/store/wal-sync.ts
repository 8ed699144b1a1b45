/**
 * The durability half of the store's group commit (docs/api-decisions.md "Durability"): SQLite
 * runs with `synchronous=NORMAL`, and this fdatasyncs the WAL file on libuv's thread pool after
 * each commit, settling the committed batches only when that sync has completed. Up to
 * {@link MAX_SYNCS_IN_FLIGHT} syncs run at once; batches committed while that many run wait for
 * the next one, so syncs never queue up and the event loop never waits for the disk.
 */
import fs from 'node:fs';

/**
 * WAL syncs running at once. A batch committed just after a sync began would otherwise wait for
 * the rest of that sync and then its own; two overlap that wait (measured: ~4% more turns/s
 * at 50 connections, the disk's own cost unchanged).
 */
const MAX_SYNCS_IN_FLIGHT = 2;

/** A committed batch waiting for the WAL sync: settles its callers' promises (with the sync's error, if any). */
export type Settle = (error?: unknown) => void;

/** The WAL syncs of one database file. */
export class WalSync {
  private fd: number | null = null;
  private syncsInFlight = 0;
  private awaitingSync: Settle[] = [];
  private inFlightSync: Settle[] = [];
  private closed = false;

  /** @param walFile the `-wal` file of the database, or null for `:memory:` (nothing to sync). */
  constructor(private readonly walFile: string | null) {}

  /** Settles `settle` once a WAL sync started after this call has completed. */
  afterCommit(settle: Settle): void {
    this.awaitingSync.push(settle);
    this.scheduleSync();
  }

  /** Resolves once every commit made so far is synced to disk (at once when none is waiting). */
  whenDurable(): Promise<void> {
    // Commits not yet covered by a sync wait for the next one; otherwise the sync started last
    // (if one runs) covers every commit made so far.
    const list = this.awaitingSync.length > 0 ? this.awaitingSync : this.syncsInFlight > 0 ? this.inFlightSync : null;
    if (list === null) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      list.push((err) => (err === undefined ? resolve() : reject(err)));
    });
  }

  /** Syncs the WAL on this thread (start-up, admin commands, close). */
  syncNow(): void {
    const fd = this.wal();
    if (fd !== null) fs.fdatasyncSync(fd);
  }

  /** Syncs what is waiting on this thread, settles it, and closes the descriptor when no sync still uses it. */
  close(): void {
    this.closed = true;
    const waiting = this.awaitingSync;
    this.awaitingSync = [];
    let syncError: unknown;
    try {
      this.syncNow();
    } catch (err) {
      syncError = err;
    }
    for (const settle of waiting) settle(syncError);
    // A sync still running on the thread pool uses the descriptor: leave it to the process exit then.
    if (this.fd !== null && this.syncsInFlight === 0) fs.closeSync(this.fd);
    this.fd = null;
  }

  /** The WAL file's descriptor, opened on first need (SQLite creates the file at the first write). */
  private wal(): number | null {
    if (this.fd === null && this.walFile !== null) {
      try {
        this.fd = fs.openSync(this.walFile, 'r+');
      } catch {
        return null;
      }
    }
    return this.fd;
  }

  /** Starts a sync of the WAL for the batches committed so far, unless enough are running. */
  private scheduleSync(): void {
    if (this.syncsInFlight >= MAX_SYNCS_IN_FLIGHT || this.awaitingSync.length === 0) return;
    const waiting = this.awaitingSync;
    this.awaitingSync = [];
    const fd = this.wal();
    if (fd === null) {
      for (const settle of waiting) settle(new Error('the database WAL file is missing; the commit may not be durable'));
      return;
    }
    this.syncsInFlight += 1;
    this.inFlightSync = waiting;
    fs.fdatasync(fd, (err) => {
      this.syncsInFlight -= 1;
      for (const settle of waiting) settle(err ?? undefined);
      if (!this.closed) this.scheduleSync();
      else if (this.syncsInFlight === 0) fs.close(fd, () => {});
    });
  }
}
