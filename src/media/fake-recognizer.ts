/**
 * A scripted {@link SpeechRecognizer} for deterministic tests and the bench: a fake streaming
 * recogniser with scripted transcripts, their timings, and slow and failing modes.
 *
 * The script is a queue of utterances shared by all streams of one recogniser. A stream takes
 * the next utterance when it releases a final: on `finish()`, or as soon as `releaseAfterMs`
 * of audio has been pushed into the segment. It never looks at the audio itself: only at how
 * many samples were pushed, from which it computes the timings (stream ms = samples ÷ rate ×
 * 1000), so results do not depend on the wall clock. A segment released with no audio since
 * the previous final, or after the script has run out, gets an empty final (confidence 0),
 * as a real engine answers silence or noise.
 *
 * Events are delivered through the injected clock (`setTimer`, 0 ms in `ok` mode), never from
 * inside `push`/`finish`, like a real engine answering from another process. With a `FakeClock`
 * a test releases them with `clock.advance(…)`.
 */
import { systemClock } from './playout.js';
import {
  RecognizerError,
  validateRecognitionOptions,
  type FinalTranscript,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from './recognizer.js';
import { BaseRecognitionStream } from './recognition-stream.js';

/**
 * How an utterance is answered:
 * - `ok`: the final comes at once (0 ms on the clock);
 * - `slow`: the final comes `delayMs` later on the clock;
 * - `crash`: a `crashed` error instead of the final;
 * - `hang`: nothing ever comes (guard with `withTimeout`).
 */
export type FakeRecognizerMode = 'ok' | 'slow' | 'crash' | 'hang';

/** One scripted utterance. */
export interface FakeUtterance {
  /** The final text. */
  text: string;
  /** The final's confidence, 0..1; default 0.9. */
  confidence?: number;
  /**
   * Interim transcripts, each sent once the segment holds `afterMs` ms of audio (in order of
   * `afterMs`); any not yet sent are sent just before the final.
   */
  partials?: ReadonlyArray<{ text: string; afterMs: number }>;
  /** Release the final by itself after this many ms of audio in the segment (> 0), without waiting for `finish()`. */
  releaseAfterMs?: number;
  /**
   * Provider endpointing: once the segment holds this many ms of audio (> 0), the provider
   * decides the caller stopped and the stream's one final comes (per the mode: at once, or
   * `delayMs` later when `slow`) marked `endOfUtterance: true`; the stream is then `done`. Audio
   * pushed after the decision is ignored, and a `finish()` before the final arrives adds nothing
   * (the final already on its way answers it, still marked: as over a network).
   */
  endOfUtteranceAfterMs?: number;
  /** Overrides the recogniser's mode for this utterance. */
  mode?: FakeRecognizerMode;
  /** Delay of a `slow` answer, ms; default the recogniser's `delayMs`. */
  delayMs?: number;
}

/** Options of a {@link FakeRecognizer}. */
export interface FakeRecognizerOptions {
  /** The utterances, in the order they are to be heard. More can be added with {@link FakeRecognizer.enqueue}. */
  script?: readonly FakeUtterance[];
  /** Mode of utterances that do not set one; default `ok`. */
  mode?: FakeRecognizerMode;
  /** Delay of `slow` answers, ms, ≥ 0; default 500. */
  delayMs?: number;
  /** Clock for event delivery; default the system clock. */
  clock?: RecognizerClock;
  /** Language ranges served (RFC 4647); default `['*']`. */
  languages?: readonly string[];
  /** Pricing key; default `fake`. */
  provider?: string;
  /** When set, every stream fails at once with an `unavailable` error carrying this reason. */
  unavailable?: string;
  /** Whether to declare partial transcripts (see `RecognizerInfo.emitsPartials`); default: whether the script has any. */
  emitsPartials?: boolean;
  /** Whether to declare provider endpointing (see `RecognizerInfo.endpoints`); default: whether the script has an `endOfUtteranceAfterMs`. */
  endpoints?: boolean;
  /** Set each final's `provider` to this (as a fallback recogniser reports who heard); default unset. */
  finalProvider?: string;
}

/** The scripted recogniser. */
export class FakeRecognizer implements SpeechRecognizer {
  readonly provider: string;
  readonly languages: readonly string[];
  readonly priceBasis: RecognizerPriceBasis = 'audio_second';
  readonly emitsPartials: boolean;
  readonly endpoints: boolean;
  /** The options of every stream started, in order (to check the hints a step passed). */
  readonly started: RecognitionOptions[] = [];
  private readonly queue: FakeUtterance[] = [];
  private readonly mode: FakeRecognizerMode;
  private readonly delayMs: number;
  private readonly clock: RecognizerClock;
  private readonly unavailable: string | undefined;
  /** @internal see {@link FakeRecognizerOptions.finalProvider} */
  readonly finalProvider: string | undefined;

  /** @throws RangeError on a malformed script, mode, delay or language list */
  constructor(options: FakeRecognizerOptions = {}) {
    this.mode = checkMode(options.mode ?? 'ok');
    this.delayMs = checkDelay(options.delayMs ?? 500);
    this.clock = options.clock ?? systemClock;
    this.languages = options.languages ?? ['*'];
    if (!Array.isArray(this.languages) || this.languages.length === 0)
      throw new RangeError('languages must list at least one language range');
    this.provider = options.provider ?? 'fake';
    this.unavailable = options.unavailable;
    this.enqueue(...(options.script ?? []));
    this.emitsPartials = options.emitsPartials ?? (options.script ?? []).some((u) => (u.partials?.length ?? 0) > 0);
    this.endpoints = options.endpoints ?? (options.script ?? []).some((u) => u.endOfUtteranceAfterMs !== undefined);
    this.finalProvider = options.finalProvider;
  }

  /**
   * Appends utterances to the script.
   * @throws RangeError on an utterance without text, a confidence outside 0..1, a bad mode,
   *         delay, `releaseAfterMs`, `endOfUtteranceAfterMs`, or partial
   */
  enqueue(...utterances: FakeUtterance[]): void {
    for (const [i, u] of utterances.entries()) checkUtterance(u, i);
    this.queue.push(...utterances.map((u) => ({ ...u, partials: [...(u.partials ?? [])].sort((a, b) => a.afterMs - b.afterMs) })));
  }

  /** Utterances not yet heard. */
  get remaining(): number {
    return this.queue.length;
  }

  /** @throws RangeError on malformed options (see `validateRecognitionOptions`) */
  start(options: RecognitionOptions): RecognitionStream {
    const checked = validateRecognitionOptions(options, this.languages);
    this.started.push(checked);
    return new FakeStream(this, checked, this.clock, this.unavailable);
  }

  /** @internal the next utterance, or undefined when the script is exhausted */
  take(): FakeUtterance | undefined {
    return this.queue.shift();
  }

  /** @internal the next utterance without taking it */
  peek(): FakeUtterance | undefined {
    return this.queue[0];
  }

  /** @internal an utterance's effective mode and delay */
  behaviour(u: FakeUtterance | undefined): { mode: FakeRecognizerMode; delayMs: number } {
    return { mode: u?.mode ?? this.mode, delayMs: u?.delayMs ?? this.delayMs };
  }
}

class FakeStream extends BaseRecognitionStream {
  private readonly timers = new Set<() => void>();
  /** Samples pushed in all. */
  private samples = 0;
  /** Sample index where the current segment began. */
  private segmentStart = 0;
  /** Partials of the current utterance already sent. */
  private partialsSent = 0;
  /** The provider endpointed: the last final is on its way. */
  private endpointed = false;

  constructor(
    private readonly owner: FakeRecognizer,
    readonly options: Readonly<RecognitionOptions>,
    private readonly clock: RecognizerClock,
    unavailable: string | undefined,
  ) {
    super();
    if (unavailable !== undefined) {
      this.current = 'failed';
      this.later(0, () => this.events.emit('error', new RecognizerError('unavailable', owner.provider, unavailable)));
    }
  }

  protected accept(pcm: Int16Array): void {
    this.samples += pcm.length;
    if (this.endpointed) return;
    const u = this.owner.peek();
    if (!u) return;
    const heardMs = this.ms(this.samples - this.segmentStart);
    const partials = u.partials ?? [];
    while (this.partialsSent < partials.length && partials[this.partialsSent]!.afterMs <= heardMs)
      this.sendPartial(partials[this.partialsSent++]!.text);
    if (u.endOfUtteranceAfterMs !== undefined && heardMs >= u.endOfUtteranceAfterMs) {
      this.endpointed = true;
      this.release(true, true);
    } else if (u.releaseAfterMs !== undefined && heardMs >= u.releaseAfterMs) this.release(false);
  }

  protected onFinish(): void {
    if (!this.endpointed) this.release(true);
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    for (const stop of this.timers) stop();
    this.timers.clear();
  }

  /**
   * Ends the current segment: sends its remaining partials and its final (or error) per the
   * utterance's mode. `endOfUtterance`: the provider endpointed (the final is marked so).
   */
  private release(last: boolean, endOfUtterance = false): void {
    const startMs = this.ms(this.segmentStart);
    const endMs = this.ms(this.samples);
    const audioMs = endMs - startMs;
    // Nothing pushed since the previous final: an empty final, the script untouched.
    const u = this.samples > this.segmentStart ? this.owner.take() : undefined;
    const partials = u?.partials ?? [];
    for (const p of partials.slice(this.partialsSent)) this.sendPartial(p.text);
    this.segmentStart = this.samples;
    this.partialsSent = 0;
    const final: FinalTranscript = u
      ? { text: u.text, confidence: u.confidence ?? 0.9, startMs, endMs, audioMs }
      : { text: '', confidence: 0, startMs, endMs, audioMs };
    if (endOfUtterance) final.endOfUtterance = true;
    if (this.owner.finalProvider !== undefined) final.provider = this.owner.finalProvider;
    const { mode, delayMs } = this.owner.behaviour(u);
    if (!u || mode === 'ok' || mode === 'slow') {
      this.later(u && mode === 'slow' ? delayMs : 0, () => {
        if (last) this.current = 'done';
        this.events.emit('final', final);
      });
    } else if (mode === 'crash') {
      this.current = 'failed';
      this.later(0, () =>
        this.events.emit(
          'error',
          new RecognizerError('crashed', this.owner.provider, 'the recogniser process exited unexpectedly (scripted crash)'),
        ),
      );
    }
    // 'hang': nothing, ever.
  }

  private sendPartial(text: string): void {
    const partial = { text, startMs: this.ms(this.segmentStart), endMs: this.ms(this.samples) };
    this.later(0, () => this.events.emit('partial', partial));
  }

  private later(delayMs: number, fn: () => void): void {
    const stop = this.clock.setTimer(() => {
      this.timers.delete(stop);
      if (this.current !== 'cancelled') fn();
    }, delayMs);
    this.timers.add(stop);
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }
}

function checkMode(mode: FakeRecognizerMode): FakeRecognizerMode {
  if (!['ok', 'slow', 'crash', 'hang'].includes(mode))
    throw new RangeError(`mode must be ok, slow, crash or hang; got ${JSON.stringify(mode)}`);
  return mode;
}

function checkDelay(ms: number): number {
  if (!(Number.isFinite(ms) && ms >= 0)) throw new RangeError(`delayMs must be a finite number of ms ≥ 0; got ${ms}`);
  return ms;
}

function checkUtterance(u: FakeUtterance, i: number): void {
  const at = `script[${i}]`;
  if (typeof u !== 'object' || u === null || typeof u.text !== 'string') throw new RangeError(`${at}.text must be a string`);
  if (u.confidence !== undefined && !(u.confidence >= 0 && u.confidence <= 1))
    throw new RangeError(`${at}.confidence must be 0..1; got ${u.confidence}`);
  if (u.mode !== undefined) checkMode(u.mode);
  if (u.delayMs !== undefined) checkDelay(u.delayMs);
  if (u.releaseAfterMs !== undefined && !(Number.isFinite(u.releaseAfterMs) && u.releaseAfterMs > 0))
    throw new RangeError(`${at}.releaseAfterMs must be > 0 ms; got ${u.releaseAfterMs}`);
  if (u.endOfUtteranceAfterMs !== undefined && !(Number.isFinite(u.endOfUtteranceAfterMs) && u.endOfUtteranceAfterMs > 0)) {
    throw new RangeError(`${at}.endOfUtteranceAfterMs must be > 0 ms; got ${u.endOfUtteranceAfterMs}`);
  }
  for (const p of u.partials ?? []) {
    if (typeof p?.text !== 'string' || !(Number.isFinite(p.afterMs) && p.afterMs >= 0))
      throw new RangeError(`${at}.partials entries need a text and afterMs ≥ 0`);
  }
}
