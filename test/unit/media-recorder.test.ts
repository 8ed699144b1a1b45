/**
 * The call recorder (src/media/recorder.ts) and the recording transport
 * (src/media/recording-transport.ts): each party at its time on the call's clock, on its channel
 * (dual) or mixed (mono), a barge-in's cleared audio left out, and the header's sizes right after close.
 */
import { describe, expect, it } from 'vitest';
import { WaveFile } from 'wavefile';
import { CallRecorder, RECORDER_FLUSH_MS, WAV_HEADER_BYTES, type RecordingSink } from '../../src/media/recorder.js';
import { RecordingTransport } from '../../src/media/recording-transport.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeTransport } from '../../src/media/fake-transport.js';
import { encodeMulaw } from '../../src/media/audio-g711.js';
import { rms, tone, wavChannels } from '../support/wav-energy.js';

const RATE = 16_000;

/** A sink that keeps the file in memory, as a file would be after its header is written over. */
function memorySink(): RecordingSink & { file(): Uint8Array; finished: boolean; writes: number } {
  const parts: Uint8Array[] = [];
  let header: Uint8Array | null = null;
  const sink = {
    finished: false,
    writes: 0,
    write(bytes: Uint8Array) {
      parts.push(bytes.slice());
      sink.writes++;
    },
    finish(h: Uint8Array) {
      header = h;
      sink.finished = true;
    },
    file() {
      const all = Buffer.concat(parts);
      if (header) Buffer.from(header).copy(all, 0);
      return new Uint8Array(all);
    },
  };
  return sink;
}

/** Feeds `pcm` to `feed` in 20 ms chunks, the first ending at `fromMs + 20`. */
function chunks(pcm: Int16Array, fromMs: number, feed: (chunk: Int16Array, atMs: number) => void): void {
  const n = RATE / 50;
  for (let i = 0, t = fromMs + 20; i < pcm.length; i += n, t += 20) feed(pcm.subarray(i, i + n), t);
}

describe('CallRecorder, dual', () => {
  it('puts the caller on the left only, the agent on the right only, each at its time, silence kept between', () => {
    const sink = memorySink();
    const rec = new CallRecorder('dual', sink, 5000); // the call's clock starts at 5000 ms
    chunks(tone(1000, RATE, 300), 5000 + 1000, (c, t) => rec.caller(c, t)); // caller 1.0–2.0 s
    rec.agent(tone(600, RATE, 700), 5000 + 3000); // agent 3.0–3.6 s, handed at once (played from then)
    const summary = rec.close(5000 + 4000);
    expect(sink.finished).toBe(true);
    const { sampleRate, channels } = wavChannels(sink.file());
    expect(sampleRate).toBe(RATE);
    expect(channels).toHaveLength(2);
    const [left, right] = channels as [Int16Array, Int16Array];
    expect(summary.durationMs).toBeCloseTo(4000, 0);
    expect(rms(left, RATE, 1000, 2000)).toBeGreaterThan(5000);
    expect(rms(right, RATE, 1000, 2000)).toBe(0);
    expect(rms(left, RATE, 0, 990)).toBe(0);
    expect(rms(left, RATE, 2010, 4000)).toBe(0);
    expect(rms(right, RATE, 3000, 3600)).toBeGreaterThan(5000);
    expect(rms(right, RATE, 0, 2990)).toBe(0);
    expect(rms(right, RATE, 3610, 4000)).toBe(0);
    expect(rms(left, RATE, 3000, 3600)).toBe(0);
  });

  it('writes the header first and fixes its sizes on close (wavefile reads it)', () => {
    const sink = memorySink();
    const rec = new CallRecorder('dual', sink, 0);
    chunks(tone(2500, RATE), 0, (c, t) => rec.caller(c, t));
    const file0 = sink.file();
    expect(new DataView(file0.buffer).getUint32(40, true)).toBe(0); // placeholder while recording
    expect(sink.writes).toBeGreaterThan(1); // streamed, not held to the end
    const summary = rec.close();
    const file = sink.file();
    const view = new DataView(file.buffer);
    expect(file.length).toBe(WAV_HEADER_BYTES + 2500 * 16 * 4);
    expect(summary.bytes).toBe(file.length);
    expect(view.getUint32(4, true)).toBe(file.length - 8);
    expect(view.getUint32(40, true)).toBe(file.length - WAV_HEADER_BYTES);
    const wav = new WaveFile(file);
    expect(wav.fmt).toMatchObject({ numChannels: 2, sampleRate: RATE, bitsPerSample: 16, blockAlign: 4, byteRate: RATE * 4 });
  });

  it('continues the caller across jitter, and keeps a real gap in the stream as silence', () => {
    const sink = memorySink();
    const rec = new CallRecorder('dual', sink, 0);
    const n = RATE / 50;
    const c = tone(20, RATE);
    rec.caller(c, 20);
    rec.caller(c, 45); // 5 ms late: continues at 20 ms
    rec.caller(c, 60);
    rec.caller(c, 1060); // after a gap of 1 s: placed at 1040 ms
    rec.close();
    const left = wavChannels(sink.file()).channels[0]!;
    expect(rms(left, RATE, 0, 60)).toBeGreaterThan(4000);
    expect(rms(left, RATE, 65, 1035)).toBe(0);
    expect(rms(left, RATE, 1040, 1060)).toBeGreaterThan(4000);
    expect(left.length).toBe(1060 * 16);
    expect(n).toBe(320);
  });

  it("leaves out agent audio cleared before it played (barge-in), and holds the lead frames' time", () => {
    const sink = memorySink();
    const rec = new CallRecorder('dual', sink, 0);
    rec.agent(tone(2000, RATE), 100); // 2 s handed at 100 ms (as a lead far ahead)
    rec.clearAgent(600); // the caller talked over it at 600 ms
    rec.close(3000);
    const right = wavChannels(sink.file()).channels[1]!;
    expect(rms(right, RATE, 100, 600)).toBeGreaterThan(4000);
    expect(rms(right, RATE, 605, 3000)).toBe(0);
  });

  it('writes a long silence in slices, never holding it (a stream that went quiet for ten minutes)', () => {
    const sizes: number[] = [];
    const sink = memorySink();
    const rec = new CallRecorder('dual', { write: (b) => (sizes.push(b.length), sink.write(b)), finish: (h) => sink.finish(h) }, 0);
    rec.caller(tone(20, RATE), 20);
    rec.caller(tone(20, RATE), 600_020); // ten minutes later
    rec.close();
    expect(Math.max(...sizes)).toBeLessThanOrEqual(RECORDER_FLUSH_MS * 16 * 4);
    const left = wavChannels(sink.file()).channels[0]!;
    expect(left.length).toBe(600_020 * 16);
    expect(rms(left, RATE, 600_000, 600_020)).toBeGreaterThan(4000);
    expect(rms(left, RATE, 40, 599_990)).toBe(0);
  });

  it('streams a long call in slices, never holding more than the flush window and the hold', () => {
    const sink = memorySink();
    const rec = new CallRecorder('mono', sink, 0);
    chunks(tone(10_000, RATE), 0, (c, t) => rec.caller(c, t));
    const pending = 10_000 * 32 - (sink.file().length - WAV_HEADER_BYTES);
    expect(pending).toBeLessThanOrEqual((RECORDER_FLUSH_MS + 500 + 20) * 32);
    rec.close();
    expect(sink.file().length).toBe(WAV_HEADER_BYTES + 10_000 * 32);
  });
});

