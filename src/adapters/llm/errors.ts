/**
 * Every failure of the `openai` client as a {@link LanguageModelError} (src/app/language-model.ts):
 * the kind the turn falls back on, and a message that names the endpoint's host, the HTTP status
 * and the provider's own words — with the API key, and anything shaped like a bearer token,
 * taken out.
 */
import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { LanguageModelError } from '../../app/language-model.js';

/** The longest part of a provider's error message kept in ours, characters. */
const PROVIDER_MESSAGE_MAX = 200;

/**
 * `text` with `secret` (when set) and bearer-token-like words replaced by `[redacted]`, cut to
 * {@link PROVIDER_MESSAGE_MAX} characters.
 */
export function scrub(text: string, secret: string | null): string {
  let out = text;
  if (secret) out = out.split(secret).join('[redacted]');
  out = out.replace(/\b(Bearer|Token)\s+\S+/gi, '$1 [redacted]').replace(/\b(sk|gsk|sk-proj)-[\w-]{8,}/g, '[redacted]');
  return out.length > PROVIDER_MESSAGE_MAX ? `${out.slice(0, PROVIDER_MESSAGE_MAX)}…` : out;
}

/** The error code of a failed connection (`ECONNREFUSED`, `UND_ERR_SOCKET` …), found along `cause`. */
function codeOf(err: unknown): string | null {
  let e: unknown = err;
  for (let i = 0; i < 5 && e && typeof e === 'object'; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}

/** What the context of a failure is: the endpoint's host, and how many retries were allowed. */
export interface FailureContext {
  host: string;
  maxRetries: number;
  /** The API key, to scrub from the provider's words (null: none sent). */
  secret: string | null;
}

/**
 * The {@link LanguageModelError} of `err`, thrown by the `openai` client or while reading its
 * stream. Already-mapped errors pass through.
 */
export function toLanguageModelError(err: unknown, ctx: FailureContext): LanguageModelError {
  if (err instanceof LanguageModelError) return err;
  const at = `the model endpoint ${ctx.host}`;
  if (err instanceof APIUserAbortError) return new LanguageModelError('aborted', `request to ${at} aborted`);
  if (err instanceof APIConnectionTimeoutError) return new LanguageModelError('timeout', `${at} did not answer in time`);
  if (err instanceof APIConnectionError) {
    const code = codeOf(err.cause);
    return new LanguageModelError('network', `cannot reach ${at}${code ? ` (${code})` : ''}`);
  }
  if (err instanceof APIError) {
    const status = typeof err.status === 'number' ? err.status : null;
    const body = err.error as { message?: unknown } | undefined;
    const words = scrub(typeof body?.message === 'string' ? body.message : err.message, ctx.secret);
    const retried = ctx.maxRetries > 0 ? `, after up to ${ctx.maxRetries} retries` : '';
    if (status === null) return new LanguageModelError('server_error', `${at} reported an error in its stream: ${words}`);
    if (status === 429) return new LanguageModelError('rate_limited', `${at} answered HTTP 429 (rate limited${retried}): ${words}`, 429);
    if (status >= 500)
      return new LanguageModelError(
        'server_error',
        `${at} answered HTTP ${status}${retried ? ` (${retried.slice(2)})` : ''}: ${words}`,
        status,
      );
    return new LanguageModelError('refused', `${at} refused the request with HTTP ${status}: ${words}`, status);
  }
  if (err instanceof SyntaxError) return new LanguageModelError('malformed', `${at} sent a body that is not JSON`);
  // Reading a response body whose connection broke: undici's `TypeError: terminated` and kin.
  const code = codeOf(err);
  if (err instanceof TypeError || code !== null) {
    return new LanguageModelError('network', `the connection to ${at} broke${code ? ` (${code})` : ''}`);
  }
  return new LanguageModelError('malformed', `${at}: unexpected failure (${scrub(String(err), ctx.secret)})`);
}
