/**
 * Sarvam AI streaming speech-to-text behind the {@link SpeechRecognizer} port (issue 17, "Cloud
 * speech recognition": saaras streaming, `language-code` per agent, `mode=codemix` for Hinglish,
 * 16 kHz PCM, `flush`, `end_of_stream`, START_SPEECH/END_SPEECH signals).
 *
 * Wire protocol (the legacy-named "Streaming API", `GET /speech-to-text/ws`), as read from the
 * official JS SDK `sarvamai` 1.1.10 on npm — `dist/cjs/api/resources/speechToTextStreaming/client/
 * Client.js` (query parameters, header), `…/client/Socket.js` (`transcribe`, `flush`),
 * `dist/cjs/api/types/{AudioData,SttFlushSignal,SpeechToTextStreamingResponse,
 * SpeechToTextTranscriptionData,EventsData,ErrorData,ResponseType}.d.ts` (message shapes) — and
 * the docs https://docs.sarvam.ai/api-reference-docs/speech-to-text/transcribe/ws and
 * https://docs.sarvam.ai/api-reference-docs/api-guides-tutorials/speech-to-text/streaming-api:
 * - Handshake: `wss://api.sarvam.ai/speech-to-text/ws?language-code=hi-IN&model=saaras:v3&mode=codemix
 *   &sample_rate=16000&input_audio_codec=pcm_s16le&high_vad_sensitivity=true&vad_signals=true
 *   &flush_signal=true` with the header `Api-Subscription-Key: <key>` (the key is never put in
 *   the URL). Authentication failures are HTTP 403 `invalid_api_key_error`; 429 is
 *   `rate_limit_exceeded_error`/`insufficient_quota_error`
 *   (https://docs.sarvam.ai/api-reference-docs/errors-troubleshooting). 401 is treated like 403.
 * - Client → server (JSON text frames): `{"audio":{"data":<base64 PCM16LE>,"sample_rate":16000,
 *   "encoding":"audio/wav"}}` (the SDK types `sample_rate` as a number and `encoding` as the
 *   literal `"audio/wav"`, raw PCM being declared by `input_audio_codec`; the brief's string
 *   `"16000"` was not followed); `{"type":"flush"}` (SttFlushSignal); and, when done with the
 *   socket, `{"type":"end_of_stream","audio":{"data":"",…}}` — not in the JS SDK; its shape is the
 *   one LiveKit's Sarvam plugin sends (livekit/agents-js `plugins/sarvam/src/stt.ts`: "end_of_stream
 *   includes an empty audio field to avoid 'audio must not be None' rejection").
 * - Server → client: `{"type":"data","data":{"request_id","transcript","language_code",
 *   "language_probability","metrics":{"audio_duration","processing_latency"}}}`,
 *   `{"type":"events","data":{"signal_type":"START_SPEECH"|"END_SPEECH","occured_at"}}` (with
 *   `vad_signals=true`) and `{"type":"error","data":{"error"|"message","code"}}`. The server sends
 *   no interim transcripts on this endpoint (docs: "Interim results: None; only a final transcript
 *   per utterance"), so {@link SarvamRecognizer.emitsPartials} is false. A transcript follows its
 *   END_SPEECH (sarvamai/skills `test-sarvam-voice/tests/fixtures/protocol-events.json`).
 * - Model and mode: the SDK lists `saaras:v3` (default) and `saaras:v4` for this endpoint, `mode`
 *   one of transcribe, translate, verbatim, translit, codemix, "only applicable" to saaras models;
 *   `saarika:v2.5` is legacy (no `mode`). Default here: `saaras:v3` with `mode=codemix` (English
 *   words in Latin script, Indic words in their own script: what Hinglish callers say).
 *
 * One WebSocket per utterance ({@link RecognitionStream}): opened at `start()`, audio pushed
 * before it opens is kept and sent on open, in chunks of {@link CHUNK_MS} ms. The stream ends in
 * one of two ways, whichever comes first:
 * - Sarvam's own endpointing: an END_SPEECH (or a transcript) before `finish()` → the final, marked
 *   `endOfUtterance`, is the transcript that follows; audio pushed after END_SPEECH is not sent.
 * - vagent's VAD: `finish()` sends `flush`; the final is the transcript that answers it (joined with
 *   any transcript of an END_SPEECH still in flight: one final per stream). Sarvam's answer to a
 *   flush with nothing buffered is not documented; vagent's `withTimeout` guards it.
 * Then the socket gets `end_of_stream` and is closed.
 *
 * Failures: the socket dropping (or erroring) before the final, a 5xx or 429 handshake, or no
 * handshake within `connectTimeoutMs`, earn one reconnect, which replays all of this utterance's
 * audio so far; a second failure is the stream's `error`. 401/403 (and other 4xx) fail at once as
 * `unavailable`. The API key never appears in an error message.
 */
