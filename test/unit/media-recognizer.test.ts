/**
 * The streaming speech recogniser port (src/media/recognizer.ts) and its scripted fake
 * (src/media/fake-recognizer.ts): finals and partials in order with timings derived from the
 * pushed samples; slow, crash and hang modes on a fake clock; withTimeout; cancel; the stream's
 * state rules; option validation; and the per-language selection helper.
 */
import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../src/media/fake-clock.js';
import { FakeRecognizer } from '../../src/media/fake-recognizer.js';
import {
  RecognizerError,
  canonicalLanguage,
  languageMatches,
  recognizerFor,
  type RecognitionStream,
  type RecognizerCandidate,
} from '../../src/media/recognizer.js';
import { withTimeout } from '../../src/media/recognition-stream.js';

type Event = ['partial', string, number, number] | ['final', string, number | null, number, number, number] | ['error', string];

/** Records a stream's events as compact tuples. */
function record(stream: RecognitionStream): Event[] {
  const events: Event[] = [];
  stream.on('partial', (p) => events.push(['partial', p.text, p.startMs, p.endMs]));
  stream.on('final', (f) => events.push(['final', f.text, f.confidence, f.startMs, f.endMs, f.audioMs]));
  stream.on('error', (e) => events.push(['error', e.kind]));
  return events;
}

/** `ms` of silence at `rate` Hz. */
const pcm = (ms: number, rate = 8000): Int16Array => new Int16Array((rate * ms) / 1000);

