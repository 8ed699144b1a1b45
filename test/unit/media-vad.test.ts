/**
 * Voice activity detection (src/media/vad.ts): the WebRTC VAD adapter on real speech from the
 * embedded synthesiser (eSpeak NG) with silence gaps, clean and in white noise, at 16 and
 * 8 kHz; silence and noise alone; the streaming contract (any chunking, reset, close, bad
 * input); and the speech segmenter's hangover rules on scripted frames.
 *
 * The speech worker runs compiled: its sources are transpiled into node_modules/.cache (as in
 * speech-espeak.test.ts) so this file never runs a stale build.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { SpeechSegmenter, type SpeechEvent, type VadFrame, type VoiceActivityDetector } from '../../src/media/vad.js';
import { WebRtcVad } from '../../src/media/vad-webrtc.js';
import { resampleMono16 } from '../../src/media/wav.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { trim } from '../support/media.js';

const LINES = ['My name is Priya Sharma.', 'Tomorrow at five pm.', 'Nine eight four five zero, one two three.', 'Yes please.'];
/** Silence before the first line and after each line, ms. */
const GAPS_MS = [700, 900, 1100, 1300, 1000];
/** Accepted error of a detected speech boundary, ms. */
const TOLERANCE_MS = 60;

/** Deterministic white noise: Box–Muller over a linear congruential generator. */
function noise(length: number, rms: number, seed = 7): Float64Array {
  let s = seed;
  const uniform = () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) + 1) / 4294967297;
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = rms * Math.sqrt(-2 * Math.log(uniform())) * Math.cos(2 * Math.PI * uniform());
  return out;
}

/** `signal` plus `noiseRms` of white noise, clipped to PCM16. */
function withNoise(signal: Int16Array, noiseRms: number): Int16Array {
  const n = noise(signal.length, noiseRms);
  return Int16Array.from(signal, (v, i) => Math.max(-32768, Math.min(32767, Math.round(v + n[i]!))));
}

/** A call's inbound audio: the lines with silence between them, and where each line is, ms. */
interface Conversation {
  rate: number;
  pcm: Int16Array;
  speech: { startMs: number; endMs: number }[];
  /** RMS level of the speech parts. */
  speechRms: number;
}

/** Lays the (trimmed) clips out with {@link GAPS_MS} of silence around them. */
function conversation(clips: Int16Array[], rate: number): Conversation {
  const parts: Int16Array[] = [];
  const speech: Conversation['speech'] = [];
  let samples = 0;
  const add = (p: Int16Array) => {
    parts.push(p);
    samples += p.length;
  };
  add(new Int16Array((GAPS_MS[0]! * rate) / 1000));
  clips.forEach((clip, i) => {
    const startMs = (samples * 1000) / rate;
    add(clip);
    speech.push({ startMs, endMs: (samples * 1000) / rate });
    add(new Int16Array((GAPS_MS[i + 1]! * rate) / 1000));
  });
  const pcm = new Int16Array(samples);
  let at = 0;
  for (const p of parts) {
    pcm.set(p, at);
    at += p.length;
  }
  let sum = 0;
  let n = 0;
  for (const c of clips) {
    for (const v of c) sum += v * v;
    n += c.length;
  }
  return { rate, pcm, speech, speechRms: Math.sqrt(sum / n) };
}

/** Runs `pcm` through a detector in 20 ms chunks (a carrier's packet size) and a segmenter. */
function segment(
  detector: VoiceActivityDetector,
  pcm: Int16Array,
  segmenter = new SpeechSegmenter({ minSpeechMs: 100, minSilenceMs: 500, hangoverMs: detector.hangoverMs }),
): { frames: VadFrame[]; events: SpeechEvent[] } {
  const chunk = detector.sampleRate / 50;
  const frames: VadFrame[] = [];
  const events: SpeechEvent[] = [];
  for (let at = 0; at < pcm.length; at += chunk) {
    for (const frame of detector.push(pcm.subarray(at, at + chunk))) {
      frames.push(frame);
      const event = segmenter.push(frame);
      if (event) events.push(event);
    }
  }
  const last = segmenter.flush();
  if (last) events.push(last);
  return { frames, events };
}

