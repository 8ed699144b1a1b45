/**
 * The media workers of a daemon, so that a media fault or CPU spike cannot take `/v1` down
 * (docs/media.md): a fixed pool of worker threads, each
 * running ./worker.ts. Streams are spread over the workers by load (fewest streams first). A
 * worker that dies ends its streams (their sockets close with 1011, their sessions end) and is
 * replaced; the daemon and the other workers' calls go on.
 *
 * Messages (../../media/worker-protocol.ts) are batched both ways: at most one `postMessage` per worker
 * per turn of the event loop, whatever the number of frames.
 */
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { CarrierDialect } from '../../media/carriers/types.js';
import type { EndCause, TurnRequest } from '../../media/call-session-port.js';
import type { StopReason } from '../../media/transport.js';
import type { MediaWorkerData } from './worker.js';
import { emptyStreamStats } from '../../media/worker-protocol.js';
import type {
  ClipRef,
  FromWorker,
  RecognizerSpec,
  ReplyData,
  StreamEvent,
  StreamSettings,
  StreamStats,
  ToWorker,
} from '../../media/worker-protocol.js';
import type { RoomJoin } from '../../adapters/livekit/room.js';
import { forkWorker, mediaWorkerPath, type WorkerLike } from './spawn.js';

/** What the pool tells the owner of a stream. */
export interface StreamHandlers {
  /** Text frames to write to the WebSocket, in order. */
  send(frames: string[]): void;
  /** Close the WebSocket with `code` and `reason`. */
  close(code: number, reason: string): void;
  /**
   * The media session asks for a turn; resolve with the reply (a rejection ends the call).
   * `early` plays a clip while the turn still runs (a streamed reply's first sentence).
   */
  turn(request: TurnRequest, early: (clip: ClipRef) => void): Promise<ReplyData>;
  /** A media event (heard, reply, barge-in, DTMF, recogniser error). */
  event(event: StreamEvent): void;
  /** The stream's media session ended (once). */
  ended(reason: StopReason, cause: EndCause | null, stats: StreamStats): void;
}

/** A stream attached to a worker. */
export interface StreamHandle {
  readonly id: number;
  /** Hands an inbound text frame to the worker. */
  push(frame: string): void;
  /** The WebSocket closed. */
  closed(code: number): void;
  /** Hang the call up from our side (the API, shutdown). */
  hangup(): void;
}

/** Options of {@link MediaWorkerPool.start}. */
export interface MediaWorkerPoolOptions {
  /** Worker threads, 1–64. */
  size: number;
  /** The compiled worker script; default {@link mediaWorkerPath}(). */
  workerPath?: string;
  /** Passed to each worker. */
  workerData?: MediaWorkerData;
  /** Told when a worker dies (for the log); the pool replaces it. */
  onWorkerExit?: (index: number, error: Error | null) => void;
  /**
   * `thread` (default): worker threads. `process`: child processes with an IPC channel
   * (structured-clone serialisation), for LiveKit rooms: rtc-node's native client serves only
   * the first thread of a process that loads it, and a native fault then ends only that process.
   */
  mode?: 'thread' | 'process';
}

interface Slot {
  index: number;
  worker: WorkerLike;
  ready: Promise<void>;
  /** Warm-up requests not answered yet, by request number. */
  warming: Map<number, (files: string[] | null) => void>;
  /** Files this worker has converted ahead of calls (its answers to `warm`). */
  warmed: Set<string>;
  /** Warm-ups it has answered. */
  warmups: number;
  outbox: ToWorker[];
  scheduled: boolean;
  streams: Map<number, StreamHandlers>;
  /** Ends the streams' open `in` lists when the batch leaves. */
  resets: Array<() => void>;
  /** Told when the worker answered `shutdown`. */
  shutdown?: () => void;
}

/** Where the warm-up of a pool stands (`/v1/health`'s `media.warm_up`; docs/media.md). */
export interface PoolWarmth {
  /** Every worker has answered a warm-up, and every warm-up asked of it so far. */
  ready: boolean;
  /** Clip files converted ahead of calls by every worker (the agents' openings). */
  clips: number;
}

/** The pool. */
export class MediaWorkerPool {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closing = false;
  private nextWarm = 1;
  /** Every file asked to be warmed so far: a worker that replaces a dead one is warmed with them. */
  private readonly warmFiles = new Set<string>();
  /** {@link MediaWorkerPool.warm} was called: replacement workers are warmed too. */
  private warmed = false;

