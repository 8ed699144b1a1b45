/**
 * A {@link MediaTransport} for tests: records everything sent with the time it was sent, lets a
 * test push caller audio, DTMF and stop, and can acknowledge marks the way a carrier does — once
 * the audio before the mark has played (modelled as: the frames sent so far, played back to back
 * from the first one at real time, plus a network delay), and never after a `clear`, except that
 * it echoes marks pending at `clear` like Twilio when `echoMarksOnClear` is set.
 */
import type { PlayoutClock } from './playout-clock.js';
import {
  FRAME_MS,
  frameBytesOf,
  type DtmfDigit,
  type MediaTransport,
  type OutboundFormat,
  type StopReason,
  type TransportListener,
} from './transport.js';

/** One recorded outbound action. */
export type SentAction =
  | { kind: 'play'; at: number; frame: Uint8Array }
  | { kind: 'mark'; at: number; name: string }
  | { kind: 'clear'; at: number }
  | { kind: 'hangup'; at: number };

/** Options of a {@link FakeTransport}. */
export interface FakeTransportOptions {
  /** Clock for timestamps and mark acknowledgements. */
  clock: PlayoutClock;
  /** Outbound format. Default μ-law 8 kHz (Twilio's). */
  outbound?: OutboundFormat;
  /** Acknowledge marks when their audio has played, plus this many ms; null: never (test calls {@link ackMark}). Default null. */
  ackDelayMs?: number | null;
  /** On `clear`, echo every pending mark at once (Twilio's behaviour). Default false. */
  echoMarksOnClear?: boolean;
}

/** A scripted transport that records what was sent. */
export class FakeTransport implements MediaTransport {
  readonly kind = 'fake' as const;
  readonly outbound: OutboundFormat;
  /** Everything sent, in order. */
  readonly sent: SentAction[] = [];
  private listener: TransportListener | null = null;
  private readonly clock: PlayoutClock;
  private readonly ackDelayMs: number | null;
  private readonly echoMarksOnClear: boolean;
  /** When the carrier's playback of the buffered frames ends, ms. */
  private playheadEnd = 0;
  private readonly pendingAcks = new Map<string, () => void>();
  private stopped = false;

  constructor(opts: FakeTransportOptions) {
    this.clock = opts.clock;
    this.outbound = opts.outbound ?? { encoding: 'mulaw', sampleRate: 8000, frameBytes: frameBytesOf('mulaw', 8000) };
    this.ackDelayMs = opts.ackDelayMs ?? null;
    this.echoMarksOnClear = opts.echoMarksOnClear ?? false;
  }

  listen(listener: TransportListener): void {
    this.listener = listener;
  }

  /** Frames sent, in order. */
  get frames(): Uint8Array[] {
    return this.sent.flatMap((a) => (a.kind === 'play' ? [a.frame] : []));
  }

  /** Count of actions of one kind. */
  count(kind: SentAction['kind']): number {
    return this.sent.filter((a) => a.kind === kind).length;
  }

  play(frame: Uint8Array): void {
    if (this.stopped) return;
    if (frame.byteLength !== this.outbound.frameBytes)
      throw new RangeError(`frame is ${frame.byteLength} bytes; this transport takes ${this.outbound.frameBytes}`);
    const now = this.clock.now();
    this.playheadEnd = Math.max(this.playheadEnd, now) + FRAME_MS;
    this.sent.push({ kind: 'play', at: now, frame });
  }

  mark(name: string): void {
    if (this.stopped) return;
    this.sent.push({ kind: 'mark', at: this.clock.now(), name });
    if (this.ackDelayMs === null) {
      this.pendingAcks.set(name, () => undefined);
      return;
    }
    const cancel = this.clock.setTimer(
      () => {
        this.pendingAcks.delete(name);
        this.listener?.onMarkAck(name);
      },
      this.playheadEnd - this.clock.now() + this.ackDelayMs,
    );
    this.pendingAcks.set(name, cancel);
  }

  clear(): void {
    if (this.stopped) return;
    this.sent.push({ kind: 'clear', at: this.clock.now() });
    this.playheadEnd = this.clock.now();
    const names = [...this.pendingAcks.keys()];
    for (const cancel of this.pendingAcks.values()) cancel();
    this.pendingAcks.clear();
    if (this.echoMarksOnClear) for (const n of names) this.listener?.onMarkAck(n);
  }

  hangup(): void {
    if (this.stopped) return;
    this.sent.push({ kind: 'hangup', at: this.clock.now() });
    this.stop('hangup');
  }

  /** Acknowledges a mark now, as the carrier would. */
  ackMark(name: string): void {
    const cancel = this.pendingAcks.get(name);
    if (cancel) {
      cancel();
      this.pendingAcks.delete(name);
    }
    this.listener?.onMarkAck(name);
  }

  /** Delivers caller audio (16 kHz PCM). */
  pushAudio(pcm: Int16Array): void {
    if (!this.stopped) this.listener?.onAudio(pcm);
  }

  /** Delivers a DTMF key. */
  pushDtmf(digit: DtmfDigit): void {
    if (!this.stopped) this.listener?.onDtmf(digit);
  }

  /** Ends the stream with `reason`; later actions are no-ops. */
  stop(reason: StopReason): void {
    if (this.stopped) return;
    this.stopped = true;
    for (const cancel of this.pendingAcks.values()) cancel();
    this.pendingAcks.clear();
    this.listener?.onStop(reason);
  }
}
