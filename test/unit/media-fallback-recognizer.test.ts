/**
 * The fallback recogniser (src/adapters/recognizers/fallback.ts) with scripted fake recognisers as
 * primary and fallback, on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer, type FakeRecognizerOptions } from '../../src/media/fake-recognizer.js';
import { type FinalTranscript, type RecognitionStream, type RecognizerError } from '../../src/media/recognizer.js';
import { withTimeout } from '../../src/media/recognition-stream.js';
import { FallbackRecognizer, type FallbackSwitch } from '../../src/adapters/recognizers/fallback.js';

const RATE = 16_000;
/** `ms` of a ramp (not silence: the samples are checked after the replay). */
const audio = (ms: number, seed = 0): Int16Array => Int16Array.from({ length: (RATE * ms) / 1000 }, (_, i) => ((i + seed) % 2000) - 1000);

function setup(
  primary: Omit<FakeRecognizerOptions, 'clock'>,
  fallback: Omit<FakeRecognizerOptions, 'clock'> | null,
  maxConsecutiveFailures?: number,
) {
  const clock = new FakeClock(0);
  const p = new FakeRecognizer({ clock, provider: 'deepgram', ...primary });
  const f = fallback ? new FakeRecognizer({ clock, provider: 'pocketsphinx', languages: ['en'], ...fallback }) : null;
  const switches: FallbackSwitch[] = [];
  const r = new FallbackRecognizer(p, f, {
    onSwitch: (e) => switches.push(e),
    ...(maxConsecutiveFailures ? { maxConsecutiveFailures } : {}),
  });
  return { clock, p, f, r, switches };
}

function record(s: RecognitionStream) {
  const out = { partials: [] as string[], finals: [] as FinalTranscript[], errors: [] as RecognizerError[] };
  s.on('partial', (p) => out.partials.push(p.text));
  s.on('final', (f) => out.finals.push(f));
  s.on('error', (e) => out.errors.push(e));
  return out;
}

/** Spies on the samples a recogniser's streams receive. */
function tapPushes(r: FakeRecognizer): Int16Array[] {
  const pushed: Int16Array[] = [];
  const start = r.start.bind(r);
  r.start = (o) => {
    const s = start(o);
    const push = s.push.bind(s);
    s.push = (pcm) => {
      pushed.push(pcm.slice());
      push(pcm);
    };
    return s;
  };
  return pushed;
}

const joined = (parts: Int16Array[]): number[] => parts.flatMap((p) => [...p]);