/** The events as [start, end] pairs, ms; throws if they do not alternate start/end. */
function intervals(events: SpeechEvent[]): { startMs: number; endMs: number }[] {
  const out: { startMs: number; endMs: number }[] = [];
  for (let i = 0; i < events.length; i += 2) {
    expect(events[i]!.type).toBe('speechStart');
    expect(events[i + 1]?.type).toBe('speechEnd');
    out.push({ startMs: events[i]!.atMs, endMs: events[i + 1]!.atMs });
  }
  return out;
}

let vad: WebRtcVad;
let clips48k: Int16Array[];

beforeAll(async () => {
  vad = await WebRtcVad.load();
  const audio = await synthesizeLines('vad-test', LINES);
  for (const a of audio) expect(a.sampleRate).toBe(48000);
  clips48k = audio.map((a) => a.samples);
}, 60_000);

/** The conversation at `rate` Hz. */
function call(rate: number): Conversation {
  return conversation(
    clips48k.map((c) => trim(resampleMono16(c, 48000, rate), rate)),
    rate,
  );
}

describe('WebRTC VAD on synthesised speech', () => {
  /** The lines found in `pcm` by a default detector (mode 2, 10 ms frames) and segmenter. */
  function find(rate: number, pcm: Int16Array): { startMs: number; endMs: number }[] {
    const detector = vad.createDetector({ sampleRate: rate });
    const { events } = segment(detector, pcm);
    detector.close();
    return intervals(events);
  }

  for (const [rate, snrDb] of [
    [16000, null],
    [16000, 20],
    [8000, null],
    [8000, 20],
  ] as const) {
    it(`finds each line within ±${TOLERANCE_MS} ms at ${rate} Hz, ${snrDb === null ? 'clean' : `${snrDb} dB SNR white noise`}`, () => {
      const c = call(rate);
      const found = find(rate, snrDb === null ? c.pcm : withNoise(c.pcm, c.speechRms / 10 ** (snrDb / 20)));
      expect(found).toHaveLength(c.speech.length);
      found.forEach((f, i) => {
        expect(Math.abs(f.startMs - c.speech[i]!.startMs), `line ${i} start`).toBeLessThanOrEqual(TOLERANCE_MS);
        expect(Math.abs(f.endMs - c.speech[i]!.endMs), `line ${i} end`).toBeLessThanOrEqual(TOLERANCE_MS);
      });
    });
  }

  // In stronger noise the quiet edges of a line sink under the noise gate: each line is still
  // found, whole and apart from the others, but an edge may move by up to ~0.2 s.
  for (const [rate, snrDb] of [
    [16000, 10],
    [8000, 10],
    [8000, 5],
  ] as const) {
    it(`finds each line, whole, at ${rate} Hz, ${snrDb} dB SNR white noise`, () => {
      const c = call(rate);
      const found = find(rate, withNoise(c.pcm, c.speechRms / 10 ** (snrDb / 20)));
      expect(found).toHaveLength(c.speech.length);
      found.forEach((f, i) => {
        const line = c.speech[i]!;
        expect(Math.abs(f.startMs - line.startMs), `line ${i} start`).toBeLessThanOrEqual(200);
        expect(Math.abs(f.endMs - line.endMs), `line ${i} end`).toBeLessThanOrEqual(200);
      });
    });
  }

  it('agrees with the speech intervals on most 10 ms frames', () => {
    const c = call(16000);
    const detector = vad.createDetector({ sampleRate: 16000 });
    const { frames } = segment(detector, withNoise(c.pcm, c.speechRms / 10));
    const truth = (f: VadFrame) => c.speech.some((s) => f.startMs + 5 >= s.startMs && f.startMs + 5 < s.endMs);
    const agree = frames.filter((f) => f.speech === truth(f)).length / frames.length;
    expect(agree).toBeGreaterThan(0.85);
  });

  it('the noise gate keeps strong noise from locking the detector into speech', () => {
    const c = call(8000);
    const pcm = withNoise(c.pcm, c.speechRms / 10 ** (5 / 20));
    const falseSpeech = (noiseGateDb: number) => {
      const d = vad.createDetector({ sampleRate: 8000, noiseGateDb });
      const frames = d.push(pcm);
      d.close();
      const silent = frames.filter((f) => !c.speech.some((s) => f.startMs + 5 >= s.startMs - 100 && f.startMs + 5 < s.endMs + 200));
      return silent.filter((f) => f.speech).length / silent.length;
    };
    expect(falseSpeech(0)).toBeGreaterThan(0.5);
    expect(falseSpeech(6)).toBeLessThan(0.05);
  });

  it('reports no speech in digital silence or low white noise, at either rate', () => {
    for (const rate of [16000, 8000]) {
      for (const level of [0, 30, 300]) {
        const pcm = withNoise(new Int16Array(rate * 5), level);
        const detector = vad.createDetector({ sampleRate: rate, frameMs: 20 });
        const { events } = segment(detector, pcm, new SpeechSegmenter({ minSpeechMs: 250 }));
        detector.close();
        expect(events, `${rate} Hz, noise rms ${level}`).toEqual([]);
      }
    }
  });

  it('a 250 ms barge-in threshold ignores a 100 ms click of speech-like noise but takes the first line', () => {
    const rate = 16000;
    const c = call(rate);
    const burst = new Int16Array(rate * 2);
    burst.set(clips48k.length ? trim(resampleMono16(clips48k[0]!, 48000, rate), rate).subarray(0, rate / 10) : new Int16Array(0), rate);
    const detector = vad.createDetector({ sampleRate: rate });
    const short = segment(detector, burst, new SpeechSegmenter({ minSpeechMs: 250 }));
    expect(short.events).toEqual([]);
    detector.reset();
    const first = segment(
      detector,
      c.pcm.subarray(0, (c.speech[0]!.endMs * rate) / 1000 + rate),
      new SpeechSegmenter({ minSpeechMs: 250 }),
    );
    expect(first.events[0]).toMatchObject({ type: 'speechStart' });
    expect(Math.abs(first.events[0]!.atMs - c.speech[0]!.startMs)).toBeLessThanOrEqual(TOLERANCE_MS);
    expect(first.events[0]!.decidedAtMs - first.events[0]!.atMs).toBeGreaterThanOrEqual(250);
    detector.close();
  });
});

