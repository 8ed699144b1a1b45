/**
 * Audio formats of the media core (DESIGN.md §3 "Media"; issue 16): the PCM plumbing every
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
 */
import { clipSamples } from './wav.js';

/** Sample rates the media core converts between, Hz. */
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 48000] as const;
/** One of {@link SAMPLE_RATES}. */
export type SampleRate = (typeof SAMPLE_RATES)[number];

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

/**
 * Checks that `rate` is one of {@link SAMPLE_RATES}.
 *
 * @throws RangeError naming the rate and the supported ones otherwise
 */
export function assertSampleRate(rate: number): asserts rate is SampleRate {
  if (!(SAMPLE_RATES as readonly number[]).includes(rate)) {
    throw new RangeError(`unsupported sample rate: ${String(rate)} Hz (supported: ${SAMPLE_RATES.join(', ')})`);
  }
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
// G.711 (ITU-T Recommendation G.711, "Pulse code modulation (PCM) of voice frequencies", 1988,
// Tables 1a/2a for A-law and 1b/2b for μ-law). The segment search follows the public-domain
// reference g711.c by Sun Microsystems, scaled to 16-bit input as in the `alawmulaw` codec that
// `wavefile` bundles (https://github.com/rochars/alawmulaw), which the tests use as an oracle.
// Encoding is a 64 Ki-entry table lookup and decoding a 256-entry one, built once per module
// instance (constant after that, so safe to share inside a worker).
// ---------------------------------------------------------------------------------------------

const MULAW_BIAS = 0x84; // 132: the μ-law bias, in 16-bit units
const MULAW_CLIP = 32635; // largest magnitude before the bias would overflow the top segment

/** μ-law code of one 16-bit sample (G.711 Table 2b; Sun g711.c `linear2ulaw`). */
function mulawOf(sample: number): number {
  let mask = 0xff;
  let x = sample;
  if (x < 0) {
    x = -x;
    mask = 0x7f;
  }
  if (x > MULAW_CLIP) x = MULAW_CLIP;
  x += MULAW_BIAS;
  let seg = 0;
  for (let v = x >> 8; v > 0 && seg < 7; v >>= 1) seg++; // position of the top bit above bit 7
  const mantissa = (x >> (seg + 3)) & 0x0f;
  return ((seg << 4) | mantissa) ^ mask;
}

/** 16-bit value of one μ-law code (G.711 Table 2b; Sun g711.c `ulaw2linear`): the segment's midpoint. */
function linearOfMulaw(code: number): number {
  const u = ~code & 0xff;
  const t = (((u & 0x0f) << 3) + MULAW_BIAS) << ((u & 0x70) >> 4);
  return u & 0x80 ? MULAW_BIAS - t : t - MULAW_BIAS;
}

/** A-law code of one 16-bit sample (G.711 Table 1a; Sun g711.c `linear2alaw`, even bits inverted). */
function alawOf(sample: number): number {
  let x = sample >> 3; // 13-bit
  let mask = 0xd5; // sign bit set (positive) and even bits inverted
  if (x < 0) {
    mask = 0x55;
    x = -x - 1;
  }
  let seg = 0;
  while (seg < 8 && x > (0x20 << seg) - 1) seg++; // segment ends 0x1F, 0x3F, … 0xFFF
  if (seg >= 8) return 0x7f ^ mask;
  const mantissa = seg < 2 ? (x >> 1) & 0x0f : (x >> seg) & 0x0f;
  return ((seg << 4) | mantissa) ^ mask;
}

/** 16-bit value of one A-law code (G.711 Table 1a; Sun g711.c `alaw2linear`): the segment's midpoint. */
function linearOfAlaw(code: number): number {
  const a = (code ^ 0x55) & 0xff;
  let t = (a & 0x0f) << 4;
  const seg = (a & 0x70) >> 4;
  if (seg === 0) t += 8;
  else if (seg === 1) t += 0x108;
  else t = (t + 0x108) << (seg - 1);
  return a & 0x80 ? t : -t;
}

function encodeTable(of: (sample: number) => number): Uint8Array {
  const table = new Uint8Array(65536);
  for (let i = 0; i < 65536; i++) table[i] = of(i - 32768);
  return table;
}
function decodeTable(of: (code: number) => number): Int16Array {
  const table = new Int16Array(256);
  for (let c = 0; c < 256; c++) table[c] = of(c);
  return table;
}
const MULAW_ENCODE = encodeTable(mulawOf);
const MULAW_DECODE = decodeTable(linearOfMulaw);
const ALAW_ENCODE = encodeTable(alawOf);
const ALAW_DECODE = decodeTable(linearOfAlaw);

/**
 * PCM16 → G.711 μ-law (ITU-T G.711 μ-law, as Twilio's and Plivo's `audio/x-mulaw`): one byte
 * per sample. 0 → 0xFF; 32767 → 0x80; −32768 → 0x00. Magnitudes above 32635 saturate.
 */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = MULAW_ENCODE[pcm[i]! + 32768]!;
  return out;
}

