/**
 * A {@link MediaTransport} that records the call it carries (docs/media.md "Recordings"): the
 * caller's audio as the transport hands it over, and every reply frame as it is handed to the
 * line, decoded from the line's format to 16 kHz; a `clear` (barge-in) drops from the recording
 * the reply audio the caller never heard. Wraps any transport (a carrier stream, a LiveKit room),
 * so the call media session is the same with or without a recording.
 */
import { decodeAudio } from './audio.js';
import { StreamingResampler } from './audio-resample.js';
import type { PlayoutClock } from './playout-clock.js';
import { CallRecorder, RECORDING_SAMPLE_RATE, type RecordingChannels, type RecordingSink, type RecordingSummary } from './recorder.js';
import type { MediaTransport, StopReason, TransportListener } from './transport.js';

/** Records `inner`'s call into `sink`. */
export class RecordingTransport implements MediaTransport {
  readonly kind: MediaTransport['kind'];
  readonly outbound: MediaTransport['outbound'];
  private readonly recorder: CallRecorder;
  private readonly resampler: StreamingResampler | null;
  private summary: RecordingSummary | null = null;

  /**
   * @param inner    the transport carrying the call
   * @param channels `mono` or `dual`
   * @param sink     where the WAV goes
   * @param clock    the call's clock (the session's)
   * @param onClosed told once the recording is closed (the stream stopped), with what it holds
   */
  constructor(
    private readonly inner: MediaTransport,
    channels: RecordingChannels,
    sink: RecordingSink,
    private readonly clock: PlayoutClock,
    private readonly onClosed: (summary: RecordingSummary) => void = () => {},
  ) {
    this.kind = inner.kind;
    this.outbound = inner.outbound;
    this.recorder = new CallRecorder(channels, sink, clock.now());
    this.resampler =
      inner.outbound.sampleRate === RECORDING_SAMPLE_RATE ? null : new StreamingResampler(inner.outbound.sampleRate, RECORDING_SAMPLE_RATE);
  }

  listen(listener: TransportListener): void {
    this.inner.listen({
      onAudio: (pcm) => {
        this.recorder.caller(pcm, this.clock.now());
        listener.onAudio(pcm);
      },
      onDtmf: (digit) => listener.onDtmf(digit),
      onMarkAck: (name) => listener.onMarkAck(name),
      onStop: (reason: StopReason) => {
        this.close();
        listener.onStop(reason);
      },
    });
  }

  play(frame: Uint8Array): void {
    this.inner.play(frame);
    if (this.summary) return;
    const pcm = decodeAudio(frame, this.outbound.encoding);
    this.recorder.agent(this.resampler ? this.resampler.push(pcm) : pcm, this.clock.now());
  }

  mark(name: string): void {
    this.inner.mark(name);
  }

  clear(): void {
    this.inner.clear();
    this.recorder.clearAgent(this.clock.now());
  }

  hangup(): void {
    this.inner.hangup();
    // A transport that does not report its own hang-up still closes the recording.
    this.close();
  }

  /** Closes the recording (idempotent); returns what it holds. */
  close(): RecordingSummary {
    if (this.summary) return this.summary;
    this.summary = this.recorder.close(this.clock.now());
    this.onClosed(this.summary);
    return this.summary;
  }
}
