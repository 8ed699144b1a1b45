/**
 * Audio formats of the media core (src/media/audio.ts, audio-g711.ts, audio-resample.ts): G.711
 * μ-law/A-law against the standard's code points and the `alawmulaw` codec bundled in wavefile,
 * raw PCM16 payloads, the streaming resampler (frequency, length, anti-aliasing, chunking), the
 * Framer, and a real cached clip converted to Twilio's 8 kHz μ-law frames.
 */
import fs from 'node:fs';
import * as wavefileModule from 'wavefile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Framer,
  bytesPerSample,
  clipToTelephony,
  decodeAudio,
  encodeAudio,
  pcm16FromBytes,
  pcm16ToBytes,
  pcmToTelephony,
  samplesIn,
  type AudioEncoding,
} from '../../src/media/audio.js';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../src/media/audio-g711.js';
import { SAMPLE_RATES, StreamingResampler, resample } from '../../src/media/audio-resample.js';
import { EspeakSynthesizer } from '../../src/adapters/speech/espeak.js';
import { clipSamples, readWavInfo, toWav48k } from '../../src/media/wav.js';
import { buildEspeakWorker, removeEspeakWorker } from '../support/espeak-worker.js';
import { concat } from '../support/media.js';
import { testSpeech } from '../support/speech.js';

type WaveFileClass = typeof wavefileModule.WaveFile;
const loaded = wavefileModule as unknown as { WaveFile?: WaveFileClass; default?: { WaveFile: WaveFileClass } };
const WaveFile: WaveFileClass = loaded.WaveFile ?? loaded.default!.WaveFile;

/** Every 16-bit value, −32768 … 32767. */
const ALL = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
/** Every 8-bit code. */
const CODES = Uint8Array.from({ length: 256 }, (_, i) => i);

/** wavefile's (alawmulaw's) G.711 encoding of `pcm`. */
function wavefileEncode(pcm: Int16Array, law: 'mulaw' | 'alaw'): Uint8Array {
  const wav = new WaveFile();
  wav.fromScratch(1, 8000, '16', pcm);
  if (law === 'mulaw') wav.toMuLaw();
  else wav.toALaw();
  return Uint8Array.from((wav.data as { samples: Uint8Array }).samples);
}

/** wavefile's (alawmulaw's) G.711 decoding of `codes`. */
function wavefileDecode(codes: Uint8Array, law: 'mulaw' | 'alaw'): Int16Array {
  const wav = new WaveFile();
  wav.fromScratch(1, 8000, law === 'mulaw' ? '8m' : '8a', codes);
  if (law === 'mulaw') wav.fromMuLaw();
  else wav.fromALaw();
  return pcm16FromBytes((wav.data as { samples: Uint8Array }).samples);
}

/** A sine of `freq` Hz, `ms` long, at `rate` Hz, amplitude `amp`. */
function tone(freq: number, ms: number, rate: number, amp = 10000): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  return Int16Array.from({ length: n }, (_, i) => Math.round(amp * Math.sin((2 * Math.PI * freq * i) / rate)));
}

/** Power of `freq` in `x` (Goertzel), normalised so a full-length sine of amplitude A gives A²/4·… comparable across calls. */
function goertzel(x: Int16Array, freq: number, rate: number): number {
  const w = (2 * Math.PI * freq) / rate;
  const c = 2 * Math.cos(w);
  let s1 = 0;
  let s2 = 0;
  for (const v of x) {
    const s = v + c * s1 - s2;
    s2 = s1;
    s1 = s;
  }
  return (s1 * s1 + s2 * s2 - c * s1 * s2) / (x.length * x.length);
}

/** Zero crossings of `x`. */
function crossings(x: Int16Array): number {
  let n = 0;
  for (let i = 1; i < x.length; i++) if (x[i - 1]! < 0 !== x[i]! < 0) n++;
  return n;
}

