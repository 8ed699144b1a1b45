/**
 * A LiveKit room as a {@link MediaTransport} (docs/media.md "LiveKit rooms"): the phone
 * participant's audio track in, vagent's published `AudioSource` out, through
 * `@livekit/rtc-node` (1.1.0; its `dist/room.d.ts` and `dist/audio_source.d.ts`).
 *
 * - Caller audio: the SIP participant's track read with rtc-node's `AudioStream` at
 *   {@link MEDIA_CORE_SAMPLE_RATE} Hz, mono, 20 ms frames (rtc-node resamples from the room's
 *   48 kHz).
 * - Reply audio: 20 ms PCM16 frames at 48 kHz captured into an `AudioSource` in order
 *   (`captureFrame`, whose native queue plays them in real time); the playout paces them.
 * - Marks: LiveKit has none; a mark is acknowledged once the source has played everything
 *   captured before it (captured duration minus the source's `queuedDuration`).
 * - Barge-in: `clear()` is `AudioSource.clearQueue()`: queued audio is dropped, frames not yet
 *   handed to the source are discarded, and pending marks are never acknowledged.
 * - DTMF: `RoomEvent.DtmfReceived` from the phone participant.
 * - End: the phone participant leaves, or its `sip.callStatus` turns `hangup` →
 *   `onStop('caller-hangup')`; the room drops vagent → `onStop('closed')`; {@link hangup}
 *   leaves the room → `onStop('hangup')` (the daemon then removes the SIP participant through
 *   LiveKit's RoomService, which ends the phone call).
 *
 * {@link answered} resolves when the call is up: the phone participant is in the room and its
 * `sip.callStatus` is `active` (outbound: the callee picked up; inbound: LiveKit answers the
 * INVITE once vagent subscribes to the caller's audio). A participant without the attribute
 * counts as answered once its audio track arrives.
 */
import { AudioFrame, AudioSource, AudioStream, type Track } from '@livekit/rtc-node';
import type { RoomConnection, RoomParticipant } from './room.js';
import {
  FRAME_MS,
  isDtmfDigit,
  MEDIA_CORE_SAMPLE_RATE,
  type MediaTransport,
  type OutboundFormat,
  type StopReason,
  type TransportListener,
} from '../../media/transport.js';

/** Sample rate of vagent's published track, Hz (the cached clips' own rate: no resampling on the way out). */
export const LIVEKIT_OUT_RATE = 48_000;
/** Queue of the published `AudioSource`, ms: room for the playout's lead and some jitter. */
const SOURCE_QUEUE_MS = 400;
/** How often pending marks are looked at, ms. */
const MARK_POLL_MS = 10;

/** Outbound format of a room: PCM16 at 48 kHz, 20 ms frames. */
export const LIVEKIT_OUTBOUND: OutboundFormat & { minLeadFrames: number } = {
  encoding: 'pcm16le',
  sampleRate: LIVEKIT_OUT_RATE,
  frameBytes: ((LIVEKIT_OUT_RATE * FRAME_MS) / 1000) * 2,
  minLeadFrames: 1,
};

/** Options of {@link LiveKitRoomTransport}. */
export interface LiveKitTransportOptions {
  /** The phone participant's identity when known (outbound `sip-cl_<N>`); else the first SIP participant. */
  sipIdentity: string | null;
  /** Told once when the call is answered (see {@link LiveKitRoomTransport.answered}). */
  onAnswered?: () => void;
}

/** One call's room. */
export class LiveKitRoomTransport implements MediaTransport {
  readonly kind = 'livekit' as const;
  readonly outbound = LIVEKIT_OUTBOUND;
  private listener: TransportListener | null = null;
  private readonly source = new AudioSource(LIVEKIT_OUT_RATE, 1, SOURCE_QUEUE_MS);
  private sipIdentity: string | null;
  private stopped: StopReason | null = null;
  private inbound: ReadableStreamDefaultReader<AudioFrame> | null = null;
  /** Frames handed to {@link play} but not yet captured, with the clear generation they belong to. */
  private chain: Promise<void> = Promise.resolve();
  private generation = 0;
  /** Audio captured into the source (ms) and queued by {@link play} (ms). */
  private capturedMs = 0;
  private queuedToMs = 0;
  private readonly marks: Array<{ name: string; atMs: number }> = [];
  private markTimer: NodeJS.Timeout | null = null;
  private answeredResolve!: () => void;
  private isAnswered = false;
  /** Resolves when the call is answered; never rejects (a call that ends unanswered stops instead). */
  readonly answered: Promise<void>;

  constructor(
    private readonly room: RoomConnection,
    private readonly options: LiveKitTransportOptions,
  ) {
    this.sipIdentity = options.sipIdentity;
    this.answered = new Promise<void>((resolve) => {
      this.answeredResolve = resolve;
    });
    room.on('participantConnected', (p) => this.consider(p));
    room.on('attributesChanged', (_changed, p) => this.consider(p));
    room.on('participantDisconnected', (p) => {
      if (this.isPhone(p)) this.stop('caller-hangup');
    });
    room.on('audioTrack', (track, p) => this.onTrack(track, p));
    room.on('dtmf', (_code, digit, p) => {
      if (this.isPhone(p) && !this.stopped && isDtmfDigit(digit)) this.listener?.onDtmf(digit);
    });
    room.on('disconnected', () => this.stop('closed'));
    for (const p of room.participants.values()) this.consider(p);
    // Tracks subscribed before this transport listened (a phone already in the room).
    for (const [track, p] of room.audioTracks()) this.onTrack(track, p);
  }

