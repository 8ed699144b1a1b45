/**
 * WAV utilities (src/media/wav.ts): 48 kHz conversion, concatenation with silence, header
 * reading.
 */
import { describe, expect, it } from 'vitest';
import { CLIP_SAMPLE_RATE, clipSamples, concatWavs, readWavInfo, toWav48k } from '../../src/media/wav.js';

/** A sine tone of `ms` at `rate` Hz. */
function tone(ms: number, rate: number, freq = 440): Int16Array {
  const n = Math.round((ms * rate) / 1000);
  const out = new Int16Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.round(10000 * Math.sin((2 * Math.PI * freq * i) / rate));
  return out;
}

describe('toWav48k', () => {
  it('resamples 22050 Hz audio to a 48 kHz mono PCM16 WAV of the same duration', () => {
    const wav = toWav48k({ samples: tone(1000, 22050), sampleRate: 22050 });
    expect(wav.subarray(0, 4).toString('latin1')).toBe('RIFF');
    expect(wav.subarray(8, 12).toString('latin1')).toBe('WAVE');
    const info = readWavInfo(wav);
    expect(info).toMatchObject({ sampleRate: 48000, channels: 1, bitsPerSample: 16 });
    expect(info.durationMs).toBeGreaterThan(990);
    expect(info.durationMs).toBeLessThan(1010);
  });

  it('keeps the signal: peak level and zero crossings of a 440 Hz tone survive', () => {
    const samples = clipSamples(toWav48k({ samples: tone(500, 22050), sampleRate: 22050 }));
    let peak = 0;
    let crossings = 0;
    for (let i = 1; i < samples.length; i++) {
      peak = Math.max(peak, Math.abs(samples[i]!));
      if (samples[i - 1]! < 0 !== samples[i]! < 0) crossings += 1;
    }
    expect(peak).toBeGreaterThan(9000);
    expect(peak).toBeLessThan(11000);
    expect(crossings).toBeGreaterThan(430); // 440 Hz for 0.5 s: ~440 crossings
    expect(crossings).toBeLessThan(450);
  });

  it('copies 48 kHz audio unchanged and handles other rates and empty audio', () => {
    const src = tone(100, 48000);
    expect(Array.from(clipSamples(toWav48k({ samples: src, sampleRate: 48000 })))).toEqual(Array.from(src));
    expect(readWavInfo(toWav48k({ samples: tone(250, 16000), sampleRate: 16000 })).durationMs).toBeCloseTo(250, -1);
    expect(readWavInfo(toWav48k({ samples: new Int16Array(0), sampleRate: 22050 })).durationMs).toBe(0);
    expect(() => toWav48k({ samples: src, sampleRate: 0 })).toThrow(RangeError);
  });
});

describe('concatWavs', () => {
  it('joins clips with 150 ms of silence between them', () => {
    const a = toWav48k({ samples: tone(200, 48000), sampleRate: 48000 });
    const b = toWav48k({ samples: tone(300, 48000, 880), sampleRate: 48000 });
    const joined = concatWavs([a, b]);
    const info = readWavInfo(joined);
    expect(info.sampleRate).toBe(CLIP_SAMPLE_RATE);
    expect(info.durationMs).toBeCloseTo(200 + 150 + 300, 5);
    const s = clipSamples(joined);
    const gap = s.subarray(Math.round(0.2 * 48000), Math.round(0.35 * 48000));
    expect(gap.every((x) => x === 0)).toBe(true);
    expect(Array.from(s.subarray(0, 9600))).toEqual(Array.from(clipSamples(a)));
    expect(Array.from(s.subarray(s.length - 14400))).toEqual(Array.from(clipSamples(b)));
  });

  it('takes a custom gap, a single clip, and refuses other formats', () => {
    const a = toWav48k({ samples: tone(100, 48000), sampleRate: 48000 });
    expect(readWavInfo(concatWavs([a, a, a], 0)).durationMs).toBeCloseTo(300, 5);
    expect(readWavInfo(concatWavs([a])).durationMs).toBeCloseTo(100, 5);
    expect(() => concatWavs([])).toThrow(RangeError);
    const wrongRate = Buffer.from(toWav48k({ samples: tone(100, 48000), sampleRate: 48000 }));
    wrongRate.writeUInt32LE(22050, 24); // fmt sampleRate
    expect(() => concatWavs([a, wrongRate])).toThrow(/48 kHz mono PCM16/);
  });
});

describe('readWavInfo', () => {
  it('rejects what is not a WAV', () => {
    expect(() => readWavInfo(Buffer.from('definitely not audio'))).toThrow(RangeError);
  });
});
