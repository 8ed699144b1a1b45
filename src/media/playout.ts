/**
 * Paced playout of reply audio into a transport at real time, with marks, so that a barge-in
 * knows what the caller heard. Its clock is ./playout-clock.ts; what goes in and out of it,
 * ./playout-shapes.ts.
 *
 * Carriers play what they are sent as it arrives and buffer only a little: Twilio Media Streams
 * and Exotel play `media` messages in order and echo a `mark` once the audio sent before it has
 * been played (https://www.twilio.com/docs/voice/media-streams/websocket-messages,
 * https://developer.exotel.com/docs/agentstream/stream-voicebot-applet); Plivo answers a
 * `checkpoint` with `playedStream` (https://www.plivo.com/docs/voice/xml/the-stream-element/checkpoint-event/).
 * Sending a whole reply at once would make `clear` (barge-in) throw away seconds of buffered
 * audio we could not account for, so frames leave one per 20 ms, a small configurable lead
 * ahead of the listener.
 *
 * Schedule: a run starts when a clip is queued while idle, at t0 = now(). Frame i of the run
 * (counted across clips) is due at t0 + max(0, i + 1 − lead) × frameMs: the first `lead` frames
 * leave at once, the rest one per frame period, so the audio sent never runs more than
 * lead × frameMs ahead of real time. Due times come from t0, never from accumulated
 * timer delays, so a late timer costs no drift: the next tick sends every frame already due.
 * That catch-up never puts more than `lead` frames ahead of real time, because a frame is sent
 * only once due. The carrier is assumed to play frame i during [t0 + i·frameMs, t0 + (i+1)·frameMs).
 *
 * Plain data in and out, clock injected: runs the same in a worker thread and on a fake clock.
 */
import { EventEmitter } from 'node:events';
import { systemClock, type PlayoutClock } from './playout-clock.js';
import {
  PlayoutError,
  type ClearReport,
  type HeardClip,
  type PlayoutClip,
  type PlayoutEvents,
  type PlayoutOptions,
  type PlayoutSink,
  type PlayoutStats,
} from './playout-shapes.js';
import { FRAME_MS } from './transport.js';

// The clock and the shapes are imported from here by much of src/media: re-exported.
export { systemClock, type PlayoutClock } from './playout-clock.js';
export { PlayoutError, splitFrames } from './playout-shapes.js';
export type { ClearReport, HeardClip, PlayoutClip, PlayoutEvents, PlayoutOptions, PlayoutSink, PlayoutStats } from './playout-shapes.js';

const MARK_RE = /^[\x20-\x7e]{1,64}$/;
const BUCKETS_PER_MS = 4;
const MAX_TRACKED_MS = 2000;

interface QueuedClip {
  mark: string;
  frames: readonly Uint8Array[];
  /** Index in the run of the clip's first frame. */
  start: number;
  /** Frames of this clip already sent. */
  sent: number;
  acknowledged: boolean;
  /** When the clip was queued, ms: lateness of a frame queued after its slot counts from here. */
  queuedAt: number;
}

/**
 * Paces clips into a transport. Not thread-safe and not re-entrant beyond what is documented:
 * event listeners may call any method, including {@link clear} from `started`.
 */
export class Playout extends EventEmitter<PlayoutEvents> {
  private readonly frameBytes: number;
  private readonly frameMs: number;
  private readonly lead: number;
  private readonly lateAfterMs: number;
  private readonly clock: PlayoutClock;
  private readonly sink: PlayoutSink;

  /** Clips of the current run, played or not (for the heard report). */
  private run: QueuedClip[] = [];
  /** Index in `run` of the clip being sent. */
  private cursor = 0;
  /** Frames of the run sent so far. */
  private runSent = 0;
  /** Frames of the run queued so far. */
  private runFrames = 0;
  private t0 = 0;
  private active = false;
  private cancelTimer: (() => void) | null = null;
  /** Marks sent and not yet acknowledged → their clip. */
  private readonly pending = new Map<string, QueuedClip>();
  private clipSeq = 0;
  private closed = false;

  private readonly lateness = new Uint32Array(MAX_TRACKED_MS * BUCKETS_PER_MS + 1);
  private readonly counters = {
    framesSent: 0,
    framesLate: 0,
    latenessMaxMs: 0,
    framesDropped: 0,
    framesDiscarded: 0,
    marksSent: 0,
    clipsPlayed: 0,
    clears: 0,
  };