  private constructor(private readonly options: MediaWorkerPoolOptions & { workerPath: string }) {}

  /**
   * Starts `size` workers and waits until each is ready (its VAD loaded).
   * @throws Error when the worker script is missing (run `npm run build`) or a worker fails to start
   */
  static async start(options: MediaWorkerPoolOptions): Promise<MediaWorkerPool> {
    if (!Number.isInteger(options.size) || options.size < 1 || options.size > 64)
      throw new RangeError(`media workers must be 1–64, got ${options.size}`);
    const workerPath = options.workerPath ?? mediaWorkerPath();
    if (!existsSync(workerPath)) throw new Error(`the media worker is not built (${workerPath}); run npm run build`);
    const pool = new MediaWorkerPool({ ...options, workerPath });
    for (let i = 0; i < options.size; i++) pool.slots.push(pool.spawn(i));
    await Promise.all(pool.slots.map((s) => s.ready));
    return pool;
  }

  /** Streams attached now. */
  get streams(): number {
    return this.slots.reduce((n, s) => n + s.streams.size, 0);
  }

  /**
   * Attaches a stream to the least loaded worker and starts its media session: the worker
   * replays `frames` (the carrier's `connected`/`start` and anything after) and plays `opening`.
   */
  attach(
    dialect: CarrierDialect,
    frames: string[],
    settings: StreamSettings,
    recognizer: RecognizerSpec,
    opening: ReplyData,
    handlers: StreamHandlers,
  ): StreamHandle {
    const slot = this.slots.reduce((a, b) => (b.streams.size < a.streams.size ? b : a));
    const id = this.nextId++;
    slot.streams.set(id, handlers);
    this.post(slot, { k: 'attach', id, dialect, frames, settings, recognizer, opening });
    let pendingIn: string[] | null = null;
    const reset = () => {
      pendingIn = null;
    };
    return {
      id,
      push: (frame) => {
        if (pendingIn === null) {
          // One `in` message per stream per batch: frames join it until the batch leaves.
          pendingIn = [];
          this.post(slot, { k: 'in', id, frames: pendingIn });
          slot.resets.push(reset);
        }
        pendingIn.push(frame);
      },
      closed: (code) => this.post(slot, { k: 'closed', id, code }),
      hangup: () => this.post(slot, { k: 'hangup', id }),
    };
  }

  /**
   * Joins a LiveKit room on the least loaded worker and runs the call's media
   * session there once the call is answered. Only `send`/`close` of `handlers` go unused.
   */
  attachRoom(
    join: RoomJoin,
    settings: StreamSettings,
    recognizer: RecognizerSpec,
    opening: ReplyData,
    handlers: Omit<StreamHandlers, 'send' | 'close'>,
  ): Pick<StreamHandle, 'id' | 'hangup'> {
    const slot = this.slots.reduce((a, b) => (b.streams.size < a.streams.size ? b : a));
    const id = this.nextId++;
    slot.streams.set(id, { ...handlers, send: () => undefined, close: () => undefined });
    this.post(slot, { k: 'attachRoom', id, join, settings, recognizer, opening });
    return { id, hangup: () => this.post(slot, { k: 'hangup', id }) };
  }

  /**
   * Warms every worker ahead of calls (docs/media.md, "The first call after start"): each
   * converts clip files `files` (cached WAVs: the agents' openings) into every outbound format
   * it plays, and the first warm-up of a worker also runs silent streams through its media
   * path. A worker started later to replace one that died is warmed with every file asked so
   * far. Resolves once every worker answered, with the files each converted (null for a worker
   * that stopped first). Never rejects.
   */
  warm(files: readonly string[] = []): Promise<Array<string[] | null>> {
    this.warmed = true;
    for (const f of files) this.warmFiles.add(f);
    return Promise.all(this.slots.map((slot) => this.warmSlot(slot, [...files])));
  }

  /** Where the warm-up stands (see {@link PoolWarmth}). */
  warmth(): PoolWarmth {
    return {
      ready: this.slots.every((s) => s.warmups > 0 && s.warming.size === 0),
      clips: Math.min(...this.slots.map((s) => s.warmed.size)),
    };
  }

