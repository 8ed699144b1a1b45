/**
 * The call media session (src/media/call-session.ts) on a fake transport, a fake streaming
 * recogniser, a fake clock and a scripted turn port, fed REAL speech: caller lines synthesised
 * by the embedded voice (eSpeak NG), resampled to 16 kHz and pushed in 20 ms frames with the
 * clock advancing 20 ms per frame, silence between them.
 *
 * The speech worker runs compiled: its sources are transpiled into node_modules/.cache (as in
 * media-vad.test.ts) so this file never runs a stale build.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CallMediaSession } from '../../src/media/call-session.js';
import { CallSessionError } from '../../src/media/session/options.js';
import type {
  CallSessionOptions,
  EndedEvent,
  HeardEvent,
  ReplyClip,
  ReplyEvent,
  TurnReply,
  TurnRequest,
} from '../../src/media/call-session-port.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer, type FakeUtterance } from '../../src/media/fake-recognizer.js';
import { FakeTransport } from '../../src/media/fake-transport.js';
import type { DtmfDigit } from '../../src/media/transport.js';
import type { ClearReport } from '../../src/media/playout-shapes.js';
import { WebRtcVad } from '../../src/media/vad-webrtc.js';
import { resampleMono16, toWav48k } from '../../src/media/wav.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { audioFeeder, concat, trim } from '../support/media.js';

const RATE = 16_000;
const LINES = ['My name is Priya Sharma.', 'Tomorrow at five pm.', 'Yes please.'];

let vad: WebRtcVad;
/** The caller lines at 16 kHz, trimmed. */
let lines: Int16Array[];

beforeAll(async () => {
  vad = await WebRtcVad.load();
  lines = (await synthesizeLines('callsession-test', LINES)).map((a) => trim(resampleMono16(a.samples, a.sampleRate, RATE), RATE));
}, 60_000);

/** A reply clip: `ms` of a 440 Hz tone as a 48 kHz WAV (the clip cache's format). */
function clip(text: string, ms: number, extra: Partial<ReplyClip> = {}): ReplyClip {
  const n = (48_000 * ms) / 1000;
  const samples = Int16Array.from({ length: n }, (_, i) => Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)));
  return { wav: toWav48k({ samples, sampleRate: 48_000 }), text, ...extra };
}

/** A scripted call: the session with its fakes, a turn port answering from a script, and what it emitted. */
function harness(
  script: FakeUtterance[],
  replies: Array<TurnReply | ((r: TurnRequest) => TurnReply | Promise<TurnReply>)>,
  opts: Partial<CallSessionOptions> & { ackDelayMs?: number | null } = {},
) {
  const clock = new FakeClock(1000);
  const transport = new FakeTransport({ clock, ackDelayMs: opts.ackDelayMs === undefined ? 20 : opts.ackDelayMs });
  const recognizer = new FakeRecognizer({ clock, script });
  const requests: TurnRequest[] = [];
  const turn = async (r: TurnRequest): Promise<TurnReply> => {
    requests.push(r);
    const next = replies.shift();
    if (!next) return { clips: [clip('anything else?', 400)], ended: false };
    return typeof next === 'function' ? next(r) : next;
  };
  const session = new CallMediaSession({
    transport,
    vad: vad.createDetector({ sampleRate: RATE }),
    recognizer,
    language: 'en-IN',
    turn,
    clock,
    ...opts,
  });
  const events = {
    heard: [] as HeardEvent[],
    replies: [] as ReplyEvent[],
    bargeIns: [] as ClearReport[],
    dtmf: [] as string[],
    ended: [] as EndedEvent[],
  };
  session.on('heard', (e) => events.heard.push(e));
  session.on('reply', (e) => events.replies.push(e));
  session.on('bargeIn', (e) => events.bargeIns.push(e.report));
  const bargeInOnsets: number[] = [];
  session.on('bargeIn', (e) => bargeInOnsets.push(e.speechOnsetAtMs));
  session.on('dtmf', (e) => events.dtmf.push(e.digit));
  session.on('ended', (e) => events.ended.push(e));
  const { feed, silence } = audioFeeder(transport, clock);
  return { clock, transport, recognizer, session, requests, events, feed, silence, bargeInOnsets };
}

