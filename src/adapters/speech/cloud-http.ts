/**
 * What the cloud voices (./sarvam.ts, ./elevenlabs.ts) share: {@link CloudSynthesizer}, the
 * skeleton of a provider's synthesiser (its API key, base URL, voice-id check, close), and its
 * HTTP request — a POST under a time limit, whose failures become {@link SpeechError}s a turn can
 * fall back on (docs/architecture.md "Speech and the audio cache"). Error messages name the
 * provider, the host, the HTTP status and the provider's error *code* (an identifier) — never
 * the API key, the text, or the provider's free-text message (a validation error may echo the
 * text back).
 */
import {
  DEFAULT_SYNTHESIS_TIMEOUT_MS,
  SpeechError,
  type SpeechSynthesizer,
  type SynthesizedAudio,
  type SynthesizeOptions,
} from './types.js';
import { parseCloudVoiceId, type CloudVoiceProvider, type CloudVoiceRef } from '../../domain/voice.js';
import { decodeWavMono16 } from '../../media/wav.js';

/** Largest answer accepted, bytes (a minute of 48 kHz PCM16 is 5.8 MB; base64 adds a third). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** A request of {@link postForAudio}. */
interface AudioRequest {
  /** The provider's name in messages (`Sarvam`, `ElevenLabs`). */
  provider: string;
  url: string;
  /** Request headers, the API key among them (never shown). */
  headers: Record<string, string>;
  /** The JSON body. */
  body: unknown;
  /** Time limit of the whole exchange (headers and body), ms. */
  timeoutMs: number;
  /** Aborted when the synthesiser closes. */
  closed: AbortSignal;
  /** Reads the provider's error code out of an error answer's JSON (or undefined). */
  errorCode: (json: unknown) => unknown;
}

/** A successful answer: its body and content type. */
interface AudioAnswer {
  body: Buffer;
  contentType: string;
}

const CODE_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/** What a cloud voice tells {@link CloudSynthesizer} about its provider. */
export interface CloudVoiceSetup {
  /** The pricing key and the first part of the provider's voice ids (`sarvam`, `elevenlabs`). */
  provider: CloudVoiceProvider;
  /** The provider's name in messages (`Sarvam`, `ElevenLabs`). */
  label: string;
  /** The API key; a secret, never shown. */
  apiKey: string;
  /** The request header that carries the key. */
  keyHeader: string;
  /** Base URL of the API (trailing slashes are dropped). */
  baseUrl: string;
  /** Reads the provider's error code out of an error answer's JSON (or undefined). */
  errorCode: (json: unknown) => unknown;
}

/**
 * A cloud voice: one HTTPS request per clip. A provider's class says how to ask
 * ({@link CloudSynthesizer.post}) and how to read the answer; the key, the base URL, the voice-id
 * check and closing are kept here.
 */
export abstract class CloudSynthesizer implements SpeechSynthesizer {
  readonly provider: CloudVoiceProvider;
  /** The provider's name in messages. */
  protected readonly label: string;
  /** Base URL of the API, without a trailing slash. */
  protected readonly base: string;
  readonly #apiKey: string;
  readonly #keyHeader: string;
  readonly #errorCode: (json: unknown) => unknown;
  private readonly closing = new AbortController();

  /** @param setup the provider, its key and base URL; see {@link CloudVoiceSetup} */
  constructor(setup: CloudVoiceSetup) {
    this.provider = setup.provider;
    this.label = setup.label;
    this.base = setup.baseUrl.replace(/\/+$/, '');
    this.#apiKey = setup.apiKey;
    this.#keyHeader = setup.keyHeader;
    this.#errorCode = setup.errorCode;
  }

  abstract voiceFor(language: string): string;
  abstract synthesize(text: string, voice: string, opts?: SynthesizeOptions): Promise<SynthesizedAudio>;

  /**
   * `voice` parsed (`<provider>/<model>/<voice>/<language>`, docs/agents.md "Voice").
   * @throws SpeechError 'failed' (`bad_voice`) when it is not a voice id of this provider
   */
  protected voiceRef(voice: string): CloudVoiceRef {
    const ref = parseCloudVoiceId(voice);
    if (ref?.provider !== this.provider) {
      throw new SpeechError(`not ${/^[AEIOU]/i.test(this.label) ? 'an' : 'a'} ${this.label} voice`, 'failed', 'bad_voice');
    }
    return ref;
  }