import WebSocket from 'ws';
import { redactSecrets } from '../../domain/redact.js';
import { checkWsUrl, probeHandshake, type ConnectFailure } from './cloud-socket.js';
import { SAMPLE_RATES, StreamingResampler } from '../audio.js';
import { systemClock } from '../playout.js';
import {
  BaseRecognitionStream,
  languageMatches,
  RecognizerError,
  validateRecognitionOptions,
  type FinalTranscript,
  type RecognitionOptions,
  type RecognitionStream,
  type RecognizerClock,
  type RecognizerPriceBasis,
  type SpeechRecognizer,
} from '../recognizer.js';

/** Sarvam's streaming endpoint (SDK `SarvamAIEnvironment.Production.production` + `/speech-to-text/ws`). */
export const SARVAM_DEFAULT_URL = 'wss://api.sarvam.ai/speech-to-text/ws';
/** Default model: `saaras:v3`, the SDK's default for this endpoint. */
export const SARVAM_DEFAULT_MODEL = 'saaras:v3';
/** Default mode for saaras models: code-mixed output for Hinglish. */
export const SARVAM_DEFAULT_MODE = 'codemix';
/**
 * Languages served by default: the eleven of saarika:v2.5 and the Sarvam docs' core list (SDK
 * `SpeechToTextStreamingLanguageCode` lists more for saaras:v3; pass `languages` to use them).
 * Sarvam spells Odia `od-IN`.
 */
export const SARVAM_LANGUAGES = [
  'hi-IN',
  'bn-IN',
  'ta-IN',
  'te-IN',
  'kn-IN',
  'ml-IN',
  'mr-IN',
  'gu-IN',
  'pa-IN',
  'od-IN',
  'en-IN',
] as const;
/** The rate audio is sent at, Hz (docs: "PCM files are supported only at 16kHz"). */
export const SARVAM_SAMPLE_RATE = 16000;
/** Audio per message, ms (the Sarvam skill's advice: chunks of 100–500 ms). */
export const CHUNK_MS = 100;
/** Default wait for the handshake, ms. */
export const SARVAM_CONNECT_TIMEOUT_MS = 3000;
/** Wait before retrying a handshake answered 429, ms. */
const RATE_LIMIT_RETRY_MS = 250;
/** Connection attempts per stream: the first and one reconnect. */
const MAX_ATTEMPTS = 2;

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

/**
 * The handshake URL of one stream: `url` with the query parameters of the SDK's
 * `SpeechToTextStreamingClient.connect` (`mode` only for saaras models).
 */
export function streamUrl(url: string, p: { language: string; model: string; mode?: string }): string {
  const u = new URL(url);
  u.searchParams.set('language-code', p.language);
  u.searchParams.set('model', p.model);
  if (p.mode && p.model.startsWith('saaras')) u.searchParams.set('mode', p.mode);
  u.searchParams.set('sample_rate', String(SARVAM_SAMPLE_RATE));
  u.searchParams.set('input_audio_codec', 'pcm_s16le');
  u.searchParams.set('high_vad_sensitivity', 'true');
  u.searchParams.set('vad_signals', 'true');
  u.searchParams.set('flush_signal', 'true');
  return u.toString();
}

class SarvamStream extends BaseRecognitionStream {
  private settled = false;
  private readonly resampler: StreamingResampler | null;
  /** All 16 kHz audio of this utterance that is to go to Sarvam (replayed on reconnect). */
  private readonly audio: Int16Array[] = [];
  /** Samples of `audio` already sent on the current socket. */
  private sentSamples = 0;
  /** 16 kHz samples in `audio`. */
  private totalSamples = 0;
  /** Input samples pushed (at `options.sampleRateHz`). */
  private pushed = 0;
  private ws: WebSocket | undefined;
  private open = false;
  private attempts = 0;
  private stopTimer: (() => void) | undefined;
  /** Transcripts received on the current socket. */
  private segments: string[] = [];
  private endSpeeches = 0;
  private flushSent = false;
  /** Stream ms at Sarvam's END_SPEECH (it endpointed), else undefined. */
  private endpointedAtMs: number | undefined;

