/**
 * Sarvam AI streaming speech-to-text behind the {@link SpeechRecognizer} port (docs/media.md,
 * "Cloud speech recognition": saaras streaming, `language-code` per agent, `mode=codemix` for
 * Hinglish, 16 kHz PCM, `flush`, `end_of_stream`, START_SPEECH/END_SPEECH signals): the
 * recogniser, its options and their checks. The wire protocol is in ./sarvam-protocol.ts, a
 * stream's socket and state in ./sarvam-stream.ts, the `vagent telephony check` handshake in
 * ./sarvam-check.ts.
 */
import { checkWsUrl } from './cloud-socket.js';
import {
  SARVAM_CONNECT_TIMEOUT_MS,
  SARVAM_DEFAULT_MODE,
  SARVAM_DEFAULT_MODEL,
  SARVAM_DEFAULT_URL,
  SARVAM_LANGUAGES,
  streamUrl,
} from './sarvam-protocol.js';
import { SarvamStream } from './sarvam-stream.js';
import { SAMPLE_RATES } from '../../media/audio-resample.js';
import { systemClock } from '../../media/playout.js';
import {
  languageMatches,
  validateRecognitionOptions,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../../media/recognizer.js';

/** Options of a {@link SarvamRecognizer}. */
export interface SarvamOptions {
  /** The API subscription key (`SARVAM_API_KEY`); sent only in the `Api-Subscription-Key` header. */
  apiKey: string;
  /** The streaming endpoint, `ws:` or `wss:`; default {@link SARVAM_DEFAULT_URL}. */
  url?: string;
  /** Model; default {@link SARVAM_DEFAULT_MODEL}. */
  model?: string;
  /** Output mode for saaras models (transcribe, translate, verbatim, translit, codemix); default `codemix`. Not sent for other models. */
  mode?: string;
  /** Handshake deadline, ms (> 0); default 3000. */
  connectTimeoutMs?: number;
  /** Clock for the handshake deadline and retry delay; default the system clock. */
  clock?: RecognizerClock;
  /** Language tags served, in Sarvam's spelling; default {@link SARVAM_LANGUAGES}. */
  languages?: readonly string[];
}

/** The Sarvam streaming recogniser: one WebSocket per stream; any number of concurrent streams. */
export class SarvamRecognizer implements SpeechRecognizer {
  readonly provider = 'sarvam';
  readonly languages: readonly string[];
  readonly priceBasis: RecognizerPriceBasis = 'audio_second';
  readonly emitsPartials = false;
  readonly endpoints = true;
  /** @internal */ readonly config: Readonly<Required<Omit<SarvamOptions, 'languages'>>>;

  /** @throws RangeError on an empty key, a URL that is not ws:/wss:, a bad timeout or an empty language list */
  constructor(options: SarvamOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey.trim() === '')
      throw new RangeError('Sarvam needs an API subscription key (set SARVAM_API_KEY)');
    const url = options.url ?? SARVAM_DEFAULT_URL;
    checkWsUrl(url, 'Sarvam');
    const connectTimeoutMs = options.connectTimeoutMs ?? SARVAM_CONNECT_TIMEOUT_MS;
    if (!(Number.isFinite(connectTimeoutMs) && connectTimeoutMs > 0))
      throw new RangeError(`connectTimeoutMs must be a positive number of ms; got ${connectTimeoutMs}`);
    this.languages = options.languages ?? SARVAM_LANGUAGES;
    if (!Array.isArray(this.languages) || this.languages.length === 0) throw new RangeError('languages must list at least one language');
    this.config = {
      apiKey: options.apiKey,
      url,
      model: options.model ?? SARVAM_DEFAULT_MODEL,
      mode: options.mode ?? SARVAM_DEFAULT_MODE,
      connectTimeoutMs,
      clock: options.clock ?? systemClock,
    };
  }

  /**
   * Opens a stream (its socket connects at once).
   * @throws RangeError on malformed options, a language not served, or a sample rate the media
   *         core's resampler does not take (8000, 16000, 22050, 24000, 48000 Hz)
   */
  start(options: RecognitionOptions): RecognitionStream {
    const checked = validateRecognitionOptions(options, this.languages);
    if (!(SAMPLE_RATES as readonly number[]).includes(checked.sampleRateHz)) {
      throw new RangeError(
        `sampleRateHz must be one of ${SAMPLE_RATES.join(', ')} for Sarvam (audio is resampled to 16000); got ${checked.sampleRateHz}`,
      );
    }
    const code = this.languages.find((l) => languageMatches(l, checked.language)) ?? checked.language;
    return new SarvamStream(
      this,
      checked,
      streamUrl(this.config.url, { language: code, model: this.config.model, mode: this.config.mode }),
    );
  }
}