describe('FallbackRecognizer', () => {
  it('passes a healthy primary through, marking who heard each final', () => {
    const h = setup(
      { script: [{ text: 'mera naam priya hai', partials: [{ text: 'mera', afterMs: 100 }] }] },
      { script: [{ text: 'unused' }] },
    );
    const s = h.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const ev = record(s);
    s.push(audio(300));
    s.finish();
    expect(s.state).toBe('finishing');
    h.clock.advance(0);
    expect(ev.partials).toEqual(['mera']);
    expect(ev.finals.map((f) => [f.text, f.provider])).toEqual([['mera naam priya hai', 'deepgram']]);
    expect(s.state).toBe('done');
    expect(h.f!.started).toHaveLength(0);
    expect(h.r.provider).toBe('deepgram');
    expect(h.r.emitsPartials).toBe(true);
  });

  it('replays the utterance into the fallback when the primary fails after finish(), and the final names the fallback', () => {
    const h = setup({ script: [{ text: 'lost', mode: 'crash' }] }, { script: [{ text: 'my name is priya' }] });
    const heardByFallback = tapPushes(h.f!);
    const s = h.r.start({ language: 'en-IN', sampleRateHz: RATE, hints: { grammar: 'name' } });
    const ev = record(s);
    const a = audio(200, 1);
    const b = audio(300, 7);
    s.push(a);
    s.push(b);
    s.finish();
    h.clock.advance(0); // the primary's error, then the fallback's final
    h.clock.advance(0);
    expect(ev.errors).toEqual([]);
    expect(ev.finals).toHaveLength(1);
    expect(ev.finals[0]).toMatchObject({ text: 'my name is priya', provider: 'pocketsphinx', audioMs: 500 });
    // Exactly the caller's samples, in order; the stream's options (hints) carried over.
    expect(joined(heardByFallback)).toEqual(joined([a, b]));
    expect(h.f!.started[0]).toMatchObject({ language: 'en-IN', sampleRateHz: RATE, hints: { grammar: 'name' } });
    expect(s.state).toBe('done');
    expect(h.switches).toEqual([
      {
        from: 'deepgram',
        to: 'pocketsphinx',
        error: expect.objectContaining({ kind: 'crashed', provider: 'deepgram' }),
        primarySkipped: false,
      },
    ]);
  });

  it('a primary failing mid-utterance (before finish()) continues on the fallback: replay, then live audio, then finish()', () => {
    const h = setup({ script: [{ text: 'lost', mode: 'crash', releaseAfterMs: 200 }] }, { script: [{ text: 'tomorrow at five' }] });
    const heardByFallback = tapPushes(h.f!);
    const s = h.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const ev = record(s);
    const a = audio(250, 3);
    s.push(a); // the primary fails on this segment
    h.clock.advance(0);
    expect(s.state).toBe('open');
    const b = audio(400, 5);
    s.push(b);
    s.finish();
    h.clock.advance(0);
    expect(ev.finals.map((f) => [f.text, f.provider, f.audioMs])).toEqual([['tomorrow at five', 'pocketsphinx', 650]]);
    expect(joined(heardByFallback)).toEqual(joined([a, b]));
  });

  it('an unavailable primary (401/403/429 after its retry) is skipped for the rest of this recogniser’s life', () => {
    const h = setup({ unavailable: 'Deepgram rejected the API key (401)' }, { script: [{ text: 'one' }, { text: 'two' }] });
    const s1 = h.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const e1 = record(s1);
    s1.push(audio(100));
    h.clock.advance(0);
    s1.push(audio(100));
    s1.finish();
    h.clock.advance(0);
    expect(e1.finals.map((f) => [f.text, f.provider])).toEqual([['one', 'pocketsphinx']]);
    expect(h.switches[0]).toMatchObject({ primarySkipped: true, error: { kind: 'unavailable' } });
    expect(h.r.primarySkipped).toMatchObject({ kind: 'unavailable', provider: 'deepgram' });
    // The next utterance goes straight to the fallback: the primary is not tried again.
    const s2 = h.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const e2 = record(s2);
    s2.push(audio(100));
    s2.finish();
    h.clock.advance(0);
    expect(e2.finals.map((f) => [f.text, f.provider])).toEqual([['two', 'pocketsphinx']]);
    expect(h.p.started).toHaveLength(1);
    expect(h.r.emitsPartials).toBe(false);
  });

  it('skips the primary after two failures in a row, not after two apart; another call’s recogniser is not switched', () => {
    const clock = new FakeClock(0);
    const primary = new FakeRecognizer({
      clock,
      provider: 'sarvam',
      script: [
        { text: 'x', mode: 'crash' },
        { text: 'fine' },
        { text: 'y', mode: 'crash' },
        { text: 'z', mode: 'crash' },
        { text: 'other call' },
      ],
    });
    const fallback = new FakeRecognizer({ clock, provider: 'pocketsphinx', languages: ['en'] });
    const call1 = new FallbackRecognizer(primary, fallback);
    const call2 = new FallbackRecognizer(primary, fallback);
    const utter = (r: FallbackRecognizer): void => {
      const s = r.start({ language: 'en-IN', sampleRateHz: RATE });
      s.push(audio(100));
      s.finish();
      clock.advance(0);
      clock.advance(0);
    };
    utter(call1); // crash (1)
    utter(call1); // fine: the count starts over
    expect(call1.primarySkipped).toBeNull();
    utter(call1); // crash (1)
    expect(call1.primarySkipped).toBeNull();
    utter(call1); // crash (2): skipped
    expect(call1.primarySkipped).toMatchObject({ kind: 'crashed' });
    expect(primary.started).toHaveLength(4);
    utter(call1);
    expect(primary.started).toHaveLength(4);
    utter(call2); // the other call still uses its primary
    expect(primary.started).toHaveLength(5);
    expect(call2.primarySkipped).toBeNull();
  });

  it('without a fallback, or with one that cannot serve the language, the primary’s error goes through unchanged', () => {
    for (const fallback of [null, { script: [{ text: 'english only' }] }]) {
      const h = setup({ script: [{ text: 'x', mode: 'crash' }] }, fallback);
      const s = h.r.start({ language: 'hi-IN', sampleRateHz: RATE });
      const ev = record(s);
      s.push(audio(100));
      s.finish();
      h.clock.advance(0);
      expect(ev.finals).toEqual([]);
      expect(ev.errors).toHaveLength(1);
      expect(ev.errors[0]!.toData()).toEqual({
        kind: 'crashed',
        provider: 'deepgram',
        message: 'deepgram: the recogniser process exited unexpectedly (scripted crash)',
      });
      expect(s.state).toBe('failed');
      expect(h.switches[0]).toMatchObject({ to: null });
      s.push(audio(20)); // ignored once failed
      expect(h.f?.started ?? []).toHaveLength(0);
    }
  });

  it('a failing fallback reports its own error once; cancel() silences everything', () => {
    const h = setup({ script: [{ text: 'x', mode: 'crash' }] }, { script: [{ text: 'y', mode: 'crash' }] });
    const s = h.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const ev = record(s);
    s.push(audio(100));
    s.finish();
    h.clock.advance(0);
    h.clock.advance(0);
    expect(ev.errors.map((e) => e.provider)).toEqual(['pocketsphinx']);
    expect(s.state).toBe('failed');

    const h2 = setup({ script: [{ text: 'x', mode: 'slow', delayMs: 100 }] }, { script: [] });
    const s2 = h2.r.start({ language: 'en-IN', sampleRateHz: RATE });
    const ev2 = record(s2);
    s2.push(audio(100));
    s2.finish();
    s2.cancel();
    h2.clock.advance(500);
    expect(ev2.finals).toEqual([]);
    expect(s2.state).toBe('cancelled');
    expect(() => s2.finish()).toThrow(/cancelled/);
  });

  it('a language only the fallback serves goes to the fallback; one neither serves is refused', () => {
    const h = setup({ languages: ['hi'], script: [] }, { script: [{ text: 'hello' }] });
    const s = h.r.start({ language: 'en-US', sampleRateHz: RATE });
    const ev = record(s);
    s.push(audio(100));
    s.finish();
    h.clock.advance(0);
    expect(ev.finals.map((f) => f.provider)).toEqual(['pocketsphinx']);
    expect(() => h.r.start({ language: 'ta-IN', sampleRateHz: RATE })).toThrow(RangeError);
    expect(() => new FallbackRecognizer(h.p, null, { maxConsecutiveFailures: 0 })).toThrow(RangeError);
  });

  it('a primary that does not answer finish() within its deadline is cancelled and the fallback hears the utterance, inside the caller’s own deadline', () => {
    const clock = new FakeClock(0);
    const primary = new FakeRecognizer({
      clock,
      provider: 'deepgram',
      script: [
        { text: 'never', mode: 'hang' },
        { text: 'in time', mode: 'slow', delayMs: 1000 },
      ],
    });
    const fallback = new FakeRecognizer({
      clock,
      provider: 'pocketsphinx',
      languages: ['en'],
      script: [{ text: 'my name is priya' }],
    });
    const switches: FallbackSwitch[] = [];
    const r = new FallbackRecognizer(primary, fallback, { primaryDeadlineMs: 1800, clock, onSwitch: (e) => switches.push(e) });
    // As the call session uses it: under withTimeout's 3 s deadline.
    const s = withTimeout(r.start({ language: 'en-IN', sampleRateHz: RATE }), 3000, clock, r.provider);
    const ev = record(s);
    s.push(audio(400));
    s.finish();
    clock.advance(1799);
    expect(ev.finals).toEqual([]);
    expect(switches).toEqual([]);
    clock.advance(1);
    clock.advance(0);
    expect(ev.errors).toEqual([]);
    expect(ev.finals.map((f) => [f.text, f.provider, f.audioMs])).toEqual([['my name is priya', 'pocketsphinx', 400]]);
    expect(switches).toEqual([
      {
        from: 'deepgram',
        to: 'pocketsphinx',
        error: { kind: 'timeout', provider: 'deepgram', message: 'deepgram: no transcript within 1800 ms of the end of speech' },
        primarySkipped: false,
      },
    ]);
    clock.advance(5000);
    expect(ev.finals).toHaveLength(1);

    // A primary that answers within its deadline keeps the utterance; the deadline is disarmed.
    const s2 = r.start({ language: 'en-IN', sampleRateHz: RATE });
    const ev2 = record(s2);
    s2.push(audio(200));
    s2.finish();
    clock.advance(1000);
    expect(ev2.finals.map((f) => [f.text, f.provider])).toEqual([['in time', 'deepgram']]);
    clock.advance(5000);
    expect(ev2.finals).toHaveLength(1);
    expect(switches).toHaveLength(1);
    expect(() => new FallbackRecognizer(primary, fallback, { primaryDeadlineMs: 0 })).toThrow(RangeError);
  });
});