describe('CallRecorder, mono', () => {
  it('mixes both parties into one channel at their times, clipped rather than wrapped', () => {
    const sink = memorySink();
    const rec = new CallRecorder('mono', sink, 0);
    chunks(tone(500, RATE, 300, 30000), 0, (c, t) => rec.caller(c, t)); // 0–0.5 s
    rec.agent(tone(500, RATE, 300, 30000), 250); // 0.25–0.75 s, overlapping: in phase, the sum clips
    rec.agent(tone(500, RATE, 900), 1500); // 1.5–2.0 s
    rec.close();
    const { channels } = wavChannels(sink.file());
    expect(channels).toHaveLength(1);
    const m = channels[0]!;
    expect(rms(m, RATE, 0, 240)).toBeGreaterThan(15000);
    expect(rms(m, RATE, 510, 740)).toBeGreaterThan(15000);
    expect(rms(m, RATE, 760, 1490)).toBe(0);
    expect(rms(m, RATE, 1500, 2000)).toBeGreaterThan(4000);
    const overlap = Array.from(m.subarray(260 * 16, 490 * 16));
    expect(Math.max(...overlap)).toBe(32767); // 30000 + 30000, clipped, not wrapped
    expect(Math.min(...overlap)).toBe(-32768);
  });

  it('refuses another channel layout', () => {
    expect(() => new CallRecorder('stereo' as never, memorySink(), 0)).toThrow(/mono or dual/);
  });
});

describe('RecordingTransport', () => {
  it("records the caller as the transport hands it over and the agent's μ-law 8 kHz frames as played, at 16 kHz", () => {
    const clock = new FakeClock();
    const inner = new FakeTransport({ clock });
    const sink = memorySink();
    let closed = 0;
    const t = new RecordingTransport(inner, 'dual', sink, clock, () => closed++);
    const heard: number[] = [];
    t.listen({ onAudio: (pcm) => heard.push(pcm.length), onDtmf: () => {}, onMarkAck: () => {}, onStop: () => {} });
    // The agent says 0.4 s first (20 frames, one per 20 ms).
    const reply = encodeMulaw(tone(400, 8000, 500));
    for (let i = 0; i < 20; i++) {
      t.play(reply.subarray(i * 160, (i + 1) * 160));
      clock.advance(20);
    }
    clock.advance(600); // 1.0 s
    for (let i = 0; i < 25; i++) {
      clock.advance(20);
      inner.pushAudio(tone(20, RATE, 300));
    }
    expect(heard).toHaveLength(25); // the session still hears every chunk
    t.hangup();
    expect(closed).toBe(1);
    t.close();
    expect(closed).toBe(1);
    const [left, right] = wavChannels(sink.file()).channels as [Int16Array, Int16Array];
    expect(rms(right, RATE, 10, 390)).toBeGreaterThan(4000);
    expect(rms(right, RATE, 420, 1500)).toBeLessThan(50);
    expect(rms(left, RATE, 0, 990)).toBe(0);
    expect(rms(left, RATE, 1000, 1500)).toBeGreaterThan(4000);
  });
});