  /**
   * @param sink the transport's outbound actions
   * @throws PlayoutError on a frame size, frame duration, lead or lateness bound that is not a sane number
   */
  constructor(sink: PlayoutSink, opts: PlayoutOptions) {
    super();
    const frameMs = opts.frameMs ?? FRAME_MS;
    const lead = opts.leadFrames ?? 2;
    const lateAfterMs = opts.lateAfterMs ?? 5;
    if (!Number.isInteger(opts.frameBytes) || opts.frameBytes <= 0)
      throw new PlayoutError(`frameBytes must be a positive whole number of bytes; got ${opts.frameBytes}`);
    if (!(frameMs > 0 && frameMs <= 1000)) throw new PlayoutError(`frameMs must be in (0, 1000] ms; got ${frameMs}`);
    if (!Number.isInteger(lead) || lead < 1 || lead > 50) throw new PlayoutError(`leadFrames must be a whole number 1–50; got ${lead}`);
    if (!(lateAfterMs >= 0)) throw new PlayoutError(`lateAfterMs must be ≥ 0 ms; got ${lateAfterMs}`);
    this.sink = sink;
    this.frameBytes = opts.frameBytes;
    this.frameMs = frameMs;
    this.lead = lead;
    this.lateAfterMs = lateAfterMs;
    this.clock = opts.clock ?? systemClock;
  }

  /** Whether a run is in progress (frames queued, or sent and not yet played out by the schedule). */
  get playing(): boolean {
    return this.active;
  }

  /**
   * Queues a clip after everything already queued. While idle, starts a run at once: the first
   * `leadFrames` frames are sent synchronously (and `started` is emitted) before this returns.
   * While a run is in progress the clip continues it seamlessly on the same schedule.
   * @returns the clip's mark name
   * @throws PlayoutError on an empty clip, a frame that is not a Uint8Array of `frameBytes`
   *   bytes, a bad or duplicate mark name, or after {@link close}
   */
  enqueue(clip: PlayoutClip): string {
    if (this.closed) throw new PlayoutError('playout is closed');
    if (!clip || !Array.isArray(clip.frames) || clip.frames.length === 0) throw new PlayoutError('a clip needs at least one frame');
    clip.frames.forEach((f, i) => {
      if (!(f instanceof Uint8Array)) throw new PlayoutError(`frame ${i} of the clip is not a Buffer/Uint8Array`);
      if (f.byteLength !== this.frameBytes) {
        throw new PlayoutError(
          `frame ${i} of the clip is ${f.byteLength} bytes; every frame must be ${this.frameBytes} bytes (${this.frameMs} ms)`,
        );
      }
    });
    const mark = clip.mark ?? `clip-${this.clipSeq + 1}`;
    if (!MARK_RE.test(mark)) throw new PlayoutError(`mark name must be 1–64 printable ASCII characters; got ${JSON.stringify(mark)}`);
    if (this.pending.has(mark) || this.run.some((c) => c.mark === mark && !c.acknowledged))
      throw new PlayoutError(`mark name ${JSON.stringify(mark)} is already in use`);
    this.clipSeq++;
    const queued: QueuedClip = {
      mark,
      frames: clip.frames.slice(),
      start: 0,
      sent: 0,
      acknowledged: false,
      queuedAt: this.clock.now(),
    };
    if (!this.active) {
      this.run = [];
      this.cursor = 0;
      this.runSent = 0;
      this.runFrames = 0;
      this.t0 = this.clock.now();
      this.active = true;
      queued.start = 0;
      this.run.push(queued);
      this.runFrames = queued.frames.length;
      this.tick();
      // `started` after the first frames left, unless a listener of those sends already cleared.
      if (this.active && this.run[0] === queued) this.emit('started');
    } else {
      queued.start = this.runFrames;
      this.run.push(queued);
      this.runFrames += queued.frames.length;
      // Was waiting for the run's audio to play out: send what is due now instead.
      this.cancel();
      this.tick();
    }
    return mark;
  }

  /**
   * The transport acknowledged mark `name` (forward {@link TransportListener.onMarkAck} here).
   * Emits `clipPlayed`. Names not awaited — unknown, already acknowledged, or cleared by
   * barge-in (Twilio echoes pending marks after `clear`) — are ignored.
   * @returns whether the name was awaited
   */
  markAcknowledged(name: string): boolean {
    const clip = this.pending.get(name);
    if (!clip) return false;
    this.pending.delete(name);
    clip.acknowledged = true;
    // A mark acknowledges every frame before it, so earlier clips of the run were heard too.
    const runClips = this.run.includes(clip) ? this.run : [];
    for (const c of runClips) {
      if (c === clip) break;
      if (!c.acknowledged && this.pending.has(c.mark)) {
        this.pending.delete(c.mark);
        c.acknowledged = true;
        this.counters.clipsPlayed++;
        this.emit('clipPlayed', c.mark);
      }
    }
    this.counters.clipsPlayed++;
    this.emit('clipPlayed', name);
    return true;
  }

