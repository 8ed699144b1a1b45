/**
 * Audio formats of the media core (docs/media.md): the PCM plumbing every
 * transport needs — G.711 μ-law and A-law ↔ PCM16, raw PCM16 payloads, a streaming resampler,
 * a fixed-size {@link Framer}, and {@link clipToTelephony} (a cached 48 kHz clip → carrier frames).
 *
 * Everything here is pure: plain typed arrays in and out, no I/O, and no shared state but
 * constant tables (G.711, and resampler kernels memoised on first use), so a call's media can
 * run in a worker thread. Samples are signed 16-bit PCM (`Int16Array`), mono.
 * Sample rates are in Hz, durations in ms.
 *
 * Carrier formats (the payload inside each carrier's base64 `media` field):
 * - Twilio Media Streams: `audio/x-mulaw`, 8000 Hz, mono
 *   (https://www.twilio.com/docs/voice/media-streams/websocket-messages).
 * - Exotel Voicebot/Stream applet: raw/slin, 16-bit mono PCM little-endian at 8000 Hz by default
 *   (16000 and 24000 Hz on request); outbound chunks a multiple of 320 bytes, at least 3.2 kB
 *   (100 ms at 8 kHz) (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet);
 *   the extended applet can also send μ-law 8 kHz or L16 at 16 kHz
 *   (https://developer.exotel.com/docs/agentstream/stream-voicebot-extension).
 * - Plivo Audio Streams: `audio/x-l16` at 8000 or 16000 Hz, or `audio/x-mulaw` at 8000 Hz
 *   (https://docs.plivo.com/docs/voice/xml/audiostream). Plivo's docs do not state the byte
 *   order of `x-l16`; RFC 3551 §4.5.11 L16 is network (big-endian) order, while raw-PCM stream
 *   integrations send little-endian. Both are supported here (`pcm16le`, `pcm16be`); the
 *   transport chooses.
 *
 * The G.711 tables are in ./audio-g711.ts, the sample rates and the resampler in ./audio-resample.ts.
 */
import { clipSamples } from './wav.js';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from './audio-g711.js';
import { assertSampleRate, resample } from './audio-resample.js';

/**
 * How samples are carried in a payload:
 * - `mulaw`: ITU-T G.711 μ-law, one byte per sample;
 * - `alaw`: ITU-T G.711 A-law, one byte per sample;
 * - `pcm16le`: signed 16-bit linear PCM, little-endian (Exotel slin, Plivo x-l16 in practice);
 * - `pcm16be`: signed 16-bit linear PCM, big-endian (RFC 3551 L16);
 * - `pcm16`: the same as `pcm16le` (the name the carrier dialects use).
 */
export type AudioEncoding = 'mulaw' | 'alaw' | 'pcm16le' | 'pcm16be' | 'pcm16';
const ENCODINGS: readonly AudioEncoding[] = ['mulaw', 'alaw', 'pcm16le', 'pcm16be', 'pcm16'];

/** A mono audio format: encoding and sample rate (Hz). */
export interface AudioFormat {
  encoding: AudioEncoding;
  sampleRate: number;
}

/** @throws RangeError when `encoding` is not an {@link AudioEncoding} */
function assertEncoding(encoding: string): asserts encoding is AudioEncoding {
  if (!(ENCODINGS as readonly string[]).includes(encoding)) {
    throw new RangeError(`unsupported audio encoding: ${JSON.stringify(encoding)} (supported: ${ENCODINGS.join(', ')})`);
  }
}

/** Bytes per sample of `encoding`: 1 for G.711, 2 for PCM16. */
export function bytesPerSample(encoding: AudioEncoding): 1 | 2 {
  assertEncoding(encoding);
  return encoding === 'mulaw' || encoding === 'alaw' ? 1 : 2;
}

/**
 * Samples in `ms` of audio at `sampleRate` (e.g. 20 ms at 8000 Hz → 160).
 *
 * @throws RangeError for an unsupported rate, or when `ms` is not a positive duration holding a
 *         whole number of samples
 */
