/**
 * The streaming speech recogniser port (docs/media.md "2. Speech recognition"; docs/architecture.md
 * "A carrier audio frame": audio in → VAD → streaming recogniser → endpointing → the session turn).
 *
 * A {@link SpeechRecognizer} opens one {@link RecognitionStream} per utterance (or per call
 * leg): the media session pushes mono signed 16-bit PCM at the stated rate as it arrives, gets
 * `partial` transcripts while the caller speaks and a `final` one with a confidence, and calls
 * {@link RecognitionStream.finish} when its endpointing decides the caller has stopped.
 *
 * Threading: a recogniser and its streams live inside the media worker (a worker thread or a
 * supervised child process, never the API's event loop). They hold no globals and depend on no
 * daemon service; options, events and errors are plain data (structured-clone safe through
 * {@link RecognizerError.toData}). Listeners run on the worker's own event loop, never
 * re-entrantly from inside `push`/`finish`/`cancel` (adapters deliver events asynchronously).
 *
 * Errors: a stream that fails emits one `error` (a {@link RecognizerError} of kind `crashed`,
 * `timeout` or `unavailable`) and then nothing more. The call does not end: the caller of the
 * port decides — normally the step's re-prompt, or the fallback and a polite hang-up once the
 * re-prompts run out (a recogniser that crashes or hangs never leaves the call in silence).
 *
 * Times are stream times in ms counted from the stream's first pushed sample (sample counts,
 * never a wall clock), as in vad.ts, so they line up with the VAD's speech events.
 *
 * The shape follows what the engines to be adapted give: pocketsphinx(1) "live" mode writes one
 * JSON line per speech segment with start `b` and duration `d` in seconds, probability `p` and
 * text `t` (https://man.freebsd.org/cgi/man.cgi?query=pocketsphinx&sektion=1; Debian's
 * 0.8+5prealpha `pocketsphinx_continuous` prints hypotheses only, so its adapter derives the
 * timings from the samples it fed); Deepgram streaming sends interim (`is_final: false`) and
 * final transcripts with `start`/`duration`, and flushes on a `Finalize` message
 * (https://developers.deepgram.com/docs/interim-results, https://developers.deepgram.com/docs/finalize),
 * which is {@link RecognitionStream.finish} here.
 *
 * What the adapters share at run time (the stream base class, its listener list, the deadline
 * wrapper) is in ./recognition-stream.ts.
 */

/** How a provider is priced: per second of audio pushed to it (silence included). */
export type RecognizerPriceBasis = 'audio_second';

/** Step grammars a recogniser may use to bias its search (the engine's slot kinds on a phone). */
export const RECOGNITION_GRAMMARS = ['free', 'digits', 'yes_no', 'name', 'date', 'time', 'number'] as const;
/** A step grammar, see {@link RECOGNITION_GRAMMARS}. */
export type RecognitionGrammar = (typeof RECOGNITION_GRAMMARS)[number];

/** What the current step expects, so the recogniser can bias towards it. Advisory: a recogniser may ignore it. */
export interface RecognitionHints {
  /** The step's grammar (e.g. `digits` while a phone number is being said, `yes_no` after a question). */
  grammar?: RecognitionGrammar;
  /** Phrases likely in this answer (choice labels, names on file), each 1–200 characters; at most 500. */
  phrases?: readonly string[];
}

/** Options of one recognition stream. */
export interface RecognitionOptions {
  /** Language of the speech, a BCP-47 tag (RFC 5646), e.g. `en-IN`. Must be one the recogniser lists. */
  language: string;
  /** Sample rate of the pushed PCM, Hz: a whole number 8000–48000. */
  sampleRateHz: number;
  /** Biasing for the current step. */
  hints?: RecognitionHints;
}

/** An interim transcript: may still change; never billed or acted on by itself. */
export interface PartialTranscript {
  /** The words heard so far in this segment. */
  text: string;
  /** Stream time where the segment began, ms. */
  startMs: number;
  /** Stream time of the last audio this transcript covers, ms. */
  endMs: number;
}

/** The settled transcript of one segment of speech. */
export interface FinalTranscript {
  /** The words heard; empty when nothing intelligible was heard. */
  text: string;
  /**
   * The recogniser's confidence in `text`, 0..1 (0 for an empty text); null when the provider
   * gives no measure for the words (Sarvam): nothing is invented in its place.
   */
  confidence: number | null;
  /** Stream time where the segment began, ms. */
  startMs: number;
  /** Stream time of the segment's last sample, ms. */
  endMs: number;
  /** Audio consumed for this segment, ms (silence included): the basis of `stt_seconds`. */
  audioMs: number;
  /**
   * The provider's own endpointing decided the caller stopped (Deepgram `speech_final` or
   * `UtteranceEnd`, Sarvam `END_SPEECH`) before `finish()` was called: the stream is `done` and
   * the media session takes this as the end of the utterance (its VAD's later end is ignored).
   * Absent or false for a final that answers `finish()`. A consumer must also accept one that
   * arrives after it called `finish()` (the provider's decision was already on the wire): it is
   * then simply the answer.
   */
  endOfUtterance?: boolean;
  /**
   * The provider that heard this segment (its pricing key, a turn's `stt_provider`), when it is
   * not the recogniser's own {@link RecognizerInfo.provider}: a fallback recogniser heard it
   * (see recognizers/fallback.ts). Absent: the recogniser's provider.
   */
  provider?: string;
}

