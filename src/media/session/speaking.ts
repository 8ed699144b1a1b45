/**
 * The speaking half of a {@link CallMediaSession}: a reply's clips converted to the transport's
 * outbound format (or taken as pre-built frames), queued on the {@link Playout} with one mark
 * per clip (`t<turn>c<clip>`), the `reply` event when a reply's first frame leaves (with the
 * latency from the end of the caller's speech), and a barge-in's clear. When the call closes,
 * and what a played mark means for it, is the session's.
 */
import { clipToTelephony } from '../audio.js';
import type { ReplyClip, ReplyEvent } from '../call-session-port.js';
import type { PlayoutClock } from '../playout-clock.js';
import type { ClearReport, PlayoutStats } from '../playout-shapes.js';
import { Playout } from '../playout.js';
import type { MediaTransport } from '../transport.js';

/** What the session tells the speaking half, and is told by it. */
export interface SpeakingHost {
  /** True once the call has ended. */
  ended(): boolean;
  /** A prompt started playing. */
  promptStarted(): void;
  /** Everything queued has played. */
  drained(): void;
  /** The clip of mark `mark` has played (its mark was acknowledged). */
  clipPlayed(mark: string): void;
  /** A reply started playing (or had nothing to play). */
  reply(event: ReplyEvent): void;
}

/** The reply clips queued and playing (see the module comment). */
export class ReplySpeaking {
  private readonly playout: Playout;
  /** Clips queued or playing, in order, with their marks. */
  private queued: { mark: string; clip: ReplyClip }[] = [];
  /** Reply waiting for its first frame to be sent: for the `reply` event. */
  private awaitingFirstFrame: Omit<ReplyEvent, 'firstFrameAtMs' | 'latencyMs'> | null = null;
  private turnSeq = 0;
  /** Latency of each reply from the end of the caller's speech to its first frame, ms. */
  readonly latencies: number[] = [];

  /**
   * @param counters the session's counters: clips that are not a 48 kHz mono PCM16 WAV are counted skipped
   */
  constructor(
    private readonly transport: MediaTransport,
    private readonly clock: PlayoutClock,
    leadFrames: number | undefined,
    private readonly host: SpeakingHost,
    private readonly counters: { clipsSkipped: number },
  ) {
    const sink = {
      play: (frame: Uint8Array) => {
        this.transport.play(frame);
        this.firstFrameSent();
      },
      mark: (name: string) => this.transport.mark(name),
      clear: () => this.transport.clear(),
    };
    this.playout = new Playout(sink, { frameBytes: transport.outbound.frameBytes, clock, leadFrames });
    this.playout.on('started', () => host.promptStarted());
    this.playout.on('drained', () => host.drained());
    this.playout.on('clipPlayed', (mark) => this.onClipPlayed(mark));
  }

  /** True while a clip is playing or queued. */
  get playing(): boolean {
    return this.playout.playing;
  }

  /** The clip playing now (the first not yet played), if any. */
  get currentClip(): ReplyClip | undefined {
    return this.queued[0]?.clip;
  }

  /**
   * Queues a reply's clips behind what plays. Returns the mark of its last clip (null when it
   * had nothing to play: then the `reply` event is told at once), or undefined when the call
   * ended meanwhile.
   */
  play(clips: ReplyClip[], cause: ReplyEvent['cause'], endOfSpeechAtMs: number | null): string | null | undefined {
    const seq = ++this.turnSeq;
    const format = { encoding: this.transport.outbound.encoding, sampleRate: this.transport.outbound.sampleRate };
    const text = clips.map((c) => c.text).join(' ');
    let lastMark: string | null = null;
    const wasPlaying = this.playout.playing;
    this.awaitingFirstFrame = { text, cause, endOfSpeechAtMs };
    clips.forEach((clip, i) => {
      if (!clip || (!clip.wav && !clip.frames) || this.host.ended()) return;
      let frames: Uint8Array[];
      try {
        frames = clip.frames ? [...clip.frames] : clipToTelephony(clip.wav!, format).map((f) => f.payload);
      } catch {
        this.counters.clipsSkipped++; // not a 48 kHz mono PCM16 WAV: the caller hears the rest
        return;
      }
      if (frames.length === 0) return;
      const mark = `t${seq}c${i + 1}`;
      this.queued.push({ mark, clip });
      this.playout.enqueue({ frames, mark });
      lastMark = mark;
    });
    if (this.host.ended()) return undefined;
    if (lastMark === null) {
      this.awaitingFirstFrame = null;
      this.host.reply({ text, cause, firstFrameAtMs: null, endOfSpeechAtMs, latencyMs: null });
      if (!wasPlaying && !this.playout.playing) this.host.drained();
    }
    return lastMark;
  }

  /** Stops playout (transport `clear` included) and forgets what was queued. */
  clear(): ClearReport {
    const report = this.playout.clear();
    this.queued = [];
    this.awaitingFirstFrame = null;
    return report;
  }

  /** The carrier acknowledged mark `name`. */
  markAcknowledged(name: string): void {
    this.playout.markAcknowledged(name);
  }

  /** Playout's counters. */
  stats(): PlayoutStats {
    return this.playout.stats();
  }

  /** Stops playout for good (the call ended). */
  close(): void {
    this.playout.close();
  }

  private firstFrameSent(): void {
    const pending = this.awaitingFirstFrame;
    if (!pending) return;
    this.awaitingFirstFrame = null;
    const at = this.clock.now();
    const latencyMs = pending.endOfSpeechAtMs === null ? null : at - pending.endOfSpeechAtMs;
    if (latencyMs !== null) this.latencies.push(latencyMs);
    this.host.reply({ ...pending, firstFrameAtMs: at, latencyMs });
  }

  private onClipPlayed(mark: string): void {
    const i = this.queued.findIndex((q) => q.mark === mark);
    if (i >= 0) this.queued.splice(0, i + 1);
    this.host.clipPlayed(mark);
  }
}