describe('G.711 μ-law', () => {
  it('has the standard code points: 0 ↔ 0xFF, the extremes ↔ 0x80/0x00 (±32124 = ±8031·4), −0 = 0x7F', () => {
    expect([...encodeMulaw(Int16Array.of(0, 32767, -32768, -1, 1))]).toEqual([0xff, 0x80, 0x00, 0x7f, 0xff]);
    expect([...decodeMulaw(Uint8Array.of(0xff, 0x7f, 0x80, 0x00, 0xfe, 0x7e))]).toEqual([0, 0, 32124, -32124, 8, -8]);
  });

  it('round-trips within half a quantisation step of each segment (2^(seg+2)), saturating beyond ±32124', () => {
    const back = decodeMulaw(encodeMulaw(ALL));
    for (let i = 0; i < ALL.length; i++) {
      const x = ALL[i]!;
      const mag = Math.min(Math.abs(x), 32635) + 132; // biased magnitude, as the encoder sees it
      const seg = Math.min(7, Math.max(0, Math.floor(Math.log2(mag)) - 7));
      const bound = Math.abs(x) > 32635 ? Math.abs(x) - 32124 : 1 << (seg + 2);
      if (Math.abs(back[i]! - x) > bound) expect({ x, got: back[i], bound }).toBeNull();
    }
    expect(back[ALL.length - 1]).toBe(32124);
  });

  it('agrees with wavefile (alawmulaw) on every 16-bit input and every code', () => {
    expect(encodeMulaw(ALL)).toEqual(wavefileEncode(ALL, 'mulaw'));
    expect(decodeMulaw(CODES)).toEqual(wavefileDecode(CODES, 'mulaw'));
  });
});

describe('G.711 A-law', () => {
  it('has the standard code points: 0 → 0xD5, the extremes ↔ 0xAA/0x2A (±32256 = ±4032·8)', () => {
    expect([...encodeAlaw(Int16Array.of(0, 32767, -32768))]).toEqual([0xd5, 0xaa, 0x2a]);
    expect([...decodeAlaw(Uint8Array.of(0xd5, 0x55, 0xaa, 0x2a))]).toEqual([8, -8, 32256, -32256]);
  });

  it('round-trips within half a step (16 below 4096, then 2^(seg+3)), and decodes like wavefile', () => {
    const back = decodeAlaw(encodeAlaw(ALL));
    for (let i = 0; i < ALL.length; i++) {
      const x = ALL[i]!;
      const mag = Math.abs(x);
      const seg = mag < 512 ? 1 : Math.min(7, Math.floor(Math.log2(mag)) - 7);
      const bound = mag > 32256 ? mag - 32256 : Math.max(16, 1 << (seg + 3));
      if (Math.abs(back[i]! - x) > bound) expect({ x, got: back[i], bound }).toBeNull();
    }
    expect(decodeAlaw(CODES)).toEqual(wavefileDecode(CODES, 'alaw'));
  });

  it("encodes like wavefile, except exactly on a negative decision boundary (ITU-T G.191 one's complement), never with more error", () => {
    const mine = encodeAlaw(ALL);
    const theirs = wavefileEncode(ALL, 'alaw');
    const mineBack = decodeAlaw(mine);
    const theirsBack = decodeAlaw(theirs);
    let differ = 0;
    for (let i = 0; i < ALL.length; i++) {
      if (mine[i] === theirs[i]) continue;
      differ++;
      const x = ALL[i]!;
      expect(x).toBeLessThan(0);
      expect(Math.abs(mineBack[i]! - x)).toBeLessThanOrEqual(Math.abs(theirsBack[i]! - x));
    }
    expect(differ).toBeLessThan(200);
  });
});

