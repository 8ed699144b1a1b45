/**
 * The transport of the `/v1` client: one JSON request over the platform's `fetch`, with the
 * retries that cannot do anything twice, and the errors every client method throws.
 *
 * It uses the platform's `fetch` (undici, built into Node) rather than importing the undici
 * package: the same HTTP stack, ~75 ms less start-up for every CLI command.
 */
import crypto from 'node:crypto';
import type { ErrorCode } from '../domain/errors.js';

/** An error response from the daemon (`{error: {code, message, param?}}`). */
export class ApiResponseError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode | string,
    message: string,
    readonly param?: string,
    readonly requestId?: string,
  ) {
    super(message);
    this.name = 'ApiResponseError';
  }
}

/** The daemon could not be reached (refused, DNS, timeout, reset). */
export class DaemonUnreachableError extends Error {
  constructor(
    readonly url: string,
    readonly reason: string,
  ) {
    super(
      `cannot reach the vagent daemon at ${url} (${reason}); is \`vagent serve\` running there? ` +
        'Set the address with --url or VAGENT_URL.',
    );
    this.name = 'DaemonUnreachableError';
  }
}

/**
 * An API key is one line of printable ASCII without spaces (`vk_…`): what an HTTP header
 * value may hold (RFC 9110 §5.5) as a bearer token (RFC 6750 §2.1). A key with a control
 * character, a space or a line break — a pasted JSON object, two lines — can only be a mistake,
 * and `fetch` would refuse the header with an error quoting it whole.
 */
export const API_KEY_PATTERN = /^[\x21-\x7e]+$/;

/** What a malformed API key is told; it never quotes the key. */
export const MALFORMED_API_KEY = 'the API key is malformed (it must be a single line of printable characters: vk_…)';

/** The client was given an API key that is not {@link API_KEY_PATTERN}; its message never holds the key. */
export class MalformedApiKeyError extends Error {
  constructor() {
    super(MALFORMED_API_KEY);
    this.name = 'MalformedApiKeyError';
  }
}

/** Options of {@link HttpTransport} (and so of the client). */
export interface ClientOptions {
  /** Base URL of the daemon, e.g. `http://127.0.0.1:8787`. */
  url: string;
  /** API key (`vk_…`); omitted for unauthenticated endpoints. */
  apiKey?: string | undefined;
  /** Per-request timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
  /**
   * Waits before each retry of a request that failed in transit (reset, timeout), in
   * milliseconds (default `[250, 1000]`: up to two retries). Only idempotent requests are
   * retried: GETs, and writes carrying an `Idempotency-Key` — the daemon replays a write that
   * did land, so a retry never creates twice.
   */
  retryDelaysMs?: number[];
  /**
   * Call placement only: after a retry, how long to keep waiting while the daemon answers
   * `409 idempotency_key_in_progress` (an earlier attempt of ours still holds the key, e.g. a
   * dial LiveKit has not answered yet), in milliseconds (default 30 000; the daemon's own
   * LiveKit request timeout is 10 s by default).
   */
  inProgressWaitMs?: number;
}

/** Request options for one call. */
export interface RequestOptions {
  idempotencyKey?: string;
  /**
   * A write that must get through (call placement; needs `idempotencyKey`): a refused
   * connection is retried too (a daemon restarting), and after a retry, `409
   * idempotency_key_in_progress` — our own earlier attempt still running — is waited out.
   */
  persistent?: boolean;
  /** This request's timeout in milliseconds (default {@link ClientOptions.timeoutMs}). */
  timeoutMs?: number;
  /** This request's wait for an in-progress key (default {@link ClientOptions.inProgressWaitMs}). */
  inProgressWaitMs?: number;
}

/**
 * Request options of the typed write methods, with an `Idempotency-Key` made up when none is
 * given: every write the CLI sends is then safe to retry.
 */
export function withKey(options: RequestOptions = {}): RequestOptions {
  return { ...options, idempotencyKey: options.idempotencyKey ?? crypto.randomUUID() };
}

