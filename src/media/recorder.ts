/**
 * A call's recording (docs/media.md "Recordings"): the caller as heard and the agent as played,
 * placed by their times on the call's clock so the silence between them is kept, written as a
 * 16 kHz 16-bit PCM WAV (RIFF/WAVE, the canonical 44-byte header of Microsoft's "Multimedia
 * Programming Interface and Data Specifications 1.0"): `mono` mixes both parties in one channel,
 * `dual` puts the caller on the left channel and the agent on the right.
 *
 * Streaming: samples are held for at most about {@link RECORDER_FLUSH_MS} + {@link RECORDER_HOLD_MS}
 * and then handed to the {@link RecordingSink} in order; the header goes first with its sizes at
 * 0 and is written again, with the real sizes, when the recording closes. Agent audio handed to the
 * line ahead of real time (the playout's lead frames) is held until its time has come, so a
 * barge-in's `clear` removes from the recording what the caller never heard.
 *
 * Pure: no file, no clock of its own (every time is passed in, ms on the call's clock), so it
 * runs in a media worker and in a unit test.
 */

/** Sample rate of a recording, Hz (the media core's rate). */
export const RECORDING_SAMPLE_RATE = 16_000;
/** Bytes of a recording's WAV header. */
export const WAV_HEADER_BYTES = 44;
/** Audio held before it is handed to the sink, at most, ms (beyond {@link RECORDER_HOLD_MS}). */
export const RECORDER_FLUSH_MS = 1000;
/**
 * Audio newer than this is never handed to the sink, ms: caller audio arriving a little late
 * (network jitter) still lands in place, and agent audio not yet played can still be cleared.
 */
export const RECORDER_HOLD_MS = 500;
/**
 * Caller audio arriving within this of where the previous chunk ended continues it, ms: carriers
 * send audio without a gap, and their jitter must not cut clicks of silence into it.
 */
export const CALLER_SLACK_MS = 60;

/** `mono`: both parties mixed in one channel; `dual`: caller left, agent right. */
export type RecordingChannels = 'mono' | 'dual';

/** Where a recording's bytes go (a file in the daemon's state dir; an array in tests). */
export interface RecordingSink {
  /** Appends `bytes` (the header placeholder first, then the audio in order). */
  write(bytes: Uint8Array): void;
  /** Writes `header` over the first {@link WAV_HEADER_BYTES} bytes, then closes. Called once. */
  finish(header: Uint8Array): void;
}

/** What a closed recording holds. */
export interface RecordingSummary {
  /** Length of the audio, ms. */
  durationMs: number;
  /** Bytes written in all, header included. */
  bytes: number;
}

const SAMPLES_PER_MS = RECORDING_SAMPLE_RATE / 1000;

/**
 * The 44-byte header of a 16 kHz 16-bit PCM WAV of `channels` channels and `dataBytes` bytes of
 * samples (sizes clamped to the format's 32-bit fields).
 */
export function wavHeader(channels: 1 | 2, dataBytes: number): Uint8Array {
  const out = new Uint8Array(WAV_HEADER_BYTES);
  const view = new DataView(out.buffer);
  const ascii = (at: number, s: string): void => {
    for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
  };
  const data = Math.min(dataBytes, 0xffff_ffff - 36);
  ascii(0, 'RIFF');
  view.setUint32(4, 36 + data, true);
  ascii(8, 'WAVE');
  ascii(12, 'fmt ');
  view.setUint32(16, 16, true); // fmt chunk size
  view.setUint16(20, 1, true); // PCM
  view.setUint16(22, channels, true);
  view.setUint32(24, RECORDING_SAMPLE_RATE, true);
  view.setUint32(28, RECORDING_SAMPLE_RATE * 2 * channels, true); // byte rate
  view.setUint16(32, 2 * channels, true); // block align
  view.setUint16(34, 16, true); // bits per sample
  ascii(36, 'data');
  view.setUint32(40, data, true);
  return out;
}

/** One party's pending samples: `buf[0]` is sample number `base` of the call. */
class Track {
  buf = new Int16Array(RECORDING_SAMPLE_RATE * 2);
  /** Sample number just after the last one written (the next chunk's place, at the earliest). */
  end = 0;

  /** Writes `pcm` from sample `at` (≥ `base`), growing the buffer as needed. */
  put(pcm: Int16Array, at: number, base: number): void {
    const from = at - base;
    const need = from + pcm.length;
    if (need > this.buf.length) {
      const grown = new Int16Array(Math.max(need, this.buf.length * 2));
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf.set(pcm, from);
    this.end = Math.max(this.end, at + pcm.length);
  }

  /** Drops `count` samples from the front (they were handed to the sink). */
  shift(count: number): void {
    this.buf.copyWithin(0, count);
    this.buf.fill(0, this.buf.length - count);
  }
}

/**
 * Records one call. Feed it {@link caller} and {@link agent} audio as it comes, then
 * {@link close} once. Not re-entrant; every method after {@link close} is a no-op.
 */
export class CallRecorder {
  private readonly channels: RecordingChannels;
  private readonly sink: RecordingSink;
  private readonly startMs: number;
  private readonly callerTrack = new Track();
  private readonly agentTrack = new Track();
  /** Sample number of the first sample not yet handed to the sink. */
  private base = 0;
  private written = 0;
  private closed = false;