describe('CallMediaSession', () => {
  it('plays the opening at once, hears the caller, calls the turn port with text and telemetry, plays the reply with marks', async () => {
    const h = harness(
      [{ text: 'my name is priya sharma', confidence: 0.82 }, { text: 'tomorrow at five pm' }],
      [
        { clips: [clip('Thanks Priya. Which day?', 600)], ended: false, expectation: 'date' },
        { clips: [clip('Noted.', 300), clip('Your phone number?', 500)], ended: false, endOfUtteranceSilenceMs: 900 },
      ],
    );
    h.session.start([clip('Hello, this is the clinic.', 800), clip('What is your name?', 600)]);
    // The opening's first frames leave before start() returns.
    expect(h.transport.count('play')).toBeGreaterThan(0);
    expect(h.transport.sent[0]!.at).toBe(1000);
    expect(h.events.replies[0]).toMatchObject({ cause: 'opening', firstFrameAtMs: 1000, latencyMs: null });
    await h.silence(1600); // the opening plays (1.4 s) and its marks come back
    expect(h.transport.sent.filter((a) => a.kind === 'mark').map((a) => (a as { name: string }).name)).toEqual(['t1c1', 't1c2']);
    expect(h.transport.count('play')).toBe(70); // 800 + 600 ms of 20 ms frames

    const line1 = await h.feed(lines[0]!);
    await h.silence(1200);
    expect(h.requests).toHaveLength(1);
    const r1 = h.requests[0]!;
    expect(r1.kind).toBe('speech');
    if (r1.kind !== 'speech') throw new Error('unreachable');
    expect(r1.text).toBe('my name is priya sharma');
    expect(r1.heard).toBeNull();
    expect(r1.telemetry.stt_provider).toBe('fake');
    expect(r1.telemetry.stt_confidence).toBe(0.82);
    expect(r1.telemetry.stt_ms).toBe(0);
    // The default (free) end-of-utterance silence, counted on 10 ms VAD frames.
    expect(r1.telemetry.silence_ms).toBeGreaterThanOrEqual(700);
    expect(r1.telemetry.silence_ms).toBeLessThanOrEqual(740);
    // The recogniser got the whole line, with the pre-roll before it and the silence after it.
    const lineMs = (lines[0]!.length / RATE) * 1000;
    const preRoll = r1.telemetry.audio_ms - lineMs - r1.telemetry.silence_ms;
    expect(preRoll).toBeGreaterThanOrEqual(300 - 80);
    expect(preRoll).toBeLessThanOrEqual(300 + 80);
    expect(h.events.heard.filter((e) => e.kind === 'final').map((e) => e.text)).toEqual(['my name is priya sharma']);

    // Latency: first reply frame − the real end of the caller's line, from sample times.
    const reply1 = h.events.replies[1]!;
    expect(reply1.cause).toBe('speech');
    expect(reply1.text).toBe('Thanks Priya. Which day?');
    expect(Math.abs(reply1.endOfSpeechAtMs! - line1.endAt)).toBeLessThanOrEqual(60);
    expect(reply1.latencyMs).toBe(reply1.firstFrameAtMs! - reply1.endOfSpeechAtMs!);
    expect(reply1.latencyMs!).toBeGreaterThanOrEqual(700);
    expect(reply1.latencyMs!).toBeLessThanOrEqual(700 + 60);

    // Second turn: the step expected a date (800 ms end-of-utterance silence).
    await h.feed(lines[1]!);
    await h.silence(1500);
    expect(h.requests).toHaveLength(2);
    const r2 = h.requests[1]!;
    expect(r2.kind === 'speech' && r2.text).toBe('tomorrow at five pm');
    expect(r2.kind === 'speech' && r2.telemetry.silence_ms).toBeGreaterThanOrEqual(800);
    await h.silence(1000);
    expect(h.session.stats().latenciesMs).toHaveLength(2);
    expect(h.session.stats().turns.speech).toBe(2);
    // The recogniser was told what each step expects.
    expect(h.recognizer.started.map((o) => o.hints?.grammar)).toEqual(['free', 'date']);
    const marks = h.transport.sent.filter((a) => a.kind === 'mark').map((a) => (a as { name: string }).name);
    expect(marks).toEqual(['t1c1', 't1c2', 't2c1', 't3c1', 't3c2']);
  }, 30_000);

  it('barge-in during a long reply clears it within 300 ms of speech onset and records what was heard', async () => {
    const h = harness([{ text: 'my name is priya sharma' }], [{ clips: [clip('Got it.', 300)], ended: false }]);
    h.session.start([clip('A long introduction.', 6000)]);
    await h.silence(1000);
    expect(h.transport.count('clear')).toBe(0);
    const line = await h.feed(lines[0]!);
    const clear = h.transport.sent.find((a) => a.kind === 'clear');
    expect(clear).toBeDefined();
    // The detector finds the onset within 60 ms of the line's first audible sample, and the
    // clear leaves within 300 ms of that onset (250 ms of speech + 50 ms waiting for a partial).
    const onset = h.bargeInOnsets[0]!;
    expect(Math.abs(onset - line.startAt)).toBeLessThanOrEqual(60);
    expect(clear!.at - onset).toBeLessThanOrEqual(300);
    expect(clear!.at - onset).toBeGreaterThanOrEqual(250);
    // No opening frame after the clear.
    const clearIndex = h.transport.sent.indexOf(clear!);
    expect(
      h.transport.sent
        .slice(clearIndex + 1)
        .filter((a) => a.kind === 'play')
        .every((a) => a.at > line.endAt),
    ).toBe(true);
    expect(h.events.bargeIns).toHaveLength(1);
    const heard = h.events.bargeIns[0]!;
    expect(heard.heard).toHaveLength(1);
    expect(heard.heard[0]!.mark).toBe('t1c1');
    // The caller heard the opening from 1000 ms until the clear, less nothing: ~1 s + 250 ms.
    expect(heard.heardMs).toBeGreaterThanOrEqual(clear!.at - 1000 - 60);
    expect(heard.heardMs).toBeLessThanOrEqual(clear!.at - 1000);
    // The interrupting speech is a normal utterance, and the turn gets the heard report.
    await h.silence(1000);
    expect(h.requests).toHaveLength(1);
    expect(h.requests[0]).toMatchObject({ kind: 'speech', text: 'my name is priya sharma', heard });
    expect(h.session.stats().bargeIns).toBe(1);
  }, 30_000);

  it('does not interrupt for a backchannel heard in a partial, and does not take it as a turn', async () => {
    const h = harness([{ text: 'uh huh', partials: [{ text: 'uh huh', afterMs: 100 }] }], []);
    h.session.start([clip('Your appointment is on Monday at five in the evening.', 4000)]);
    await h.silence(500);
    await h.feed(lines[2]!);
    await h.silence(1000);
    expect(h.events.heard[0]).toEqual({ kind: 'partial', text: 'uh huh' });
    expect(h.transport.count('clear')).toBe(0);
    expect(h.requests).toHaveLength(0);
    expect(h.events.heard.find((e) => e.kind === 'final')).toMatchObject({ text: 'uh huh', ignored: true });
  }, 30_000);

  it('does not let the caller interrupt a clip marked bargeIn: false, and drops that overlapping speech', async () => {
    const h = harness([{ text: 'hello' }], []);
    h.session.start([clip('A legal disclaimer.', 4000, { bargeIn: false })]);
    await h.silence(500);
    await h.feed(lines[0]!);
    await h.silence(1000);
    expect(h.transport.count('clear')).toBe(0);
    expect(h.events.bargeIns).toHaveLength(0);
    expect(h.requests).toHaveLength(0);
    expect(h.events.heard.find((e) => e.kind === 'final')).toMatchObject({ text: 'hello', ignored: true });
  }, 30_000);

  it('collects DTMF digits and sends them as one text at # or after the digit timeout', async () => {
    const h = harness([], [], { dtmfTimeoutMs: 2000 });
    h.session.start([clip('Key in your number.', 400)]);
    await h.silence(600);
    for (const d of ['9', '8', '4', '#'] as const) {
      h.transport.pushDtmf(d);
      await h.silence(100);
    }
    expect(h.requests).toEqual([{ kind: 'dtmf', text: '984', heard: null }]);
    expect(h.events.dtmf).toEqual(['9', '8', '4', '#']);
    await h.silence(600);
    h.transport.pushDtmf('1');
    h.transport.pushDtmf('2');
    await h.silence(1900);
    expect(h.requests).toHaveLength(1);
    await h.silence(200);
    expect(h.requests[1]).toEqual({ kind: 'dtmf', text: '12', heard: null });
  }, 30_000);

  it('a key pressed during playout stops it and the entry carries what was heard', async () => {
    const h = harness([], []);
    h.session.start([clip('Press one for appointments, two for billing.', 3000)]);
    await h.silence(1000);
    h.transport.pushDtmf('2');
    expect(h.transport.count('clear')).toBe(1);
    h.transport.pushDtmf('#');
    await h.silence(100);
    expect(h.requests).toHaveLength(1);
    const r = h.requests[0]!;
    expect(r.kind === 'dtmf' && r.text).toBe('2');
    expect(r.kind === 'dtmf' && r.heard?.heard[0]?.heardMs).toBe(1000);
  }, 30_000);

  /** Feeds `pcm` in `keys.length` equal slices, pressing each key after its slice. */
  async function feedWithKeys(h: ReturnType<typeof harness>, pcm: Int16Array, keys: readonly DtmfDigit[]): Promise<void> {
    const step = Math.floor(pcm.length / keys.length / 320) * 320;
    for (const [i, key] of keys.entries()) {
      await h.feed(pcm.subarray(i * step, i === keys.length - 1 ? pcm.length : (i + 1) * step));
      h.transport.pushDtmf(key);
    }
  }
  const NUMBER = [...'9876543210'] as DtmfDigit[];
  /** What a garbled line reading the number was heard as: thirteen digits. */
  const GARBLED = { text: 'nine oh eight seven six five four three oh two one one zero' };

  it('keys pressed while the question plays over a noisy line stop it and are captured; the noise is never a turn', async () => {
    const h = harness(
      [GARBLED],
      [
        {
          clips: [clip('9 8 7 6 5 4 3 2 1 0. Is that correct?', 800, { asksConfirmation: true })],
          ended: false,
          expectation: 'yes_no',
        },
      ],
    );
    h.session.start([clip('What is your ten-digit mobile number?', 4000)], false);
    await h.silence(500);
    // The first key comes 100 ms into the caller's noise, before it could barge in: the key stops the question.
    const noise = concat([lines[0]!, lines[1]!]);
    await h.feed(noise.subarray(0, 1600));
    expect(h.transport.count('clear')).toBe(0);
    h.transport.pushDtmf('9');
    expect(h.transport.count('clear')).toBe(1);
    await feedWithKeys(h, noise.subarray(1600), [...NUMBER.slice(1), '#']);
    await h.silence(3000);
    expect(h.requests).toHaveLength(1);
    expect(h.requests[0]).toMatchObject({ kind: 'dtmf', text: '9876543210' });
    const heard = h.requests[0]!.kind === 'dtmf' ? h.requests[0]!.heard : null;
    expect(heard?.heard[0]?.heardMs).toBe(600);
    expect(h.events.heard.filter((e) => e.kind === 'final')).toEqual([]);
  }, 30_000);

  it('keys pressed mid-utterance after the question drop the speech: only the keyed number is a turn, and silence is timed again after it', async () => {
    const h = harness(
      [GARBLED, GARBLED],
      [{ clips: [clip('9 8 7 6 5 4 3 2 1 0. Is that correct?', 400)], ended: false, expectation: 'yes_no' }],
      { silence: { noSpeechMs: 2000, maxReprompts: 2 } },
    );
    h.session.start([clip('What is your ten-digit mobile number?', 400)]);
    await h.silence(600);
    const noise = concat([lines[0]!, lines[1]!, lines[0]!]);
    // 600 ms of the noisy line: an utterance is being heard when the first key comes.
    await h.feed(noise.subarray(0, 9600));
    expect(h.session.stats().utterances).toBe(1);
    await feedWithKeys(h, noise.subarray(9600, 9600 + 16_000 * 2), [...NUMBER, '#']);
    // The line stays noisy while the readback plays (it cannot barge in: no utterance is heard), then goes quiet.
    await h.feed(noise.subarray(9600 + 16_000 * 2));
    expect(h.requests.map((r) => r.kind)).toEqual(['dtmf']);
    expect(h.requests[0]).toMatchObject({ text: '9876543210' });
    await h.silence(1900);
    expect(h.requests.map((r) => r.kind)).toEqual(['dtmf']);
    await h.silence(1000);
    expect(h.requests.map((r) => r.kind)).toEqual(['dtmf', 'silence']);
    expect(h.events.heard.filter((e) => e.kind === 'final')).toEqual([]);
  }, 30_000);

  it('asks for a failed re-prompt when the recogniser crashes, and the call goes on', async () => {
    const h = harness(
      [{ text: 'lost', mode: 'crash' }, { text: 'tomorrow at five pm' }],
      [
        { clips: [clip('Sorry, could you say that again?', 500)], ended: false },
        { clips: [clip('Thanks.', 300)], ended: false },
      ],
    );
    h.session.start([clip('Which day?', 400)]);
    await h.silence(600);
    await h.feed(lines[0]!);
    await h.silence(1000);
    expect(h.requests[0]).toMatchObject({ kind: 'failed', failed: true, error: { kind: 'crashed', provider: 'fake' } });
    expect(h.events.replies[1]).toMatchObject({ cause: 'failed', text: 'Sorry, could you say that again?' });
    await h.silence(700);
    await h.feed(lines[1]!);
    await h.silence(1000);
    expect(h.requests[1]).toMatchObject({ kind: 'speech', text: 'tomorrow at five pm' });
    expect(h.session.stats().sttFailures).toBe(1);
    expect(h.session.isEnded).toBe(false);
  }, 30_000);

  it('measures stt_ms on a slow recogniser and includes it in the response latency', async () => {
    const h = harness([{ text: 'yes please', mode: 'slow', delayMs: 400 }], [{ clips: [clip('Great.', 300)], ended: false }]);
    h.session.start([clip('Shall I book it?', 400)]);
    await h.silence(600);
    const line = await h.feed(lines[2]!);
    await h.silence(1500);
    expect(h.requests[0]).toMatchObject({ kind: 'speech', text: 'yes please', telemetry: { stt_ms: 400 } });
    const reply = h.events.replies[1]!;
    expect(Math.abs(reply.endOfSpeechAtMs! - line.endAt)).toBeLessThanOrEqual(60);
    expect(reply.latencyMs!).toBeGreaterThanOrEqual(700 + 400);
    expect(reply.latencyMs!).toBeLessThanOrEqual(700 + 400 + 60);
  }, 30_000);

  it('skips a reply clip that is not a WAV and plays the rest', async () => {
    const h = harness([], []);
    h.session.start([{ wav: new Uint8Array([1, 2, 3]), text: 'broken' }, clip('Hello.', 200)]);
    await h.silence(400);
    expect(h.transport.count('play')).toBe(10);
    expect(h.session.stats().clipsSkipped).toBe(1);
    expect(h.session.isEnded).toBe(false);
  });

  it('asks for a failed re-prompt when the recogniser hangs past its deadline', async () => {
    const h = harness([{ text: 'never', mode: 'hang' }], [], { recognizerTimeoutMs: 1500 });
    h.session.start([clip('Which day?', 400)]);
    await h.silence(600);
    await h.feed(lines[1]!);
    await h.silence(1000);
    expect(h.requests).toHaveLength(0);
    await h.silence(1500);
    expect(h.requests[0]).toMatchObject({ kind: 'failed', error: { kind: 'timeout' } });
  }, 30_000);

  it('re-prompts after the configured silence once the prompt drained, then gives up', async () => {
    const h = harness(
      [],
      [
        { clips: [clip('Are you there?', 400)], ended: false },
        { clips: [clip('Goodbye.', 400)], ended: true },
      ],
      { silence: { noSpeechMs: 2000, maxReprompts: 1 }, closeGraceMs: 200 },
    );
    h.session.start([clip('What is your name?', 400)]);
    await h.silence(2300);
    expect(h.requests).toHaveLength(0);
    await h.silence(200);
    expect(h.requests[0]).toMatchObject({ kind: 'silence', silence: true, attempt: 1, giveUp: false });
    await h.silence(2500);
    expect(h.requests[1]).toMatchObject({ kind: 'silence', giveUp: true });
    await h.silence(1000);
    expect(h.transport.count('hangup')).toBe(1);
    expect(h.events.ended).toEqual([{ reason: 'hangup', cause: 'completed' }]);
  }, 30_000);

  it('hangs up only after the closing clip’s mark is acknowledged plus the close grace', async () => {
    const h = harness([{ text: 'yes please' }], [{ clips: [clip('Booked. Goodbye.', 600)], ended: true }], {
      ackDelayMs: null,
      closeGraceMs: 300,
    });
    h.session.start([clip('Shall I book it?', 400)]);
    await h.silence(100);
    h.transport.ackMark('t1c1');
    await h.silence(400);
    await h.feed(lines[2]!);
    await h.silence(1500);
    expect(h.requests).toHaveLength(1);
    expect(h.transport.sent.some((a) => a.kind === 'mark' && a.name === 't2c1')).toBe(true);
    expect(h.transport.count('hangup')).toBe(0);
    const ackAt = h.clock.now();
    h.transport.ackMark('t2c1');
    await h.silence(280);
    expect(h.transport.count('hangup')).toBe(0);
    await h.silence(40);
    const hangup = h.transport.sent.find((a) => a.kind === 'hangup');
    expect(hangup?.at).toBe(ackAt + 300);
    expect(h.events.ended).toEqual([{ reason: 'hangup', cause: 'completed' }]);
  }, 30_000);

  it('stops everything when the transport stops mid-reply: ended, and nothing more is sent', async () => {
    const h = harness([], []);
    h.session.start([clip('A long reply.', 3000)]);
    await h.silence(500);
    const sentBefore = h.transport.sent.length;
    // Count what the session still tries to send (the fake transport drops it after a stop).
    let attempts = 0;
    const play = h.transport.play.bind(h.transport);
    h.transport.play = (frame) => {
      attempts++;
      play(frame);
    };
    h.transport.stop('caller-hangup');
    expect(h.events.ended).toEqual([{ reason: 'caller-hangup', cause: null }]);
    expect(h.clock.pendingTimers).toBe(0);
    await h.silence(3000);
    h.clock.advance(20_000);
    expect(h.transport.sent.length).toBe(sentBefore);
    expect(attempts).toBe(0);
    expect(h.session.isEnded).toBe(true);
  }, 30_000);

  it('enforces the maximum call duration: closing, then hang-up', async () => {
    const h = harness([], [(r) => ({ clips: [clip(r.kind === 'max_duration' ? 'We have to end here.' : '?', 400)], ended: false })], {
      maxCallDurationMs: 3000,
      closeGraceMs: 100,
    });
    h.session.start([clip('A very long opening.', 10_000)]);
    await h.silence(2900);
    expect(h.requests).toHaveLength(0);
    await h.silence(200);
    expect(h.requests[0]).toMatchObject({ kind: 'max_duration' });
    expect(h.transport.count('clear')).toBe(1);
    expect(h.events.replies[1]).toMatchObject({ cause: 'max_duration', text: 'We have to end here.' });
    await h.silence(800);
    expect(h.transport.count('hangup')).toBe(1);
    expect(h.events.ended).toEqual([{ reason: 'hangup', cause: 'max_duration' }]);
  }, 30_000);

  it('hangs up after the maximum duration even when the turn port never answers', async () => {
    const h = harness([], [() => new Promise<TurnReply>(() => undefined)], { maxCallDurationMs: 2000, maxClosingMs: 1000 });
    h.session.start([clip('Hello.', 400)]);
    await h.silence(2900);
    expect(h.requests[0]).toMatchObject({ kind: 'max_duration' });
    expect(h.transport.count('hangup')).toBe(0);
    await h.silence(200);
    expect(h.events.ended).toEqual([{ reason: 'hangup', cause: 'max_duration' }]);
  }, 30_000);

  it('rejects bad options', () => {
    const clock = new FakeClock();
    const transport = new FakeTransport({ clock });
    const base = {
      transport,
      recognizer: new FakeRecognizer({ clock }),
      language: 'en',
      turn: async () => ({ clips: [], ended: false }),
      clock,
    };
    expect(() => new CallMediaSession({ ...base, vad: vad.createDetector({ sampleRate: 8000 }) })).toThrow(CallSessionError);
    expect(() => new CallMediaSession({ ...base, vad: vad.createDetector({ sampleRate: RATE }), preRollMs: -1 })).toThrow(/preRollMs/);
    expect(() => new CallMediaSession({ ...base, vad: vad.createDetector({ sampleRate: RATE }), silence: { noSpeechMs: 5 } })).toThrow(
      CallSessionError,
    );
  });
});