/** G.711 μ-law → PCM16: one sample per byte; 0xFF and 0x7F → 0, 0x80 → 32124, 0x00 → −32124. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = MULAW_DECODE[bytes[i]!]!;
  return out;
}

/** PCM16 → G.711 A-law (even bits inverted, as on the wire): 0 → 0xD5; 32767 → 0xAA; −32768 → 0x2A. */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = ALAW_ENCODE[pcm[i]! + 32768]!;
  return out;
}

/** G.711 A-law → PCM16: one sample per byte; 0xD5 → 8, 0xAA → 32256, 0x2A → −32256. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = ALAW_DECODE[bytes[i]!]!;
  return out;
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
// Resampling: a polyphase windowed-sinc FIR (J. O. Smith, "Digital Audio Resampling Home Page",
// https://ccrma.stanford.edu/~jos/resample/, bandlimited interpolation with a Kaiser window).
// The ratio is kept exact (L/M in lowest terms), so every output sample sits on one of L phases
// whose taps are computed once. When downsampling, the kernel's cutoff is scaled down to below
// the new Nyquist: that is the anti-aliasing low-pass. wavefile's resampler is not used for
// streams: it works on a whole signal (its IIR filter state and edge handling restart per call),
// so resampling 20 ms chunks with it leaves a discontinuity at every chunk boundary (measured:
// a 440 Hz tone taken 8 → 16 kHz in 20 ms chunks differs from the one-shot result at 12 dB SNR,
// up to 10 622 LSB at the boundaries); the stream here equals its one-shot result exactly.
// ---------------------------------------------------------------------------------------------

/** Zero crossings of the sinc kept on each side of the centre, at the kernel's cutoff. */
const SINC_ZEROS = 16;
/**
 * Kaiser window β: sidelobes near −80 dB. With 16 zero crossings and the 0.9 roll-off, 48 kHz →
 * 8 kHz passes 3.0 kHz flat, 3.4 kHz at −1.5 dB and 3.6 kHz at −6 dB, and a 4.2 kHz tone (which
 * would fold onto 3.8 kHz) comes out ≈ 80 dB down (measured; test/unit/media-audio.test.ts
 * asserts ≥ 60 dB).
 */
const KAISER_BETA = 8;
/** Cutoff (the −6 dB point) as a fraction of the lower Nyquist frequency; the stop band starts near that Nyquist. */
const ROLLOFF = 0.9;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Zeroth-order modified Bessel function of the first kind (series), for the Kaiser window. */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < 1e-12 * sum) break;
  }
  return sum;
}

/** The taps of one conversion: `phases` rows of `width` taps (row p for output phase p/L). */
interface Kernel {
  readonly up: number; // L
  readonly down: number; // M
  readonly half: number; // taps each side: inputs i-half+1 … i+half contribute to an output between i and i+1
  readonly taps: Float64Array; // phases × (2·half); never written after buildKernel
}

/**
 * Kernels built so far, by `from→to`: at most 20 (the rate pairs), each built once (≈ 0.3–6 ms)
 * and never written after, so every stream of a process (or worker) shares them.
 */
const KERNELS = new Map<string, Kernel>();

function kernelFor(fromRate: number, toRate: number): Kernel {
  const key = `${fromRate}>${toRate}`;
  let kernel = KERNELS.get(key);
  if (!kernel) {
    kernel = buildKernel(fromRate, toRate);
    KERNELS.set(key, kernel);
  }
  return kernel;
}

function buildKernel(fromRate: number, toRate: number): Kernel {
  const g = gcd(fromRate, toRate);
  const up = toRate / g;
  const down = fromRate / g;
  const fc = ROLLOFF * Math.min(1, up / down); // cutoff, as a fraction of the input Nyquist
  const half = Math.ceil(SINC_ZEROS / fc);
  const width = 2 * half;
  const taps = new Float64Array(up * width);
  const i0beta = besselI0(KAISER_BETA);
  for (let p = 0; p < up; p++) {
    const frac = p / up; // output position after input i, in input samples
    let sum = 0;
    for (let k = 0; k < width; k++) {
      const x = k - half + 1 - frac; // distance from the output to input i-half+1+k
      const r = x / half;
      const w = Math.abs(r) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0beta;
      const s = x === 0 ? 1 : Math.sin(Math.PI * fc * x) / (Math.PI * fc * x);
      const h = fc * s * w;
      taps[p * width + k] = h;
      sum += h;
    }
    for (let k = 0; k < width; k++) taps[p * width + k]! /= sum; // unity gain at DC for every phase
  }
  return { up, down, half, taps };
}

