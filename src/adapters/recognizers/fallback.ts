/**
 * A recogniser that falls back (docs/media.md "Cloud speech recognition", **Fallback**): a
 * provider that is slow, drops the socket or answers 401/429 mid-call is reconnected once with
 * buffered audio, else the call falls back to the embedded recogniser (English) or a polite
 * DTMF/hang-up path — the call never hangs in silence.
 *
 * {@link FallbackRecognizer} wraps a primary (a cloud adapter, which already reconnects once with
 * its buffered audio before it reports an error) and an optional fallback (the embedded one).
 * Every stream goes to the primary. The audio of the utterance is kept; when the primary's
 * stream fails before its last final, that audio is replayed into a stream of the fallback
 * (`finish()` forwarded if the caller had already called it), so the caller's words are still
 * heard, and the final says who heard them ({@link FinalTranscript.provider}, so the turn is
 * priced by the provider that heard it).
 *
 * After an `unavailable` error (the provider refused the key, or kept rate-limiting after its
 * retry) or `maxConsecutiveFailures` failed primary streams in a row, the primary is skipped for
 * the rest of this recogniser's life: new streams go straight to the fallback. One instance
 * serves one call (the media worker builds one per call stream), so one call's failures never
 * switch another call. Without a fallback (or one that does not serve the stream's language,
 * e.g. hi-IN and the English embedded recogniser) the primary's error goes through unchanged, and
 * the call session takes its not-heard path (re-prompt, then the polite hang-up; DTMF works).
 *
 * Events are forwarded from the inner streams' own (asynchronous) deliveries, never from inside
 * `push`/`finish`/`cancel`, as the port requires (../../media/recognizer.ts).
 */
