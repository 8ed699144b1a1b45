/**
 * Deepgram streaming speech recognition (nova-3 over WebSocket) behind the
 * {@link SpeechRecognizer} port (issue 17, "Cloud speech recognition").
 *
 * Wire protocol (https://developers.deepgram.com/reference/speech-to-text/listen-streaming):
 * - One WebSocket per {@link RecognitionStream} to `wss://api.deepgram.com/v1/listen` with the
 *   options in the query (`model`, `language`, `encoding=linear16`, `sample_rate`, `channels=1`,
 *   `interim_results=true`, `endpointing`, `utterance_end_ms`, `vad_events=true`,
 *   `smart_format=true`, `punctuate=true`, `keyterm`…) and the header `Authorization: Token <key>`.
 * - Audio goes as binary frames of raw little-endian PCM16; control messages are JSON text:
 *   `KeepAlive` (https://developers.deepgram.com/docs/audio-keep-alive: Deepgram closes a socket
 *   that gets neither audio nor text for 10 s with 1011 `NET-0001`), `Finalize`
 *   (https://developers.deepgram.com/docs/finalize) and `CloseStream` (flush, `Metadata`, then a
 *   1000 close). Shapes as in deepgram-python-sdk
 *   `src/deepgram/extensions/types/sockets/listen_v1_*.py` and deepgram-js-sdk
 *   `src/lib/types/LiveTranscriptionEvent.ts` / `UtteranceEndEvent.ts`.
 * - Answers: `Results` (`is_final` false = interim; `is_final` true = a settled segment;
 *   `speech_final` true = Deepgram's endpointing saw `endpointing` ms of silence;
 *   `from_finalize` true = the answer to `Finalize`), `UtteranceEnd` (a gap of
 *   `utterance_end_ms` after the last finalised word; https://developers.deepgram.com/docs/utterance-end),
 *   `SpeechStarted` (https://developers.deepgram.com/docs/speech-started) and `Metadata`.
 * - A refused handshake is an HTTP status instead of 101 (401 bad key, 403 no access,
 *   400 bad parameters, 429 rate limit, 5xx trouble), with a `dg-error` header
 *   (https://developers.deepgram.com/docs/stt-troubleshooting-websocket-data-and-net-errors).
 *
 * A stream: audio pushed before the socket opens is buffered, and all audio of the utterance
 * is kept until the stream ends. Interims become `partial`s (the settled segments so far plus
 * the interim). The one `final` comes either from Deepgram's endpointing — `speech_final` or
 * `UtteranceEnd` with words heard, before `finish()` — marked `endOfUtterance` (the stream is
 * then `done`; a later `finish()` does nothing), or after `finish()`, which sends `Finalize`
 * and, at once after it, `CloseStream`: the final is delivered on the `from_finalize` result,
 * or — since Deepgram does not promise one when little audio is buffered — on the `Metadata`
 * or the clean close that answer `CloseStream`. Its text is the settled segments joined; its
 * confidence the mean of Deepgram's `alternatives[0].confidence` of each, or null when one came
 * without it. Times are stream times from the samples pushed: a final covers
 * [0, all audio pushed].
 *
 * Failures: a socket that drops, errors or closes uncleanly before the final, a handshake that
 * times out (`connectTimeoutMs`) or answers 5xx, or an unreachable host, is retried once on a
 * new socket that replays all the utterance's audio from its start (Deepgram's times restart
 * with it, so they stay stream times); a second failure is an `error` (`crashed` for a drop,
 * `timeout`, or `unavailable`). 429 is retried once after {@link RATE_LIMIT_RETRY_MS}; 401/403
 * and 400 are `unavailable` at once. Messages never hold the API key. Anything after the final
 * is ignored. Note that Deepgram bills the replayed audio again; `audioMs` counts it once.
 */