describe('PCM16 payloads and formats', () => {
  it('reads and writes little- and big-endian samples, at any byte offset', () => {
    const pcm = Int16Array.of(1, -2, 0x1234, -32768, 32767);
    const le = pcm16ToBytes(pcm);
    expect([...le.subarray(0, 6)]).toEqual([1, 0, 0xfe, 0xff, 0x34, 0x12]);
    const be = pcm16ToBytes(pcm, true);
    expect([...be.subarray(0, 6)]).toEqual([0, 1, 0xff, 0xfe, 0x12, 0x34]);
    const shifted = new Uint8Array(le.length + 1);
    shifted.set(le, 1);
    expect(pcm16FromBytes(shifted.subarray(1))).toEqual(pcm);
    expect(pcm16FromBytes(be, true)).toEqual(pcm);
    expect(encodeAudio(pcm, 'pcm16')).toEqual(le);
    for (const enc of ['pcm16le', 'pcm16be', 'pcm16', 'mulaw', 'alaw'] as const) {
      const bytes = encodeAudio(pcm, enc);
      expect(bytes.length).toBe(pcm.length * bytesPerSample(enc));
      if (enc.startsWith('pcm')) expect(decodeAudio(bytes, enc)).toEqual(pcm);
    }
  });

  it('refuses bad input with a RangeError that says what is wrong', () => {
    expect(() => pcm16FromBytes(new Uint8Array(3))).toThrow(RangeError);
    expect(() => decodeAudio(new Uint8Array(321), 'pcm16le')).toThrow(/odd length \(321 bytes\)/);
    expect(() => decodeAudio(new Uint8Array(2), 'opus' as AudioEncoding)).toThrow(/unsupported audio encoding: "opus"/);
    expect(() => new StreamingResampler(44100, 8000)).toThrow(/unsupported sample rate: 44100 Hz/);
    expect(() => resample(new Int16Array(4), 8000, 11025)).toThrow(RangeError);
    expect(() => samplesIn(10, 22050)).toThrow(/not a whole, positive number of samples/);
    expect(() => new Framer(0)).toThrow(RangeError);
    expect(samplesIn(20, 8000)).toBe(160);
  });
});

describe('resampling', () => {
  const pairs = SAMPLE_RATES.flatMap((from) => SAMPLE_RATES.filter((to) => to !== from).map((to) => [from, to] as const));

  it.each(pairs)("%i → %i Hz keeps a 440 Hz tone's frequency, level and length (±1 sample)", (from, to) => {
    const input = tone(440, 500, from);
    const out = resample(input, from, to);
    expect(Math.abs(out.length - (input.length * to) / from)).toBeLessThanOrEqual(1);
    expect(Math.abs(crossings(out) - crossings(input))).toBeLessThanOrEqual(2);
    const mid = out.subarray(Math.floor(out.length / 4), Math.floor((3 * out.length) / 4)); // away from the edges
    const peak = mid.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(peak).toBeGreaterThan(9800);
    expect(peak).toBeLessThan(10200);
    expect(goertzel(mid, 440, to)).toBeGreaterThan(100 * goertzel(mid, 600, to));
  });

  it.each([
    [48000, 8000, 5000],
    [16000, 8000, 6000],
    [48000, 16000, 13000],
    [22050, 8000, 7000],
    [24000, 16000, 11000],
  ] as const)(
    'downsampling %i → %i Hz attenuates a %i Hz tone (above the new Nyquist) by ≥ 60 dB instead of aliasing it',
    (from, to, freq) => {
      const aliasAt = to - freq; // where the tone would fold to
      const reference = resample(tone(aliasAt, 500, from), from, to); // a tone already at that frequency passes
      const out = resample(tone(freq, 500, from), from, to);
      const pass = goertzel(reference.subarray(200, -200), aliasAt, to);
      const alias = goertzel(out.subarray(200, -200), aliasAt, to);
      expect(10 * Math.log10(pass / Math.max(alias, 1e-12))).toBeGreaterThan(60);
    },
  );

  it.each(pairs)('%i → %i Hz in 20 ms chunks equals one-shot resampling of the whole', (from, to) => {
    const input = concat([tone(300, 170, from), tone(1200, 190, from, 6000), new Int16Array(from / 50)]);
    const whole = resample(input, from, to);
    const stream = new StreamingResampler(from, to);
    const parts: Int16Array[] = [];
    const chunk = from / 50;
    for (let at = 0; at < input.length; at += chunk) parts.push(stream.push(input.subarray(at, at + chunk)));
    parts.push(stream.flush());
    expect(concat(parts)).toEqual(whole);
    expect(stream.latencyMs).toBeGreaterThan(0);
    expect(stream.latencyMs).toBeLessThan(5);
  });

  it('streams odd chunk sizes (1, 7, 159 samples) to the same output, and a chunk yields output promptly', () => {
    const input = tone(700, 300, 8000);
    const whole = resample(input, 8000, 48000);
    const stream = new StreamingResampler(8000, 48000);
    const parts: Int16Array[] = [];
    const sizes = [1, 7, 159];
    for (let at = 0, k = 0; at < input.length; k++) {
      const n = sizes[k % sizes.length]!;
      parts.push(stream.push(input.subarray(at, at + n)));
      at += n;
    }
    parts.push(stream.flush());
    expect(concat(parts)).toEqual(whole);
    const fresh = new StreamingResampler(8000, 16000);
    expect(fresh.push(input.subarray(0, 160)).length).toBeGreaterThan(250); // all but the filter's look-ahead
    expect(() => {
      fresh.flush();
      fresh.push(input);
    }).toThrow(/push after flush/);
  });

  it('is a copy for equal rates and empty for empty input', () => {
    const x = tone(440, 20, 8000);
    const y = resample(x, 8000, 8000);
    expect(y).toEqual(x);
    expect(y).not.toBe(x);
    expect(resample(new Int16Array(0), 48000, 8000).length).toBe(0);
  });

  it('does not wrap around at full scale (clamps)', () => {
    const square = Int16Array.from({ length: 4800 }, (_, i) => (Math.floor(i / 24) % 2 ? 32767 : -32768));
    const out = resample(square, 48000, 16000); // output j sits at input 3j: plateaus of 8 samples
    expect(Math.max(...out)).toBe(32767); // the ringing overshoots full scale and is clamped…
    for (let j = 16; j < out.length - 16; j++) {
      if (j % 8 === 0 || j % 8 === 7) continue; // the edges of each plateau
      const positive = Math.floor(j / 8) % 2 === 1;
      if (out[j]! > 0 !== positive) expect({ j, got: out[j], positive }).toBeNull(); // …never wrapped to the other sign
    }
  });
});

