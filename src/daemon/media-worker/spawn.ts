/**
 * How a media worker starts: where the compiled worker is, and the child process that stands in
 * for a worker thread when the pool runs its media in processes (worker-pool.ts).
 */
import { fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FromWorker } from '../../media/worker-protocol.js';
import type { MediaWorkerData } from './worker.js';

/**
 * Where the compiled worker is: beside this file when running from `dist/`; when running from
 * sources (tests), the build output `dist/daemon/media-worker/worker.js` of the same checkout.
 */
export function mediaWorkerPath(): string {
  const here = fileURLToPath(import.meta.url);
  const dir = path.dirname(here);
  if (here.endsWith('.js')) return path.join(dir, 'worker.js');
  return path.resolve(dir, '..', '..', '..', 'dist', 'daemon', 'media-worker', 'worker.js');
}

/** What the pool needs of a worker thread or a media child process. */
export interface WorkerLike {
  postMessage(msg: unknown): void;
  terminate(): Promise<unknown>;
  on(event: 'message', listener: (batch: FromWorker[]) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  on(event: 'exit', listener: () => void): unknown;
}

/** A media child process dressed as a worker thread. */
export function forkWorker(workerPath: string, data: MediaWorkerData): WorkerLike {
  const child = fork(workerPath, [], {
    serialization: 'advanced',
    env: { ...process.env, VAGENT_MEDIA_WORKER_DATA: JSON.stringify(data) },
    // stdout is not the daemon's (native libraries may print there); faults still reach stderr.
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return {
    postMessage: (msg) => {
      if (child.connected) child.send(msg as object);
    },
    terminate: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
    },
    on(event: string, listener: (...args: never[]) => void) {
      child.on(event, listener as (...args: unknown[]) => void);
      return this;
    },
  } as WorkerLike;
}