export function samplesIn(ms: number, sampleRate: number): number {
  assertSampleRate(sampleRate);
  const n = (ms * sampleRate) / 1000;
  if (!(ms > 0) || !Number.isInteger(n))
    throw new RangeError(`${String(ms)} ms at ${sampleRate} Hz is not a whole, positive number of samples`);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Raw PCM16 payloads.
// ---------------------------------------------------------------------------------------------

/**
 * Samples of a raw PCM16 payload (any alignment; copied).
 *
 * @param bytes     2 bytes per sample
 * @param bigEndian true for network order (RFC 3551 L16); default little-endian (Exotel slin)
 * @throws RangeError when the byte length is odd (a torn sample)
 */
export function pcm16FromBytes(bytes: Uint8Array, bigEndian = false): Int16Array {
  if (bytes.length % 2 !== 0) throw new RangeError(`PCM16 payload has an odd length (${bytes.length} bytes): a sample is torn`);
  const out = new Int16Array(bytes.length / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(2 * i, !bigEndian);
  return out;
}

/**
 * A raw PCM16 payload of `pcm` (a new buffer).
 *
 * @param bigEndian true for network order (RFC 3551 L16); default little-endian (Exotel slin)
 */
export function pcm16ToBytes(pcm: Int16Array, bigEndian = false): Uint8Array {
  const out = new Uint8Array(pcm.length * 2);
  const view = new DataView(out.buffer);
  for (let i = 0; i < pcm.length; i++) view.setInt16(2 * i, pcm[i]!, !bigEndian);
  return out;
}

/**
 * PCM16 samples of a payload in `encoding`.
 *
 * @throws RangeError for an unknown encoding or an odd-length PCM16 payload
 */
export function decodeAudio(bytes: Uint8Array, encoding: AudioEncoding): Int16Array {
  assertEncoding(encoding);
  switch (encoding) {
    case 'mulaw':
      return decodeMulaw(bytes);
    case 'alaw':
      return decodeAlaw(bytes);
    case 'pcm16':
    case 'pcm16le':
      return pcm16FromBytes(bytes, false);
    case 'pcm16be':
      return pcm16FromBytes(bytes, true);
  }
}

/**
 * A payload in `encoding` carrying `pcm`.
 *
 * @throws RangeError for an unknown encoding
 */
export function encodeAudio(pcm: Int16Array, encoding: AudioEncoding): Uint8Array {
  assertEncoding(encoding);
  switch (encoding) {
    case 'mulaw':
      return encodeMulaw(pcm);
    case 'alaw':
      return encodeAlaw(pcm);
    case 'pcm16':
    case 'pcm16le':
      return pcm16ToBytes(pcm, false);
    case 'pcm16be':
      return pcm16ToBytes(pcm, true);
  }
}

// ---------------------------------------------------------------------------------------------
// Framing.
// ---------------------------------------------------------------------------------------------

/** A frame flushed from a {@link Framer}: the tail of a stream, padded with silence. */
export interface TailFrame {
  /** Exactly `frameSamples` samples: the tail, then zeros. */
  samples: Int16Array;
  /** Samples of real audio at the start of `samples` (the rest is padding). */
  validSamples: number;
  /** True when padding was added (always, for a tail frame). */
  padded: true;
}

/**
 * Cuts a stream of PCM16 chunks of any size into fixed frames (e.g. 20 ms = 160 samples at
 * 8 kHz, the packet size of Twilio's media messages), keeping the remainder for the next push.
 */
export class Framer {
  readonly frameSamples: number;
  private pending: Int16Array;
  private fill = 0;

  /** @throws RangeError when `frameSamples` is not a positive integer */
  constructor(frameSamples: number) {
    if (!Number.isInteger(frameSamples) || frameSamples <= 0)
      throw new RangeError(`frame size must be a positive whole number of samples, got ${String(frameSamples)}`);
    this.frameSamples = frameSamples;
    this.pending = new Int16Array(frameSamples);
  }

  /** Samples held back, waiting for a full frame. */
  get buffered(): number {
    return this.fill;
  }

  /** Appends `pcm`; returns the frames it completed (each a new array of `frameSamples`). */
  push(pcm: Int16Array): Int16Array[] {
    const frames: Int16Array[] = [];
    let at = 0;
    while (at < pcm.length) {
      const take = Math.min(this.frameSamples - this.fill, pcm.length - at);
      this.pending.set(pcm.subarray(at, at + take), this.fill);
      this.fill += take;
      at += take;
      if (this.fill === this.frameSamples) {
        frames.push(this.pending);
        this.pending = new Int16Array(this.frameSamples);
        this.fill = 0;
      }
    }
    return frames;
  }

  /** The held-back tail padded with silence to a full frame, or null when nothing is held. */
  flush(): TailFrame | null {
    if (this.fill === 0) return null;
    const frame: TailFrame = { samples: this.pending, validSamples: this.fill, padded: true };
    this.pending = new Int16Array(this.frameSamples);
    this.fill = 0;
    return frame;
  }
}

// ---------------------------------------------------------------------------------------------
// Cached clips → carrier frames.
// ---------------------------------------------------------------------------------------------

/** One frame of a clip converted by {@link clipToTelephony}. */
export interface TelephonyFrame {
  /** The frame's payload in the target encoding (before any base64 the transport adds). */
  payload: Uint8Array;
  /** True for a last frame padded with silence. */
  padded: boolean;
}

/** Options of {@link clipToTelephony}. */
export interface ClipToTelephonyOptions {
  /**
   * Frame length, ms; default 20 (Twilio's and Plivo's packet). Exotel wants outbound chunks of
   * ≥ 100 ms in multiples of 320 bytes: 100 ms of 8 kHz PCM16 is 1600 bytes.
   */
  frameMs?: number;
}

/**
 * A cached clip (48 kHz mono PCM16 WAV, src/media/wav.ts) as the frames a carrier plays:
 * resampled to `format.sampleRate`, cut into `frameMs` frames (the last one padded with
 * silence and flagged) and encoded. E.g. `{ encoding: 'mulaw', sampleRate: 8000 }` gives
 * 160-byte frames for Twilio.
 *
 * @throws RangeError when `wavBytes` is not a 48 kHz mono PCM16 WAV, the format is unsupported,
 *         or `frameMs` does not hold a whole number of samples
 */
export function clipToTelephony(wavBytes: Uint8Array, format: AudioFormat, options: ClipToTelephonyOptions = {}): TelephonyFrame[] {
  assertEncoding(format.encoding);
  samplesIn(options.frameMs ?? 20, format.sampleRate); // check the format before reading the clip
  return pcmToTelephony(clipSamples(wavBytes), 48000, format, options);
}

/**
 * Mono PCM16 at `sampleRate` (e.g. a synthesiser's output) as carrier frames: what
 * {@link clipToTelephony} does after reading the WAV.
 *
 * @throws RangeError for an unsupported rate or encoding, or a `frameMs` that does not hold a
 *         whole number of samples
 */
export function pcmToTelephony(
  pcm: Int16Array,
  sampleRate: number,
  format: AudioFormat,
  options: ClipToTelephonyOptions = {},
): TelephonyFrame[] {
  assertEncoding(format.encoding);
  const frameSamples = samplesIn(options.frameMs ?? 20, format.sampleRate);
  const framer = new Framer(frameSamples);
  const frames: TelephonyFrame[] = framer
    .push(resample(pcm, sampleRate, format.sampleRate))
    .map((f) => ({ payload: encodeAudio(f, format.encoding), padded: false }));
  const tail = framer.flush();
  if (tail) frames.push({ payload: encodeAudio(tail.samples, format.encoding), padded: true });
  return frames;
}
