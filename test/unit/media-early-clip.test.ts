/**
 * The early clip of a call media session (src/media/call-session.ts `playEarly`; docs/media.md
 * "The early clip"), on a fake transport, a fake recogniser, a fake clock and real eSpeak caller
 * speech: a clip played while its turn is still running is the turn's response (its latency),
 * the reply follows it; a barge-in during it stops it and drops the reply behind it.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CallMediaSession } from '../../src/media/call-session.js';
import type { ReplyClip, ReplyEvent, TurnReply, TurnRequest } from '../../src/media/call-session-port.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer, type FakeUtterance } from '../../src/media/fake-recognizer.js';
import { FakeTransport } from '../../src/media/fake-transport.js';
import { WebRtcVad } from '../../src/media/vad-webrtc.js';
import { resampleMono16, toWav48k } from '../../src/media/wav.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { audioFeeder, trim } from '../support/media.js';

const RATE = 16_000;
let vad: WebRtcVad;
let lines: Int16Array[];

beforeAll(async () => {
  vad = await WebRtcVad.load();
  lines = (await synthesizeLines('early-clip-test', ['Can I bring my dog along?', 'Wait, one more thing.'])).map((a) =>
    trim(resampleMono16(a.samples, a.sampleRate, RATE), RATE),
  );
}, 60_000);

/** `ms` of a 440 Hz tone as a 48 kHz WAV clip. */
function clip(text: string, ms: number): ReplyClip {
  const n = (48_000 * ms) / 1000;
  const samples = Int16Array.from({ length: n }, (_, i) => Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)));
  return { wav: toWav48k({ samples, sampleRate: 48_000 }), text };
}

/** A session whose turn port answers only when the test says (`answer`). */
function harness(script: FakeUtterance[]) {
  const clock = new FakeClock(1000);
  const transport = new FakeTransport({ clock, ackDelayMs: 20 });
  const requests: TurnRequest[] = [];
  const waiting: Array<(r: TurnReply) => void> = [];
  const session = new CallMediaSession({
    transport,
    vad: vad.createDetector({ sampleRate: RATE }),
    recognizer: new FakeRecognizer({ clock, script }),
    language: 'en-IN',
    clock,
    turn: (r) => {
      requests.push(r);
      return new Promise<TurnReply>((resolve) => waiting.push(resolve));
    },
  });
  const replies: ReplyEvent[] = [];
  session.on('reply', (e) => replies.push(e));
  let bargeIns = 0;
  session.on('bargeIn', () => bargeIns++);
  const marks = () => transport.sent.filter((a) => a.kind === 'mark').map((a) => (a as { name: string }).name);
  const answer = (r: TurnReply) => waiting.shift()!(r);
  return { clock, transport, session, requests, replies, marks, answer, bargeIns: () => bargeIns, ...audioFeeder(transport, clock) };
}

describe('the early clip', () => {
  it('plays while the turn runs, is the response (its latency), and the reply follows it', async () => {
    const h = harness([{ text: 'can i bring my dog along' }]);
    h.session.start([clip('Hello.', 300)]);
    await h.silence(600);
    h.session.playEarly([clip('Ignored: no turn is running.', 300)]);
    expect(h.marks()).toEqual(['t1c1']);
    const line = await h.feed(lines[0]!);
    await h.silence(900);
    expect(h.requests).toHaveLength(1);
    h.session.playEarly([clip('Yes, pets on a leash are welcome.', 1000)]);
    const early = h.replies.at(-1)!;
    expect(early).toMatchObject({ cause: 'speech', text: 'Yes, pets on a leash are welcome.' });
    expect(early.latencyMs).toBe(early.firstFrameAtMs! - early.endOfSpeechAtMs!);
    expect(Math.abs(early.endOfSpeechAtMs! - line.endAt)).toBeLessThanOrEqual(60);
    await h.silence(300);
    h.answer({ clips: [clip('Tell the desk.', 400), clip('Which day?', 400)], ended: false });
    await h.silence(2500);
    expect(h.marks()).toEqual(['t1c1', 't2c1', 't3c1', 't3c2']);
    // One response latency for the turn: the early clip's.
    expect(h.session.stats().latenciesMs).toEqual([early.latencyMs]);
    expect(h.transport.count('clear')).toBe(0);
  }, 30_000);

  it('a barge-in during it stops it, and the reply behind it is not played', async () => {
    const h = harness([{ text: 'can i bring my dog along' }, { text: 'wait one more thing' }]);
    h.session.start([clip('Hello.', 300)]);
    await h.silence(600);
    await h.feed(lines[0]!);
    await h.silence(900);
    h.session.playEarly([clip('Yes, pets on a leash are welcome, and here is a long story.', 6000)]);
    await h.silence(500);
    await h.feed(lines[1]!); // the caller talks over the early clip
    expect(h.bargeIns()).toBe(1);
    expect(h.transport.count('clear')).toBe(1);
    h.answer({ clips: [clip('Tell the desk.', 400), clip('Which day?', 400)], ended: false });
    await h.silence(1500);
    // The early clip was cut before its mark; neither the rest nor the question was sent.
    expect(h.marks()).toEqual(['t1c1']);
    const clearAt = h.transport.sent.find((a) => a.kind === 'clear')!.at;
    expect(h.transport.sent.filter((a) => a.kind === 'play' && a.at > clearAt + 20)).toEqual([]);
    // The interrupting speech is the next turn, with what the caller heard.
    expect(h.requests).toHaveLength(2);
    expect(h.requests[1]).toMatchObject({ kind: 'speech', text: 'wait one more thing' });
    expect((h.requests[1] as { heard: { heard: Array<{ mark: string }> } }).heard.heard[0]!.mark).toBe('t2c1');
  }, 30_000);
});