describe('Framer', () => {
  it('cuts odd chunk sizes into fixed frames, in order, and flushes a padded, flagged tail', () => {
    const framer = new Framer(160);
    const input = Int16Array.from({ length: 1000 }, (_, i) => i + 1);
    const frames: Int16Array[] = [];
    for (let at = 0, k = 0; at < input.length; k++) {
      const n = [1, 333, 17, 160, 59][k % 5]!;
      frames.push(...framer.push(input.subarray(at, at + n)));
      at += n;
    }
    expect(frames.map((f) => f.length)).toEqual([160, 160, 160, 160, 160, 160]);
    expect(framer.buffered).toBe(40);
    expect(concat(frames)).toEqual(input.subarray(0, 960));
    const tail = framer.flush()!;
    expect(tail.padded).toBe(true);
    expect(tail.validSamples).toBe(40);
    expect(tail.samples.length).toBe(160);
    expect([...tail.samples.subarray(0, 40)]).toEqual([...input.subarray(960)]);
    expect(tail.samples.subarray(40).every((v) => v === 0)).toBe(true);
    expect(framer.flush()).toBeNull();
    expect(framer.buffered).toBe(0);
  });

  it('frames do not alias each other or the input', () => {
    const framer = new Framer(4);
    const input = Int16Array.of(1, 2, 3, 4, 5, 6, 7, 8);
    const [a, b] = framer.push(input);
    input.fill(0);
    expect([...a!, ...b!]).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });
});

