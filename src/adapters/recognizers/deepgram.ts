/**
 * Deepgram streaming speech recognition (nova-3 over WebSocket) behind the
 * {@link SpeechRecognizer} port (docs/media.md): the recogniser, its options and their checks.
 * The wire protocol is in ./deepgram-protocol.ts, a stream's socket and state in
 * ./deepgram-stream.ts, the `vagent telephony check` handshake in ./deepgram-check.ts.
 */
import { checkWsUrl } from './cloud-socket.js';
import { DEEPGRAM_PROVIDER, DEFAULT_DEEPGRAM_MODEL, DEFAULT_DEEPGRAM_URL } from './deepgram-protocol.js';
import { DeepgramStream, type DeepgramStreamSettings } from './deepgram-stream.js';
import { systemClock } from '../../media/playout.js';
import {
  validateRecognitionOptions,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../../media/recognizer.js';

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
  private readonly settings: DeepgramStreamSettings;
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