/** Failures after which the request may or may not have reached the daemon. */
const TRANSIENT = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT', 'timed out']);
/** Failures a persistent write also retries: the request never left, so nothing can land twice. */
const TRANSIENT_OR_REFUSED = new Set([...TRANSIENT, 'connection refused']);

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Why a `fetch` failed, in a few words (`connection refused`, `ECONNRESET`, `timed out` …). */
export function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'host not found';
  if (cause?.code) return cause.code;
  if ((err as Error).name === 'TimeoutError') return 'timed out';
  return cause?.message ?? (err as Error).message;
}

/**
 * The error a non-2xx answer stands for. The daemon always answers an error with the contract's
 * error body (`{error: {code, message, param?}}`); an answer without one (an empty 404, a
 * proxy's 502 page parsed as nothing) comes from something else at that address, and is said so.
 * @param parsed the answer's JSON body, or undefined when it had none
 * @param url the daemon address, for the message
 */
export function apiErrorOf(res: Response, parsed: unknown, url: string): ApiResponseError {
  const e = (parsed as { error?: { code?: unknown; message?: unknown; param?: unknown } } | undefined)?.error;
  const requestId = res.headers.get('x-request-id') ?? undefined;
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string' || typeof e.message !== 'string')
    return new ApiResponseError(
      res.status,
      'invalid_response',
      `the server at ${url} answered HTTP ${res.status} without a vagent error; is it a vagent daemon?`,
      undefined,
      requestId,
    );
  return new ApiResponseError(res.status, e.code, e.message, typeof e.param === 'string' ? e.param : undefined, requestId);
}

/**
 * One daemon's `/v1` over HTTP: {@link HttpTransport.request} and the URLs and headers of its
 * WebSocket and audio endpoints. Every method throws {@link ApiResponseError} or
 * {@link DaemonUnreachableError}.
 */
export class HttpTransport {
  readonly url: string;
  private readonly apiKey: string | undefined;
  protected readonly timeoutMs: number;
  private readonly retryDelaysMs: number[];
  protected readonly inProgressWaitMs: number;

  /** @throws MalformedApiKeyError for an API key that is not {@link API_KEY_PATTERN} */
  constructor(options: ClientOptions) {
    if (options.apiKey !== undefined && options.apiKey !== '' && !API_KEY_PATTERN.test(options.apiKey)) throw new MalformedApiKeyError();
    this.url = options.url.replace(/\/+$/, '');
    this.apiKey = options.apiKey;
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryDelaysMs = options.retryDelaysMs ?? [250, 1000];
    this.inProgressWaitMs = options.inProgressWaitMs ?? 30_000;
  }

