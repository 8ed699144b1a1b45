/**
 * Voice activity detection for a call's inbound audio (docs/media.md; the pipeline is audio in →
 * VAD → streaming recogniser → endpointing).
 *
 * Two parts, both plain data in and out so a media worker thread can own them:
 * - a {@link VoiceActivityDetector}: push mono PCM16 at a stated rate, get one decision per
 *   fixed-length frame (10, 20 or 30 ms); the one in use is WebRTC's VAD, ./vad-webrtc.ts
 *   (why it was chosen over Silero VAD is in that file);
 * - a {@link SpeechSegmenter}: the hangover/smoothing that turns those per-frame decisions into
 *   `speechStart` / `speechEnd` events with a minimum speech (e.g. 250 ms for barge-in) and a
 *   minimum silence (the end-of-utterance silence, which the caller may change per step).
 *
 * Times are stream times in ms, counted from the first sample pushed (sample counts, never
 * a wall clock), so results are deterministic and a test needs no clock.
 */

/** The decision for one frame of audio. */
export interface VadFrame {
  /** Stream time of the frame's first sample, ms since the first sample pushed. */
  startMs: number;
  /** Frame length, ms. */
  durationMs: number;
  /** Probability that the frame is speech, 0..1 (the WebRTC VAD is binary: 0 or 1). */
  probability: number;
  /** Whether the frame is speech (`probability` ≥ the detector's threshold). */
  speech: boolean;
}

/** A streaming voice activity detector for one audio stream (one call leg). */
export interface VoiceActivityDetector {
  /** Input sample rate, Hz. */
  readonly sampleRate: number;
  /** Frame length, ms. */
  readonly frameMs: number;
  /** Samples per frame (`sampleRate * frameMs / 1000`). */
  readonly frameSamples: number;
  /**
   * How long the detector keeps reporting speech after speech really stopped, ms (its own
   * built-in hangover); 0 when it has none. Give it to {@link SpeechSegmenter} so `speechEnd`
   * is dated at the real end.
   */
  readonly hangoverMs: number;
  /**
   * Classifies mono signed 16-bit PCM at {@link sampleRate}, in chunks of any length: samples
   * are buffered until a whole frame is there, so one call may yield zero or several frames.
   *
   * @returns the decisions of the frames completed by this chunk, in order
   * @throws Error after {@link close}
   */
  push(pcm: Int16Array): VadFrame[];
  /** Forgets buffered samples and the adaptive state; stream time restarts at 0. */
  reset(): void;
  /** Frees the detector. Idempotent; {@link push} then throws. */
  close(): void;
}

/** A change between silence and speech, from {@link SpeechSegmenter}. */
export interface SpeechEvent {
  /** `speechStart`: the caller started speaking; `speechEnd`: the caller stopped. */
  type: 'speechStart' | 'speechEnd';
  /**
   * When it happened, stream ms: for `speechStart` the start of the first speech frame of the
   * run (the onset); for `speechEnd` the end of the last speech frame, less the detector's
   * hangover (never before the onset).
   */
  atMs: number;
  /**
   * When it was decided, stream ms (the end of the frame that settled it): `speechStart` once
   * `minSpeechMs` of speech has accumulated, `speechEnd` once `minSilenceMs` of silence has
   * followed the real end (`atMs`). Latency-sensitive users (barge-in, endpointing) act at
   * this time.
   */
  decidedAtMs: number;
}

/** Options of a {@link SpeechSegmenter}. */
export interface SpeechSegmenterOptions {
  /**
   * Speech needed before `speechStart`, ms (default 250: a barge-in, not a click or cough).
   * Counted on the detector's frames, so a burst shorter than this may still start speech
   * when the detector's hangover makes up the rest (a WebRTC VAD run of under 70 ms gets 60 ms).
   */
  minSpeechMs?: number;
  /** Silence needed before `speechEnd`, ms (default 500; change it per step with {@link SpeechSegmenter.setMinSilenceMs}). */
  minSilenceMs?: number;
  /**
   * Longest gap of silence inside an onset still counted as one run, ms (default 60): speech
   * frames separated by less are summed towards `minSpeechMs`, a longer gap starts over.
   */
  maxOnsetGapMs?: number;
  /**
   * The detector's built-in hangover ({@link VoiceActivityDetector.hangoverMs}), ms (default
   * 0): the last that much of reported speech is taken as silence when dating `speechEnd`
   * and counting `minSilenceMs`.
   */
  hangoverMs?: number;
}

/** Checks a duration option: a finite number ≥ 0. */
function durationOption(name: string, value: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
    throw new RangeError(`${name} must be a duration in ms ≥ 0, got ${value}`);
  return value;
}

