/**
 * A streamed model reply's first sentence on a phone call (src/app/early-reply.ts; docs/llm.md
 * "The first sentence on a call"): where a sentence ends, the length bound, the checks of the
 * sentence alone, what remains after it, and the early clip's handling of the turn's clips.
 */
import { describe, expect, it } from 'vitest';
import {
  EARLY_MAX_CHARS,
  EarlyClip,
  FirstSentenceWatch,
  earlyPlan,
  earlyRefusal,
  firstSentence,
  restAfter,
  splitEarly,
} from '../../src/app/early-reply.js';
import type { ClipSpec } from '../../src/engine/state.js';
import type { ClipView } from '../../src/app/clips.js';
import type { SpeechPort } from '../../src/app/speech-port.js';
import type { ClipRef } from '../../src/media/worker-protocol.js';

describe('firstSentence', () => {
  it('is null until a sentence end is followed by a space', () => {
    expect(firstSentence('Yes, we take UPI at the desk.')).toBeNull();
    expect(firstSentence('Yes, we take UPI at the desk. ')).toBe('Yes, we take UPI at the desk.');
    expect(firstSentence('Is it urgent? Then')).toBe('Is it urgent?');
    expect(firstSentence('हम यूपीआई लेते हैं। और')).toBe('हम यूपीआई लेते हैं।');
  });
  it('skips decimals, dotted abbreviations without a space, and a too-short first sentence', () => {
    expect(firstSentence('The fee is 2.5 thousand')).toBeNull();
    expect(firstSentence('Yes. We take UPI and cards. More')).toBe('Yes. We take UPI and cards.');
  });
  it('collapses white space and cuts at the length bound on a word', () => {
    expect(firstSentence('  We   take\nUPI.  Also')).toBe('We take UPI.');
    const long = 'word '.repeat(60);
    const cut = firstSentence(long)!;
    expect(cut.length).toBeLessThanOrEqual(EARLY_MAX_CHARS);
    expect(cut.endsWith('word')).toBe(true);
    expect(firstSentence('x'.repeat(EARLY_MAX_CHARS + 5))).toBeNull(); // no space to cut at
  });
});

describe('earlyRefusal', () => {
  it('refuses an empty, over-long or other-script sentence', () => {
    expect(earlyRefusal('... !', 'en-IN')).toBe('empty');
    expect(earlyRefusal('a'.repeat(EARLY_MAX_CHARS + 1), 'en-IN')).toBe('too_long');
    expect(earlyRefusal('Мы принимаем оплату картой.', 'en-IN')).toBe('other_language');
    expect(earlyRefusal('हम यूपीआई लेते हैं।', 'hi-IN')).toBeNull();
    expect(earlyRefusal('We take UPI.', 'en-IN')).toBeNull();
  });
});

describe('FirstSentenceWatch', () => {
  it('tells the first sentence once, however the deltas are cut', () => {
    const told: string[] = [];
    const w = new FirstSentenceWatch('en-IN', (s) => told.push(s));
    for (const d of ['We ', 'take U', 'PI at the desk', '. ', 'Cards too. ', 'And cash. ']) w.push(d);
    expect(told).toEqual(['We take UPI at the desk.']);
  });
  it('tells nothing when the first sentence is refused, even if later ones would pass', () => {
    const told: string[] = [];
    const w = new FirstSentenceWatch('en-IN', (s) => told.push(s));
    for (const d of ['Мы принимаем оплату. ', 'We take UPI too. ']) w.push(d);
    expect(told).toEqual([]);
  });
});

describe('restAfter', () => {
  it('is the text after the played sentence, empty when none, null when the reply differs', () => {
    expect(restAfter('We take UPI.  Cards too.', 'We take UPI.')).toBe('Cards too.');
    expect(restAfter('We take UPI.', 'We take UPI.')).toBe('');
    expect(restAfter('Sorry, could you repeat that?', 'We take UPI.')).toBeNull();
  });
});

/** A speech port whose clips are files named after their text; `fail` texts do not synthesise. */
function speech(fail: string[] = []): SpeechPort & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    provider: 'fake',
    voiceFor: () => 'v',
    keyFor: (t: string) => `k:${t}`,
    nameOf: (k: string) => `n:${k}`,
    has: () => false,
    ensure: (t: string) => {
      asked.push(t);
      return fail.some((f) => t.includes(f))
        ? Promise.reject(new Error('no voice'))
        : Promise.resolve({ key: `k:${t}`, cacheHit: false, chars: t.length });
    },
    prepare: () => Promise.resolve({ ready: 0, failed: 0 }),
    combine: () => Promise.reject(new Error('no')),
    combinedIfCached: () => null,
    fileOf: (name: string) => `/cache/${name}.wav`,
    pin: () => {},
    unpin: () => {},
  } as SpeechPort & { asked: string[] };
}

const view = (text: string, source?: string): ClipView =>
  ({ text, audio_url: null, livekit_wav_url: null, ...(source ? { source } : {}) }) as ClipView;