describe('VoiceActivityDetector (WebRTC adapter)', () => {
  it('gives the same frames however the stream is chunked, timed by samples', () => {
    const pcm = call(8000).pcm.subarray(0, 8000 * 3);
    const a = vad.createDetector({ sampleRate: 8000, frameMs: 20 });
    const b = vad.createDetector({ sampleRate: 8000, frameMs: 20 });
    expect(a.frameSamples).toBe(160);
    const whole = a.push(pcm);
    const pieces: VadFrame[] = [];
    for (let at = 0; at < pcm.length; at += 7) pieces.push(...b.push(pcm.subarray(at, at + 7)));
    expect(whole).toHaveLength(150);
    expect(pieces).toEqual(whole);
    expect(whole.map((f) => f.startMs).slice(0, 3)).toEqual([0, 20, 40]);
    expect(whole.some((f) => f.speech)).toBe(true);
    expect(whole.every((f) => f.probability === (f.speech ? 1 : 0) && f.durationMs === 20)).toBe(true);
    a.close();
    b.close();
  });

  it('keeps a partial frame until it is complete', () => {
    const d = vad.createDetector({ sampleRate: 16000, frameMs: 30 });
    expect(d.push(new Int16Array(479))).toEqual([]);
    expect(d.push(new Int16Array(1))).toHaveLength(1);
    expect(d.push(new Int16Array(0))).toEqual([]);
    d.close();
  });

  it('reset restarts stream time and forgets a partial frame', () => {
    const d = vad.createDetector({ sampleRate: 16000 });
    d.push(new Int16Array(1000));
    d.reset();
    const frames = d.push(new Int16Array(160));
    expect(frames).toHaveLength(1);
    expect(frames[0]!.startMs).toBe(0);
    d.close();
  });

  it('refuses rates, frame lengths and modes libfvad does not take, and input that is not PCM16', () => {
    expect(() => vad.createDetector({ sampleRate: 44100 })).toThrow(/sample rate must be one of 8000, 16000, 32000, 48000 Hz, got 44100/);
    expect(() => vad.createDetector({ sampleRate: 8000, frameMs: 25 })).toThrow(/frame length must be one of 10, 20, 30 ms, got 25/);
    expect(() => vad.createDetector({ sampleRate: 8000, mode: 4 })).toThrow(/mode must be 0, 1, 2 or 3, got 4/);
    expect(() => vad.createDetector({ sampleRate: 8000, noiseGateDb: -3 })).toThrow(/noise gate must be a level in dB ≥ 0, got -3/);
    const d = vad.createDetector({ sampleRate: 8000 });
    expect(() => d.push(new Uint8Array(160) as unknown as Int16Array)).toThrow(/Int16Array/);
    d.close();
  });

  it('after close, push throws and close is idempotent', () => {
    const d = vad.createDetector({ sampleRate: 8000 });
    d.close();
    d.close();
    expect(() => d.push(new Int16Array(80))).toThrow(/closed/);
  });

  it('serves many detectors from one engine without mixing their state', () => {
    const c = call(8000);
    const detectors = Array.from({ length: 50 }, () => vad.createDetector({ sampleRate: 8000 }));
    const results = detectors.map((d, i) => (i % 2 === 0 ? d.push(c.pcm) : d.push(new Int16Array(c.pcm.length))));
    for (const [i, r] of results.entries())
      expect(
        r.some((f) => f.speech),
        `detector ${i}`,
      ).toBe(i % 2 === 0);
    for (const d of detectors) d.close();
  });
});