/**
 * A stateful resampler for one stream of mono PCM16: push chunks of any size (e.g. a carrier's
 * 20 ms frames), get the resampled samples so far; `flush` at the end of the stream. The output
 * of a stream, concatenated, is exactly {@link resample} of the whole input (the filter sees
 * across chunk boundaries), so chunking adds no artefacts. Output lags input by the filter's
 * half-width: {@link StreamingResampler.latencyMs} (≈ 2.2 ms for the rates here).
 *
 * Length: a stream of N input samples gives ⌈N·to/from⌉ output samples in all.
 */
export class StreamingResampler {
  readonly fromRate: SampleRate;
  readonly toRate: SampleRate;
  private readonly kernel: Kernel | null;
  /**
   * Inputs some future output still needs; `buf[0]` is input number `base`. It starts with
   * `half` zeros standing for the silence before the stream, so no tap ever reads outside it.
   */
  private buf: Float64Array;
  private base: number;
  private received = 0;
  /** Index of the next output sample. */
  private next = 0;
  private flushed = false;

  /**
   * @throws RangeError when a rate is not one of {@link SAMPLE_RATES}
   */
  constructor(fromRate: number, toRate: number) {
    assertSampleRate(fromRate);
    assertSampleRate(toRate);
    this.fromRate = fromRate;
    this.toRate = toRate;
    this.kernel = fromRate === toRate ? null : kernelFor(fromRate, toRate);
    const half = this.kernel?.half ?? 0;
    this.buf = new Float64Array(half);
    this.base = -half;
  }

  /** How far output lags input, ms (0 when the rates are equal). */
  get latencyMs(): number {
    return this.kernel ? (this.kernel.half * 1000) / this.fromRate : 0;
  }

  /**
   * Resamples the next chunk; returns the output samples now complete (possibly none).
   *
   * @throws Error after {@link StreamingResampler.flush}
   */
  push(pcm: Int16Array): Int16Array {
    if (this.flushed) throw new Error('StreamingResampler: push after flush');
    if (!this.kernel) return pcm.slice();
    this.append(pcm, 0);
    this.received += pcm.length;
    return this.emit(false);
  }

  /** Ends the stream: the remaining output (the input is taken as silence after its end). */
  flush(): Int16Array {
    if (this.flushed) return new Int16Array(0);
    this.flushed = true;
    if (!this.kernel) return new Int16Array(0);
    this.append(new Int16Array(0), this.kernel.half); // the silence after the end
    return this.emit(true);
  }

  /** Appends `pcm`, then `zeros` zero samples, to what is kept (one allocation). */
  private append(pcm: Int16Array, zeros: number): void {
    const merged = new Float64Array(this.buf.length + pcm.length + zeros);
    merged.set(this.buf);
    merged.set(pcm, this.buf.length);
    this.buf = merged;
  }

  private emit(final: boolean): Int16Array {
    const { up, down, half, taps } = this.kernel!;
    const width = 2 * half;
    // Outputs of the whole stream: ⌈N·up/down⌉. Before the end, output n needs inputs up to
    // ⌊n·down/up⌋ + half, so only n < (received − half)·up/down are ready.
    const total = Math.ceil((this.received * up) / down);
    const limit = final ? total : Math.min(total, Math.max(0, Math.ceil(((this.received - half) * up) / down)));
    const count = Math.max(0, limit - this.next);
    const result = new Int16Array(count);
    const buf = this.buf;
    let pos = this.next * down;
    let i = Math.floor(pos / up);
    let phase = pos - i * up;
    for (let j = 0; j < count; j++) {
      const row = phase * width;
      const off = i - half + 1 - this.base;
      let acc = 0;
      for (let k = 0; k < width; k++) acc += taps[row + k]! * buf[off + k]!;
      const v = Math.round(acc);
      result[j] = v > 32767 ? 32767 : v < -32768 ? -32768 : v;
      phase += down;
      while (phase >= up) {
        phase -= up;
        i++;
      }
    }
    this.next += count;
    pos = this.next * down;
    // Keep only the inputs a future output needs.
    const drop = Math.min(buf.length, Math.max(0, Math.floor(pos / up) - half + 1 - this.base));
    if (drop > 0) {
      this.buf = buf.subarray(drop);
      this.base += drop;
    }
    return result;
  }
}

/**
 * `pcm` resampled from `fromRate` to `toRate` Hz in one go (a {@link StreamingResampler} pushed
 * once and flushed): ⌈N·to/from⌉ samples; a copy when the rates are equal. Downsampling removes
 * what lies above the new Nyquist frequency (≥ 60 dB at the stop band).
 *
 * @throws RangeError when a rate is not one of {@link SAMPLE_RATES}
 */
export function resample(pcm: Int16Array, fromRate: number, toRate: number): Int16Array {
  const r = new StreamingResampler(fromRate, toRate);
  const a = r.push(pcm);
  const b = r.flush();
  if (b.length === 0) return a;
  const out = new Int16Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
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