  private onTrack(track: Track, p: RoomParticipant): void {
    if (this.sipIdentity === null && p.kind === 'sip') this.sipIdentity = p.identity;
    if (!this.isPhone(p)) return;
    this.readAudio(track);
    if (p.attributes['sip.callStatus'] === undefined) this.markAnswered();
  }

  /** Whether the call has ended on this transport. */
  get ended(): boolean {
    return this.stopped !== null;
  }

  /** Publishes vagent's track. @throws Error when the room refuses it */
  async publish(): Promise<void> {
    await this.room.publishAudio(this.source);
  }

  /** The phone participant's identity, once known. */
  get phoneIdentity(): string | null {
    return this.sipIdentity;
  }

  listen(listener: TransportListener): void {
    this.listener = listener;
  }

  play(frame: Uint8Array): void {
    if (this.stopped) return;
    if (frame.byteLength !== this.outbound.frameBytes)
      throw new RangeError(`a LiveKit frame is ${this.outbound.frameBytes} bytes (20 ms of 48 kHz PCM16); got ${frame.byteLength}`);
    const samples = new Int16Array(frame.byteLength / 2);
    new Uint8Array(samples.buffer).set(frame);
    const gen = this.generation;
    const ms = FRAME_MS;
    this.queuedToMs += ms;
    this.chain = this.chain.then(async () => {
      if (gen !== this.generation || this.stopped) return;
      try {
        await this.source.captureFrame(new AudioFrame(samples, LIVEKIT_OUT_RATE, 1, samples.length));
        if (gen === this.generation) this.capturedMs += ms;
      } catch {
        // The source closed (the call ended).
      }
    });
  }

  mark(name: string): void {
    if (this.stopped) return;
    this.marks.push({ name, atMs: this.queuedToMs });
    this.armMarks();
  }

  clear(): void {
    if (this.stopped) return;
    this.generation++;
    this.marks.length = 0;
    this.source.clearQueue();
    // Everything queued so far is dropped: positions continue from what was captured.
    this.queuedToMs = this.capturedMs;
  }

  hangup(): void {
    this.stop('hangup');
  }

  /** Audio the callee has heard, ms (captured minus still queued in the source). */
  private playedMs(): number {
    return Math.max(0, this.capturedMs - this.source.queuedDuration);
  }

  private armMarks(): void {
    if (this.markTimer || this.marks.length === 0) return;
    this.markTimer = setInterval(() => {
      const played = this.playedMs();
      while (this.marks.length > 0 && this.marks[0]!.atMs <= played && this.capturedMs >= this.marks[0]!.atMs) {
        const m = this.marks.shift()!;
        this.listener?.onMarkAck(m.name);
      }
      if (this.marks.length === 0 || this.stopped) {
        clearInterval(this.markTimer!);
        this.markTimer = null;
      }
    }, MARK_POLL_MS);
  }

  private isPhone(p: RoomParticipant): boolean {
    if (this.sipIdentity !== null) return p.identity === this.sipIdentity;
    return false;
  }

  /** Learns the phone participant and watches its `sip.callStatus`. */
  private consider(p: RoomParticipant): void {
    if (this.sipIdentity === null && p.kind === 'sip') this.sipIdentity = p.identity;
    if (!this.isPhone(p)) return;
    const status = p.attributes['sip.callStatus'];
    if (status === 'active') this.markAnswered();
    else if (status === 'hangup') this.stop('caller-hangup');
  }

  private markAnswered(): void {
    if (this.isAnswered || this.stopped) return;
    this.isAnswered = true;
    this.options.onAnswered?.();
    this.answeredResolve();
  }

  private readAudio(track: Track): void {
    if (this.inbound) return;
    const reader = new AudioStream(track, {
      sampleRate: MEDIA_CORE_SAMPLE_RATE,
      numChannels: 1,
      frameSizeMs: FRAME_MS,
    }).getReader();
    this.inbound = reader;
    void (async () => {
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done || this.stopped) break;
          // The frame's buffer belongs to rtc-node: the listener gets its own copy.
          this.listener?.onAudio(new Int16Array(value.data));
        }
      } catch {
        // The track ended with the participant.
      }
    })();
  }

  private stop(reason: StopReason): void {
    if (this.stopped) return;
    this.stopped = reason;
    this.generation++;
    this.marks.length = 0;
    if (this.markTimer) clearInterval(this.markTimer);
    this.markTimer = null;
    try {
      this.source.clearQueue();
    } catch {
      // closed
    }
    void this.inbound?.cancel().catch(() => undefined);
    void this.room.disconnect().finally(() => this.source.close().catch(() => undefined));
    this.answeredResolve();
    this.listener?.onStop(reason);
  }
}
