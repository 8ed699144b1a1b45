/**
 * Provider endpointing in the call media session (docs/media.md "Cloud speech recognition"): the
 * provider's endpointing and vagent's VAD agree: whichever says end-of-utterance first wins, the
 * other is ignored, never a double turn. The fake recogniser ends an utterance by itself
 * (`endOfUtteranceAfterMs`, a final marked `endOfUtterance`), on a fake transport and a fake clock,
 * fed real speech (eSpeak NG lines at 16 kHz in 20 ms packets, the clock advancing 20 ms per
 * packet) as in media-call-session.test.ts.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CallMediaSession } from '../../src/media/call-session.js';
import type { HeardEvent, ReplyEvent, TurnReply, TurnRequest } from '../../src/media/call-session-port.js';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer, type FakeRecognizerOptions, type FakeUtterance } from '../../src/media/fake-recognizer.js';
import { FakeTransport } from '../../src/media/fake-transport.js';
import type { SpeechRecognizer } from '../../src/media/recognizer.js';
import { FallbackRecognizer } from '../../src/adapters/recognizers/fallback.js';
import { WebRtcVad } from '../../src/media/vad-webrtc.js';
import { resampleMono16, toWav48k } from '../../src/media/wav.js';
import { synthesizeLines } from '../support/espeak-worker.js';
import { audioFeeder, trim } from '../support/media.js';

const RATE = 16_000;
const LINES = ['My name is Priya Sharma.', 'Tomorrow at five pm.'];
/** The default (`free`) end-of-utterance silence of the VAD path, ms. */
const VAD_SILENCE_MS = 700;

let vad: WebRtcVad;
let lines: Int16Array[];

beforeAll(async () => {
  vad = await WebRtcVad.load();
  lines = (await synthesizeLines('provider-eou-test', LINES)).map((a) => trim(resampleMono16(a.samples, a.sampleRate, RATE), RATE));
}, 60_000);

function clip(text: string, ms: number): TurnReply['clips'][number] {
  const n = (48_000 * ms) / 1000;
  const samples = Int16Array.from({ length: n }, (_, i) => Math.round(3000 * Math.sin((2 * Math.PI * 440 * i) / 48_000)));
  return { wav: toWav48k({ samples, sampleRate: 48_000 }), text };
}

function harness(
  script: FakeUtterance[],
  extra: Omit<FakeRecognizerOptions, 'clock' | 'script'> = {},
  wrap?: (fake: FakeRecognizer, clock: FakeClock) => SpeechRecognizer,
) {
  const clock = new FakeClock(1000);
  const transport = new FakeTransport({ clock, ackDelayMs: 20 });
  const fake = new FakeRecognizer({ clock, script, ...extra });
  const recognizer = fake;
  const used = wrap ? wrap(fake, clock) : fake;
  const requests: TurnRequest[] = [];
  const turn = async (r: TurnRequest): Promise<TurnReply> => {
    requests.push(r);
    return { clips: [clip('Noted.', 200)], ended: false };
  };
  const session = new CallMediaSession({
    transport,
    vad: vad.createDetector({ sampleRate: RATE }),
    recognizer: used,
    language: 'en-IN',
    turn,
    clock,
  });
  const heard: HeardEvent[] = [];
  const replies: ReplyEvent[] = [];
  session.on('heard', (e) => heard.push(e));
  session.on('reply', (e) => replies.push(e));
  const { feed, silence } = audioFeeder(transport, clock);
  /** The call's start: a short opening, drained. */
  async function open(): Promise<void> {
    session.start([clip('Hello. Your name?', 300)]);
    await silence(600);
  }
  const speech = () => requests.filter((r): r is Extract<TurnRequest, { kind: 'speech' }> => r.kind === 'speech');
  const finals = () => heard.filter((e) => e.kind === 'final');
  return { clock, transport, recognizer, session, requests, speech, finals, replies, feed, silence, open };
}

/** The VAD path alone: the audio the stream had when the VAD decided, and that turn's telemetry. */
async function probe(): Promise<{ audioMs: number; silenceMs: number }> {
  const h = harness([{ text: 'my name is priya sharma' }]);
  await h.open();
  await h.feed(lines[0]!);
  await h.silence(1200);
  const [r] = h.speech();
  if (!r) throw new Error('the probe heard no turn');
  return { audioMs: r.telemetry.audio_ms, silenceMs: r.telemetry.silence_ms };
}