describe('SpeechSegmenter', () => {
  /** Frames of 10 ms from a pattern: '#' speech, '.' silence. */
  function feed(seg: SpeechSegmenter, pattern: string, fromMs = 0): SpeechEvent[] {
    const events: SpeechEvent[] = [];
    [...pattern].forEach((ch, i) => {
      const e = seg.push({ startMs: fromMs + i * 10, durationMs: 10, speech: ch === '#' });
      if (e) events.push(e);
    });
    return events;
  }

  it('starts after minSpeechMs of speech, dated at the onset, and ends after minSilenceMs', () => {
    const seg = new SpeechSegmenter({ minSpeechMs: 50, minSilenceMs: 100 });
    const events = feed(seg, '.....########...........');
    expect(events).toEqual([
      { type: 'speechStart', atMs: 50, decidedAtMs: 100 },
      { type: 'speechEnd', atMs: 130, decidedAtMs: 230 },
    ]);
    expect(seg.inSpeech).toBe(false);
  });

  it('ignores bursts shorter than minSpeechMs and pauses shorter than minSilenceMs', () => {
    const seg = new SpeechSegmenter({ minSpeechMs: 50, minSilenceMs: 100, maxOnsetGapMs: 20 });
    expect(feed(seg, '###.....##...##...')).toEqual([]);
    const events = feed(seg, '######........######', 200);
    expect(events).toEqual([{ type: 'speechStart', atMs: 200, decidedAtMs: 250 }]);
    expect(seg.inSpeech).toBe(true);
  });

  it('sums speech across onset gaps up to maxOnsetGapMs', () => {
    const seg = new SpeechSegmenter({ minSpeechMs: 40, maxOnsetGapMs: 20 });
    expect(feed(seg, '##..##')).toEqual([{ type: 'speechStart', atMs: 0, decidedAtMs: 60 }]);
  });

  it('takes a new minimum silence while speech goes on (endpointing per step)', () => {
    const seg = new SpeechSegmenter({ minSpeechMs: 10, minSilenceMs: 1000 });
    feed(seg, '#####.....');
    seg.setMinSilenceMs(80);
    expect(feed(seg, '...', 100)).toEqual([{ type: 'speechEnd', atMs: 50, decidedAtMs: 130 }]);
    expect(() => seg.setMinSilenceMs(-1)).toThrow(RangeError);
  });

  it('flush ends speech still going on, then starts afresh', () => {
    const seg = new SpeechSegmenter({ minSpeechMs: 20 });
    feed(seg, '#####');
    expect(seg.flush()).toEqual({ type: 'speechEnd', atMs: 50, decidedAtMs: 50 });
    expect(seg.flush()).toBeNull();
    expect(feed(seg, '##')).toEqual([{ type: 'speechStart', atMs: 0, decidedAtMs: 20 }]);
  });

  it('refuses frames out of order and bad options', () => {
    const seg = new SpeechSegmenter();
    seg.push({ startMs: 100, durationMs: 10, speech: false });
    expect(() => seg.push({ startMs: 50, durationMs: 10, speech: false })).toThrow(/out of order/);
    expect(() => seg.push({ startMs: 200, durationMs: 0, speech: false })).toThrow(/bad VAD frame/);
    expect(() => new SpeechSegmenter({ minSpeechMs: -5 })).toThrow(/minSpeechMs must be a duration/);
    expect(() => new SpeechSegmenter({ minSilenceMs: Number.NaN })).toThrow(/minSilenceMs must be a duration/);
  });
});
