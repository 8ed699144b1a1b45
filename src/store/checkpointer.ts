/**
 * WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into the database
 * file and syncs it; run by the committing connection (SQLite's auto-checkpoint) it stalls
 * every request for tens of milliseconds each time the WAL fills. Here a worker thread with
 * its own connection runs passive checkpoints, which never block the daemon's readers or
 * writers, every {@link CHECKPOINT_INTERVAL_MS}; the daemon's own auto-checkpoint stays on at
 * a much higher threshold, as a safety net should the worker stop.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints, in ms. */
export const CHECKPOINT_INTERVAL_MS = 250;

// CommonJS run in the worker (eval): it loads better-sqlite3 by the path resolved here.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
const timer = setInterval(() => {
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* busy or closing: next time */ }
}, workerData.intervalMs);
parentPort.on('message', () => {
  clearInterval(timer);
  try { db.pragma('wal_checkpoint(PASSIVE)'); } catch { /* best effort */ }
  db.close();
  parentPort.close();
});
`;

/** A running checkpoint worker. */
export interface Checkpointer {
  /** Stops the worker after a last passive checkpoint; resolves when it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts a checkpoint worker on the database `file` (WAL mode).
 * @throws Error when the worker cannot start (the daemon then relies on auto-checkpoints).
 */
export function startCheckpointer(file: string, intervalMs: number = CHECKPOINT_INTERVAL_MS): Checkpointer {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { sqlite, file, intervalMs } });
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', () => { /* the auto-checkpoint safety net takes over */ });
  return {
    stop() {
      worker.postMessage('stop');
      return exited;
    },
  };
}
