/**
 * Sample rates and resampling for the media core: the rates it converts between, and a
 * streaming resampler whose output, chunk by chunk, equals the one-shot result. Pure: typed
 * arrays in and out; the kernels are memoised on first use and never written after, so a call's
 * media can run in a worker thread. Samples are mono signed 16-bit PCM, rates in Hz.
 *
 * Resampling: a polyphase windowed-sinc FIR (J. O. Smith, "Digital Audio Resampling Home Page",
 * https://ccrma.stanford.edu/~jos/resample/, bandlimited interpolation with a Kaiser window).
 * The ratio is kept exact (L/M in lowest terms), so every output sample sits on one of L phases
 * whose taps are computed once. When downsampling, the kernel's cutoff is scaled down to below
 * the new Nyquist: that is the anti-aliasing low-pass. wavefile's resampler is not used for
 * streams: it works on a whole signal (its IIR filter state and edge handling restart per call),
 * so resampling 20 ms chunks with it leaves a discontinuity at every chunk boundary (measured:
 * a 440 Hz tone taken 8 → 16 kHz in 20 ms chunks differs from the one-shot result at 12 dB SNR,
 * up to 10 622 LSB at the boundaries); the stream here equals its one-shot result exactly.
 */

/** Sample rates the media core converts between, Hz. */
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 48000] as const;
/** One of {@link SAMPLE_RATES}. */
export type SampleRate = (typeof SAMPLE_RATES)[number];

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
