/**
 * Builds the {@link SpeechRecognizer} of one call stream from its plain-data
 * {@link RecognizerSpec} (chosen on the main thread by ./recognizer-choice.ts), inside the media
 * worker.
 *
 * - `fake`: a {@link FakeRecognizer} on the stream's script;
 * - `pocketsphinx`: the worker's shared embedded recogniser (its warm engines serve every call);
 * - `deepgram` / `sarvam`: a new cloud adapter per call ({@link DeepgramRecognizer},
 *   {@link SarvamRecognizer}), wrapped in a {@link FallbackRecognizer} whose fallback is the
 *   embedded one (or none), so one call's provider failures switch only that call;
 * - `off`, or a recogniser this worker cannot build: one whose every stream fails at once with
 *   `unavailable` (the session's not-heard path; DTMF still works).
 */
import { FakeRecognizer } from '../../media/fake-recognizer.js';
import type { RecognizerClock, SpeechRecognizer } from '../../media/recognizer.js';
import { DeepgramRecognizer, type DeepgramOptions } from './deepgram.js';
import { FallbackRecognizer, type FallbackOptions, type FallbackSwitch } from './fallback.js';
import { SarvamRecognizer, type SarvamOptions } from './sarvam.js';
import type { RecognizerSpec } from '../../media/worker-protocol.js';

/** What the worker gives the factory. */
export interface RecognizerFactoryContext {
  /** The worker's embedded recogniser, or null when it is not enabled on this daemon. */
  embedded: SpeechRecognizer | null;
  /** Clock of the cloud adapters' timers; default theirs (the system clock). */
  clock?: RecognizerClock;
  /** Told when a cloud recogniser fails on an utterance (for the stream's events). */
  onSwitch?: (event: FallbackSwitch) => void;
  /** How long a cloud recogniser may take to answer `finish()` before its fallback hears the utterance, ms (see `FallbackOptions.primaryDeadlineMs`). */
  primaryDeadlineMs?: number;
  /** Builds the Deepgram adapter (tests inject a fake); default `new DeepgramRecognizer(options)`. */
  deepgram?: (options: DeepgramOptions) => SpeechRecognizer;
  /** Builds the Sarvam adapter (tests inject a fake); default `new SarvamRecognizer(options)`. */
  sarvam?: (options: SarvamOptions) => SpeechRecognizer;
}

/** A recogniser whose every stream fails at once with `unavailable` carrying `reason`. */
export function unavailableRecognizer(provider: string, reason: string): SpeechRecognizer {
  return new FakeRecognizer({ provider, unavailable: reason });
}

/**
 * The recogniser for one call stream.
 * @throws RangeError on a malformed `fake` script (the worker ends that stream)
 */
export function buildRecognizer(spec: RecognizerSpec, ctx: RecognizerFactoryContext): SpeechRecognizer {
  switch (spec.kind) {
    case 'fake':
      return new FakeRecognizer({
        script: spec.script,
        ...(spec.delayMs !== undefined ? { mode: 'slow' as const, delayMs: spec.delayMs } : {}),
      });
    case 'pocketsphinx':
      return ctx.embedded ?? unavailableRecognizer('pocketsphinx', 'the embedded recogniser is not enabled on this daemon');
    case 'deepgram': {
      const options: DeepgramOptions = { ...spec.options, ...(ctx.clock ? { clock: ctx.clock } : {}) };
      const primary = (ctx.deepgram ?? ((o) => new DeepgramRecognizer(o)))(options);
      return new FallbackRecognizer(primary, spec.fallback === 'pocketsphinx' ? ctx.embedded : null, fallbackOptions(ctx));
    }
    case 'sarvam': {
      const options: SarvamOptions = { ...spec.options, ...(ctx.clock ? { clock: ctx.clock } : {}) };
      const primary = (ctx.sarvam ?? ((o) => new SarvamRecognizer(o)))(options);
      return new FallbackRecognizer(primary, spec.fallback === 'pocketsphinx' ? ctx.embedded : null, fallbackOptions(ctx));
    }
    case 'off':
      return unavailableRecognizer('none', spec.reason);
  }
}

function fallbackOptions(ctx: RecognizerFactoryContext): FallbackOptions {
  return {
    ...(ctx.onSwitch ? { onSwitch: ctx.onSwitch } : {}),
    ...(ctx.primaryDeadlineMs !== undefined ? { primaryDeadlineMs: ctx.primaryDeadlineMs } : {}),
    ...(ctx.clock ? { clock: ctx.clock } : {}),
  };
}