  private warmSlot(slot: Slot, files: string[]): Promise<string[] | null> {
    return new Promise((resolve) => {
      const req = this.nextWarm++;
      slot.warming.set(req, resolve);
      // A worker takes messages once it is ready (its VAD loaded), not before.
      slot.ready.then(
        () => this.post(slot, { k: 'warm', req, files }),
        () => undefined,
      );
    });
  }

  /** Stops the workers (their recogniser processes first, for at most 2 s), ending any stream left. */
  async close(): Promise<void> {
    this.closing = true;
    await Promise.all(
      this.slots.map(
        (slot) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, 2000);
            timer.unref();
            slot.shutdown = () => {
              clearTimeout(timer);
              resolve();
            };
            this.post(slot, { k: 'shutdown' });
          }),
      ),
    );
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
    for (const slot of this.slots) this.failStreams(slot, 'the daemon is stopping');
  }

  private spawn(index: number): Slot {
    const worker: WorkerLike =
      this.options.mode === 'process'
        ? forkWorker(this.options.workerPath, this.options.workerData ?? {})
        : new Worker(this.options.workerPath, { workerData: this.options.workerData ?? {} });
    let ready!: () => void;
    let failed!: (err: Error) => void;
    const slot: Slot = {
      index,
      worker,
      outbox: [],
      scheduled: false,
      streams: new Map(),
      resets: [],
      warming: new Map(),
      warmed: new Set(),
      warmups: 0,
      ready: new Promise<void>((resolve, reject) => {
        ready = resolve;
        failed = reject;
      }),
    };
    worker.on('message', (batch: FromWorker[]) => {
      for (const msg of batch) this.onMessage(slot, msg, ready);
    });
    worker.on('error', (err) => {
      failed(err);
      this.options.onWorkerExit?.(index, err);
    });
    worker.on('exit', () => {
      failed(new Error('the media worker exited before it was ready'));
      this.failStreams(slot, 'media worker stopped');
      for (const resolve of slot.warming.values()) resolve(null);
      slot.warming.clear();
      if (!this.closing && this.slots[index] === slot) {
        const next = this.spawn(index);
        this.slots[index] = next;
        next.ready.catch(() => undefined);
        if (this.warmed) void this.warmSlot(next, [...this.warmFiles]);
      }
    });
    return slot;
  }

  private failStreams(slot: Slot, reason: string): void {
    for (const [id, h] of slot.streams) {
      slot.streams.delete(id);
      h.close(1011, reason);
      h.ended('error', null, emptyStreamStats());
    }
  }

  private onMessage(slot: Slot, msg: FromWorker, ready: () => void): void {
    switch (msg.k) {
      case 'ready':
        ready();
        return;
      case 'shutdown':
        slot.shutdown?.();
        return;
      case 'warmed': {
        for (const f of msg.files) slot.warmed.add(f);
        slot.warmups += 1;
        const resolve = slot.warming.get(msg.req);
        slot.warming.delete(msg.req);
        resolve?.(msg.files);
        return;
      }
      case 'out':
        slot.streams.get(msg.id)?.send(msg.frames);
        return;
      case 'close':
        slot.streams.get(msg.id)?.close(msg.code, msg.reason);
        return;
      case 'event':
        slot.streams.get(msg.id)?.event(msg.event);
        return;
      case 'ended': {
        const h = slot.streams.get(msg.id);
        slot.streams.delete(msg.id);
        h?.ended(msg.reason, msg.cause, msg.stats);
        return;
      }
      case 'turn': {
        const h = slot.streams.get(msg.id);
        if (!h) return;
        const early = (clip: ClipRef) => this.post(slot, { k: 'early', id: msg.id, req: msg.req, clip });
        h.turn(msg.request, early).then(
          (reply) => this.post(slot, { k: 'reply', id: msg.id, req: msg.req, reply }),
          (err: unknown) =>
            this.post(slot, {
              k: 'reply',
              id: msg.id,
              req: msg.req,
              reply: null,
              error: err instanceof Error ? err.message : String(err),
            }),
        );
        return;
      }
    }
  }

  private post(slot: Slot, msg: ToWorker): void {
    slot.outbox.push(msg);
    if (slot.scheduled) return;
    slot.scheduled = true;
    setImmediate(() => {
      slot.scheduled = false;
      const batch = slot.outbox;
      slot.outbox = [];
      for (const reset of slot.resets) reset();
      slot.resets = [];
      if (batch.length > 0) slot.worker.postMessage(batch);
    });
  }
}