describe('clipToTelephony', () => {
  it("turns a real cached clip into 20 ms 8 kHz μ-law frames of the clip's duration", async () => {
    const speech = testSpeech();
    const text = 'Namaste, this is Sunrise Clinic. What is your name?';
    const clip = await speech.ensure(text, speech.voiceFor('en-IN'));
    const wav = fs.readFileSync(speech.fileOf(speech.nameOf(clip.key))!);
    const { durationMs } = readWavInfo(wav);
    expect(durationMs).toBeGreaterThan(100);
    const frames = clipToTelephony(wav, { encoding: 'mulaw', sampleRate: 8000 });
    expect(frames.length).toBe(Math.ceil(durationMs / 20));
    expect(frames.every((f) => f.payload.length === 160)).toBe(true);
    expect(frames.slice(0, -1).every((f) => !f.padded)).toBe(true);
    expect(frames.at(-1)!.padded).toBe(durationMs % 20 !== 0);
    const pcm = decodeMulaw(Uint8Array.from(frames.flatMap((f) => [...f.payload])));
    const loud = pcm.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
    expect(loud).toBeGreaterThan(4000); // the fake engine's tone survives the conversion
    await speech.close();
  });

  it('makes Exotel chunks (100 ms of 8 kHz slin = 1600 bytes, a multiple of 320) and 16 kHz L16', () => {
    const wav = new WaveFile();
    wav.fromScratch(1, 48000, '16', tone(440, 250, 48000));
    const bytes = wav.toBuffer();
    const exotel = clipToTelephony(bytes, { encoding: 'pcm16le', sampleRate: 8000 }, { frameMs: 100 });
    expect(exotel.map((f) => f.payload.length)).toEqual([1600, 1600, 1600]);
    expect(exotel.map((f) => f.padded)).toEqual([false, false, true]);
    const plivo = clipToTelephony(bytes, { encoding: 'pcm16le', sampleRate: 16000 });
    expect(plivo.length).toBe(13);
    expect(plivo[0]!.payload.length).toBe(640);
    expect(() => clipToTelephony(bytes, { encoding: 'mulaw', sampleRate: 11025 })).toThrow(RangeError);
    expect(() => clipToTelephony(Uint8Array.of(1, 2, 3), { encoding: 'mulaw', sampleRate: 8000 })).toThrow(/not a WAV/);
    const wav16k = new WaveFile();
    wav16k.fromScratch(1, 16000, '16', tone(440, 100, 16000));
    expect(() => clipToTelephony(wav16k.toBuffer(), { encoding: 'mulaw', sampleRate: 8000 })).toThrow(/expected 48 kHz mono PCM16/);
    // PCM from an engine at 22050 Hz: 250 ms → 12.5 frames of 20 ms at 8 kHz
    const frames = pcmToTelephony(tone(440, 250, 22050), 22050, { encoding: 'alaw', sampleRate: 8000 });
    expect(frames.length).toBe(13);
    expect(frames.filter((f) => f.padded).length).toBe(1);
  });
});

describe('clipToTelephony on real speech (eSpeak NG)', { timeout: 60_000 }, () => {
  let synth: EspeakSynthesizer;
  let worker: string;

  beforeAll(() => {
    // The worker runs compiled: transpile the current sources (as test/unit/speech-espeak.test.ts does).
    worker = buildEspeakWorker('media-test');
    synth = new EspeakSynthesizer({ workerPath: worker });
  });
  afterAll(async () => {
    await synth?.close();
    removeEspeakWorker(worker);
  });

  it('a spoken sentence becomes 8 kHz μ-law frames of its duration that keep the speech', async () => {
    const wav = toWav48k(await synth.synthesize('Namaste, this is Sunrise Clinic. What is your name?', synth.voiceFor('en-IN')));
    const { durationMs } = readWavInfo(wav);
    expect(durationMs).toBeGreaterThan(1500);
    const frames = clipToTelephony(wav, { encoding: 'mulaw', sampleRate: 8000 });
    expect(frames.length).toBe(Math.ceil(durationMs / 20));
    const pcm8k = decodeMulaw(Uint8Array.from(frames.flatMap((f) => [...f.payload])));
    expect(Math.abs(pcm8k.length / 8 - durationMs)).toBeLessThan(20);
    // Speech energy lies below 3.4 kHz: the 8 kHz version keeps most of it (RMS within 3 dB).
    const rms = (x: Int16Array) => Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length);
    const original = rms(clipSamples(wav));
    expect(20 * Math.log10(rms(pcm8k.subarray(0, Math.round((durationMs * 8000) / 1000))) / original)).toBeGreaterThan(-3);
  });
});
