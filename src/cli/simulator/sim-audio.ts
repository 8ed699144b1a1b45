/**
 * Caller lines for the scripted carrier client (./sim-client.ts), which takes them as mono
 * PCM16 at 16 kHz: a WAV file (any PCM or float bit depth, mono or stereo) decoded with
 * `wavefile` and resampled with ../../media/audio.ts, or synthesised audio resampled the same way.
 */
import * as wavefileModule from 'wavefile';
import { resample, SAMPLE_RATES } from '../../media/audio-resample.js';

type WaveFileClass = typeof wavefileModule.WaveFile;
const loaded = wavefileModule as unknown as { WaveFile?: WaveFileClass; default?: { WaveFile: WaveFileClass } };
const WaveFile: WaveFileClass = loaded.WaveFile ?? loaded.default!.WaveFile;

/** The rate caller lines are given to the simulated carrier in, Hz. */
export const CALLER_LINE_RATE = 16000;

/** Longest caller line accepted, seconds: a line, not a recording of a whole call. */
export const MAX_CALLER_LINE_S = 120;

/** A WAV file that cannot be a caller line; the message says why, for people. */
export class CallerWavError extends Error {
  override readonly name = 'CallerWavError';
}

/**
 * Mono PCM16 at `rate` Hz as a 16 kHz caller line.
 * @throws RangeError when `rate` is not one of ../../media/audio.ts SAMPLE_RATES
 */
export function callerLineFromPcm(pcm: Int16Array, rate: number): Int16Array {
  return rate === CALLER_LINE_RATE ? pcm : resample(pcm, rate, CALLER_LINE_RATE);
}

/**
 * A WAV file's audio as a 16 kHz mono PCM16 caller line: channels averaged, bit depth
 * converted to 16, rate converted (../../media/audio.ts `resample` for 8/16/22.05/24/48 kHz, wavefile's
 * interpolation for other rates such as 44.1 kHz).
 * @throws CallerWavError when the bytes are not a readable WAV, hold no samples, use a
 *   compressed format (A-law/μ-law WAVs are decoded; others are refused), or last longer than
 *   {@link MAX_CALLER_LINE_S}
 */
export function callerLineFromWav(bytes: Uint8Array): Int16Array {
  let wav: InstanceType<WaveFileClass>;
  try {
    wav = new WaveFile(bytes);
  } catch (err) {
    throw new CallerWavError(`not a WAV file (${(err as Error).message})`);
  }
  const fmt = wav.fmt as { audioFormat: number; sampleRate: number; numChannels: number; bitsPerSample: number };
  // Read before converting: the conversions below rebuild the header.
  const channels = Math.max(1, fmt.numChannels);
  const rate = fmt.sampleRate;
  try {
    if (fmt.audioFormat === 6) wav.fromALaw();
    else if (fmt.audioFormat === 7) wav.fromMuLaw();
    else if (fmt.audioFormat !== 1 && fmt.audioFormat !== 3 && fmt.audioFormat !== 0xfffe) {
      throw new CallerWavError(`unsupported WAV encoding (format tag ${fmt.audioFormat}); use PCM`);
    }
    if (wav.bitDepth !== '16') wav.toBitDepth('16');
  } catch (err) {
    if (err instanceof CallerWavError) throw err;
    throw new CallerWavError(`cannot decode the WAV (${(err as Error).message})`);
  }
  if (!(rate >= 4000 && rate <= 192000)) throw new CallerWavError(`unsupported sample rate ${rate} Hz`);
  const raw = wav.getSamples(true, Int16Array) as unknown as Int16Array;
  const frames = Math.floor(raw.length / channels);
  if (frames === 0) throw new CallerWavError('the WAV holds no audio');
  if (frames / rate > MAX_CALLER_LINE_S)
    throw new CallerWavError(`the WAV lasts ${(frames / rate).toFixed(1)} s; a caller line may last at most ${MAX_CALLER_LINE_S} s`);
  let mono: Int16Array;
  if (channels === 1) {
    mono = Int16Array.from(raw.subarray(0, frames));
  } else {
    mono = new Int16Array(frames);
    for (let i = 0; i < frames; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += raw[i * channels + c]!;
      mono[i] = Math.round(sum / channels);
    }
  }
  if ((SAMPLE_RATES as readonly number[]).includes(rate)) return callerLineFromPcm(mono, rate);
  const tmp = new WaveFile();
  tmp.fromScratch(1, rate, '16', mono);
  tmp.toSampleRate(CALLER_LINE_RATE);
  return Int16Array.from(tmp.getSamples(false, Int16Array) as unknown as Int16Array);
}
