/**
 * One HTTP request of a cloud voice (./sarvam.ts, ./elevenlabs.ts): a POST under a time limit,
 * whose failures become {@link SpeechError}s a turn can fall back on (docs/architecture.md
 * "Speech and the audio cache"). Error messages name the provider, the host, the HTTP status
 * and the provider's error *code* (an identifier) — never the API key, the text, or the
 * provider's free-text message (a validation error may echo the text back).
 */
import { SpeechError } from './types.js';

/** Largest answer accepted, bytes (a minute of 48 kHz PCM16 is 5.8 MB; base64 adds a third). */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

/** A request of {@link postForAudio}. */
export interface AudioRequest {
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
export interface AudioAnswer {
  body: Buffer;
  contentType: string;
}

const CODE_RE = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * POSTs `req.body` as JSON and reads the whole answer within `req.timeoutMs`.
 *
 * @throws SpeechError 'timeout' (detail `timeout`), 'unavailable' (closed; or `unreachable`:
 *         no connection), 'failed' (`http_<status>` for a 4xx/5xx answer, `bad_audio` for an
 *         answer over {@link MAX_ANSWER_BYTES})
 */
export async function postForAudio(req: AudioRequest): Promise<AudioAnswer> {
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