/** Why a stream failed. */
export type RecognizerErrorKind =
  /** The engine died or answered garbage (child process exit, protocol error). */
  | 'crashed'
  /** No answer in time: the consumer's deadline (see {@link withTimeout}) lapsed. */
  | 'timeout'
  /** The engine cannot serve this stream at all (not installed, no capacity, language not served). */
  | 'unavailable';

/** {@link RecognizerError} as plain data, for a worker's `postMessage`. */
export interface RecognizerErrorData {
  kind: RecognizerErrorKind;
  provider: string;
  message: string;
}

/** A recognition stream failed; the call continues (the port's caller re-prompts). */
export class RecognizerError extends Error {
  override readonly name = 'RecognizerError';
  /** What went wrong. */
  readonly kind: RecognizerErrorKind;
  /** The provider that failed (its pricing key). */
  readonly provider: string;

  constructor(kind: RecognizerErrorKind, provider: string, message: string) {
    super(`${provider}: ${message}`);
    this.kind = kind;
    this.provider = provider;
  }

  /** This error as plain data (structured-clone safe). */
  toData(): RecognizerErrorData {
    return { kind: this.kind, provider: this.provider, message: this.message };
  }
}

/** The events of a {@link RecognitionStream} and their listener arguments. */
export interface RecognitionEvents {
  /** An interim transcript, zero or more per segment, before its final. */
  partial: [transcript: PartialTranscript];
  /** A settled transcript: one per segment; `finish()` always yields one (or an error). */
  final: [transcript: FinalTranscript];
  /** The stream failed; no event follows. */
  error: [error: RecognizerError];
}

/** Lifecycle of a stream. */
export type RecognitionState =
  /** Accepting audio. */
  | 'open'
  /** `finish()` was called: flushing, the last final (or an error) is still to come. */
  | 'finishing'
  /** The last final was delivered. */
  | 'done'
  /** `cancel()` was called. */
  | 'cancelled'
  /** An error was delivered. */
  | 'failed';

/** One streaming recognition: push audio, listen for transcripts. */
export interface RecognitionStream {
  /** The options it was started with. */
  readonly options: Readonly<RecognitionOptions>;
  /** Where the stream is in its life. */
  readonly state: RecognitionState;
  /**
   * Feeds mono signed 16-bit PCM (host order samples) at `options.sampleRateHz`, chunks of any
   * length. Ignored once the stream has `failed` (audio in flight when the engine died).
   * @throws TypeError unless `pcm` is an Int16Array
   * @throws Error after {@link finish} or {@link cancel} (a bug in the consumer, not an engine fault)
   */
  push(pcm: Int16Array): void;
  /**
   * End of utterance: flush and deliver the last `final` (empty text if no audio came since
   * the previous final), or an `error`. Idempotent.
   * @throws Error after {@link cancel}
   */
  finish(): void;
  /** Abandons the stream (barge-in, hang-up): no event is delivered after this returns. Idempotent. */
  cancel(): void;
  /** Adds a listener; returns its remover. */
  on<K extends keyof RecognitionEvents>(event: K, listener: (...args: RecognitionEvents[K]) => void): () => void;
}

/** Metadata of a recogniser, enough to choose and price it. */
export interface RecognizerInfo {
  /** Pricing key (`stt` table of pricing.json) and `stt_provider` of a turn, e.g. `pocketsphinx`, `fake`. */
  readonly provider: string;
  /**
   * Language ranges served (RFC 4647 §2.1 basic ranges): `en` serves `en`, `en-IN`, `en-US`…;
   * `*` serves any language.
   */
  readonly languages: readonly string[];
  /** How usage is metered: per second of audio pushed. */
  readonly priceBasis: RecognizerPriceBasis;
  /**
   * Whether streams send `partial` transcripts while the caller speaks. Barge-in waits a little
   * for a partial (to tell a backchannel from a real turn) only when they come; default false.
   */
  readonly emitsPartials?: boolean;
  /**
   * Whether streams may end on their own with a final marked
   * {@link FinalTranscript.endOfUtterance} (the provider endpoints). Default false.
   */
  readonly endpoints?: boolean;
}

/** A streaming speech recogniser (one per media worker; any number of concurrent streams). */
export interface SpeechRecognizer extends RecognizerInfo {
  /**
   * Opens a stream. Engine trouble (not installed, cannot start) arrives as an `unavailable`
   * error event, not a throw.
   * @throws RangeError on malformed options (see {@link validateRecognitionOptions}) or a language not in {@link languages}
   */
  start(options: RecognitionOptions): RecognitionStream;
}

/**
 * The canonical form of a BCP-47 tag (RFC 5646), via ECMA-402 `Intl.getCanonicalLocales`.
 * @throws RangeError if `language` is not a well-formed tag
 */