  constructor(
    private readonly owner: SarvamRecognizer,
    readonly options: Readonly<RecognitionOptions>,
    private readonly url: string,
  ) {
    super();
    this.resampler = options.sampleRateHz === SARVAM_SAMPLE_RATE ? null : new StreamingResampler(options.sampleRateHz, SARVAM_SAMPLE_RATE);
    this.connect();
  }

  protected accept(pcm: Int16Array): void {
    this.pushed += pcm.length;
    if (this.endpointedAtMs !== undefined) return; // Sarvam has ended the utterance: later audio is not part of it
    this.append(this.resampler ? this.resampler.push(pcm) : pcm);
    this.sendAudio(false);
  }

  protected onFinish(): void {
    if (this.endpointedAtMs !== undefined) return; // the transcript of Sarvam's END_SPEECH is on its way
    if (this.resampler) this.append(this.resampler.flush());
    this.sendAudio(true);
    this.sendFlush();
  }

  cancel(): void {
    if (this.current === 'cancelled' || this.current === 'done') return;
    this.current = 'cancelled';
    this.settled = true;
    this.drop();
  }

  private append(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.audio.push(pcm);
    this.totalSamples += pcm.length;
  }

  /** Sends what has not been sent on this socket, in {@link CHUNK_MS} chunks (the remainder too when `all`). */
  private sendAudio(all: boolean): void {
    const ws = this.ws;
    if (!ws || !this.open) return;
    const chunk = (SARVAM_SAMPLE_RATE * CHUNK_MS) / 1000;
    while (this.totalSamples - this.sentSamples >= chunk || (all && this.totalSamples > this.sentSamples)) {
      const n = Math.min(chunk, this.totalSamples - this.sentSamples);
      const data = Buffer.from(this.slice(this.sentSamples, n).buffer).toString('base64');
      ws.send(JSON.stringify({ audio: { data, sample_rate: SARVAM_SAMPLE_RATE, encoding: 'audio/wav' } }));
      this.sentSamples += n;
    }
  }

  /** `n` samples of the utterance's audio from sample `from`, little-endian (the hosts are). */
  private slice(from: number, n: number): Int16Array {
    const out = new Int16Array(n);
    let at = 0;
    let offset = 0;
    for (const part of this.audio) {
      const end = offset + part.length;
      if (end > from && at < n) {
        const start = Math.max(0, from + at - offset);
        const take = Math.min(part.length - start, n - at);
        out.set(part.subarray(start, start + take), at);
        at += take;
      }
      offset = end;
      if (at >= n) break;
    }
    return out;
  }

  private sendFlush(): void {
    if (!this.ws || !this.open || this.flushSent) return;
    this.flushSent = true;
    this.ws.send(JSON.stringify({ type: 'flush' }));
  }

  private connect(): void {
    this.attempts++;
    this.open = false;
    this.sentSamples = 0;
    this.segments = [];
    this.endSpeeches = 0;
    this.flushSent = false;
    const { apiKey, connectTimeoutMs, clock } = this.owner.config;
    const ws = new WebSocket(this.url, { headers: { 'Api-Subscription-Key': apiKey } });
    this.ws = ws;
    this.stopTimer = clock.setTimer(() => {
      this.stopTimer = undefined;
      if (this.ws === ws && !this.open)
        this.failed({
          kind: 'unavailable',
          message: `no answer from Sarvam within ${connectTimeoutMs} ms of connecting`,
          retry: true,
        });
    }, connectTimeoutMs);
    ws.on('unexpected-response', (req, res) => {
      req.destroy();
      if (this.ws === ws) this.failed(handshakeFailure(res.statusCode ?? 0));
    });
    ws.on('open', () => {
      if (this.ws !== ws) return;
      this.open = true;
      this.stopTimer?.();
      this.stopTimer = undefined;
      // After finish(), or a reconnect once Sarvam had endpointed: all the audio, then flush.
      const last = this.current === 'finishing' || this.endpointedAtMs !== undefined;
      this.sendAudio(last);
      if (last) this.sendFlush();
    });
    ws.on('message', (raw, isBinary) => {
      if (this.ws === ws) this.onMessage(isBinary ? '' : raw.toString());
    });
    ws.on('error', (err: NodeJS.ErrnoException) => {
      if (this.ws !== ws) return;
      const message = this.open
        ? 'the connection to Sarvam failed mid-utterance'
        : `cannot reach Sarvam at ${new URL(this.url).host}${err.code ? ` (${err.code})` : ''}`;
      this.failed({ kind: this.open ? 'crashed' : 'unavailable', message, retry: true });
    });
    ws.on('close', (code) => {
      if (this.ws !== ws) return;
      if (code === 1000 && this.flushSent) {
        this.finalize(this.endpointedAtMs !== undefined); // Sarvam closed after answering everything it had
        return;
      }
      this.failed({
        kind: 'crashed',
        message: `the connection to Sarvam dropped mid-utterance (close code ${code})`,
        retry: true,
      });
    });
  }