import { systemClock } from '../../media/playout.js';
import {
  canonicalLanguage,
  languageMatches,
  RecognizerError,
  type FinalTranscript,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerErrorData,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../../media/recognizer.js';
import { BaseRecognitionStream } from '../../media/recognition-stream.js';

/** A switch to the fallback, for logs and the worker's events. */
export interface FallbackSwitch {
  /** The provider that failed (the primary). */
  from: string;
  /** The provider now hearing the utterance, or null when there is none (the error went through). */
  to: string | null;
  /** The primary's error. */
  error: RecognizerErrorData;
  /** Whether the primary is now skipped for the rest of this recogniser's life. */
  primarySkipped: boolean;
}

/** Options of a {@link FallbackRecognizer}. */
export interface FallbackOptions {
  /** Failed primary streams in a row after which the primary is skipped, ≥ 1; default 2. */
  maxConsecutiveFailures?: number;
  /** Most audio of one utterance kept for the replay, ms (the oldest is dropped beyond it), > 0; default 60000. */
  maxReplayMs?: number;
  /** Told of each primary failure (with whether the fallback took over); must not throw. */
  onSwitch?: (event: FallbackSwitch) => void;
  /**
   * With a fallback: how long the primary may take to answer `finish()`, ms (> 0). Past it the
   * primary counts as failed (`timeout`), is cancelled and the utterance is replayed into the
   * fallback, so a slow provider still leaves time within the caller's own deadline (the call
   * session's `recognizerTimeoutMs`; the media worker gives 60% of it). Default: none.
   */
  primaryDeadlineMs?: number;
  /** Clock of `primaryDeadlineMs`; default the system clock. */
  clock?: RecognizerClock;
}

/** Streams go to `primary`; when one fails, its utterance is replayed into `fallback`. */
export class FallbackRecognizer implements SpeechRecognizer {
  /** The primary's pricing key: streams are priced per final by {@link FinalTranscript.provider}. */
  readonly provider: string;
  /** The primary's languages (the fallback serves a stream only when it also serves its language). */
  readonly languages: readonly string[];
  readonly priceBasis: RecognizerPriceBasis = 'audio_second';
  private readonly maxFailures: number;
  /** @internal */
  readonly maxReplayMs: number;
  private readonly onSwitch: ((event: FallbackSwitch) => void) | undefined;
  /** @internal */
  readonly primaryDeadlineMs: number | null;
  /** @internal */
  readonly clock: RecognizerClock;
  private failures = 0;
  private skipped: RecognizerErrorData | null = null;

  /**
   * @param primary  the recogniser every stream tries first
   * @param fallback the recogniser that hears an utterance the primary failed on, or null for none
   * @throws RangeError on a bad option
   */
  constructor(
    readonly primary: SpeechRecognizer,
    readonly fallback: SpeechRecognizer | null,
    options: FallbackOptions = {},
  ) {
    this.provider = primary.provider;
    this.languages = primary.languages;
    this.maxFailures = options.maxConsecutiveFailures ?? 2;
    if (!(Number.isInteger(this.maxFailures) && this.maxFailures >= 1))
      throw new RangeError(`maxConsecutiveFailures must be a whole number ≥ 1; got ${this.maxFailures}`);
    this.maxReplayMs = options.maxReplayMs ?? 60_000;
    if (!(Number.isFinite(this.maxReplayMs) && this.maxReplayMs > 0))
      throw new RangeError(`maxReplayMs must be > 0 ms; got ${this.maxReplayMs}`);
    this.onSwitch = options.onSwitch;
    this.primaryDeadlineMs = options.primaryDeadlineMs ?? null;
    if (this.primaryDeadlineMs !== null && !(Number.isFinite(this.primaryDeadlineMs) && this.primaryDeadlineMs > 0))
      throw new RangeError(`primaryDeadlineMs must be > 0 ms; got ${this.primaryDeadlineMs}`);
    this.clock = options.clock ?? systemClock;
  }

  /** Whether new streams sent partials: the recogniser that takes them now. */
  get emitsPartials(): boolean {
    return this.active.emitsPartials === true;
  }

  /** Whether new streams may end by the provider's endpointing: the recogniser that takes them now. */
  get endpoints(): boolean {
    return this.active.endpoints === true;
  }

  /** The primary's error that made this recogniser skip it, or null while it is still tried. */
  get primarySkipped(): RecognizerErrorData | null {
    return this.skipped;
  }

  private get active(): SpeechRecognizer {
    return this.skipped && this.fallback ? this.fallback : this.primary;
  }

  /**
   * Opens a stream on the primary, or on the fallback once the primary is skipped (or when the
   * primary does not serve the language and the fallback does).
   * @throws RangeError on malformed options or a language neither recogniser serves
   */
  start(options: RecognitionOptions): RecognitionStream {
    const serves = (r: SpeechRecognizer | null, lang: string): r is SpeechRecognizer =>
      r !== null && r.languages.some((x) => languageMatches(x, lang));
    const language = canonicalLanguage(options.language);
    const fallbackServes = serves(this.fallback, language);
    if (this.skipped && fallbackServes) return new FallbackStream(this, options, null, this.fallback!.start(options));
    if (!serves(this.primary, language) && fallbackServes) return new FallbackStream(this, options, null, this.fallback!.start(options));
    return new FallbackStream(this, options, this.primary.start(options), null);
  }

  /** @internal a primary stream delivered its last final */
  primarySucceeded(): void {
    this.failures = 0;
  }

  /** @internal a primary stream failed; returns whether the primary is now skipped */
  primaryFailed(error: RecognizerErrorData): boolean {
    this.failures++;
    if (!this.skipped && (error.kind === 'unavailable' || this.failures >= this.maxFailures)) this.skipped = error;
    return this.skipped !== null;
  }

  /** @internal the fallback stream for `options`, or null when there is none for its language */
  fallbackFor(options: RecognitionOptions): RecognitionStream | null {
    const lang = canonicalLanguage(options.language);
    if (!this.fallback || !this.fallback.languages.some((x) => languageMatches(x, lang))) return null;
    return this.fallback.start(options);
  }

  /** @internal */
  switched(event: FallbackSwitch): void {
    try {
      this.onSwitch?.(event);
    } catch {
      // an observer's fault never breaks recognition
    }
  }
}

class FallbackStream extends BaseRecognitionStream {
  private inner: RecognitionStream;
  private innerIsPrimary: boolean;
  private innerProvider: string;
  /** The utterance's audio, for a replay. */
  private kept: Int16Array[] = [];
  private keptSamples = 0;
  private finishCalled = false;
  private disarm: (() => void) | null = null;
  private readonly unsubscribe: Array<() => void> = [];

  constructor(
    private readonly owner: FallbackRecognizer,
    readonly options: Readonly<RecognitionOptions>,
    primary: RecognitionStream | null,
    fallback: RecognitionStream | null,
  ) {
    super();
    this.inner = (primary ?? fallback)!;
    this.innerIsPrimary = primary !== null;
    this.innerProvider = primary ? owner.primary.provider : owner.fallback!.provider;
    this.listen();
  }

  protected accept(pcm: Int16Array): void {
    if (this.innerIsPrimary && this.owner.fallback) this.keep(pcm);
    if (this.inner.state === 'open') this.inner.push(pcm);
  }

  protected onFinish(): void {
    this.finishCalled = true;
    if (this.inner.state === 'open') this.inner.finish();
    const deadline = this.owner.primaryDeadlineMs;
    if (deadline !== null && this.innerIsPrimary && this.owner.fallback && this.live(this.inner)) {
      const primary = this.inner;
      this.disarm = this.owner.clock.setTimer(() => {
        this.disarm = null;
        if (!this.live(primary) || !this.innerIsPrimary) return;
        primary.cancel();
        this.onError(
          primary,
          new RecognizerError('timeout', this.innerProvider, `no transcript within ${deadline} ms of the end of speech`),
        );
      }, deadline);
    }
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done' || this.current === 'failed') return;
    this.current = 'cancelled';
    this.stopDeadline();
    this.stopListening();
    this.inner.cancel();
    this.kept = [];
  }

  private keep(pcm: Int16Array): void {
    this.kept.push(pcm.slice());
    this.keptSamples += pcm.length;
    const max = Math.round((this.owner.maxReplayMs * this.options.sampleRateHz) / 1000);
    while (this.keptSamples > max && this.kept.length > 1) this.keptSamples -= this.kept.shift()!.length;
  }

  private listen(): void {
    const inner = this.inner;
    this.unsubscribe.push(
      inner.on('partial', (p) => {
        if (this.live(inner)) this.events.emit('partial', p);
      }),
      inner.on('final', (f) => this.onFinal(inner, f)),
      inner.on('error', (e) => this.onError(inner, e)),
    );
  }

  private stopDeadline(): void {
    this.disarm?.();
    this.disarm = null;
  }

  private stopListening(): void {
    for (const off of this.unsubscribe.splice(0)) off();
  }

  private live(inner: RecognitionStream): boolean {
    return inner === this.inner && (this.current === 'open' || this.current === 'finishing');
  }

  private onFinal(inner: RecognitionStream, f: FinalTranscript): void {
    if (!this.live(inner)) return;
    // Heard: a later failure replays only what follows this final.
    if (inner.state !== 'open') this.stopDeadline();
    this.kept = [];
    this.keptSamples = 0;
    if (inner.state !== 'open') {
      this.current = 'done';
      if (this.innerIsPrimary) this.owner.primarySucceeded();
    }
    this.events.emit('final', f.provider === undefined ? { ...f, provider: this.innerProvider } : f);
  }

  private onError(inner: RecognitionStream, e: RecognizerError): void {
    if (!this.live(inner)) return;
    this.stopDeadline();
    if (!this.innerIsPrimary) {
      this.fail(e);
      return;
    }
    const error = e.toData();
    const primarySkipped = this.owner.primaryFailed(error);
    let next: RecognitionStream | null = null;
    try {
      next = this.owner.fallbackFor(this.options);
    } catch {
      next = null;
    }
    this.owner.switched({ from: this.innerProvider, to: next ? this.owner.fallback!.provider : null, error, primarySkipped });
    if (!next) {
      this.fail(e);
      return;
    }
    this.stopListening();
    this.inner = next;
    this.innerIsPrimary = false;
    this.innerProvider = this.owner.fallback!.provider;
    this.listen();
    const replay = this.kept;
    this.kept = [];
    this.keptSamples = 0;
    for (const pcm of replay) if (next.state === 'open') next.push(pcm);
    if (this.finishCalled && next.state === 'open') next.finish();
  }

  private fail(e: RecognizerError): void {
    this.current = 'failed';
    this.kept = [];
    this.stopListening();
    this.events.emit('error', e instanceof RecognizerError ? e : new RecognizerError('crashed', this.innerProvider, String(e)));
  }
}