export function canonicalLanguage(language: string): string {
  if (typeof language !== 'string' || language.trim() === '')
    throw new RangeError('language must be a BCP-47 tag such as en-IN; got an empty value');
  try {
    const [tag] = Intl.getCanonicalLocales(language);
    if (tag) return tag;
  } catch {
    // reported below
  }
  throw new RangeError(`language must be a BCP-47 tag such as en-IN; got ${JSON.stringify(language)}`);
}

/**
 * Whether basic language range `range` matches `tag` (RFC 4647 §3.3.1 basic filtering:
 * equal, or a prefix followed by `-`, case-insensitively; `*` matches everything).
 */
export function languageMatches(range: string, tag: string): boolean {
  const r = range.toLowerCase();
  const t = tag.toLowerCase();
  return r === '*' || t === r || t.startsWith(`${r}-`);
}

/**
 * Checks a stream's options and returns them with the language canonicalised.
 * @param languages the recogniser's language ranges (see {@link RecognizerInfo.languages})
 * @throws RangeError naming the bad field: language (malformed or not served), sampleRateHz
 *         (not a whole number 8000–48000), hints (unknown grammar; phrases not 1–200 characters, more than 500)
 */
export function validateRecognitionOptions(options: RecognitionOptions, languages: readonly string[]): RecognitionOptions {
  if (typeof options !== 'object' || options === null) throw new RangeError('recognition options must be an object');
  const language = canonicalLanguage(options.language);
  if (!languages.some((r) => languageMatches(r, language))) {
    throw new RangeError(`language ${language} is not served by this recogniser (it serves ${languages.join(', ') || 'nothing'})`);
  }
  const rate = options.sampleRateHz;
  if (!Number.isInteger(rate) || rate < 8000 || rate > 48000)
    throw new RangeError(`sampleRateHz must be a whole number of Hz from 8000 to 48000; got ${rate}`);
  const hints = options.hints;
  if (hints !== undefined) {
    if (typeof hints !== 'object' || hints === null) throw new RangeError('hints must be an object');
    if (hints.grammar !== undefined && !(RECOGNITION_GRAMMARS as readonly string[]).includes(hints.grammar)) {
      throw new RangeError(`hints.grammar must be one of ${RECOGNITION_GRAMMARS.join(', ')}; got ${JSON.stringify(hints.grammar)}`);
    }
    if (hints.phrases !== undefined) {
      if (!Array.isArray(hints.phrases) || hints.phrases.length > 500)
        throw new RangeError('hints.phrases must be a list of at most 500 phrases');
      for (const p of hints.phrases) {
        if (typeof p !== 'string' || p.trim() === '' || p.length > 200)
          throw new RangeError(`hints.phrases entries must be 1–200 characters; got ${JSON.stringify(p)}`);
      }
    }
  }
  return { ...options, language };
}

/** The clock a recogniser schedules on: the same shape as playout's (`systemClock`, `FakeClock`). */
export interface RecognizerClock {
  /** Monotonic time, ms. */
  now(): number;
  /** Calls `fn` once after about `delayMs` ms; returns a canceller. */
  setTimer(fn: () => void, delayMs: number): () => void;
}

/** A recogniser someone could use, and whether it is usable here. */
export interface RecognizerCandidate {
  /** Its metadata. */
  info: RecognizerInfo;
  /** Whether it is installed and configured on this machine. */
  available: boolean;
  /** Why not, when unavailable (e.g. `pocketsphinx is not installed; run: sudo apt-get install pocketsphinx pocketsphinx-en-us`). */
  reason?: string;
}

/** The outcome of {@link recognizerFor}. */
export type RecognizerChoice =
  { provider: string; info: RecognizerInfo; language: string } | { provider: 'none'; reason: string; language: string };

/**
 * Chooses the recogniser for an agent's language: the first candidate, in the order given (the
 * caller's preference), that serves the language and is available. Otherwise `none` with a
 * reason fit for `/v1/health` and the start-up log, naming what was missing.
 * @param language  the agent's language, a BCP-47 tag
 * @param available candidates in order of preference
 * @throws RangeError if `language` is not a well-formed BCP-47 tag
 */
export function recognizerFor(language: string, available: readonly RecognizerCandidate[]): RecognizerChoice {
  const tag = canonicalLanguage(language);
  const serving = available.filter((c) => c.info.languages.some((r) => languageMatches(r, tag)));
  const chosen = serving.find((c) => c.available);
  if (chosen) return { provider: chosen.info.provider, info: chosen.info, language: tag };
  if (serving.length > 0) {
    const why = serving.map((c) => `${c.info.provider}: ${c.reason ?? 'unavailable'}`).join('; ');
    return { provider: 'none', language: tag, reason: `speech recognition is off for ${tag}: ${why}` };
  }
  const known = available.map((c) => `${c.info.provider} (${c.info.languages.join(', ')})`).join(', ');
  return {
    provider: 'none',
    language: tag,
    reason: `speech recognition is off for ${tag}: no recogniser serves this language${known ? `; configured: ${known}` : '; none is configured'}`,
  };
}