  /**
   * Sends one request and parses the JSON reply. Requests that failed in transit are retried
   * (see {@link ClientOptions.retryDelaysMs}) when that cannot do anything twice: GETs, and
   * writes with an `Idempotency-Key`, each retry carrying the same key and body.
   * @param path Path under the base URL, starting with `/v1/`.
   * @throws ApiResponseError for an error answer; DaemonUnreachableError when no answer came.
   */
  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: RequestOptions = {},
  ): Promise<{ status: number; body: T; replayed: boolean }> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
    const retryable = method === 'GET' || options.idempotencyKey !== undefined;
    const persistent = options.persistent === true && options.idempotencyKey !== undefined;
    const transient = persistent ? TRANSIENT_OR_REFUSED : TRANSIENT;
    let inProgressUntil: number | undefined;
    for (let attempt = 0, waits = 0; ;) {
      let res: Response;
      try {
        res = await fetch(this.url + path, {
          method,
          headers,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          redirect: 'error',
          signal: AbortSignal.timeout(options.timeoutMs ?? this.timeoutMs),
        });
      } catch (err) {
        const reason = describeCause(err);
        const delay = this.retryDelaysMs[attempt];
        if (!retryable || delay === undefined || !transient.has(reason)) throw new DaemonUnreachableError(this.url, reason);
        attempt++;
        await sleep(delay);
        continue;
      }
      const parsed = await jsonBodyOf(res, this.url);
      if (!res.ok) {
        // Any server may answer here: the contract's error body (ErrorSchema), read defensively.
        const e = (parsed as { error?: { code?: string; message?: string; param?: string } } | undefined)?.error;
        // Our earlier attempt (whose answer was lost) still holds the key: wait for its outcome,
        // which the daemon then replays, rather than report a conflict with ourselves.
        if (persistent && attempt > 0 && res.status === 409 && e?.code === 'idempotency_key_in_progress') {
          inProgressUntil ??= Date.now() + (options.inProgressWaitMs ?? this.inProgressWaitMs);
          if (Date.now() < inProgressUntil) {
            await sleep(Math.min(250 * 2 ** waits++, 2000, Math.max(0, inProgressUntil - Date.now())));
            continue;
          }
        }
        throw apiErrorOf(res, parsed, this.url);
      }
      return { status: res.status, body: parsed as T, replayed: res.headers.get('idempotency-replayed') === 'true' };
    }
  }

  /**
   * The WebSocket URL of the daemon's carrier media endpoint for `dialect`
   * (`GET /v1/media/{twilio,exotel,plivo}`): the base URL with `http` → `ws`, `https` → `wss`,
   * and `query` (e.g. `{ tenant: 'acme' }`) appended.
   */
  mediaStreamUrl(dialect: string, query: Record<string, string> = {}): string {
    const u = new URL(`${this.url}/v1/media/${encodeURIComponent(dialect)}`);
    u.protocol = u.protocol === 'https:' ? 'wss:' : 'ws:';
    for (const [k, v] of Object.entries(query)) u.searchParams.set(k, v);
    return u.toString();
  }
  /** The headers that authenticate a WebSocket upgrade as this client (`Authorization: Bearer …`); never logged. */
  upgradeHeaders(): Record<string, string> {
    return this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {};
  }
  /**
   * Downloads a call's recording (`GET /v1/calls/{call_id}/recording`, with the API key; docs/media.md "Recordings").
   * @returns the response body bytes (a WAV file).
   * @throws ApiResponseError not_found when the call has none (or is not this tenant's), session_not_found for a
   *   malformed id; DaemonUnreachableError when it cannot be fetched.
   */
  async downloadRecording(callId: string): Promise<Uint8Array> {
    const target = `${this.url}/v1/calls/${encodeURIComponent(callId)}/recording`;
    let res: Response;
    try {
      res = await fetch(target, { headers: this.upgradeHeaders(), redirect: 'error', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new DaemonUnreachableError(target, describeCause(err));
    }
    if (!res.ok) throw await errorOfResponse(res, this.url);
    return new Uint8Array(await res.arrayBuffer());
  }
  /**
   * Downloads a clip's audio (`GET /v1/audio/{name}.wav`, a capability URL: no API key is
   * sent). A relative `url` is resolved against the daemon's address.
   * @returns the response body bytes (a WAV file).
   * @throws ApiResponseError on a non-2xx answer; DaemonUnreachableError when it cannot be fetched.
   */
  async downloadAudio(url: string): Promise<Uint8Array> {
    const target = new URL(url, `${this.url}/`).toString();
    let res: Response;
    try {
      res = await fetch(target, { redirect: 'error', signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (err) {
      throw new DaemonUnreachableError(target, describeCause(err));
    }
    if (!res.ok) throw new ApiResponseError(res.status, `http_${res.status}`, `audio download failed (HTTP ${res.status})`);
    return new Uint8Array(await res.arrayBuffer());
  }
}

/**
 * The JSON body of a response from the server at `url` (undefined when empty).
 * @throws ApiResponseError invalid_response for other text.
 */
async function jsonBodyOf(res: Response, url: string): Promise<unknown> {
  const text = await res.text();
  try {
    return text.length > 0 ? JSON.parse(text) : undefined;
  } catch {
    throw new ApiResponseError(
      res.status,
      'invalid_response',
      `the server at ${url} did not answer with JSON (HTTP ${res.status}); is it a vagent daemon?`,
    );
  }
}

/** The error a non-2xx answer of the server at `url` stands for: its body's `{error}` ({@link apiErrorOf}), or invalid_response when it is not JSON. */
export async function errorOfResponse(res: Response, url: string): Promise<ApiResponseError> {
  let parsed: unknown;
  try {
    parsed = await jsonBodyOf(res, url);
  } catch (err) {
    if (err instanceof ApiResponseError) return err;
    parsed = undefined; // the body could not be read: the status alone says what went wrong
  }
  return apiErrorOf(res, parsed, url);
}