  /**
   * @param channels `mono` or `dual`
   * @param sink     where the WAV goes; its header placeholder is written at once
   * @param startMs  the call's clock when the recording starts (its time 0), ms
   * @throws RangeError for another channel layout
   */
  constructor(channels: RecordingChannels, sink: RecordingSink, startMs: number) {
    if (channels !== 'mono' && channels !== 'dual')
      throw new RangeError(`recording channels must be mono or dual; got ${String(channels)}`);
    this.channels = channels;
    this.sink = sink;
    this.startMs = startMs;
    sink.write(wavHeader(this.channelCount, 0));
  }

  private get channelCount(): 1 | 2 {
    return this.channels === 'dual' ? 2 : 1;
  }

  /** The call's sample number at clock time `atMs`. */
  private sampleAt(atMs: number): number {
    return Math.max(0, Math.round((atMs - this.startMs) * SAMPLES_PER_MS));
  }

  /**
   * Caller audio (16 kHz mono PCM16) whose last sample arrived at `atMs`: it continues the
   * caller's previous chunk, or, after a gap in the stream longer than {@link CALLER_SLACK_MS},
   * starts where its arrival puts it.
   */
  caller(pcm: Int16Array, atMs: number): void {
    if (this.closed || pcm.length === 0) return;
    const arrived = this.sampleAt(atMs) - pcm.length;
    const track = this.callerTrack;
    const at = arrived > track.end + CALLER_SLACK_MS * SAMPLES_PER_MS ? arrived : track.end;
    this.place(track, pcm, at, atMs);
  }

  /**
   * Agent audio (16 kHz mono PCM16) handed to the line at `atMs`: it plays after what was
   * handed before it, or at `atMs` when the line was idle.
   */
  agent(pcm: Int16Array, atMs: number): void {
    if (this.closed || pcm.length === 0) return;
    const track = this.agentTrack;
    this.place(track, pcm, Math.max(track.end, this.sampleAt(atMs)), atMs);
  }

  /** The line dropped agent audio not yet played at `atMs` (a barge-in's `clear`): it is not recorded. */
  clearAgent(atMs: number): void {
    if (this.closed) return;
    const track = this.agentTrack;
    const now = Math.max(this.base, this.sampleAt(atMs));
    if (track.end <= now) return;
    track.buf.fill(0, now - this.base, track.end - this.base);
    track.end = now;
  }

  private place(track: Track, pcm: Int16Array, at: number, atMs: number): void {
    // What is ripe goes first (up to this chunk's place at most), so a long silence before it is
    // written in slices and never held.
    const ripe = Math.min(at, this.sampleAt(atMs) - RECORDER_HOLD_MS * SAMPLES_PER_MS);
    if (ripe - this.base >= RECORDER_FLUSH_MS * SAMPLES_PER_MS) this.drain(ripe);
    // Audio for a place already handed to the sink (very late) is cut to what is still pending.
    const skip = Math.max(0, this.base - at);
    if (skip >= pcm.length) return;
    track.put(skip > 0 ? pcm.subarray(skip) : pcm, at + skip, this.base);
  }

  /** Hands the samples before sample number `upTo` to the sink, in slices of at most {@link RECORDER_FLUSH_MS}. */
  private drain(upTo: number): void {
    while (this.base < upTo) this.flush(Math.min(upTo, this.base + RECORDER_FLUSH_MS * SAMPLES_PER_MS));
  }

  /** Hands the samples before sample number `upTo` to the sink. */
  private flush(upTo: number): void {
    const count = upTo - this.base;
    if (count <= 0) return;
    const c = this.callerTrack.buf;
    const a = this.agentTrack.buf;
    let out: Int16Array;
    if (this.channels === 'dual') {
      out = new Int16Array(count * 2);
      for (let i = 0; i < count; i++) {
        out[2 * i] = i < c.length ? c[i]! : 0;
        out[2 * i + 1] = i < a.length ? a[i]! : 0;
      }
    } else {
      out = new Int16Array(count);
      for (let i = 0; i < count; i++) {
        const sum = (i < c.length ? c[i]! : 0) + (i < a.length ? a[i]! : 0);
        out[i] = sum > 32767 ? 32767 : sum < -32768 ? -32768 : sum;
      }
    }
    const bytes = new Uint8Array(out.buffer, out.byteOffset, out.byteLength); // little-endian, as every platform Node runs on
    this.sink.write(bytes);
    this.written += bytes.length;
    this.callerTrack.shift(Math.min(count, c.length));
    this.agentTrack.shift(Math.min(count, a.length));
    this.base = upTo;
  }

  /**
   * Writes what is pending (to the end of the later party's audio, or to `atMs` when given and
   * later: a call's trailing silence) and the final header; returns what was recorded.
   */
  close(atMs?: number): RecordingSummary {
    const bytesPerSample = 2 * this.channelCount;
    if (this.closed) return { durationMs: this.written / bytesPerSample / SAMPLES_PER_MS, bytes: WAV_HEADER_BYTES + this.written };
    const end = Math.max(this.callerTrack.end, this.agentTrack.end, atMs === undefined ? 0 : this.sampleAt(atMs));
    this.drain(end);
    this.closed = true;
    this.sink.finish(wavHeader(this.channelCount, this.written));
    return { durationMs: this.written / bytesPerSample / SAMPLES_PER_MS, bytes: WAV_HEADER_BYTES + this.written };
  }
}