const ref = (c: ClipView): ClipRef => ({ file: `/cache/${c.text}.wav`, text: c.text, bargeIn: true, asksConfirmation: false });
const where = { language: 'en-IN', voice: 'v' };

describe('EarlyClip', () => {
  it('plays the first sentence, tells what it cost, then the reply clips hold the rest of the model reply and the question', async () => {
    const sent: ClipRef[] = [];
    const voice = speech();
    const e = new EarlyClip(voice, (c) => sent.push(c));
    const said = await e.sink('We take UPI.', where);
    expect(said).toEqual({ sentence: 'We take UPI.', clip: { key: 'k:We take UPI.', cacheHit: false, chars: 12 }, played: true });
    // The turn stores its reply cut after the played sentence (splitEarly): the line hears the rest.
    const clips = await e.finish([view('We take UPI.', 'llm'), view('Cards too.', 'llm'), view('Which day?')], ref);
    expect(sent.map((c) => c.text)).toEqual(['We take UPI.']);
    expect(sent[0]!.file).toMatch(/^\/cache\//);
    expect(clips.map((c) => c.text)).toEqual(['Cards too.', 'Which day?']);
    expect(voice.asked).toEqual(['We take UPI.']); // the rest is the turn's to synthesise, once
  });
  it('drops the model clip when the sentence was the whole reply, and keeps a re-prompt after a refused reply', async () => {
    const e1 = new EarlyClip(speech(), () => {});
    await e1.sink('We take UPI.', where);
    expect((await e1.finish([view('We take UPI.', 'llm'), view('Which day?')], ref)).map((c) => c.text)).toEqual(['Which day?']);
    const e2 = new EarlyClip(speech(), () => {});
    e2.sink('We take UPI.', where);
    const reprompt = [view('Sorry, which day would you like?')];
    expect((await e2.finish(reprompt, ref)).map((c) => c.text)).toEqual(['Sorry, which day would you like?']);
  });
  it('plays nothing early when synthesis fails, and ignores a sentence told after the turn', async () => {
    const sent: ClipRef[] = [];
    const e = new EarlyClip(speech(['UPI']), (c) => sent.push(c));
    expect(await e.sink('We take UPI.', where)).toBeNull();
    const whole = [view('We take UPI. Cards too.', 'llm')];
    expect((await e.finish(whole, ref)).map((c) => c.text)).toEqual(['We take UPI. Cards too.']);
    const late = new EarlyClip(speech(), (c) => sent.push(c));
    await late.finish([], ref);
    expect(await late.sink('We take UPI.', where)).toBeNull();
    expect(sent).toEqual([]);
  });
});

describe('splitEarly and earlyPlan', () => {
  const spec = (text: string, source?: string): ClipSpec => ({ text, flags: source ? { source } : {} });
  const keyOf = (t: string) => `k:${t}`;
  const clip = { key: 'k:We take UPI.', cacheHit: false, chars: 12, provider: 'sarvam' };

  it('cuts the model clip after the played sentence, keeping its flags, and drops an empty rest', () => {
    const reply = [spec('Sure.', 'faq'), spec('We take UPI.\n  Cards too.', 'llm'), spec('Which day?')];
    expect(splitEarly(reply, 'We take UPI.')).toEqual([
      spec('Sure.', 'faq'),
      spec('We take UPI.', 'llm'),
      spec('Cards too.', 'llm'),
      spec('Which day?'),
    ]);
    expect(splitEarly([spec('We take UPI.', 'llm'), spec('Which day?')], 'We take UPI.')).toEqual([
      spec('We take UPI.', 'llm'),
      spec('Which day?'),
    ]);
    expect(splitEarly([spec('Sorry, which day?')], 'We take UPI.')).toBeNull();
    expect(splitEarly([spec('Other words entirely.', 'llm')], 'We take UPI.')).toBeNull();
  });

  it('renders the cut reply with the played clip counted as synthesised, or charges a sentence the reply dropped apart', () => {
    const reply = [spec('We take UPI. Cards too.', 'llm'), spec('Which day?')];
    expect(earlyPlan(reply, null, keyOf)).toEqual({ clips: reply, apart: null });
    const played = earlyPlan(reply, { sentence: 'We take UPI.', clip, played: true }, keyOf);
    expect(played.clips.map((c) => c.text)).toEqual(['We take UPI.', 'Cards too.', 'Which day?']);
    expect([...played.ensured!]).toEqual([['k:We take UPI.', clip]]);
    expect(played.apart).toBeNull();
    const refused = earlyPlan([spec('Sorry, which day?')], { sentence: 'We take UPI.', clip, played: true }, keyOf);
    expect(refused).toEqual({ clips: [spec('Sorry, which day?')], apart: clip });
    const unplayed = earlyPlan(reply, { sentence: 'We take UPI.', clip, played: false }, keyOf);
    expect(unplayed).toEqual({ clips: reply, apart: clip });
  });
});
