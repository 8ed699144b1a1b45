/**
 * WAV/PCM utilities for the audio cache (docs/api-decisions.md "Audio URLs";
 * `GET /v1/audio/{name}.wav`): every cached clip is a 48 kHz mono 16-bit PCM WAV, the format

 * LiveKit plays without resampling. Parsing, writing and resampling are done by the `wavefile`
 * library (RIFF/WAVE reader and writer with a cubic resampler and low-pass filter).
 */
import * as wavefileModule from 'wavefile';

// Node loads the package's CommonJS build (a default export); bundlers may pick its ES module
// build (a named export). Accept either.
type WaveFileClass = typeof wavefileModule.WaveFile;
const loaded = wavefileModule as unknown as { WaveFile?: WaveFileClass; default?: { WaveFile: WaveFileClass } };
const WaveFile: WaveFileClass = loaded.WaveFile ?? loaded.default!.WaveFile;

/** Mono 16-bit PCM audio (what a synthesiser produces: `SynthesizedAudio` of src/adapters/speech/types.ts). */
export interface Pcm16Audio {
  /** Signed 16-bit samples, one channel. */
  samples: Int16Array;
  /** Samples per second, Hz. */
  sampleRate: number;
}

/** Sample rate of every cached clip, Hz. */
export const CLIP_SAMPLE_RATE = 48_000;
/** Silence put between clips by {@link concatWavs}, ms. */
export const DEFAULT_GAP_MS = 150;

/** The format and length of a WAV file. */
export interface WavInfo {
  /** Samples per second per channel, Hz. */
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** Length of the audio, ms (not rounded). */
  durationMs: number;
}

/**
 * A WAV from mono PCM16 samples at `sampleRate`: the canonical 44-byte RIFF header and the
 * samples copied as they are. Written here rather than with wavefile's `fromScratch`, which
 * packs sample by sample (≈ 25 ms for 3 s of 48 kHz audio, on the event loop of a live turn,
 * against ≈ 0.1 ms for this copy); wavefile still reads and checks every file we write (tests).
 */
function writeMono16(samples: Int16Array, sampleRate: number): Buffer {
  const dataBytes = samples.length * 2;
  const out = Buffer.allocUnsafe(44 + dataBytes);
  out.write('RIFF', 0, 'ascii');
  out.writeUInt32LE(36 + dataBytes, 4);
  out.write('WAVE', 8, 'ascii');
  out.write('fmt ', 12, 'ascii');
  out.writeUInt32LE(16, 16); // fmt chunk size
  out.writeUInt16LE(1, 20); // PCM
  out.writeUInt16LE(1, 22); // mono
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * 2, 28); // byte rate
  out.writeUInt16LE(2, 32); // block align
  out.writeUInt16LE(16, 34); // bits per sample
  out.write('data', 36, 'ascii');
  out.writeUInt32LE(dataBytes, 40);
  Buffer.from(samples.buffer, samples.byteOffset, dataBytes).copy(out, 44); // little-endian, as every platform Node runs on
  return out;
}

/** Parses `buf`; throws a RangeError naming the problem when it is not a readable WAV. */
function parse(buf: Uint8Array): InstanceType<typeof WaveFile> {
  try {
    return new WaveFile(buf);
  } catch (err) {
    throw new RangeError(`not a WAV file: ${(err as Error).message}`);
  }
}

/**
 * Mono PCM16 samples resampled from `fromRate` to `toRate` Hz (cubic interpolation with a
 * low-pass filter); the same array when the rates are equal.
 *
 * @throws RangeError when a rate is not a positive integer
 */
export function resampleMono16(samples: Int16Array, fromRate: number, toRate: number = CLIP_SAMPLE_RATE): Int16Array {
  for (const rate of [fromRate, toRate]) {
    if (!Number.isInteger(rate) || rate <= 0) throw new RangeError(`bad sample rate: ${rate}`);
  }
  if (fromRate === toRate || samples.length === 0) return samples;
  const wav = new WaveFile();
  wav.fromScratch(1, fromRate, '16', samples);
  wav.toSampleRate(toRate);
  return clipSamplesOf(wav);
}

/** Mono PCM16 audio as a WAV file at its own rate (no resampling): what a provider's fake answers. */
export function toWav(audio: Pcm16Audio): Buffer {
  return writeMono16(audio.samples, audio.sampleRate);
}

/**
 * Synthesised audio as a 48 kHz mono PCM16 WAV file, resampled (cubic interpolation with a
 * low-pass filter) when the engine's rate differs.
 *
 * @param audio mono PCM16 samples and their sample rate (Hz)
 * @throws RangeError when `audio.sampleRate` is not a positive integer
 */
export function toWav48k(audio: Pcm16Audio): Buffer {
  return writeMono16(resampleMono16(audio.samples, audio.sampleRate, CLIP_SAMPLE_RATE), CLIP_SAMPLE_RATE);
}

/**
 * The audio of any PCM WAV file (8/16/24/32-bit integer or 32/64-bit float, A-law or µ-law,
 * any number of channels) as mono PCM16 at the file's own rate: converted by wavefile
 * (`toBitDepth`, `fromALaw`, `fromMuLaw`), channels averaged. What a cloud voice's WAV becomes
 * before {@link toWav48k} resamples it for the cache.
 *
 * @throws RangeError when `buf` is not a WAV wavefile can read, is compressed otherwise, or holds no samples
 */