  private onMessage(text: string): void {
    if (this.settled) return;
    let msg: { type?: unknown; data?: Record<string, unknown> };
    try {
      msg = JSON.parse(text) as typeof msg;
    } catch {
      this.failed({ kind: 'crashed', message: 'Sarvam sent a message that is not JSON', retry: true });
      return;
    }
    const data = msg.data && typeof msg.data === 'object' ? msg.data : {};
    if (msg.type === 'events') {
      if (data.signal_type === 'END_SPEECH') {
        this.endSpeeches++;
        if (this.current === 'open' && this.endpointedAtMs === undefined) this.endpointedAtMs = this.ms(this.pushed);
      }
    } else if (msg.type === 'data') {
      this.segments.push(typeof data.transcript === 'string' ? data.transcript.trim() : '');
      if (this.current === 'open') {
        this.endpointedAtMs ??= this.ms(this.pushed); // a transcript without END_SPEECH: Sarvam endpointed all the same
        this.finalize(true);
      } else if (this.endpointedAtMs !== undefined) {
        this.finalize(true);
      } else if (this.flushSent && this.segments.length >= this.endSpeeches + 1) {
        this.finalize(false);
      }
    } else if (msg.type === 'error') {
      const what = typeof data.error === 'string' ? data.error : typeof data.message === 'string' ? data.message : 'no message';
      const code = typeof data.code === 'string' || typeof data.code === 'number' ? ` [${data.code}]` : '';
      this.failed({ kind: 'crashed', message: `Sarvam reported an error${code}: ${what.slice(0, 160)}`, retry: true });
    }
  }

  /** Handles the failure of the current connection: one reconnect, else the stream's error. */
  private failed(f: ConnectFailure): void {
    if (this.settled) return;
    this.drop();
    if (f.retry && this.attempts < MAX_ATTEMPTS) {
      if (f.delayMs) {
        this.stopTimer = this.owner.config.clock.setTimer(() => {
          this.stopTimer = undefined;
          if (!this.settled) this.connect();
        }, f.delayMs);
      } else {
        this.connect();
      }
      return;
    }
    this.settled = true;
    this.current = 'failed';
    const message = redactSecrets(`${f.message}${this.attempts > 1 ? ' (after one reconnect)' : ''}`, [this.owner.config.apiKey]);
    setImmediate(() => {
      if (this.current === 'failed') this.events.emit('error', new RecognizerError(f.kind, this.owner.provider, message));
    });
  }

  private finalize(endOfUtterance: boolean): void {
    if (this.settled) return;
    this.settled = true;
    const ws = this.ws;
    this.ws = undefined;
    this.stopTimer?.();
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(JSON.stringify({ type: 'end_of_stream', audio: { data: '', sample_rate: SARVAM_SAMPLE_RATE, encoding: 'audio/wav' } }));
      ws.close(1000);
    }
    const text = this.segments.filter((s) => s !== '').join(' ');
    const endMs = endOfUtterance ? (this.endpointedAtMs ?? this.ms(this.pushed)) : this.ms(this.pushed);
    // Sarvam sends no confidence for the words (`language_probability` is about the language, and
    // null when `language-code` is given): a transcript's is null, never a made-up number.
    const final: FinalTranscript = { text, confidence: text ? null : 0, startMs: 0, endMs, audioMs: endMs };
    if (endOfUtterance) final.endOfUtterance = true;
    setImmediate(() => {
      if (this.current === 'cancelled') return; // cancel() came first: nothing after it
      this.current = 'done';
      this.events.emit('final', final);
    });
  }

  /** Forgets the current socket and closes it at once. */
  private drop(): void {
    this.stopTimer?.();
    this.stopTimer = undefined;
    const ws = this.ws;
    this.ws = undefined;
    this.open = false;
    if (ws) {
      ws.on('error', () => undefined); // late errors of an abandoned socket
      ws.terminate();
    }
  }

  private ms(samples: number): number {
    return (samples / this.options.sampleRateHz) * 1000;
  }
}

