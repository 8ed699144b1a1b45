/**
 * What goes into and comes out of a {@link Playout}: the sink it plays into, the clips it is
 * given (and {@link splitFrames}, which cuts encoded audio into them), its options, what a clear
 * reports the caller heard, its counters and its events.
 */
import type { PlayoutClock } from './playout-clock.js';
import type { MediaTransport } from './transport.js';

/** The outbound half of a {@link MediaTransport}: all playout needs. */
export type PlayoutSink = Pick<MediaTransport, 'play' | 'mark' | 'clear'>;

/** One reply clip: fixed-size frames already in the transport's outbound format. */
export interface PlayoutClip {
  /** The frames, in order; each exactly `frameBytes` long. At least one. */
  frames: readonly Uint8Array[];
  /**
   * Name of the mark sent after the clip's last frame (1–64 printable ASCII characters, unique
   * among the clips not yet acknowledged). Default: `clip-<n>`, n counting from 1.
   */
  mark?: string;
}

/** Options of a {@link Playout}. */
export interface PlayoutOptions {
  /** Bytes in one frame (the transport's `outbound.frameBytes`: 160 for μ-law 8 kHz, 320 for PCM16 8 kHz, 640 for PCM16 16 kHz). */
  frameBytes: number;
  /** Duration of one frame, ms. Default {@link FRAME_MS} (20). */
  frameMs?: number;
  /**
   * Frames sent ahead of real time, 1–50 (the first `leadFrames` frames of a run leave at once).
   * Default 2 (40 ms): absorbs timer and network jitter
   * without making barge-in lose more than that much unaccounted audio. An adapter that
   * coalesces frames (Exotel's ≥ 100 ms chunks) needs a lead of at least its chunk (5).
   */
  leadFrames?: number;
  /** A frame sent more than this many ms after its due time counts as late. Default 5. */
  lateAfterMs?: number;
  /** Time source. Default {@link systemClock}. */
  clock?: PlayoutClock;
}

/** How much of one clip the caller heard, as reported by {@link Playout.clear}. */
export interface HeardClip {
  /** The clip's mark name. */
  mark: string;
  /** Frames in the clip. */
  frames: number;
  /** Frames heard: all of them when `acknowledged`, else the schedule's estimate (0 … frames). */
  heardFrames: number;
  /** `heardFrames` × frameMs, ms. */
  heardMs: number;
  /** The carrier acknowledged the clip's mark: it was certainly played to the end. */
  acknowledged: boolean;
}

/** What {@link Playout.clear} stopped. */
export interface ClearReport {
  /** Whether anything was playing or queued (and so the transport's `clear` was sent). */
  cleared: boolean;
  /** Clips of the interrupted run that were at least partly heard, in order. */
  heard: HeardClip[];
  /** Name of the last acknowledged mark of the run, or null: the certain part of what was heard ends there. */
  lastAcknowledgedMark: string | null;
  /** Total ms heard by the estimate (sum of `heard[].heardMs`). */
  heardMs: number;
  /** Marks of clips not heard at all (queued, or sent but never reached), in order. */
  unheard: string[];
  /** Queued frames discarded without being sent. */
  framesDiscarded: number;
}

/** Counters of a {@link Playout}, cumulative over its life. */
export interface PlayoutStats {
  /** Frames handed to the transport. */
  framesSent: number;
  /** Frames sent more than `lateAfterMs` after their due time. */
  framesLate: number;
  /** 99th percentile of per-frame lateness (send time − the later of due time and queueing time, ≥ 0), ms; 0.25 ms resolution, rounded up. 0 before any frame. */
  latenessP99Ms: number;
  /** Largest per-frame lateness seen, ms. */
  latenessMaxMs: number;
  /** Frames the transport refused (its `play` threw); they are skipped, the schedule goes on. */
  framesDropped: number;
  /** Queued frames discarded by {@link Playout.clear} (barge-in) or {@link Playout.close}. */
  framesDiscarded: number;
  /** Marks sent to the transport. */
  marksSent: number;
  /** Marks the transport acknowledged (clips certainly played). */
  clipsPlayed: number;
  /** Times {@link Playout.clear} sent the transport's `clear`. */
  clears: number;
}

/** Events of a {@link Playout}. */
export interface PlayoutEvents {
  /** A run began: its first frames were just sent. */
  started: [];
  /** The carrier acknowledged the clip's mark. */
  clipPlayed: [mark: string];
  /** Everything queued has been sent and, by the schedule, played out. Once per run. */
  drained: [];
}

/** Invalid input to a {@link Playout}. */
export class PlayoutError extends RangeError {
  override readonly name = 'PlayoutError';
}

/**
 * Cuts encoded audio into the fixed frames a {@link PlayoutClip} needs, padding the last frame
 * with `silence` (the encoding's zero level: 0xFF for G.711 μ-law per ITU-T G.711 Table 2a,
 * 0x00 for linear PCM). The frames are views into one copy of `audio`.
 * @param audio      the clip's bytes in the transport's outbound encoding (PCM16 little-endian: whole samples)
 * @param frameBytes bytes per frame (the transport's `outbound.frameBytes`)
 * @param silence    the byte value of silence, 0–255
 * @throws PlayoutError on empty audio, a bad frame size or silence byte
 */
export function splitFrames(audio: Uint8Array, frameBytes: number, silence: number): Buffer[] {
  if (!(audio instanceof Uint8Array) || audio.byteLength === 0) throw new PlayoutError('audio to split into frames is empty');
  if (!Number.isInteger(frameBytes) || frameBytes <= 0)
    throw new PlayoutError(`frameBytes must be a positive whole number of bytes; got ${frameBytes}`);
  if (!Number.isInteger(silence) || silence < 0 || silence > 255)
    throw new PlayoutError(`silence must be a byte value 0–255; got ${silence}`);
  const count = Math.ceil(audio.byteLength / frameBytes);
  const all = Buffer.alloc(count * frameBytes, silence);
  all.set(audio);
  return Array.from({ length: count }, (_, i) => all.subarray(i * frameBytes, (i + 1) * frameBytes));
}
