/**
 * Deepgram's streaming wire protocol, the parts that are plain data: the endpoint and defaults,
 * how an agent's language becomes Deepgram's `language`/`language_hint`, the listen URL of a
 * stream, and what a refused handshake means. The socket and its state are in
 * ./deepgram-stream.ts; the recogniser in ./deepgram.ts.
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
 */
import { canonicalLanguage, type RecognitionOptions } from '../../media/recognizer.js';
import type { ConnectFailure } from './cloud-socket.js';

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

/** What a refused handshake means for the stream. */
export function deepgramRefusal(status: number, detail: string): ConnectFailure {
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