/** What a refused handshake means (https://docs.sarvam.ai/api-reference-docs/errors-troubleshooting). */
function handshakeFailure(status: number): ConnectFailure {
  if (status === 401 || status === 403)
    return {
      kind: 'unavailable',
      message: `Sarvam rejected the API subscription key (${status}); check SARVAM_API_KEY`,
      retry: false,
    };
  if (status === 429)
    return {
      kind: 'unavailable',
      message: 'Sarvam is rate limiting this API key or its credits are used up (429)',
      retry: true,
      delayMs: RATE_LIMIT_RETRY_MS,
    };
  if (status >= 500) return { kind: 'unavailable', message: `Sarvam could not take the stream (HTTP ${status})`, retry: true };
  return {
    kind: 'unavailable',
    message: `Sarvam refused the stream (HTTP ${status}); check the model, mode and language settings`,
    retry: false,
  };
}

/** The outcome of {@link checkSarvam}. */
export type SarvamCheck =
  { ok: true; detail: string } | { ok: false; problem: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error'; message: string };

/**
 * Checks that Sarvam accepts `apiKey`: one authenticated WebSocket handshake to the streaming
 * endpoint (en-IN, the default model), closed at once with `end_of_stream` — no audio is sent.
 * For `vagent telephony check`. Never throws; the key never appears in the result.
 * @param opts.url       endpoint; default {@link SARVAM_DEFAULT_URL}
 * @param opts.timeoutMs handshake deadline, ms; default 5000
 * @returns `ok` with a one-line detail, or the problem in plain words: `unauthenticated` (401/403),
 *          `rate_limited` (429), `unreachable` (no connection, or no answer in time), `error` (anything else)
 */
export async function checkSarvam(opts: { apiKey: string; url?: string; timeoutMs?: number }): Promise<SarvamCheck> {
  const url = opts.url ?? SARVAM_DEFAULT_URL;
  try {
    checkWsUrl(url, 'Sarvam');
  } catch (err) {
    return { ok: false, problem: 'error', message: (err as Error).message };
  }
  if (typeof opts.apiKey !== 'string' || opts.apiKey.trim() === '')
    return { ok: false, problem: 'unauthenticated', message: 'no Sarvam API subscription key is set (SARVAM_API_KEY)' };
  const host = new URL(url).host;
  const timeoutMs = opts.timeoutMs ?? 5000;
  const outcome = await probeHandshake(
    streamUrl(url, { language: 'en-IN', model: SARVAM_DEFAULT_MODEL, mode: SARVAM_DEFAULT_MODE }),
    { 'Api-Subscription-Key': opts.apiKey },
    timeoutMs,
    (ws) => ws.send(JSON.stringify({ type: 'end_of_stream', audio: { data: '', sample_rate: SARVAM_SAMPLE_RATE, encoding: 'audio/wav' } })),
  );
  const result = ((): SarvamCheck => {
    switch (outcome.kind) {
      case 'open':
        return {
          ok: true,
          detail: `Sarvam at ${host} accepted the API subscription key (streaming speech-to-text, ${SARVAM_DEFAULT_MODEL})`,
        };
      case 'timeout':
        return { ok: false, problem: 'unreachable', message: `Sarvam at ${host} did not answer within ${timeoutMs} ms` };
      case 'unreachable':
        return { ok: false, problem: 'unreachable', message: `cannot reach Sarvam at ${host} (${outcome.code})` };
      case 'refused': {
        const status = outcome.status;
        if (status === 401 || status === 403)
          return {
            ok: false,
            problem: 'unauthenticated',
            message: `Sarvam rejected the API subscription key (${status}); check SARVAM_API_KEY`,
          };
        if (status === 429)
          return {
            ok: false,
            problem: 'rate_limited',
            message: 'Sarvam is rate limiting this API key or its credits are used up (429); try again later or check the plan',
          };
        return { ok: false, problem: 'error', message: `Sarvam answered the handshake with HTTP ${status}` };
      }
    }
  })();
  if (!result.ok) return { ...result, message: redactSecrets(result.message, [opts.apiKey]) };
  return result;
}