describe('FakeRecognizer', () => {
  it('delivers scripted partials and the final in order, timed from the pushed samples, on finish()', () => {
    const clock = new FakeClock(1_000_000);
    const rec = new FakeRecognizer({
      clock,
      script: [
        {
          text: 'my name is priya sharma',
          confidence: 0.82,
          partials: [
            { text: 'my name', afterMs: 300 },
            { text: 'my name is priya', afterMs: 700 },
          ],
        },
      ],
    });
    const s = rec.start({ language: 'en-IN', sampleRateHz: 16000 });
    const ev = record(s);
    s.push(pcm(200, 16000));
    s.push(pcm(200, 16000)); // 400 ms: first partial due
    expect(ev).toEqual([]); // delivered on the clock, never inside push()
    clock.advance(0);
    expect(ev).toEqual([['partial', 'my name', 0, 400]]);
    s.push(pcm(500, 16000)); // 900 ms: second partial
    s.push(pcm(100, 16000)); // 1000 ms
    s.finish();
    expect(s.state).toBe('finishing');
    clock.advance(0);
    expect(ev).toEqual([
      ['partial', 'my name', 0, 400],
      ['partial', 'my name is priya', 0, 900],
      ['final', 'my name is priya sharma', 0.82, 0, 1000, 1000],
    ]);
    expect(s.state).toBe('done');
    expect(rec.remaining).toBe(0);
  });

  it('sends partials not yet due before the final, and releases by itself after releaseAfterMs of audio', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({
      clock,
      script: [
        { text: 'yes', partials: [{ text: 'ye', afterMs: 5000 }], releaseAfterMs: 600 },
        { text: 'tomorrow at five pm', confidence: 0.7 },
      ],
    });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const ev = record(s);
    s.push(pcm(400));
    s.push(pcm(400)); // 800 ms ≥ 600: first utterance released
    clock.advance(0);
    expect(ev).toEqual([
      ['partial', 'ye', 0, 800],
      ['final', 'yes', 0.9, 0, 800, 800],
    ]);
    expect(s.state).toBe('open');
    s.push(pcm(1250));
    s.finish();
    clock.advance(0);
    expect(ev.slice(2)).toEqual([['final', 'tomorrow at five pm', 0.7, 800, 2050, 1250]]);
  });

  it('gives an empty final without using the script when no audio came since the last final', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, script: [{ text: 'one', releaseAfterMs: 100 }, { text: 'two' }] });
    const s = rec.start({ language: 'en-US', sampleRateHz: 8000 });
    const ev = record(s);
    s.push(pcm(100));
    s.finish();
    clock.advance(0);
    expect(ev).toEqual([
      ['final', 'one', 0.9, 0, 100, 100],
      ['final', '', 0, 100, 100, 0],
    ]);
    expect(rec.remaining).toBe(1);
  });

  it('answers with an empty final once the script has run out', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const ev = record(s);
    s.push(pcm(300));
    s.finish();
    clock.advance(0);
    expect(ev).toEqual([['final', '', 0, 0, 300, 300]]);
  });

  it('takes the next utterance per stream, and records the options each stream was started with', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, script: [{ text: 'priya' }] });
    rec.enqueue({ text: '98450 12345', confidence: 0.6 });
    const a = rec.start({ language: 'en-in', sampleRateHz: 8000, hints: { grammar: 'name' } });
    const b = rec.start({ language: 'en-IN', sampleRateHz: 8000, hints: { grammar: 'digits', phrases: ['zero', 'oh'] } });
    const ea = record(a);
    const eb = record(b);
    a.push(pcm(20));
    a.finish();
    b.push(pcm(40));
    b.finish();
    clock.advance(0);
    expect(ea).toEqual([['final', 'priya', 0.9, 0, 20, 20]]);
    expect(eb).toEqual([['final', '98450 12345', 0.6, 0, 40, 40]]);
    expect(rec.started.map((o) => [o.language, o.hints?.grammar])).toEqual([
      ['en-IN', 'name'],
      ['en-IN', 'digits'],
    ]);
  });

  it('slow mode: the final arrives delayMs later on the injected clock', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({
      clock,
      mode: 'slow',
      delayMs: 750,
      script: [{ text: 'okay' }, { text: 'fast', mode: 'slow', delayMs: 10 }],
    });
    const s = rec.start({ language: 'en', sampleRateHz: 16000 });
    const ev = record(s);
    s.push(pcm(320, 16000));
    s.finish();
    clock.advance(749);
    expect(ev).toEqual([]);
    expect(s.state).toBe('finishing');
    clock.advance(1);
    expect(ev).toEqual([['final', 'okay', 0.9, 0, 320, 320]]);
    expect(clock.now()).toBe(750);

    const t = rec.start({ language: 'en', sampleRateHz: 16000 });
    const et = record(t);
    t.push(pcm(10, 16000));
    t.finish();
    clock.advance(9);
    expect(et).toEqual([]);
    clock.advance(1);
    expect(et).toEqual([['final', 'fast', 0.9, 0, 10, 10]]);
  });

  it('crash mode: a typed crashed error instead of the final; later audio is ignored', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, script: [{ text: 'never heard', mode: 'crash' }] });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const errors: RecognizerError[] = [];
    const ev = record(s);
    s.on('error', (e) => errors.push(e));
    s.push(pcm(100));
    s.finish();
    expect(s.state).toBe('failed');
    clock.advance(0);
    expect(ev).toEqual([['error', 'crashed']]);
    expect(errors[0]).toBeInstanceOf(RecognizerError);
    expect(errors[0]!.toData()).toMatchObject({ kind: 'crashed', provider: 'fake' });
    expect(() => s.push(pcm(20))).not.toThrow();
    clock.advance(1000);
    expect(ev).toHaveLength(1);
  });

  it('an unavailable recogniser fails every stream with a typed unavailable error carrying the reason', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, unavailable: 'engine not installed' });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const errors: RecognizerError[] = [];
    s.on('error', (e) => errors.push(e));
    clock.advance(0);
    expect(errors.map((e) => [e.kind, e.message])).toEqual([['unavailable', 'fake: engine not installed']]);
  });

  it('hang mode never answers; withTimeout turns that into a typed timeout and cancels the stream', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, mode: 'hang', script: [{ text: 'lost' }] });
    const inner = rec.start({ language: 'en', sampleRateHz: 8000 });
    const s = withTimeout(inner, 2000, clock, rec.provider);
    const ev = record(s);
    s.push(pcm(500));
    clock.advance(10_000); // no deadline before finish(): the caller may still be speaking
    expect(ev).toEqual([]);
    s.finish();
    clock.advance(1999);
    expect(ev).toEqual([]);
    clock.advance(1);
    expect(ev).toEqual([['error', 'timeout']]);
    expect(s.state).toBe('failed');
    expect(inner.state).toBe('cancelled');
    expect(clock.pendingTimers).toBe(0);
  });

  it('withTimeout forwards a final that beats the deadline and then disarms', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({
      clock,
      mode: 'slow',
      delayMs: 300,
      script: [{ text: 'haan', partials: [{ text: 'ha', afterMs: 0 }] }],
    });
    const s = withTimeout(rec.start({ language: 'en', sampleRateHz: 8000 }), 1000, clock);
    const ev = record(s);
    s.push(pcm(240));
    s.finish();
    s.finish(); // idempotent: arms once
    clock.advance(5000);
    expect(ev).toEqual([
      ['partial', 'ha', 0, 240],
      ['final', 'haan', 0.9, 0, 240, 240],
    ]);
    expect(s.state).toBe('done');
    expect(clock.pendingTimers).toBe(0);
  });

  it('withTimeout: cancelling before the deadline disarms it, so no timeout follows', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, mode: 'hang', script: [{ text: 'lost' }] });
    const inner = rec.start({ language: 'en', sampleRateHz: 8000 });
    const s = withTimeout(inner, 500, clock);
    const ev = record(s);
    s.push(pcm(100));
    s.finish();
    expect(clock.pendingTimers).toBe(1);
    s.cancel();
    expect(clock.pendingTimers).toBe(0);
    clock.advance(5000);
    expect(ev).toEqual([]);
    expect(inner.state).toBe('cancelled');
  });

  it('withTimeout rejects a deadline that is not a positive number', () => {
    const s = new FakeRecognizer({ clock: new FakeClock() }).start({ language: 'en', sampleRateHz: 8000 });
    expect(() => withTimeout(s, 0, new FakeClock())).toThrow(RangeError);
    expect(() => withTimeout(s, Number.NaN, new FakeClock())).toThrow(/positive number of ms/);
  });

  it('cancel stops every pending event, including a slow final and queued partials', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({
      clock,
      mode: 'slow',
      delayMs: 100,
      script: [{ text: 'hello', partials: [{ text: 'he', afterMs: 10 }] }],
    });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const ev = record(s);
    s.push(pcm(50));
    s.finish();
    expect(clock.pendingTimers).toBe(2); // the partial and the slow final
    s.cancel();
    expect(clock.pendingTimers).toBe(0); // their timers are withdrawn, not left to fire
    clock.advance(1000);
    expect(ev).toEqual([]);
    expect(s.state).toBe('cancelled');
    expect(() => s.push(pcm(10))).toThrow(/cancelled/);
    expect(() => s.finish()).toThrow(/cancelled/);
  });

  it('refuses audio after finish(), and a listener can be removed', () => {
    const clock = new FakeClock();
    const rec = new FakeRecognizer({ clock, script: [{ text: 'a' }] });
    const s = rec.start({ language: 'en', sampleRateHz: 8000 });
    const seen: string[] = [];
    const off = s.on('final', (f) => seen.push(f.text));
    s.push(pcm(10));
    s.finish();
    expect(() => s.push(pcm(10))).toThrow(/cannot push audio into a recognition stream that is finishing/);
    off();
    clock.advance(0);
    expect(seen).toEqual([]);
    expect(() => s.push(pcm(10))).toThrow(/that is done/);
    expect(() => s.push([1, 2] as unknown as Int16Array)).toThrow(TypeError);
  });

  it('refuses malformed options and scripts with clear errors', () => {
    const rec = new FakeRecognizer({ clock: new FakeClock(), languages: ['en'] });
    expect(() => rec.start({ language: 'hi-IN', sampleRateHz: 8000 })).toThrow(/hi-IN is not served by this recogniser \(it serves en\)/);
    expect(() => rec.start({ language: 'not a tag!', sampleRateHz: 8000 })).toThrow(/BCP-47/);
    expect(() => rec.start({ language: 'en', sampleRateHz: 7999 })).toThrow(/sampleRateHz/);
    expect(() => rec.start({ language: 'en', sampleRateHz: 16000.5 })).toThrow(/sampleRateHz/);
    expect(() => rec.start({ language: 'en', sampleRateHz: 8000, hints: { grammar: 'morse' as never } })).toThrow(/hints.grammar/);
    expect(() => rec.start({ language: 'en', sampleRateHz: 8000, hints: { phrases: [''] } })).toThrow(/hints.phrases/);
    expect(() => rec.enqueue({ text: 'x', confidence: 1.5 })).toThrow(/confidence must be 0..1/);
    expect(() => rec.enqueue({ text: 'x', releaseAfterMs: 0 })).toThrow(/releaseAfterMs/);
    expect(() => rec.enqueue({ text: 'x', mode: 'explode' as never })).toThrow(/mode/);
    expect(() => new FakeRecognizer({ delayMs: -1 })).toThrow(/delayMs/);
    expect(rec.remaining).toBe(0);
  });
});

