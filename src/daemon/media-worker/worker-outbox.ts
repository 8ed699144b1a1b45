/**
 * A media worker's link to the daemon's main thread: the port (`parentPort` in a worker thread,
 * the IPC channel in a media child process) and the outbox that batches what the worker says
 * into one message per turn of the event loop, joining each stream's outbound frames into one
 * `out` message. Messages are those of ../../media/worker-protocol.ts.
 */
import type { FromWorker, ToWorker } from '../../media/worker-protocol.js';

/**
 * The link to the daemon's main thread: `parentPort` in a worker thread; in a media child
 * process (LiveKit rooms: rtc-node's native client serves one thread per process) the IPC
 * channel, opened with `serialization: 'advanced'` so messages are structured clones as well.
 */
export interface WorkerPort {
  postMessage(msg: unknown): void;
  on(event: 'message', listener: (batch: ToWorker[]) => void): void;
}

/** The IPC channel as a {@link WorkerPort}, or null when this process has none. */
export function processPort(): WorkerPort | null {
  if (typeof process.send !== 'function') return null;
  // The daemon went away (crash, kill -9): a media process never outlives it.
  process.on('disconnect', () => process.exit(0));
  return {
    postMessage: (msg) => {
      if (process.connected) process.send!(msg);
    },
    on: (event, listener) => {
      process.on(event, listener as (m: unknown) => void);
    },
  };
}

/**
 * Messages to the main thread, sent as one batch on the next turn of the event loop. Warm-up
 * streams (negative ids) are nobody's: what they say goes nowhere.
 */
export class WorkerOutbox {
  private outbox: FromWorker[] = [];
  private flushing = false;
  /** Outbound frames per stream are joined into one `out` message per flush. */
  private readonly pendingOut = new Map<number, string[]>();

  constructor(private readonly port: WorkerPort) {}

  /** Queues `msg` for the next batch. */
  post(msg: FromWorker): void {
    if ('id' in msg && msg.id < 0) return;
    this.outbox.push(msg);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  /** Queues outbound frame `text` of stream `id`, in that stream's `out` message of the batch. */
  sendFrame(id: number, text: string): void {
    if (id < 0) return;
    let list = this.pendingOut.get(id);
    if (!list) {
      list = [];
      this.pendingOut.set(id, list);
      this.post({ k: 'out', id, frames: list });
    }
    list.push(text);
  }

  private flush(): void {
    this.flushing = false;
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    this.pendingOut.clear();
    this.port.postMessage(batch);
  }
}
