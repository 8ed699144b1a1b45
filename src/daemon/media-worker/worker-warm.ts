/**
 * A media worker's warm-up ahead of the first call (docs/media.md, "The first call after
 * start"): the opening clips converted into every outbound format the worker plays, and, once,
 * a silent stream of each of {@link WARM_STREAMS} played through the whole media path so the
 * first real call does not pay for loading and compiling it.
 */
import type { ClipFrameCache } from './worker-clips.js';
import type { FromWorker, ReplyData, ToWorker } from '../../media/worker-protocol.js';
import {
  CARRIER_WARM_FORMATS,
  ROOM_WARM_FORMATS,
  WARM_STREAMS,
  WARM_STREAM_MS,
  WARM_STREAM_SETTINGS,
  warmStreamFrames,
} from './warm-up.js';

/** What the warm-up needs of its worker. */
export interface WarmUpHost {
  /** A LiveKit room process (no carrier streams to warm; room formats). */
  livekitRooms: boolean;
  clips: ClipFrameCache;
  /** Attaches a stream (as the main thread would). */
  attach(msg: Extract<ToWorker, { k: 'attach' }>): void;
  /** Hangs stream `id` up. */
  hangup(id: number): void;
  /** Forgets stream `id` (its warm-up failed). */
  drop(id: number): void;
  post(msg: FromWorker): void;
}

/** The warm-up of one worker (see the module comment). */
export class WorkerWarmUp {
  private codeWarmed = false;
  private nextWarmId = -1;

  constructor(private readonly host: WarmUpHost) {}

  /**
   * Converts `msg.files` into every outbound format this worker plays (its {@link ClipFrameCache}
   * keeps them), one file per turn of the event loop, and, the first time, plays a silent stream
   * of each of {@link WARM_STREAMS} through the whole media path (with the first file as its
   * opening) and hangs it up after
   * {@link WARM_STREAM_MS}; then answers `warmed`. Warm-up streams have negative ids: nothing they
   * send leaves the worker. Only after `ready` (the pool waits for it).
   */
  async warm(msg: Extract<ToWorker, { k: 'warm' }>): Promise<void> {
    const started = performance.now();
    const formats = this.host.livekitRooms ? ROOM_WARM_FORMATS : CARRIER_WARM_FORMATS;
    const files: string[] = [];
    for (const file of msg.files) {
      if (formats.every((f) => this.host.clips.frames(file, f.encoding, f.sampleRate) !== null)) files.push(file);
      // One file at a time: the frames of calls already under way go between.
      await new Promise((resolve) => setImmediate(resolve));
    }
    const ids: number[] = [];
    if (!this.codeWarmed && !this.host.livekitRooms) {
      this.codeWarmed = true;
      const opening: ReplyData = {
        clips: files.slice(0, 1).map((file) => ({ file, text: '', bargeIn: true, asksConfirmation: false })),
        ended: false,
        expectation: 'free',
      };
      for (const { dialect, format } of WARM_STREAMS) {
        const id = this.nextWarmId--;
        try {
          this.host.attach({
            k: 'attach',
            id,
            dialect,
            frames: warmStreamFrames(dialect, format),
            settings: WARM_STREAM_SETTINGS,
            recognizer: { kind: 'off', reason: 'warm-up' },
            opening,
          });
          ids.push(id);
        } catch {
          this.host.drop(id); // a warm-up that fails leaves the first call as cold as before, nothing worse
        }
      }
    }
    const done = (): void => this.host.post({ k: 'warmed', req: msg.req, files, ms: Math.round(performance.now() - started) });
    if (ids.length === 0) {
      done();
      return;
    }
    setTimeout(() => {
      for (const id of ids) {
        try {
          this.host.hangup(id);
        } catch {
          this.host.drop(id);
        }
      }
      done();
    }, WARM_STREAM_MS);
  }
}