describe('recognizer selection', () => {
  const pocketsphinx = { provider: 'pocketsphinx', languages: ['en'], priceBasis: 'audio_second' } as const;
  const cloud = { provider: 'sarvam', languages: ['hi', 'en-IN'], priceBasis: 'audio_second' } as const;

  it('matches language ranges per RFC 4647 basic filtering and canonicalises tags', () => {
    expect(languageMatches('en', 'en-IN')).toBe(true);
    expect(languageMatches('en', 'en')).toBe(true);
    expect(languageMatches('en', 'eng')).toBe(false);
    expect(languageMatches('en-IN', 'en-US')).toBe(false);
    expect(languageMatches('*', 'ta-IN')).toBe(true);
    expect(canonicalLanguage('EN-in')).toBe('en-IN');
    expect(() => canonicalLanguage('')).toThrow(RangeError);
  });

  it('chooses the first available recogniser that serves the language', () => {
    const both: RecognizerCandidate[] = [
      { info: cloud, available: true },
      { info: pocketsphinx, available: true },
    ];
    expect(recognizerFor('en-IN', both)).toMatchObject({ provider: 'sarvam', language: 'en-IN' });
    expect(recognizerFor('en-US', both)).toMatchObject({ provider: 'pocketsphinx', language: 'en-US' });
    expect(recognizerFor('hi-IN', both)).toMatchObject({ provider: 'sarvam' });
    const noCloud: RecognizerCandidate[] = [
      { info: cloud, available: false, reason: 'no API key' },
      { info: pocketsphinx, available: true },
    ];
    expect(recognizerFor('en-IN', noCloud)).toMatchObject({ provider: 'pocketsphinx' });
  });

  it('says none, with a reason fit for /v1/health, when the engine is missing or no one serves the language', () => {
    const missing: RecognizerCandidate[] = [
      {
        info: pocketsphinx,
        available: false,
        reason: 'pocketsphinx is not installed (sudo apt-get install pocketsphinx pocketsphinx-en-us)',
      },
    ];
    expect(recognizerFor('en-IN', missing)).toEqual({
      provider: 'none',
      language: 'en-IN',
      reason:
        'speech recognition is off for en-IN: pocketsphinx: pocketsphinx is not installed (sudo apt-get install pocketsphinx pocketsphinx-en-us)',
    });
    expect(recognizerFor('ta-IN', [{ info: pocketsphinx, available: true }])).toEqual({
      provider: 'none',
      language: 'ta-IN',
      reason: 'speech recognition is off for ta-IN: no recogniser serves this language; configured: pocketsphinx (en)',
    });
    expect(recognizerFor('en', [])).toMatchObject({ provider: 'none', reason: expect.stringContaining('none is configured') });
    expect(() => recognizerFor('??', [])).toThrow(/BCP-47/);
  });

  it('the fake recogniser is a candidate like any other', () => {
    const fake = new FakeRecognizer({ clock: new FakeClock(), languages: ['en', 'hi'] });
    expect(recognizerFor('hi-IN', [{ info: fake, available: true }])).toMatchObject({ provider: 'fake' });
    expect(fake.priceBasis).toBe('audio_second');
  });
});
