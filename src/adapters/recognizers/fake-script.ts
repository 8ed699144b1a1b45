/**
 * Where the fake recogniser's script comes from: the fake's own channel, read only here.
 *
 * A daemon configured with `recognizer: fake` (tests, benchmarks, `vagent call simulate` without
 * a recogniser) hears, per call, the lines listed under {@link FAKE_TRANSCRIPTS_PARAM}: in a
 * carrier stream's custom parameters (as `vagent call simulate` sends them, a JSON text), or in
 * the context of a call placed through LiveKit (a JSON array, or that array as text). The
 * daemon's composition root wraps its recogniser choice with {@link withFakeScripts} only when
 * the fake is configured; nothing else in the daemon reads that parameter (docs/media.md,
 * "Testing without a phone").
 */
import type { FakeUtterance } from '../../media/fake-recognizer.js';
import type { CallRecognizerChoice } from './recognizer-choice.js';

/** The custom parameter (carrier stream) or context key (LiveKit call) holding the fake recogniser's script. */
export const FAKE_TRANSCRIPTS_PARAM = 'vagent_fake_transcripts';
/** Longest script, in utterances, and longest line, in characters. */
const MAX_FAKE_LINES = 200;
const MAX_FAKE_LINE_CHARS = 1000;

/**
 * Wraps `choose` so that a `fake` spec gets its script from the call's parameters
 * (`params[FAKE_TRANSCRIPTS_PARAM]`, see {@link fakeScript}); any other spec passes unchanged.
 */
export function withFakeScripts(choose: CallRecognizerChoice): CallRecognizerChoice {
  return (language, params) => {
    const spec = choose(language, params);
    return spec.kind === 'fake' ? { ...spec, script: fakeScript(params[FAKE_TRANSCRIPTS_PARAM]) } : spec;
  };
}

/**
 * The fake recogniser's script from `raw`: a JSON array (or its text) whose items are the text
 * heard for each utterance, in order, or objects
 * `{text, mode?: 'ok'|'slow'|'crash'|'hang', delay_ms?, confidence?, end_of_utterance_after_ms?}`
 * (tests of recogniser faults and of provider endpointing). Junk or nothing gives an empty script
 * (every utterance is heard as nothing).
 */
export function fakeScript(raw: unknown): FakeUtterance[] {
  let list: unknown = raw;
  if (typeof raw === 'string') {
    try {
      list = JSON.parse(raw);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  const out: FakeUtterance[] = [];
  for (const item of list.slice(0, MAX_FAKE_LINES)) {
    if (typeof item === 'string') {
      if (item.trim() !== '') out.push({ text: item.slice(0, MAX_FAKE_LINE_CHARS) });
      continue;
    }
    if (typeof item !== 'object' || item === null) continue;
    const o = item as Record<string, unknown>;
    if (typeof o['text'] !== 'string' || o['text'].trim() === '') continue;
    const u: FakeUtterance = { text: o['text'].slice(0, MAX_FAKE_LINE_CHARS) };
    if (o['mode'] === 'ok' || o['mode'] === 'slow' || o['mode'] === 'crash' || o['mode'] === 'hang') u.mode = o['mode'];
    if (typeof o['delay_ms'] === 'number' && Number.isFinite(o['delay_ms']) && o['delay_ms'] >= 0 && o['delay_ms'] <= 60_000)
      u.delayMs = o['delay_ms'];
    const eou = o['end_of_utterance_after_ms'];
    if (typeof eou === 'number' && Number.isFinite(eou) && eou > 0 && eou <= 600_000) u.endOfUtteranceAfterMs = eou;
    if (typeof o['confidence'] === 'number' && o['confidence'] >= 0 && o['confidence'] <= 1) u.confidence = o['confidence'];
    out.push(u);
  }
  return out;
}