  /**
   * Barge-in: drops every queued frame, sends the transport's `clear` once (only if a run is in
   * progress or a mark is unacknowledged), forgets the pending marks and reports what the caller
   * heard: clips whose marks were acknowledged in full, and the rest by the schedule's estimate
   * of the play position, min(frames sent, ⌊(now − t0) / frameMs⌋) — on schedule that is the
   * frames sent minus the lead. The estimate is an upper bound when the carrier ran dry (a
   * stalled sender): it then plays behind the schedule. Never throws; a second call with
   * nothing playing reports nothing.
   */
  clear(): ClearReport {
    const busy = this.active || this.pending.size > 0;
    const now = this.clock.now();
    const position = Math.min(this.runSent, Math.max(0, Math.floor((now - this.t0) / this.frameMs + 1e-9)));
    const heard: HeardClip[] = [];
    const unheard: string[] = [];
    let lastAcknowledgedMark: string | null = null;
    let framesDiscarded = 0;
    if (busy) {
      for (const c of this.run) {
        framesDiscarded += c.frames.length - c.sent;
        const heardFrames = c.acknowledged ? c.frames.length : Math.max(0, Math.min(c.frames.length, position - c.start));
        if (c.acknowledged) lastAcknowledgedMark = c.mark;
        if (heardFrames > 0)
          heard.push({
            mark: c.mark,
            frames: c.frames.length,
            heardFrames,
            heardMs: heardFrames * this.frameMs,
            acknowledged: c.acknowledged,
          });
        else unheard.push(c.mark);
      }
      this.cancel();
      this.pending.clear();
      this.active = false;
      this.run = [];
      this.cursor = 0;
      this.runSent = 0;
      this.runFrames = 0;
      this.counters.framesDiscarded += framesDiscarded;
      this.counters.clears++;
      this.sink.clear();
    }
    return {
      cleared: busy,
      heard,
      lastAcknowledgedMark,
      heardMs: heard.reduce((s, h) => s + h.heardMs, 0),
      unheard,
      framesDiscarded,
    };
  }

  /** Stops for good (the call ended): cancels the timer and discards the queue without sending `clear`. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.cancel();
    for (const c of this.run) this.counters.framesDiscarded += c.frames.length - c.sent;
    this.run = [];
    this.pending.clear();
    this.active = false;
  }

  /** A snapshot of the counters. */
  stats(): PlayoutStats {
    return { ...this.counters, latenessP99Ms: this.percentile(0.99) };
  }

  private cancel(): void {
    if (this.cancelTimer) {
      this.cancelTimer();
      this.cancelTimer = null;
    }
  }

  private due(index: number): number {
    return this.t0 + Math.max(0, index + 1 - this.lead) * this.frameMs;
  }

  /** Sends every frame due by now, then sets the timer for the next frame or the run's end. */
  private tick(): void {
    this.cancelTimer = null;
    if (this.closed || !this.active) return;
    const run = this.run;
    const now = this.clock.now();
    while (this.run === run && this.cursor < run.length) {
      const due = this.due(this.runSent);
      if (due > now) break;
      const clip = run[this.cursor]!;
      const frame = clip.frames[clip.sent]!;
      clip.sent++;
      this.runSent++;
      this.recordLateness(now - Math.max(due, clip.queuedAt));
      try {
        this.sink.play(frame);
        this.counters.framesSent++;
      } catch {
        this.counters.framesDropped++;
      }
      if (clip.sent === clip.frames.length) {
        this.cursor++;
        this.pending.set(clip.mark, clip);
        this.counters.marksSent++;
        this.sink.mark(clip.mark);
      }
    }
    if (this.run !== run || !this.active || this.closed) return; // a listener cleared or closed
    if (this.cursor < run.length) {
      this.cancelTimer = this.clock.setTimer(() => this.tick(), this.due(this.runSent) - now);
      return;
    }
    const end = this.t0 + this.runFrames * this.frameMs;
    if (now >= end) {
      this.active = false;
      this.emit('drained');
    } else {
      this.cancelTimer = this.clock.setTimer(() => this.tick(), end - now);
    }
  }

  private recordLateness(ms: number): void {
    const late = Math.max(0, ms);
    if (late > this.lateAfterMs) this.counters.framesLate++;
    if (late > this.counters.latenessMaxMs) this.counters.latenessMaxMs = late;
    this.lateness[Math.min(this.lateness.length - 1, Math.ceil(late * BUCKETS_PER_MS))]!++;
  }

  private percentile(p: number): number {
    const total = this.counters.framesSent + this.counters.framesDropped;
    if (total === 0) return 0;
    const rank = Math.ceil(p * total);
    let seen = 0;
    for (let i = 0; i < this.lateness.length; i++) {
      seen += this.lateness[i]!;
      if (seen >= rank) return i === this.lateness.length - 1 ? this.counters.latenessMaxMs : i / BUCKETS_PER_MS;
    }
    return this.counters.latenessMaxMs;
  }
}
