/**
 * Paced playout (src/media/playout.ts) on a fake clock: 20 ms pacing with a lead, no drift under
 * a late scheduler, marks, barge-in clear and its heard report, seamless enqueue, drained, stats.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeTransport, type SentAction } from '../../src/media/fake-transport.js';
import { PlayoutError, splitFrames, type PlayoutClip } from '../../src/media/playout-shapes.js';
import { Playout } from '../../src/media/playout.js';

const FRAME_BYTES = 160; // μ-law 8 kHz, 20 ms

/** A clip of `n` frames; frame k of clip `id` starts with bytes [id, k & 0xff]. */
function clip(n: number, id = 1, mark?: string): PlayoutClip {
  const frames = Array.from({ length: n }, (_, k) => {
    const f = Buffer.alloc(FRAME_BYTES, 0xff);
    f[0] = id;
    f[1] = k & 0xff;
    return f;
  });
  return mark === undefined ? { frames } : { frames, mark };
}

/** A seeded PRNG (mulberry32) so the random lateness is reproducible. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function setup(
  opts: { start?: number; lead?: number; jitter?: () => number; ackDelayMs?: number | null; echoMarksOnClear?: boolean } = {},
) {
  const clock = new FakeClock(opts.start ?? 1000, opts.jitter);
  const transport = new FakeTransport({
    clock,
    ackDelayMs: opts.ackDelayMs ?? null,
    echoMarksOnClear: opts.echoMarksOnClear ?? false,
  });
  const playout = new Playout(transport, { frameBytes: FRAME_BYTES, leadFrames: opts.lead ?? 2, clock });
  transport.listen({
    onAudio: () => undefined,
    onDtmf: () => undefined,
    onMarkAck: (n) => playout.markAcknowledged(n),
    onStop: () => undefined,
  });
  const events: string[] = [];
  playout.on('started', () => events.push('started'));
  playout.on('drained', () => events.push(`drained@${clock.now()}`));
  playout.on('clipPlayed', (m) => events.push(`played:${m}`));
  return { clock, transport, playout, events };
}

const plays = (sent: SentAction[]) => sent.filter((a): a is Extract<SentAction, { kind: 'play' }> => a.kind === 'play');

describe('Playout pacing', () => {
  it('sends the lead at once, then one frame per 20 ms from the start', () => {
    const { clock, transport, playout, events } = setup({ lead: 2 });
    playout.enqueue(clip(10));
    // Synchronously: the lead frames, and `started`.
    expect(transport.frames).toHaveLength(2);
    expect(events).toEqual(['started']);
    clock.advance(1000);
    const times = plays(transport.sent).map((p) => p.at);
    expect(times).toEqual([1000, 1000, 1020, 1040, 1060, 1080, 1100, 1120, 1140, 1160]);
    expect(transport.frames.map((f) => f[1])).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('a lead of 1 sends the first frame at once and then paces', () => {
    const { clock, transport, playout } = setup({ lead: 1 });
    playout.enqueue(clip(3));
    expect(transport.frames).toHaveLength(1);
    clock.advance(19);
    expect(transport.frames).toHaveLength(1);
    clock.advance(1);
    expect(transport.frames).toHaveLength(2);
  });

  it('does not drift over 10 minutes of audio when the scheduler fires late at random, and never bursts beyond the lead', () => {
    const random = rng(16);
    const lead = 2;
    const { clock, transport, playout, events } = setup({ start: 5000, lead, jitter: () => random() * 15 });
    const clips = 100;
    const perClip = 300; // 100 × 300 × 20 ms = 600 s
    for (let c = 0; c < clips; c++) playout.enqueue(clip(perClip, c % 250));
    clock.advance(601_000);

    const sent = plays(transport.sent);
    expect(sent).toHaveLength(clips * perClip);
    let maxLate = 0;
    sent.forEach((p, i) => {
      const due = 5000 + Math.max(0, i + 1 - lead) * 20;
      expect(p.at).toBeGreaterThanOrEqual(due); // never early
      maxLate = Math.max(maxLate, p.at - due);
      // At the moment frame i leaves, at most lead + ⌊elapsed / 20⌋ frames have been sent: the
      // audio sent never runs more than the lead ahead of real time.
      expect(i + 1).toBeLessThanOrEqual(lead + Math.floor((p.at - 5000) / 20));
    });
    // Each frame is late by at most one timer's lateness: no accumulation over 30 000 frames.
    expect(maxLate).toBeLessThanOrEqual(15);
    const last = sent[sent.length - 1]!;
    expect(last.at - (5000 + (clips * perClip - lead) * 20)).toBeLessThanOrEqual(15);

    const stats = playout.stats();
    expect(stats.framesSent).toBe(30_000);
    expect(stats.framesLate).toBeGreaterThan(0);
    expect(stats.framesLate).toBeLessThan(30_000);
    expect(stats.latenessP99Ms).toBeGreaterThan(5);
    expect(stats.latenessP99Ms).toBeLessThanOrEqual(15);
    expect(stats.latenessMaxMs).toBeLessThanOrEqual(15);
    expect(stats.framesDropped).toBe(0);
    expect(stats.marksSent).toBe(100);
    // Drained once, when the run's audio has played out (t0 + 600 s), give or take one late timer.
    const drained = events.filter((e) => e.startsWith('drained'));
    expect(drained).toHaveLength(1);
    const drainedAt = Number(drained[0]!.split('@')[1]);
    expect(drainedAt).toBeGreaterThanOrEqual(5000 + 600_000);
    expect(drainedAt).toBeLessThanOrEqual(5000 + 600_000 + 15);
  });

  it('catches up after a long stall without sending frames before they are due', () => {
    let stall = 0;
    const { clock, transport, playout } = setup({ start: 0, lead: 2, jitter: () => stall });
    playout.enqueue(clip(50));
    clock.advance(100); // frames 0..6 sent on time
    expect(transport.frames).toHaveLength(7);
    stall = 200; // the timer set next (for frame 8, due 140) fires 200 ms late, at 340
    clock.advance(20);
    expect(transport.frames).toHaveLength(8);
    stall = 0;
    clock.advance(200); // t = 320: still stalled
    expect(transport.frames).toHaveLength(8);
    clock.advance(20); // t = 340: every frame due by then leaves at once, and no more
    const burst = plays(transport.sent).filter((p) => p.at === 340);
    expect(burst).toHaveLength(2 + 340 / 20 - 8);
    expect(transport.frames).toHaveLength(2 + 340 / 20);
    clock.advance(20);
    expect(transport.frames).toHaveLength(2 + 360 / 20);
    expect(playout.stats().latenessMaxMs).toBeGreaterThanOrEqual(180);
  });
});

describe('Playout marks', () => {
  it("sends a mark right after each clip's last frame, default-named or as given", () => {
    const { clock, transport, playout } = setup();
    expect(playout.enqueue(clip(2, 1))).toBe('clip-1');
    expect(playout.enqueue(clip(3, 2, 'greeting'))).toBe('greeting');
    expect(playout.enqueue(clip(1, 3))).toBe('clip-3');
    clock.advance(1000);
    const seq = transport.sent.map((a) => (a.kind === 'play' ? `p${a.frame[0]}` : a.kind === 'mark' ? `m:${a.name}` : a.kind));
    expect(seq).toEqual(['p1', 'p1', 'm:clip-1', 'p2', 'p2', 'p2', 'm:greeting', 'p3', 'm:clip-3']);
    expect(playout.stats().marksSent).toBe(3);
  });

  it('emits clipPlayed when the carrier acknowledges, and ignores unknown or repeated names', () => {
    const { clock, playout, events } = setup({ start: 0, ackDelayMs: 30 });
    playout.enqueue(clip(5, 1, 'a'));
    playout.enqueue(clip(5, 2, 'b'));
    clock.advance(129);
    expect(events).toEqual(['started']); // clip a plays out at 100, acked at 130
    clock.advance(1);
    expect(events).toEqual(['started', 'played:a']);
    clock.advance(1000);
    expect(events).toEqual(['started', 'played:a', 'drained@200', 'played:b']);
    expect(playout.markAcknowledged('a')).toBe(false);
    expect(playout.markAcknowledged('nope')).toBe(false);
    expect(playout.stats().clipsPlayed).toBe(2);
  });

  it('an acknowledged mark also acknowledges earlier clips whose marks were not echoed', () => {
    const { clock, playout, events } = setup({ start: 0 });
    playout.enqueue(clip(2, 1, 'a'));
    playout.enqueue(clip(2, 2, 'b'));
    clock.advance(200);
    expect(playout.markAcknowledged('b')).toBe(true);
    expect(events.filter((e) => e.startsWith('played'))).toEqual(['played:a', 'played:b']);
  });
});

describe('Playout clear (barge-in)', () => {
  it('drops the queue, sends clear once and estimates the heard part without acknowledged marks', () => {
    const { clock, transport, playout } = setup({ start: 0, lead: 2 });
    playout.enqueue(clip(50, 1, 'one'));
    playout.enqueue(clip(50, 2, 'two'));
    clock.advance(500); // 2 + 25 = 27 frames sent: the lead ahead of the 25 played by the schedule
    expect(transport.frames).toHaveLength(27);
    const report = playout.clear();
    expect(report).toEqual({
      cleared: true,
      heard: [{ mark: 'one', frames: 50, heardFrames: 25, heardMs: 500, acknowledged: false }],
      lastAcknowledgedMark: null,
      heardMs: 500,
      unheard: ['two'],
      framesDiscarded: 73,
    });
    expect(transport.count('clear')).toBe(1);
    clock.advance(5000);
    expect(transport.frames).toHaveLength(27);
    expect(playout.playing).toBe(false);
    const again = playout.clear();
    expect(again.cleared).toBe(false);
    expect(again.heard).toEqual([]);
    expect(transport.count('clear')).toBe(1);
    expect(playout.stats()).toMatchObject({ framesDiscarded: 73, clears: 1 });
  });

  it('counts acknowledged clips in full and the partly played one by estimate', () => {
    const { clock, transport, playout, events } = setup({ start: 0, lead: 5, ackDelayMs: 0, echoMarksOnClear: true });
    playout.enqueue(clip(10, 1, 'one'));
    playout.enqueue(clip(10, 2, 'two'));
    playout.enqueue(clip(10, 3, 'three'));
    // t = 300: 'one' played out and acked at 200; 'two' fully sent (its mark pending), 5 of its
    // 10 frames played by the schedule (position 15 = 20 sent − lead 5).
    clock.advance(300);
    expect(events).toContain('played:one');
    expect(transport.sent.filter((a) => a.kind === 'mark').map((a) => (a as { name: string }).name)).toEqual(['one', 'two']);
    const report = playout.clear();
    expect(report.lastAcknowledgedMark).toBe('one');
    expect(report.heard).toEqual([
      { mark: 'one', frames: 10, heardFrames: 10, heardMs: 200, acknowledged: true },
      { mark: 'two', frames: 10, heardFrames: 5, heardMs: 100, acknowledged: false },
    ]);
    expect(report.unheard).toEqual(['three']);
    expect(report.heardMs).toBe(300);
    expect(transport.count('clear')).toBe(1);
    // Twilio echoes the pending mark 'two' after clear: it must not count as played.
    expect(events).not.toContain('played:two');
    expect(playout.stats().clipsPlayed).toBe(1);
  });

  it('a clip acknowledged ahead of the schedule counts in full', () => {
    const { clock, playout } = setup({ start: 0, lead: 2 });
    playout.enqueue(clip(4, 1, 'one'));
    playout.enqueue(clip(4, 2, 'two'));
    clock.advance(60); // 5 frames sent, 3 played by the schedule
    expect(playout.markAcknowledged('one')).toBe(true);
    const report = playout.clear();
    expect(report.heard).toEqual([{ mark: 'one', frames: 4, heardFrames: 4, heardMs: 80, acknowledged: true }]);
    expect(report.unheard).toEqual(['two']);
  });

  it('during the play-out tail (everything sent, marks pending) still clears and counts what was sent', () => {
    const { clock, transport, playout } = setup({ start: 0, lead: 2 });
    playout.enqueue(clip(5, 1, 'one'));
    clock.advance(90); // all 5 sent by 60; audio ends at 100; 4 frames played by 90
    const report = playout.clear();
    expect(report.cleared).toBe(true);
    expect(report.heard).toEqual([{ mark: 'one', frames: 5, heardFrames: 4, heardMs: 80, acknowledged: false }]);
    expect(report.framesDiscarded).toBe(0);
    expect(transport.count('clear')).toBe(1);
  });

  it('a clear from a started listener stops the run before any more frames', () => {
    const { clock, transport, playout } = setup({ start: 0 });
    playout.once('started', () => playout.clear());
    playout.enqueue(clip(10));
    clock.advance(1000);
    expect(transport.frames).toHaveLength(2);
    expect(transport.count('clear')).toBe(1);
  });
});

describe('Playout runs', () => {
  it('a clip queued during playout continues the schedule seamlessly; started and drained once', () => {
    const { clock, transport, playout, events } = setup({ start: 0, lead: 2 });
    playout.enqueue(clip(10, 1));
    clock.advance(70);
    playout.enqueue(clip(10, 2)); // queued while clip 1 is still being sent
    clock.advance(320); // t = 390: clip 2 all sent by 360; its audio ends at 400
    expect(events).toEqual(['started']);
    playout.enqueue(clip(10, 3)); // queued in the play-out tail: continues the same run
    clock.advance(2000);
    const times = plays(transport.sent).map((p) => p.at);
    const expected = Array.from({ length: 30 }, (_, i) => Math.max(0, i - 1) * 20);
    expected[20] = 390; // due at 380, before it existed: leaves when queued, the rest on schedule
    expect(times).toEqual(expected);
    expect(transport.frames.map((f) => f[0])).toEqual([...Array(10).fill(1), ...Array(10).fill(2), ...Array(10).fill(3)]);
    expect(events).toEqual(['started', 'drained@600']);
    expect(playout.stats().framesLate).toBe(0);
  });

  it('after drained, the next clip starts a new run with the lead again', () => {
    const { clock, transport, playout, events } = setup({ start: 0, lead: 2 });
    playout.enqueue(clip(3, 1));
    clock.advance(500);
    expect(events).toEqual(['started', 'drained@60']);
    playout.enqueue(clip(3, 2));
    expect(plays(transport.sent).filter((p) => p.at === 500)).toHaveLength(2);
    clock.advance(500);
    expect(events).toEqual(['started', 'drained@60', 'started', 'drained@560']);
  });

  it('counts frames the transport refuses as dropped and keeps pacing', () => {
    const clock = new FakeClock(0);
    let n = 0;
    const sink = {
      play: () => {
        if (++n === 3) throw new Error('socket full');
      },
      mark: () => undefined,
      clear: () => undefined,
    };
    const playout = new Playout(sink, { frameBytes: FRAME_BYTES, clock });
    playout.enqueue(clip(5));
    clock.advance(1000);
    expect(playout.stats()).toMatchObject({ framesSent: 4, framesDropped: 1, marksSent: 1 });
  });

  it('close stops everything without a clear and refuses more clips', () => {
    const { clock, transport, playout } = setup({ start: 0 });
    playout.enqueue(clip(10));
    playout.close();
    clock.advance(1000);
    expect(transport.frames).toHaveLength(2);
    expect(transport.count('clear')).toBe(0);
    expect(clock.pendingTimers).toBe(0);
    expect(() => playout.enqueue(clip(1))).toThrow(/closed/);
  });
});

describe('Playout input checks', () => {
  const { playout } = setup();

  it('refuses an empty clip', () => {
    expect(() => playout.enqueue({ frames: [] })).toThrow(PlayoutError);
    expect(() => playout.enqueue({ frames: [] })).toThrow('a clip needs at least one frame');
  });

  it('refuses a frame of the wrong size, naming it and the size expected', () => {
    const frames = [Buffer.alloc(FRAME_BYTES), Buffer.alloc(100)];
    expect(() => playout.enqueue({ frames })).toThrow('frame 1 of the clip is 100 bytes; every frame must be 160 bytes (20 ms)');
  });

  it('refuses a frame that is not bytes', () => {
    expect(() => playout.enqueue({ frames: ['x' as unknown as Buffer] })).toThrow('frame 0 of the clip is not a Buffer/Uint8Array');
  });

  it('refuses bad or duplicate mark names', () => {
    expect(() => playout.enqueue({ ...clip(1), mark: '' })).toThrow(/mark name/);
    expect(() => playout.enqueue({ ...clip(1), mark: 'x'.repeat(65) })).toThrow(/mark name/);
    const { playout: p2 } = setup();
    p2.enqueue(clip(1, 1, 'same'));
    expect(() => p2.enqueue(clip(1, 1, 'same'))).toThrow('mark name "same" is already in use');
  });

  it('refuses bad options', () => {
    const sink = { play: () => undefined, mark: () => undefined, clear: () => undefined };
    expect(() => new Playout(sink, { frameBytes: 0 })).toThrow(/frameBytes/);
    expect(() => new Playout(sink, { frameBytes: 160, leadFrames: 0 })).toThrow(/leadFrames/);
    expect(() => new Playout(sink, { frameBytes: 160, frameMs: 0 })).toThrow(/frameMs/);
  });

  it('a refused clip leaves nothing sent', () => {
    const { transport, playout: p } = setup();
    expect(() => p.enqueue({ frames: [Buffer.alloc(FRAME_BYTES), Buffer.alloc(1)] })).toThrow(PlayoutError);
    expect(transport.sent).toEqual([]);
    expect(p.playing).toBe(false);
  });
});

describe('splitFrames', () => {
  it('cuts audio into whole frames and pads the last with the silence byte', () => {
    const audio = Uint8Array.from({ length: 350 }, (_, i) => i % 200);
    const frames = splitFrames(audio, 160, 0xff);
    expect(frames.map((f) => f.length)).toEqual([160, 160, 160]);
    expect([...frames[0]!]).toEqual([...audio.subarray(0, 160)]);
    expect([...frames[2]!.subarray(0, 30)]).toEqual([...audio.subarray(320)]);
    expect([...frames[2]!.subarray(30)]).toEqual(Array(130).fill(0xff));
    expect(splitFrames(new Uint8Array(320), 320, 0)).toHaveLength(1);
  });

  it('refuses empty audio and bad sizes', () => {
    expect(() => splitFrames(new Uint8Array(0), 160, 0xff)).toThrow('audio to split into frames is empty');
    expect(() => splitFrames(new Uint8Array(10), 0, 0xff)).toThrow(/frameBytes/);
    expect(() => splitFrames(new Uint8Array(10), 160, 256)).toThrow(/silence/);
  });
});