import os from 'node:os';
import WebSocket, { type RawData } from 'ws';
import { redactSecrets } from '../../domain/redact.js';
import { checkWsUrl, probeHandshake, type ConnectFailure } from './cloud-socket.js';
import { systemClock } from '../playout.js';
import {
  BaseRecognitionStream,
  canonicalLanguage,
  RecognizerError,
  validateRecognitionOptions,
  type FinalTranscript,
  type RecognitionOptions,
  type RecognitionState,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../recognizer.js';

/** The provider key of this recogniser (pricing `stt` table, a turn's `stt_provider`). */
export const DEEPGRAM_PROVIDER = 'deepgram';
/** Deepgram's streaming endpoint. */
export const DEFAULT_DEEPGRAM_URL = 'wss://api.deepgram.com/v1/listen';
/** Default model. */
export const DEFAULT_DEEPGRAM_MODEL = 'nova-3';
/** Wait before the one retry after a 429, ms. */
export const RATE_LIMIT_RETRY_MS = 500;
/** Most `keyterm`s sent (Deepgram takes up to 100, 500 tokens in all: https://developers.deepgram.com/docs/keyterm). */
const MAX_KEYTERMS = 100;
/** Most words across all keyterms sent (a safe margin under the 500-token limit). */
const MAX_KEYTERM_WORDS = 300;
/** How long to wait for Deepgram to close after `CloseStream` before dropping the socket, ms. */
const CLOSE_GRACE_MS = 5000;

/**
 * Languages nova-3 serves through its multilingual model (`language=multi`, code-switching with
 * English) rather than a monolingual one, for vagent's Indian-language agents
 * (https://developers.deepgram.com/docs/multilingual-code-switching,
 * https://developers.deepgram.com/docs/nova-3-language-prompting: hi, bn, gu, kn, mr, ta, te;
 * `language_hint` is repeated per hint, as deepgram-js-sdk v5.16.0 sends an array of hints).
 */
const MULTI_LANGUAGES = new Set(['hi', 'bn', 'gu', 'kn', 'mr', 'ta', 'te']);
/** English variants nova-3 serves as such (https://developers.deepgram.com/docs/models-languages-overview). */
const NOVA3_ENGLISH = new Set(['en', 'en-US', 'en-GB', 'en-AU', 'en-NZ', 'en-IN']);

/** Options of a {@link DeepgramRecognizer}. */
export interface DeepgramOptions {
  /** The Deepgram API key (sent as `Authorization: Token <key>`; never logged or put in messages). */
  apiKey: string;
  /** The streaming endpoint, `ws:` or `wss:`; default {@link DEFAULT_DEEPGRAM_URL}. */
  url?: string;
  /** Model; default `nova-3`. */
  model?: string;
  /** Deepgram's endpointing: silence that ends speech (`speech_final`), ms, 10–10 000; default 300. */
  endpointingMs?: number;
  /** Gap after the last word that sends `UtteranceEnd`, ms, 1000–10 000; default 1000. */
  utteranceEndMs?: number;
  /** Deadline of the WebSocket handshake, ms, > 0; default 3000. */
  connectTimeoutMs?: number;
  /** Idle time on an open socket after which a `KeepAlive` is sent, ms, 100–9000; default 5000. */
  keepAliveMs?: number;
  /** Clock for the handshake deadline, KeepAlive and the 429 retry; default the system clock. */
  clock?: RecognizerClock;
  /** Language ranges served (RFC 4647); default `['*']` (Deepgram answers 400 for one it lacks). */
  languages?: readonly string[];
}

/** What the `language` (and `language_hint`) query parameters become for a BCP-47 tag. */
export interface DeepgramLanguage {
  /** The `language` parameter: `multi`, or a Deepgram language code. */
  language: string;
  /** `language_hint` values (nova-3 multilingual only): the language and English. */
  hints: readonly string[];
}

/**
 * Maps an agent's language to Deepgram's:
 * - Hindi and Hinglish (`hi`, `hi-IN`, `hi-Latn`…) and the other Indian languages of nova-3's
 *   multilingual model (bn, gu, kn, mr, ta, te) → `multi` with `language_hint`s of the language
 *   and English: callers switch to English words mid-sentence, and `multi` transcribes both
 *   (Hindi in Devanagari, English words in Latin script). Only for nova-3 models; others get the
 *   plain language code.
 * - English: the variants nova-3 serves as such (`en-IN`, `en-US`, `en-GB`, `en-AU`, `en-NZ`)
 *   are kept; any other English becomes `en`.
 * - Anything else: the canonical tag as given (Deepgram refuses what it does not serve with 400,
 *   which the stream reports as `unavailable`).
 * @throws RangeError if `tag` is not a well-formed BCP-47 tag
 */
export function deepgramLanguage(tag: string, model = DEFAULT_DEEPGRAM_MODEL): DeepgramLanguage {
  const canonical = canonicalLanguage(tag);
  const primary = canonical.split('-')[0]!.toLowerCase();
  if (MULTI_LANGUAGES.has(primary)) {
    return model.startsWith('nova-3') ? { language: 'multi', hints: [primary, 'en'] } : { language: primary, hints: [] };
  }
  if (primary === 'en') {
    const region = canonical.split('-').find((p, i) => i > 0 && /^[A-Z]{2}$/.test(p));
    const variant = region ? `en-${region}` : 'en';
    return { language: NOVA3_ENGLISH.has(variant) ? variant : 'en', hints: [] };
  }
  return { language: canonical, hints: [] };
}

/**
 * The listen URL of one stream: `base` with the stream's query parameters (see the module doc).
 * Keyterms come from `options.hints.phrases` on nova-3 models (at most {@link MAX_KEYTERMS}).
 */
export function deepgramListenUrl(
  base: string,
  settings: { model: string; endpointingMs: number; utteranceEndMs: number },
  options: RecognitionOptions,
): string {
  const url = new URL(base);
  const { language, hints } = deepgramLanguage(options.language, settings.model);
  const q = url.searchParams;
  q.set('model', settings.model);
  q.set('language', language);
  for (const h of hints) q.append('language_hint', h);
  q.set('encoding', 'linear16');
  q.set('sample_rate', String(options.sampleRateHz));
  q.set('channels', '1');
  q.set('interim_results', 'true');
  q.set('endpointing', String(settings.endpointingMs));
  q.set('utterance_end_ms', String(settings.utteranceEndMs));
  q.set('vad_events', 'true');
  q.set('smart_format', 'true');
  q.set('punctuate', 'true');
  if (settings.model.startsWith('nova-3')) {
    let words = 0;
    let count = 0;
    for (const phrase of options.hints?.phrases ?? []) {
      const n = phrase.trim().split(/\s+/).length;
      if (count >= MAX_KEYTERMS || words + n > MAX_KEYTERM_WORDS) break;
      q.append('keyterm', phrase.trim());
      words += n;
      count++;
    }
  }
  return url.toString();
}

/**
 * The Deepgram recogniser (provider `deepgram`; partials; provider endpointing).
 * Construct it once per media worker; each {@link start} opens its own socket.
 */
export class DeepgramRecognizer implements SpeechRecognizer {
  readonly provider = DEEPGRAM_PROVIDER;
  readonly languages: readonly string[];
  readonly priceBasis: RecognizerPriceBasis = 'audio_second';
  readonly emitsPartials = true;
  readonly endpoints = true;
  /** Everything a stream needs but the key. */
  private readonly settings: StreamSettings;
  /** The key, in an ECMAScript private field: not enumerable, not shown by `util.inspect` or `JSON.stringify`. */
  readonly #apiKey: string;

  /**
   * @throws RangeError on an empty API key, a URL that is not `ws:`/`wss:`, or an option out of
   *         range (the message never holds the key)
   */
  constructor(options: DeepgramOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new RangeError('a Deepgram API key is required (DEEPGRAM_API_KEY)');
    const url = options.url ?? DEFAULT_DEEPGRAM_URL;
    checkWsUrl(url, 'Deepgram');
    const int = (name: string, v: number, lo: number, hi: number): number => {
      if (!Number.isInteger(v) || v < lo || v > hi)
        throw new RangeError(`${name} must be a whole number of ms from ${lo} to ${hi}; got ${v}`);
      return v;
    };
    this.#apiKey = options.apiKey.trim();
    this.settings = {
      url,
      model: options.model ?? DEFAULT_DEEPGRAM_MODEL,
      endpointingMs: int('endpointingMs', options.endpointingMs ?? 300, 10, 10_000),
      utteranceEndMs: int('utteranceEndMs', options.utteranceEndMs ?? 1000, 1000, 10_000),
      connectTimeoutMs: int('connectTimeoutMs', options.connectTimeoutMs ?? 3000, 1, 60_000),
      keepAliveMs: int('keepAliveMs', options.keepAliveMs ?? 5000, 100, 9000),
      clock: options.clock ?? systemClock,
    };
    this.languages = options.languages ?? ['*'];
    if (!Array.isArray(this.languages) || this.languages.length === 0)
      throw new RangeError('languages must list at least one language range');
  }

  /**
   * Opens a stream (and its socket). Connection trouble arrives as an `error` event.
   * @throws RangeError on malformed options (see `validateRecognitionOptions`)
   */
  start(options: RecognitionOptions): RecognitionStream {
    const checked = validateRecognitionOptions(options, this.languages);
    return new DeepgramStream(this.settings, this.#apiKey, checked);
  }
}

/** What a stream needs of its recogniser's options (all but the key). */
type StreamSettings = Required<Omit<DeepgramOptions, 'languages' | 'apiKey'>>;

/** A settled segment (`is_final` result) of the current socket. */
interface Segment {
  text: string;
  /** `alternatives[0].confidence`, or null when Deepgram sent none (or one outside 0..1). */
  confidence: number | null;
}

class DeepgramStream extends BaseRecognitionStream {
  private readonly clock: RecognizerClock;
  /** All audio pushed, as sent (little-endian PCM16). */
  private readonly audio: Buffer[] = [];
  private samples = 0;
  /** Socket generation: events of older sockets are ignored. */
  private gen = 0;
  /** The socket, in a private field: during the handshake its request holds the key. */
  #ws: WebSocket | null = null;
  readonly #apiKey: string;
  private open = false;
  private failures = 0;
  private segments: Segment[] = [];
  private interim = '';
  private lastPartial = '';
  private closeSent = false;
  private lastSentAt = 0;
  private readonly url: string;
  private stopConnectTimer: (() => void) | undefined;
  private stopKeepAlive: (() => void) | undefined;
  private stopRetry: (() => void) | undefined;

  constructor(
    private readonly settings: StreamSettings,
    apiKey: string,
    readonly options: Readonly<RecognitionOptions>,
  ) {
    super();
    this.#apiKey = apiKey;
    this.clock = settings.clock;
    this.url = deepgramListenUrl(settings.url, settings, options);
    this.connect();
  }

  /** Audio after a `failed` stream or an endpointed final (`done`) is ignored (it was in flight). */
  protected override readonly ignoreAudioIn: ReadonlySet<RecognitionState> = new Set(['failed', 'done']);

  protected accept(pcm: Int16Array): void {
    if (pcm.length === 0) return; // an empty frame makes Deepgram close the socket
    const bytes = Buffer.from(pcm.buffer.slice(pcm.byteOffset, pcm.byteOffset + pcm.byteLength));
    if (os.endianness() === 'BE') bytes.swap16();
    this.audio.push(bytes);
    this.samples += pcm.length;
    if (this.open) this.sendAudio(bytes);
  }

  protected onFinish(): void {
    if (this.open) this.sendFinish();
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.audio.length = 0;
    this.gen++;
    this.stopTimers();
    this.stopRetry?.();
    this.dispose(this.#ws, true);
    this.#ws = null;
  }

  // ── the socket ──────────────────────────────────────────────────────────

  private connect(): void {
    const gen = ++this.gen;
    this.open = false;
    this.segments = [];
    this.interim = '';
    this.closeSent = false;
    let ws: WebSocket;
    try {
      ws = new WebSocket(this.url, {
        headers: { Authorization: `Token ${this.#apiKey}` },
        perMessageDeflate: false,
        followRedirects: false,
      });
    } catch (err) {
      queueMicrotask(() =>
        this.fail(gen, {
          kind: 'unavailable',
          message: `cannot open a socket to Deepgram (${this.describe(err)})`,
          retry: false,
        }),
      );
      return;
    }
    this.#ws = ws;
    const stale = (): boolean => gen !== this.gen || this.terminal();
    this.stopConnectTimer = this.clock.setTimer(() => {
      if (!stale() && !this.open)
        this.fail(gen, {
          kind: 'timeout',
          message: `no answer from Deepgram within ${this.settings.connectTimeoutMs} ms`,
          retry: true,
        });
    }, this.settings.connectTimeoutMs);
    ws.on('unexpected-response', (_req, res) => {
      const status = res.statusCode ?? 0;
      const detail = typeof res.headers['dg-error'] === 'string' ? res.headers['dg-error'] : '';
      res.resume();
      if (!stale()) this.fail(gen, refusal(status, detail));
      else this.dispose(ws, false);
    });
    ws.on('open', () => {
      if (stale()) return this.dispose(ws, true);
      this.stopConnectTimer?.();
      this.open = true;
      this.lastSentAt = this.clock.now();
      for (const chunk of this.audio) this.sendAudio(chunk); // buffered before the socket opened, or the replay
      if (this.current === 'finishing') this.sendFinish();
      this.scheduleKeepAlive(gen);
    });
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (!stale() && !isBinary) this.onMessage(data);
    });
    ws.on('error', (err: Error) => {
      if (stale()) return;
      const code = (err as NodeJS.ErrnoException).code;
      this.fail(
        gen,
        this.open
          ? { kind: 'crashed', message: `the Deepgram socket failed (${this.describe(err)})`, retry: true }
          : {
              kind: 'unavailable',
              message: `cannot reach Deepgram at ${this.host()} (${code ?? this.describe(err)})`,
              retry: true,
            },
      );
    });
    ws.on('close', (code: number, reason: Buffer) => {
      if (stale()) return;
      this.open = false;
      this.stopTimers();
      if (this.closeSent && code === 1000) return this.deliverFinal(false); // CloseStream answered: flush complete
      const why = reason.length > 0 ? ` ${reason.toString('utf8').slice(0, 80)}` : '';
      this.fail(gen, {
        kind: 'crashed',
        message: `Deepgram closed the stream before the transcript (${code}${why})`,
        retry: true,
      });
    });
  }

  private onMessage(data: RawData): void {
    let msg: Record<string, unknown>;
    try {
      const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      const parsed: unknown = JSON.parse(text);
      if (typeof parsed !== 'object' || parsed === null) return;
      msg = parsed as Record<string, unknown>;
    } catch {
      return; // not JSON: nothing Deepgram sends; ignored
    }
    if (msg.type === 'Results') this.onResults(msg);
    else if (msg.type === 'UtteranceEnd') {
      if (this.current === 'open' && this.heardWords()) this.deliverFinal(true);
    } else if (msg.type === 'Metadata') {
      if (this.closeSent && this.current === 'finishing') this.deliverFinal(false);
    }
    // SpeechStarted: vagent's own VAD already opened this stream at the onset.
  }

  private onResults(msg: Record<string, unknown>): void {
    const channel = msg.channel as { alternatives?: Array<{ transcript?: unknown; confidence?: unknown }> } | undefined;
    const alt = channel?.alternatives?.[0];
    const transcript = typeof alt?.transcript === 'string' ? alt.transcript.trim() : '';
    const confidence = typeof alt?.confidence === 'number' && alt.confidence >= 0 && alt.confidence <= 1 ? alt.confidence : null;
    if (msg.is_final === true) {
      if (transcript !== '') this.segments.push({ text: transcript, confidence });
      this.interim = '';
      if (msg.from_finalize === true && this.current === 'finishing') return this.deliverFinal(false);
      if (msg.speech_final === true && this.current === 'open' && this.heardWords()) return this.deliverFinal(true);
    } else {
      this.interim = transcript;
    }
    const start = typeof msg.start === 'number' ? msg.start : 0;
    const duration = typeof msg.duration === 'number' ? msg.duration : 0;
    this.sendPartial(Math.min(this.ms(this.samples), Math.max(0, (start + duration) * 1000)));
  }

  private sendPartial(endMs: number): void {
    const text = [...this.segments.map((s) => s.text), this.interim].filter(Boolean).join(' ');
    if (text === '' || text === this.lastPartial) return;
    this.lastPartial = text;
    this.events.emit('partial', { text, startMs: 0, endMs });
  }

  private heardWords(): boolean {
    return this.segments.length > 0;
  }

  private deliverFinal(endOfUtterance: boolean): void {
    if (this.terminal()) return;
    const text = this.segments.map((s) => s.text).join(' ');
    // The mean of Deepgram's own confidences; null (no measure, none invented) if a segment came without one.
    const scores = this.segments.map((s) => s.confidence);
    const confidence = scores.length > 0 && scores.every((c) => c !== null) ? scores.reduce((n, c) => n + c!, 0) / scores.length : null;
    const endMs = this.ms(this.samples);
    const final: FinalTranscript = {
      text,
      confidence: text === '' ? 0 : confidence,
      startMs: 0,
      endMs,
      audioMs: endMs,
      ...(endOfUtterance ? { endOfUtterance: true } : {}),
    };
    this.current = 'done';
    this.audio.length = 0;
    this.stopTimers();
    this.finishSocket();
    this.events.emit('final', final);
  }

  /** Ends a socket after the final: `CloseStream` (Deepgram closes), or a plain close. */
  private finishSocket(): void {
    const ws = this.#ws;
    this.gen++;
    this.#ws = null;
    if (!ws) return;
    if (ws.readyState === WebSocket.OPEN) {
      if (!this.closeSent) ws.send(JSON.stringify({ type: 'CloseStream' }));
      const t = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
      t.unref();
      ws.once('close', () => clearTimeout(t));
    } else this.dispose(ws, true);
  }

  private fail(gen: number, failure: ConnectFailure): void {
    if (gen !== this.gen || this.terminal()) return;
    this.gen++;
    this.stopTimers();
    this.dispose(this.#ws, true);
    this.#ws = null;
    this.open = false;
    if (failure.retry && this.failures === 0) {
      this.failures++;
      if (failure.delayMs) this.stopRetry = this.clock.setTimer(() => !this.terminal() && this.connect(), failure.delayMs);
      else this.connect();
      return;
    }
    this.failures++;
    this.current = 'failed';
    this.audio.length = 0;
    // Defence in depth: no message is built from the key.
    const message = redactSecrets(failure.message, [this.#apiKey]);
    this.events.emit('error', new RecognizerError(failure.kind, DEEPGRAM_PROVIDER, message));
  }

  private sendAudio(bytes: Buffer): void {
    this.#ws?.send(bytes);
    this.lastSentAt = this.clock.now();
  }

  /** `Finalize` then `CloseStream` (see the module doc for why both). */
  private sendFinish(): void {
    if (!this.#ws || this.closeSent) return;
    this.#ws.send(JSON.stringify({ type: 'Finalize' }));
    this.#ws.send(JSON.stringify({ type: 'CloseStream' }));
    this.closeSent = true;
    this.lastSentAt = this.clock.now();
  }

  private scheduleKeepAlive(gen: number): void {
    const every = this.settings.keepAliveMs;
    const due = Math.max(1, this.lastSentAt + every - this.clock.now());
    this.stopKeepAlive = this.clock.setTimer(() => {
      if (gen !== this.gen || this.terminal() || !this.open || !this.#ws) return;
      if (this.clock.now() - this.lastSentAt >= every && !this.closeSent) {
        this.#ws.send(JSON.stringify({ type: 'KeepAlive' }));
        this.lastSentAt = this.clock.now();
      }
      this.scheduleKeepAlive(gen);
    }, due);
  }

  private stopTimers(): void {
    this.stopConnectTimer?.();
    this.stopConnectTimer = undefined;
    this.stopKeepAlive?.();
    this.stopKeepAlive = undefined;
  }

  /** Lets go of a socket whose events no longer matter. */
  private dispose(ws: WebSocket | null, close: boolean): void {
    if (!ws) return;
    ws.on('error', () => undefined);
    if (!close) return;
    try {
      if (ws.readyState === WebSocket.OPEN) ws.close(1000);
      else if (ws.readyState === WebSocket.CONNECTING) ws.terminate();
    } catch {
      // already closing
    }
  }

  private terminal(): boolean {
    return this.current === 'done' || this.current === 'failed' || this.current === 'cancelled';
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }

  private host(): string {
    try {
      return new URL(this.settings.url).host;
    } catch {
      return 'the configured URL';
    }
  }

  private describe(err: unknown): string {
    return err instanceof Error ? err.message : String(err);
  }
}

/** What a refused handshake means for the stream. */
function refusal(status: number, detail: string): ConnectFailure {
  const why = detail ? `: ${detail.slice(0, 160)}` : '';
  if (status === 401) return { kind: 'unavailable', message: 'Deepgram rejected the API key (401)', retry: false };
  if (status === 403)
    return {
      kind: 'unavailable',
      message: `Deepgram refused this API key access to the model or feature asked for (403)${why}`,
      retry: false,
    };
  if (status === 429) return { kind: 'unavailable', message: 'Deepgram is rate-limiting (429)', retry: true, delayMs: RATE_LIMIT_RETRY_MS };
  if (status === 400) return { kind: 'unavailable', message: `Deepgram refused the stream settings (400)${why}`, retry: false };
  if (status >= 500) return { kind: 'unavailable', message: `Deepgram is having trouble (HTTP ${status})`, retry: true };
  return { kind: 'unavailable', message: `Deepgram refused the connection (HTTP ${status})${why}`, retry: false };
}

/** The outcome of {@link checkDeepgram}. */
export type DeepgramCheck =
  { ok: true; detail: string } | { ok: false; problem: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error'; message: string };

/**
 * An authenticated handshake with Deepgram's streaming endpoint (for `vagent telephony check`):
 * opens a nova-3 linear16 socket, sends `CloseStream` and waits for the close. Bills no audio.
 * Never throws; messages are plain words and never hold the key.
 * @param opts.apiKey    the key to try
 * @param opts.url       the endpoint; default {@link DEFAULT_DEEPGRAM_URL}
 * @param opts.timeoutMs deadline of the whole check, ms; default 5000
 */
export async function checkDeepgram(opts: { apiKey: string; url?: string; timeoutMs?: number }): Promise<DeepgramCheck> {
  const timeoutMs = opts.timeoutMs ?? 5000;
  const key = typeof opts.apiKey === 'string' ? opts.apiKey.trim() : '';
  if (key === '') return { ok: false, problem: 'unauthenticated', message: 'no Deepgram API key is set (DEEPGRAM_API_KEY)' };
  let url: URL;
  try {
    url = checkWsUrl(opts.url ?? DEFAULT_DEEPGRAM_URL, 'Deepgram');
  } catch {
    return { ok: false, problem: 'error', message: 'the Deepgram URL must be a ws:// or wss:// URL' };
  }
  url.searchParams.set('model', DEFAULT_DEEPGRAM_MODEL);
  url.searchParams.set('encoding', 'linear16');
  url.searchParams.set('sample_rate', '16000');
  url.searchParams.set('channels', '1');
  const host = url.host;
  const outcome = await probeHandshake(url.toString(), { Authorization: `Token ${key}` }, timeoutMs, (ws) =>
    ws.send(JSON.stringify({ type: 'CloseStream' })),
  );
  const result = ((): DeepgramCheck => {
    switch (outcome.kind) {
      case 'open':
        return { ok: true, detail: `Deepgram at ${host} accepted the API key (${DEFAULT_DEEPGRAM_MODEL} streaming handshake)` };
      case 'timeout':
        return { ok: false, problem: 'unreachable', message: `Deepgram at ${host} did not answer within ${timeoutMs} ms` };
      case 'unreachable':
        return { ok: false, problem: 'unreachable', message: `cannot reach Deepgram at ${host} (${outcome.code})` };
      case 'refused': {
        const status = outcome.status;
        if (status === 401)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: 'Deepgram rejected the API key (401): check DEEPGRAM_API_KEY',
          };
        if (status === 403)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: `Deepgram refused this API key access to ${DEFAULT_DEEPGRAM_MODEL} streaming (403): check the key's project and permissions`,
          };
        if (status === 429)
          return {
            ok: false,
            problem: 'rate_limited',
            message: 'Deepgram is rate-limiting this key (429): try again shortly, or raise the project concurrency limit',
          };
        if (status >= 500)
          return { ok: false, problem: 'error', message: `Deepgram is having trouble (HTTP ${status}): try again shortly` };
        return { ok: false, problem: 'error', message: `Deepgram refused the handshake (HTTP ${status})` };
      }
    }
  })();
  if (!result.ok) result.message = redactSecrets(result.message, [key]);
  return result;
}