export function decodeWavMono16(buf: Uint8Array): Pcm16Audio {
  const wav = parse(buf);
  const fmt = wav.fmt as { audioFormat: number; sampleRate: number; numChannels: number; bitsPerSample: number };
  try {
    if (fmt.audioFormat === 6) wav.fromALaw();
    else if (fmt.audioFormat === 7) wav.fromMuLaw();
    else if (fmt.audioFormat !== 1 && fmt.audioFormat !== 3 && fmt.audioFormat !== 0xfffe)
      throw new RangeError(`unsupported WAV encoding (format ${fmt.audioFormat})`);
    if (wav.bitDepth !== '16') wav.toBitDepth('16');
  } catch (err) {
    throw err instanceof RangeError ? err : new RangeError(`unreadable WAV audio: ${(err as Error).message}`);
  }
  const channels = Math.max(1, fmt.numChannels);
  const interleaved = clipSamplesOf(wav);
  const frames = Math.floor(interleaved.length / channels);
  if (frames === 0 || !Number.isInteger(fmt.sampleRate) || fmt.sampleRate <= 0) throw new RangeError('the WAV holds no audio');
  if (channels === 1) return { samples: interleaved, sampleRate: fmt.sampleRate };
  const mono = new Int16Array(frames);
  for (let f = 0; f < frames; f++) {
    let sum = 0;
    for (let c = 0; c < channels; c++) sum += interleaved[f * channels + c]!;
    mono[f] = Math.round(sum / channels);
  }
  return { samples: mono, sampleRate: fmt.sampleRate };
}

/**
 * The format and duration of a WAV file (`fmt ` and `data` chunks).
 *
 * @throws RangeError when `buf` is not a WAV file wavefile can read
 */
export function readWavInfo(buf: Uint8Array): WavInfo {
  const wav = parse(buf);
  const fmt = wav.fmt as { sampleRate: number; numChannels: number; bitsPerSample: number; blockAlign: number };
  const dataBytes = (wav.data as { chunkSize: number }).chunkSize;
  const frames = fmt.blockAlign > 0 ? Math.floor(dataBytes / fmt.blockAlign) : 0;
  return {
    sampleRate: fmt.sampleRate,
    channels: fmt.numChannels,
    bitsPerSample: fmt.bitsPerSample,
    durationMs: fmt.sampleRate > 0 ? (frames * 1000) / fmt.sampleRate : 0,
  };
}

/**
 * The mono PCM16 samples of a 48 kHz clip.
 *
 * @throws RangeError when `buf` is not a 48 kHz mono 16-bit PCM WAV
 */
export function clipSamples(buf: Uint8Array): Int16Array {
  const wav = parse(buf);
  const fmt = wav.fmt as { audioFormat: number; sampleRate: number; numChannels: number; bitsPerSample: number };
  if (fmt.audioFormat !== 1 || fmt.sampleRate !== CLIP_SAMPLE_RATE || fmt.numChannels !== 1 || fmt.bitsPerSample !== 16) {
    throw new RangeError(
      `expected 48 kHz mono PCM16, got ${fmt.sampleRate} Hz, ${fmt.numChannels} ch, ${fmt.bitsPerSample}-bit (format ${fmt.audioFormat})`,
    );
  }
  return clipSamplesOf(wav);
}

/** The 16-bit samples of a parsed WAV's data chunk (copied). */
function clipSamplesOf(wav: InstanceType<typeof WaveFile>): Int16Array {
  const bytes = (wav.data as { samples: Uint8Array }).samples;
  const copy = new Uint8Array(bytes.byteLength - (bytes.byteLength % 2));
  copy.set(bytes.subarray(0, copy.byteLength));
  return new Int16Array(copy.buffer); // RIFF is little-endian, as is every platform Node runs on
}

/**
 * Several 48 kHz mono PCM16 WAV clips joined into one, with `gapMs` of silence between
 * consecutive clips (none before the first or after the last).
 *
 * @param wavs  clips in playing order (at least one)
 * @param gapMs silence between clips, ms; default {@link DEFAULT_GAP_MS}
 * @throws RangeError when `wavs` is empty or a clip is not 48 kHz mono PCM16
 */
export function concatWavs(wavs: Uint8Array[], gapMs: number = DEFAULT_GAP_MS): Buffer {
  if (wavs.length === 0) throw new RangeError('concatWavs needs at least one clip');
  const gap = Math.max(0, Math.round((gapMs * CLIP_SAMPLE_RATE) / 1000));
  return writeMono16(joinSamples(wavs.map(clipSamples), gap), CLIP_SAMPLE_RATE);
}

/** `parts` one after another in a new array, with `gap` zero samples between consecutive parts. */
export function joinSamples(parts: readonly Int16Array[], gap = 0): Int16Array {
  const total = parts.reduce((n, p) => n + p.length, 0) + gap * Math.max(0, parts.length - 1);
  const out = new Int16Array(total);
  let at = 0;
  parts.forEach((p, i) => {
    if (i > 0) at += gap; // zeros: silence
    out.set(p, at);
    at += p.length;
  });
  return out;
}