  /**
   * POSTs `body` as JSON to `url` with the key in its header, within `opts.timeoutMs` (default
   * {@link DEFAULT_SYNTHESIS_TIMEOUT_MS}).
   * @throws SpeechError as {@link postForAudio}; 'unavailable' (`closed`) once closed
   */
  protected async post(url: string, body: unknown, accept: string, opts: SynthesizeOptions): Promise<AudioAnswer> {
    if (this.closing.signal.aborted) throw new SpeechError(`the ${this.label} voice is closed`, 'unavailable', 'closed');
    return postForAudio({
      provider: this.label,
      url,
      headers: { [this.#keyHeader]: this.#apiKey, accept },
      body,
      timeoutMs: opts.timeoutMs ?? DEFAULT_SYNTHESIS_TIMEOUT_MS,
      closed: this.closing.signal,
      errorCode: this.#errorCode,
    });
  }

  /**
   * The mono PCM16 samples of a WAV answer (`decodeWavMono16`).
   * @throws SpeechError 'failed' (`bad_audio`) when it is not a readable WAV
   */
  protected decodeWav(wav: Buffer): SynthesizedAudio {
    try {
      return decodeWavMono16(wav);
    } catch (err) {
      throw this.badWav((err as Error).message);
    }
  }

  /** The error of an answer whose WAV cannot be used, for `why`. */
  protected badWav(why: string): SpeechError {
    const whose = this.label.endsWith('s') ? `${this.label}'` : `${this.label}'s`;
    return new SpeechError(`${whose} audio is not a readable WAV: ${why}`, 'failed', 'bad_audio');
  }

  /** Aborts requests under way (they reject with 'unavailable'); later calls reject too. Idempotent. */
  async close(): Promise<void> {
    this.closing.abort();
  }
}

/**
 * POSTs `req.body` as JSON and reads the whole answer within `req.timeoutMs`.
 *
 * @throws SpeechError 'timeout' (detail `timeout`), 'unavailable' (closed; or `unreachable`:
 *         no connection), 'failed' (`http_<status>` for a 4xx/5xx answer, `bad_audio` for an
 *         answer over {@link MAX_ANSWER_BYTES})
 */
async function postForAudio(req: AudioRequest): Promise<AudioAnswer> {
  const host = hostOf(req.url);
  const what = `${req.provider} text-to-speech at ${host}`;
  const signal = AbortSignal.any([AbortSignal.timeout(req.timeoutMs), req.closed]);
  try {
    const res = await fetch(req.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...req.headers },
      body: JSON.stringify(req.body),
      signal,
      redirect: 'error',
    });
    const declared = Number(res.headers.get('content-length') ?? 0);
    if (declared > MAX_ANSWER_BYTES) {
      await res.body?.cancel().catch(() => undefined);
      throw new SpeechError(`${what} answered more than ${MAX_ANSWER_BYTES} bytes`, 'failed', 'bad_audio');
    }
    const body = Buffer.from(await res.arrayBuffer());
    if (!res.ok) {
      const code = errorCodeOf(body, req.errorCode);
      throw new SpeechError(`${what} answered HTTP ${res.status}${code ? ` (${code})` : ''}`, 'failed', `http_${res.status}`);
    }
    if (body.length > MAX_ANSWER_BYTES)
      throw new SpeechError(`${what} answered more than ${MAX_ANSWER_BYTES} bytes`, 'failed', 'bad_audio');
    return { body, contentType: (res.headers.get('content-type') ?? '').toLowerCase() };
  } catch (err) {
    if (err instanceof SpeechError) throw err;
    if (req.closed.aborted) throw new SpeechError(`the ${req.provider} voice is closed`, 'unavailable', 'closed');
    if (signal.aborted) throw new SpeechError(`${what} did not answer within ${req.timeoutMs} ms`, 'timeout', 'timeout');
    const cause = (err as { cause?: { code?: unknown } }).cause?.code;
    const code = typeof cause === 'string' && CODE_RE.test(cause) ? ` (${cause})` : '';
    throw new SpeechError(`cannot reach ${what}${code}`, 'unavailable', 'unreachable');
  }
}

/** `host:port` of `url`, or `(bad URL)`. */
function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '(bad URL)';
  }
}

/** The provider's error code in an error answer, when it is a plain identifier. */
function errorCodeOf(body: Buffer, pick: (json: unknown) => unknown): string | undefined {
  try {
    const code = pick(JSON.parse(body.toString('utf8')));
    return typeof code === 'string' && CODE_RE.test(code) ? code : undefined;
  } catch {
    return undefined;
  }
}
