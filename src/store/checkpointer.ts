/**
 * WAL checkpoints off the event loop. A checkpoint copies the WAL's pages into the database
 * file and syncs it; run by the committing connection (SQLite's auto-checkpoint) it stalls
 * every request for tens of milliseconds each time the WAL fills. Here a worker thread with
 * its own connection runs passive checkpoints, which never block the daemon's readers or
 * writers, every {@link CHECKPOINT_INTERVAL_MS}; the daemon's own auto-checkpoint stays on at
 * a much higher threshold, as a safety net should the worker stop.
 *
 * A passive checkpoint never lets the WAL start over while writes keep coming: SQLite rewinds
 * the WAL only when a write begins with every frame already copied, and under steady load a
 * commit always lands while the checkpoint runs. The WAL would grow to the safety net's size
 * (hundreds of MiB, every commit extending the file), and the daemon's own connection would
 * then stall for the whole copy. So once the WAL holds {@link RESTART_FRAMES} frames the worker
 * catches up once more and asks the daemon to hold its commits (`pause`); the daemon stops
 * committing — requests still run, their writes wait in the queue — and says so; the worker
 * copies the last few frames (milliseconds) and lets it go (`resume`). The next commit then
 * rewinds the WAL and overwrites its old frames in place.
 */
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/** How often the worker checkpoints, in ms. */
export const CHECKPOINT_INTERVAL_MS = 250;

/**
 * WAL frames (pages) after which the worker has the WAL start over: 256 MiB of 4 KiB pages,
 * reached only under sustained writes (a quiet moment lets a passive checkpoint finish and the
 * WAL start over by itself). Each restart holds commits for a few ms; at 16 384 frames those
 * holds came often enough under the turn benchmark to show in its p99.
 */
export const RESTART_FRAMES = 65_536;

/** The longest the daemon holds its commits for the worker's last pass, in ms. */
export const MAX_HOLD_MS = 200;

// CommonJS run in the worker (eval): it loads better-sqlite3 by the path resolved here.
// Messages: worker → daemon 'hold' (please stop committing), 'release' (commit again);
// daemon → worker 'held' (no commit until 'release'), 'stop'.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.sqlite);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 1000');
let timer = null;
let stopped = false;
function pass() {
  try { return db.pragma('wal_checkpoint(PASSIVE)')[0]; } catch { return null; } // busy or closing: next time
}
function tick() {
  timer = null;
  const done = pass();
  if (done && done.log >= workerData.restartFrames) {
    pass(); // what was committed during the first pass, so that the held one is short
    parentPort.postMessage('hold');
    return; // the next tick is scheduled once the daemon is held
  }
  timer = setTimeout(tick, workerData.intervalMs);
}
parentPort.on('message', (message) => {
  if (stopped) return;
  if (message === 'held') {
    pass();
    parentPort.postMessage('release');
    timer = setTimeout(tick, workerData.intervalMs);
  } else if (message === 'stop') {
    stopped = true;
    if (timer) clearTimeout(timer);
    pass();
    db.close();
    parentPort.close();
  }
});
timer = setTimeout(tick, workerData.intervalMs);
`;

/** What the worker asks of the daemon's connection. */
export interface CheckpointHost {
  /** Stop committing until `resume` (a commit under way has ended: commits are synchronous). */
  pause(): void;
  /** Commit again. Called once per `pause`, at the latest after {@link MAX_HOLD_MS}. */
  resume(): void;
}

/** A running checkpoint worker. */
export interface Checkpointer {
  /** Stops the worker after a last passive checkpoint; resolves when it has exited. */
  stop(): Promise<void>;
}

/** Options of {@link startCheckpointer} (tests shorten them). */
export interface CheckpointerOptions {
  intervalMs?: number;
  restartFrames?: number;
  maxHoldMs?: number;
}

/**
 * Starts a checkpoint worker on the database `file` (WAL mode).
 * @param host the daemon's store, held while the worker lets the WAL start over
 * @throws Error when the worker cannot start (the daemon then relies on auto-checkpoints).
 */
export function startCheckpointer(file: string, host: CheckpointHost, options: CheckpointerOptions = {}): Checkpointer {
  const sqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      sqlite,
      file,
      intervalMs: options.intervalMs ?? CHECKPOINT_INTERVAL_MS,
      restartFrames: options.restartFrames ?? RESTART_FRAMES,
    },
  });
  worker.unref();
  let holdTimer: NodeJS.Timeout | null = null;
  const release = () => {
    if (holdTimer === null) return;
    clearTimeout(holdTimer);
    holdTimer = null;
    host.resume();
  };
  let stopping = false;
  worker.on('message', (message) => {
    if (message === 'hold' && holdTimer === null && !stopping) {
      host.pause();
      // Never held for long, whatever the worker does: a late 'release' is then a no-op.
      holdTimer = setTimeout(release, options.maxHoldMs ?? MAX_HOLD_MS);
      holdTimer.unref();
      worker.postMessage('held');
    } else if (message === 'release') {
      release();
    }
  });
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      release();
      resolve();
    }),
  );
  worker.on('error', () => {
    /* the auto-checkpoint safety net takes over */
  });
  return {
    stop() {
      stopping = true;
      release();
      // The worker is unref'd so that it never keeps a process alive; waiting for its last pass
      // must, or a process with nothing else to do would exit before `stop` resolves.
      worker.ref();
      worker.postMessage('stop');
      return exited;
    },
  };
}