/**
 * Hangover and smoothing over per-frame VAD decisions: emits `speechStart` after
 * `minSpeechMs` of speech (short gaps tolerated) and `speechEnd` after `minSilenceMs` of
 * silence. Plain state machine; feed it the frames of a {@link VoiceActivityDetector} in order.
 */
export class SpeechSegmenter {
  private readonly minSpeechMs: number;
  private minSilenceMs: number;
  private readonly maxOnsetGapMs: number;
  private readonly hangoverMs: number;
  private speaking = false;
  /** Onset of the current speech (after `speechStart`). */
  private speechOnsetMs = 0;
  /** Onset of the candidate run (not yet speaking), or null. */
  private onsetMs: number | null = null;
  private onsetSpeechMs = 0;
  /** End of the last speech frame seen. */
  private lastSpeechEndMs = 0;
  /** Silence since the last speech frame, ms. */
  private silenceMs = 0;
  /** End of the last frame fed, to check order. */
  private lastEndMs = -Infinity;

  /** @throws RangeError when an option is negative or not a number */
  constructor(options: SpeechSegmenterOptions = {}) {
    this.minSpeechMs = durationOption('minSpeechMs', options.minSpeechMs ?? 250);
    this.minSilenceMs = durationOption('minSilenceMs', options.minSilenceMs ?? 500);
    this.maxOnsetGapMs = durationOption('maxOnsetGapMs', options.maxOnsetGapMs ?? 60);
    this.hangoverMs = durationOption('hangoverMs', options.hangoverMs ?? 0);
  }

  /** Whether the caller is speaking (after `speechStart`, before `speechEnd`). */
  get inSpeech(): boolean {
    return this.speaking;
  }

  /**
   * Changes the silence that ends speech, ms (e.g. longer while digits are being said, short
   * after a yes/no question). Applies to the silence already running.
   *
   * @throws RangeError when `ms` is negative or not a number
   */
  setMinSilenceMs(ms: number): void {
    this.minSilenceMs = durationOption('minSilenceMs', ms);
  }

  /**
   * Feeds one frame's decision.
   *
   * @returns the event this frame settles, or null
   * @throws RangeError when the frame starts before the end of the previous one
   */
  push(frame: Pick<VadFrame, 'startMs' | 'durationMs' | 'speech'>): SpeechEvent | null {
    if (!(frame.durationMs > 0) || !Number.isFinite(frame.startMs))
      throw new RangeError(`bad VAD frame: start ${frame.startMs} ms, duration ${frame.durationMs} ms`);
    if (frame.startMs < this.lastEndMs - 1e-6)
      throw new RangeError(`VAD frames out of order: ${frame.startMs} ms after ${this.lastEndMs} ms`);
    const endMs = frame.startMs + frame.durationMs;
    this.lastEndMs = endMs;
    if (frame.speech) {
      this.silenceMs = 0;
      this.lastSpeechEndMs = endMs;
      if (this.speaking) return null;
      this.onsetMs ??= frame.startMs;
      this.onsetSpeechMs += frame.durationMs;
      if (this.onsetSpeechMs >= this.minSpeechMs) {
        const atMs = this.onsetMs;
        this.speaking = true;
        this.speechOnsetMs = atMs;
        this.onsetMs = null;
        this.onsetSpeechMs = 0;
        return { type: 'speechStart', atMs, decidedAtMs: endMs };
      }
      return null;
    }
    this.silenceMs += frame.durationMs;
    if (this.speaking) {
      if (this.silenceMs + this.hangoverMs >= this.minSilenceMs) {
        this.speaking = false;
        return { type: 'speechEnd', atMs: this.realEndMs(), decidedAtMs: endMs };
      }
    } else if (this.onsetMs !== null && this.silenceMs > this.maxOnsetGapMs) {
      this.onsetMs = null;
      this.onsetSpeechMs = 0;
    }
    return null;
  }

  /** End of the current speech: the last speech frame's end less the hangover, not before the onset. */
  private realEndMs(): number {
    return Math.max(this.speechOnsetMs, this.lastSpeechEndMs - this.hangoverMs);
  }

  /**
   * Ends the stream: a `speechEnd` at the last speech frame when speech was still going on
   * (e.g. the caller hung up mid-sentence), else null. The segmenter is then reset.
   */
  flush(): SpeechEvent | null {
    const event: SpeechEvent | null = this.speaking
      ? { type: 'speechEnd', atMs: this.realEndMs(), decidedAtMs: Math.max(this.lastEndMs, this.lastSpeechEndMs) }
      : null;
    this.speaking = false;
    this.onsetMs = null;
    this.onsetSpeechMs = 0;
    this.silenceMs = 0;
    this.lastSpeechEndMs = 0;
    this.lastEndMs = -Infinity;
    return event;
  }
}
