/**
 * Reads a 16-bit PCM WAV's channels and measures their energy in windows: what a test of a call
 * recording asserts (who spoke when, on which channel).
 */
import { readWavInfo } from '../../src/media/wav.js';

/** The channels of a 16-bit PCM WAV (the canonical 44-byte header), and its format. */
export function wavChannels(buf: Uint8Array): { sampleRate: number; channels: Int16Array[] } {
  const info = readWavInfo(buf);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const dataBytes = view.getUint32(40, true);
  const frames = Math.floor(dataBytes / 2 / info.channels);
  const channels = Array.from({ length: info.channels }, () => new Int16Array(frames));
  for (let i = 0; i < frames; i++)
    for (let c = 0; c < info.channels; c++) channels[c]![i] = view.getInt16(44 + (i * info.channels + c) * 2, true);
  return { sampleRate: info.sampleRate, channels };
}

/** Root-mean-square level of `samples` between `fromMs` and `toMs` at `rate` Hz (0 for an empty window). */
export function rms(samples: Int16Array, rate: number, fromMs: number, toMs: number): number {
  const a = Math.max(0, Math.round((fromMs * rate) / 1000));
  const b = Math.min(samples.length, Math.round((toMs * rate) / 1000));
  if (b <= a) return 0;
  let sum = 0;
  for (let i = a; i < b; i++) sum += samples[i]! * samples[i]!;
  return Math.sqrt(sum / (b - a));
}

/** RMS per window of `windowMs` over the whole of `samples`. */
export function rmsWindows(samples: Int16Array, rate: number, windowMs: number): number[] {
  const out: number[] = [];
  const total = (samples.length * 1000) / rate;
  for (let t = 0; t < total; t += windowMs) out.push(rms(samples, rate, t, t + windowMs));
  return out;
}

/** A sine tone of `ms` at `rate` Hz, amplitude `amp`. */
export function tone(ms: number, rate: number, freq = 440, amp = 8000): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(amp * Math.sin((2 * Math.PI * freq * i) / rate));
  return out;
}