describe('provider endpointing', () => {
  it('the provider decides first: one turn at once, the VAD’s later end ignored, telemetry from the VAD’s last speech frame', async () => {
    const lineMs = (lines[0]!.length / RATE) * 1000;
    // Pre-roll (300 ms) + the line + 300 ms of silence: the provider ends the utterance well
    // before the VAD's 700 ms.
    const h = harness([{ text: 'my name is priya sharma', endOfUtteranceAfterMs: 300 + lineMs + 300 }, { text: 'tomorrow at five pm' }]);
    expect(h.recognizer.endpoints).toBe(true);
    await h.open();
    const line = await h.feed(lines[0]!);
    await h.silence(500);
    // Decided by the provider: the turn is already requested, before the VAD's silence ran out.
    expect(h.speech().map((r) => r.text)).toEqual(['my name is priya sharma']);
    await h.silence(1500); // past the VAD's end-of-utterance silence
    expect(h.requests).toHaveLength(1);
    expect(h.finals().map((e) => e.text)).toEqual(['my name is priya sharma']);
    const t = h.speech()[0]!.telemetry;
    expect(t.stt_ms).toBe(0);
    expect(t.stt_provider).toBe('fake');
    expect(t.silence_ms).toBeGreaterThanOrEqual(200);
    expect(t.silence_ms).toBeLessThan(VAD_SILENCE_MS - 200);
    // The reply's latency is counted from the real end of speech, and is shorter than the VAD's silence.
    const reply = h.replies.find((r) => r.cause === 'speech')!;
    expect(Math.abs(reply.endOfSpeechAtMs! - line.endAt)).toBeLessThanOrEqual(60);
    expect(reply.latencyMs!).toBeGreaterThanOrEqual(t.silence_ms);
    expect(reply.latencyMs!).toBeLessThan(VAD_SILENCE_MS - 150);

    // The next utterance starts afresh (the segmenter was cut) and ends by the VAD as before.
    await h.feed(lines[1]!);
    await h.silence(1500);
    expect(h.speech().map((r) => r.text)).toEqual(['my name is priya sharma', 'tomorrow at five pm']);
    expect(h.requests).toHaveLength(2);
    expect(h.speech()[1]!.telemetry.silence_ms).toBeGreaterThanOrEqual(VAD_SILENCE_MS);
    expect(h.session.stats().utterances).toBe(2);
  }, 30_000);

  it('the VAD decides first: finish() runs as today and the provider’s final answers it', async () => {
    // The provider would decide only after far more audio than the VAD waits.
    const h = harness([{ text: 'my name is priya sharma', endOfUtteranceAfterMs: 60_000 }]);
    await h.open();
    await h.feed(lines[0]!);
    await h.silence(1500);
    expect(h.requests).toHaveLength(1);
    const t = h.speech()[0]!.telemetry;
    expect(t.silence_ms).toBeGreaterThanOrEqual(VAD_SILENCE_MS);
    expect(t.stt_ms).toBe(0);
    await h.silence(1200); // more audio: nothing else happens
    expect(h.requests).toHaveLength(1);
  }, 30_000);

  describe('in the same tick as the VAD’s decision', () => {
    it('provider first (its final lands in the tick the VAD would decide in): one turn, the VAD’s end never comes', async () => {
      const p = await probe();
      // Reached one packet before the VAD's deciding packet; the final arrives in that tick.
      const h = harness([{ text: 'my name is priya sharma', endOfUtteranceAfterMs: p.audioMs - 20 }, { text: 'tomorrow at five pm' }]);
      await h.open();
      await h.feed(lines[0]!);
      await h.silence(1500);
      expect(h.requests).toHaveLength(1);
      expect(h.finals()).toHaveLength(1);
      const t = h.speech()[0]!.telemetry;
      expect(t.stt_ms).toBe(0);
      expect(t.silence_ms).toBeGreaterThanOrEqual(p.silenceMs - 40);
      expect(t.silence_ms).toBeLessThanOrEqual(p.silenceMs);
      expect(t.audio_ms).toBeCloseTo(p.audioMs - 20, 6);
      await h.feed(lines[1]!);
      await h.silence(1500);
      expect(h.speech().map((r) => r.text)).toEqual(['my name is priya sharma', 'tomorrow at five pm']);
    }, 60_000);

    it('VAD first (the provider decides on the packet the VAD decides on): finish() is answered by the one final in flight', async () => {
      const p = await probe();
      const h = harness([{ text: 'my name is priya sharma', endOfUtteranceAfterMs: p.audioMs }, { text: 'tomorrow at five pm' }]);
      await h.open();
      await h.feed(lines[0]!);
      await h.silence(1500);
      expect(h.requests).toHaveLength(1);
      expect(h.finals()).toHaveLength(1);
      const t = h.speech()[0]!.telemetry;
      // The VAD's numbers, exactly as without provider endpointing.
      expect(t.silence_ms).toBe(p.silenceMs);
      expect(t.audio_ms).toBeCloseTo(p.audioMs, 6);
      expect(t.stt_ms).toBe(0);
      // The script's second line was not consumed by a second final.
      expect(h.recognizer.remaining).toBe(1);
      await h.feed(lines[1]!);
      await h.silence(1500);
      expect(h.speech().map((r) => r.text)).toEqual(['my name is priya sharma', 'tomorrow at five pm']);
    }, 60_000);

    it('a slow provider whose decision is still in flight when the VAD decides: one turn, stt_ms counts the wait', async () => {
      const p = await probe();
      // The provider decides two packets before the VAD, but its answer takes 200 ms.
      const h = harness([{ text: 'my name is priya sharma', endOfUtteranceAfterMs: p.audioMs - 40, mode: 'slow', delayMs: 200 }]);
      await h.open();
      await h.feed(lines[0]!);
      await h.silence(1500);
      expect(h.requests).toHaveLength(1);
      expect(h.finals()).toHaveLength(1);
      const t = h.speech()[0]!.telemetry;
      expect(t.silence_ms).toBe(p.silenceMs);
      expect(t.stt_ms).toBe(200 - 40);
    }, 60_000);
  });

  it('the fake recogniser: endOfUtteranceAfterMs yields one marked final, later audio and finish() add nothing', () => {
    const clock = new FakeClock(0);
    const r = new FakeRecognizer({
      clock,
      script: [{ text: 'haan', endOfUtteranceAfterMs: 100 }, { text: 'next' }],
      finalProvider: 'pocketsphinx',
    });
    const s = r.start({ language: 'hi-IN', sampleRateHz: RATE });
    const finals: unknown[] = [];
    s.on('final', (f) => finals.push(f));
    s.push(new Int16Array(RATE / 20)); // 50 ms
    s.push(new Int16Array(RATE / 10)); // 150 ms: decided
    s.push(new Int16Array(RATE / 10)); // ignored
    expect(s.state).toBe('open');
    clock.advance(0);
    expect(finals).toEqual([
      { text: 'haan', confidence: 0.9, startMs: 0, endMs: 150, audioMs: 150, endOfUtterance: true, provider: 'pocketsphinx' },
    ]);
    expect(s.state).toBe('done');
    s.finish();
    clock.advance(100);
    expect(finals).toHaveLength(1);
    expect(r.remaining).toBe(1);
    expect(() => new FakeRecognizer({ script: [{ text: 'x', endOfUtteranceAfterMs: 0 }] })).toThrow(/endOfUtteranceAfterMs/);
  });

  describe('with a fallback recogniser', () => {
    it('the primary fails on the caller’s words: the fallback hears them, and the turn is priced by the fallback', async () => {
      let fallback!: FakeRecognizer;
      const h = harness([{ text: 'lost', mode: 'crash' }], { provider: 'deepgram' }, (primary, clock) => {
        fallback = new FakeRecognizer({
          clock,
          provider: 'pocketsphinx',
          languages: ['en'],
          script: [{ text: 'my name is priya sharma' }],
        });
        return new FallbackRecognizer(primary, fallback);
      });
      await h.open();
      await h.feed(lines[0]!);
      await h.silence(1500);
      expect(h.requests.map((r) => r.kind)).toEqual(['speech']);
      const r = h.speech()[0]!;
      expect(r.text).toBe('my name is priya sharma');
      expect(r.telemetry.stt_provider).toBe('pocketsphinx');
      // The fallback heard the whole utterance, pre-roll and silence included.
      expect(r.telemetry.audio_ms).toBeGreaterThan((lines[0]!.length / RATE) * 1000 + VAD_SILENCE_MS);
      expect(h.session.stats().sttFailures).toBe(0);
    }, 30_000);

    it('without a fallback for the language the failure reaches the session: a failed (not heard) turn', async () => {
      const h = harness([{ text: 'lost', mode: 'crash' }], { provider: 'sarvam' }, (primary) => new FallbackRecognizer(primary, null));
      await h.open();
      await h.feed(lines[0]!);
      await h.silence(1500);
      expect(h.requests.map((r) => r.kind)).toEqual(['failed']);
      const r = h.requests[0] as Extract<TurnRequest, { kind: 'failed' }>;
      expect(r.error).toMatchObject({ kind: 'crashed', provider: 'sarvam' });
      expect(r.telemetry.stt_provider).toBe('sarvam');
      expect(h.session.stats().sttFailures).toBe(1);
    }, 30_000);
  });
});
