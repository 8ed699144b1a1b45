/**
 * Typed client of the `/v1` API, used by the CLI and the TUI.
 *
 * It uses the platform's `fetch` (undici, built into Node) rather than importing the undici
 * package: the same HTTP stack, ~75 ms less start-up for every CLI command.
 */
import crypto from 'node:crypto';
import { DIAL_LIMITS, type CallSource } from '../domain/calls.js';
import type { ErrorCode } from '../domain/errors.js';
import type {
  Agent,
  AgentSummary,
  CallHangup,
  CallPlacement,
  CallStatus,
  CarrierList,
  CarrierView,
  ListResponse,
  NumberRecord,
  SessionDetail,
  SessionEndResult,
  SessionListItem,
  SessionOpened,
  Trunk,
  TurnResult,
} from '../domain/resources.js';

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

/** Options of {@link VagentClient}. */
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

export type {
  Agent,
  AgentAudioProgress,
  AgentSummary,
  CallHangup,
  CallPlacement,
  CallStatus,
  Clip,
  CostInr,
  DialStatus,
  LineOutcome,
  ListResponse,
  NumberRecord,
  SessionDetail,
  SessionEndResult,
  SessionListItem,
  SessionOpened,
  SessionSummary,
  SessionTotals,
  StepProgress,
  Trunk,
  TurnResult,
  TurnState,
  TurnTrace,
} from '../domain/resources.js';
export type { CallSource } from '../domain/calls.js';

/** Body of `POST /v1/sessions` (spec: Endpoints › Sessions). */
export interface OpenSessionBody {
  agent_id: string;
  /** Free JSON for prompt templates; `context.now` (ISO 8601) sets the reference time. */
  context?: Record<string, unknown>;
  customer_name?: string;
  /** E.164. */
  customer_phone?: string;
  title?: string;
}

/** Body of `POST /v1/sessions/{session_id}/turn`: the caller's text and optional STT telemetry. */
export interface TurnBody {
  /** Non-empty. */
  text: string;
  stt_confidence?: number;
  stt_provider?: string;
  /** Milliseconds, non-negative. */
  stt_ms?: number;
  /** Milliseconds, non-negative. */
  silence_ms?: number;
}

/** Body of `POST /v1/calls` (spec: Calls; DESIGN.md §7). Numbers are E.164; timers are whole seconds. */
export interface PlaceCallBody {
  /** An outbound agent, e.g. `ag_emi_reminder`. */
  agent_id: string;
  /** The number to call, E.164 (`+919876543210`). */
  to: string;
  /** Caller ID to present; must be one of the trunk's numbers when dialling. */
  from?: string;
  /** Free JSON for the agent's templates; `context.now` (ISO 8601) sets the reference time. */
  context?: Record<string, unknown>;
  title?: string;
  customer_name?: string;
  /** True: ring the phone through LiveKit SIP; otherwise the call is only prepared. */
  dial?: boolean;
  /** `tk_…`; may be left out when the tenant has exactly one trunk. */
  trunk_id?: string;
  ringing_timeout_s?: number;
  max_call_duration_s?: number;
}

/** Query of `GET /v1/sessions` (extension): newest first. */
export interface SessionListQuery {
  /** 1–100 (daemon default 20). */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

/** `GET /v1/health` response, as far as the CLI reads it. */
export interface HealthStatus {
  status: string;
  version: string;
  recognition?: {
    status: 'on' | 'off';
    provider: string | null;
    reason?: string;
    /** With `?language=`: the recogniser of that language, or null with why not and the settings that would serve it. */
    for_language?: { language: string; provider: string | null; fallback: string | null; reason?: string; fix?: string };
  };
}

/** Query of `GET /v1/calls` (extension): newest first. */
export interface CallListQuery {
  status?: 'in_progress' | 'completed';
  /** Only calls made by a phone line, or by `vagent call simulate`. */
  source?: CallSource;
  /** 1–100 (daemon default 20). */
  limit?: number;
  /** `next_cursor` of the previous page. */
  cursor?: string;
}

/** What `GET /v1/telephony/check` found wrong. */
export type TelephonyProblem = 'not_configured' | 'unauthenticated' | 'permission_denied' | 'unreachable' | 'error';

/** `GET /v1/telephony/check` response (DESIGN.md §7). */
export interface TelephonyCheckResult {
  ok: boolean;
  /** LiveKit URL the daemon uses, or null when none is configured. */
  url: string | null;
  /** Outbound SIP trunks registered in LiveKit (when ok). */
  outbound_trunks?: number;
  /** Round trip of the check request, milliseconds (when ok). */
  ms?: number;
  problem?: TelephonyProblem | string;
  message?: string;
  /** Media agent dispatched into call rooms, or null without telephony. */
  agent_name: string | null;
  /** LiveKit webhook events by outcome: since the daemon started, and recorded in the state dir. */
  events: { since_start: Record<string, number>; recorded: Record<string, number> };
  /** The caller's daily budget: null budget = none. `day` is `YYYY-MM-DD` in `timezone`. */
  budget: { budget_inr: number | null; spent_inr: number; day: string; timezone: string };
  /** Each configured cloud speech recogniser's handshake (absent from daemons before issue 17). */
  recognizers?: RecognizerCheck[];
}

/** One cloud speech recogniser's check in {@link TelephonyCheckResult}. */
export interface RecognizerCheck {
  /** `deepgram` or `sarvam`. */
  provider: string;
  /** Language ranges it hears (`*`: the default); empty when only its key is set. */
  used_for: string[];
  ok: boolean;
  /** What the provider answered (when ok). */
  detail?: string;
  /** `unauthenticated`, `rate_limited`, `unreachable` or `error` (when not ok). */
  problem?: 'unauthenticated' | 'rate_limited' | 'unreachable' | 'error' | string;
  /** The problem in plain words (when not ok). */
  message?: string;
  /** How long the handshake took, ms. */
  ms: number;
}

/**
 * Request options of the typed write methods, with an `Idempotency-Key` made up when none is
 * given: every write the CLI sends is then safe to retry.
 */
function withKey(options: RequestOptions = {}): RequestOptions {
  return { ...options, idempotencyKey: options.idempotencyKey ?? crypto.randomUUID() };
}

export type { CarrierList, CarrierView } from '../domain/resources.js';

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

/** Failures after which the request may or may not have reached the daemon. */
const TRANSIENT = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ETIMEDOUT', 'timed out']);
/** Failures a persistent write also retries: the request never left, so nothing can land twice. */
const TRANSIENT_OR_REFUSED = new Set([...TRANSIENT, 'connection refused']);

/**
 * Headroom over a dial's ringing time, in milliseconds: the daemon answers a dial once the
 * callee picks up or the ringing times out (+2 s, `livekit.wait_until_answered`), then writes.
 */
const DIAL_HEADROOM_MS = 15_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function describeCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'host not found';
  if (cause?.code) return cause.code;
  if ((err as Error).name === 'TimeoutError') return 'timed out';
  return cause?.message ?? (err as Error).message;
}

/** A small typed HTTP client for `/v1`. Every method throws {@link ApiResponseError} or {@link DaemonUnreachableError}. */
export class VagentClient {
  readonly url: string;
  private readonly apiKey: string | undefined;
  private readonly timeoutMs: number;
  private readonly retryDelaysMs: number[];
  private readonly inProgressWaitMs: number;

  constructor(options: ClientOptions) {
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
      const parsed = await this.parse(res);
      if (!res.ok) {
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
        throw new ApiResponseError(
          res.status,
          e?.code ?? `http_${res.status}`,
          e?.message ?? `HTTP ${res.status}`,
          e?.param,
          res.headers.get('x-request-id') ?? undefined,
        );
      }
      return { status: res.status, body: parsed as T, replayed: res.headers.get('idempotency-replayed') === 'true' };
    }
  }

  /** The JSON body of a response (undefined when empty). @throws ApiResponseError invalid_response for other text. */
  private async parse(res: Response): Promise<unknown> {
    const text = await res.text();
    try {
      return text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      throw new ApiResponseError(
        res.status,
        'invalid_response',
        `the server at ${this.url} did not answer with JSON (HTTP ${res.status}); is it a vagent daemon?`,
      );
    }
  }

  /**
   * `GET /v1/health` (no auth); with `language` (a BCP-47 tag), `recognition.for_language` says
   * what hears callers of that language (absent from a daemon without call audio).
   */
  async health(language?: string): Promise<HealthStatus> {
    return (
      await this.request<HealthStatus>('GET', `/v1/health${language === undefined ? '' : `?language=${encodeURIComponent(language)}`}`)
    ).body;
  }

  /** `POST /v1/trunks`. */
  async createTrunk(body: Record<string, unknown>, options?: RequestOptions): Promise<Trunk> {
    return (await this.request<Trunk>('POST', '/v1/trunks', body, withKey(options))).body;
  }
  /** `GET /v1/trunks`. */
  async listTrunks(): Promise<ListResponse<Trunk>> {
    return (await this.request<ListResponse<Trunk>>('GET', '/v1/trunks')).body;
  }
  /** `GET /v1/trunks/{trunk_id}`. */
  async getTrunk(id: string): Promise<Trunk> {
    return (await this.request<Trunk>('GET', `/v1/trunks/${encodeURIComponent(id)}`)).body;
  }
  /** `DELETE /v1/trunks/{trunk_id}`. */
  async deleteTrunk(id: string, options?: RequestOptions): Promise<{ id: string; deleted: true }> {
    return (
      await this.request<{ id: string; deleted: true }>('DELETE', `/v1/trunks/${encodeURIComponent(id)}`, undefined, withKey(options))
    ).body;
  }

  /** `POST /v1/numbers`. */
  async createNumber(body: Record<string, unknown>, options?: RequestOptions): Promise<NumberRecord> {
    return (await this.request<NumberRecord>('POST', '/v1/numbers', body, withKey(options))).body;
  }
  /** `GET /v1/numbers`. */
  async listNumbers(): Promise<ListResponse<NumberRecord>> {
    return (await this.request<ListResponse<NumberRecord>>('GET', '/v1/numbers')).body;
  }
  /** `POST /v1/numbers/{number}/bind` (the `+` is sent as `%2B`). */
  async bindNumber(number: string, agentId: string, options?: RequestOptions): Promise<NumberRecord> {
    return (
      await this.request<NumberRecord>('POST', `/v1/numbers/${encodeURIComponent(number)}/bind`, { agent_id: agentId }, withKey(options))
    ).body;
  }
  /** `DELETE /v1/numbers/{number}`. */
  async deleteNumber(number: string, options?: RequestOptions): Promise<{ number: string; deleted: true }> {
    return (
      await this.request<{ number: string; deleted: true }>(
        'DELETE',
        `/v1/numbers/${encodeURIComponent(number)}`,
        undefined,
        withKey(options),
      )
    ).body;
  }

  /** `PUT /v1/agents/{agent_id}`: creates or replaces an agent from its definition (DESIGN.md §6). */
  async applyAgent(id: string, definition: unknown, options?: RequestOptions): Promise<Agent> {
    return (await this.request<Agent>('PUT', `/v1/agents/${encodeURIComponent(id)}`, definition, withKey(options))).body;
  }
  /** `GET /v1/agents`, sorted by id. */
  async listAgents(): Promise<ListResponse<AgentSummary>> {
    return (await this.request<ListResponse<AgentSummary>>('GET', '/v1/agents')).body;
  }
  /** `GET /v1/agents/{agent_id}`. */
  async getAgent(id: string): Promise<Agent> {
    return (await this.request<Agent>('GET', `/v1/agents/${encodeURIComponent(id)}`)).body;
  }
  /** `DELETE /v1/agents/{agent_id}`. */
  async deleteAgent(id: string, options?: RequestOptions): Promise<{ id: string; deleted: true }> {
    return (
      await this.request<{ id: string; deleted: true }>('DELETE', `/v1/agents/${encodeURIComponent(id)}`, undefined, withKey(options))
    ).body;
  }

  /** `POST /v1/sessions`: opens a text session with an agent (spec: Endpoints › Sessions). */
  async openSession(body: OpenSessionBody, options?: RequestOptions): Promise<SessionOpened> {
    return (await this.request<SessionOpened>('POST', '/v1/sessions', body, withKey(options))).body;
  }
  /** `POST /v1/sessions/{session_id}/turn`: one caller utterance → the agent's reply. */
  async turn(sessionId: string, body: TurnBody, options?: RequestOptions): Promise<TurnResult> {
    return (await this.request<TurnResult>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/turn`, body, withKey(options))).body;
  }
  /** `POST /v1/sessions/{session_id}/end`: closes the session and returns its summary and cost. */
  async endSession(sessionId: string, options?: RequestOptions): Promise<SessionEndResult> {
    return (await this.request<SessionEndResult>('POST', `/v1/sessions/${encodeURIComponent(sessionId)}/end`, undefined, withKey(options)))
      .body;
  }
  /** `GET /v1/sessions` (extension): one page of the tenant's sessions, newest first. */
  async listSessions(query: SessionListQuery = {}): Promise<ListResponse<SessionListItem>> {
    const params = new URLSearchParams();
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    const qs = params.toString();
    return (await this.request<ListResponse<SessionListItem>>('GET', `/v1/sessions${qs ? `?${qs}` : ''}`)).body;
  }
  /** `GET /v1/sessions/{session_id}` (spec: Session detail; extension fields after the spec's). */
  async getSession(sessionId: string): Promise<SessionDetail> {
    return (await this.request<SessionDetail>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}`)).body;
  }

  /**
   * `POST /v1/calls`: prepares a call, or with `dial: true` places it (DESIGN.md §7).
   *
   * Always sent with an `Idempotency-Key` (`options.idempotencyKey`, or a random one), so the
   * daemon dials at most once per key: a failure in transit — refused, reset, timed out — is
   * retried with the same key and body, and an `idempotency_key_in_progress` answer to such a
   * retry is waited out until the first attempt's stored outcome is replayed. A dial may take
   * as long as its ringing, so its timeout and that wait cover `ringing_timeout_s` (default 30)
   * plus headroom when they are shorter.
   * @throws ApiResponseError e.g. telephony_not_configured, dial_failed, dial_outcome_unknown
   *   (never re-dialled under this key), caller_id_not_on_trunk, rate_limit_exceeded;
   *   DaemonUnreachableError when every attempt failed in transit.
   */
  async placeCall(body: PlaceCallBody, options?: RequestOptions): Promise<CallPlacement> {
    const opts: RequestOptions = { ...withKey(options), persistent: true };
    if (body.dial === true) {
      const dialMs = ((body.ringing_timeout_s ?? DIAL_LIMITS.ringing_timeout_s.default) + 2) * 1000 + DIAL_HEADROOM_MS;
      opts.timeoutMs ??= Math.max(this.timeoutMs, dialMs);
      opts.inProgressWaitMs ??= Math.max(this.inProgressWaitMs, dialMs);
    }
    return (await this.request<CallPlacement>('POST', '/v1/calls', body, opts)).body;
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
  /** `GET /v1/calls/{call_id}`: status, dial status and cost of a call. */
  async getCall(id: string): Promise<CallStatus> {
    return (await this.request<CallStatus>('GET', `/v1/calls/${encodeURIComponent(id)}`)).body;
  }
  /**
   * `POST /v1/calls/{call_id}/hangup` (extension): hangs up the call's line through LiveKit,
   * ends its session and completes it. Sent with an `Idempotency-Key` (`options.idempotencyKey`,
   * or a random one), so a retry in transit replays the first answer. `line` says what became
   * of the line: `hung_up`, `already_gone` or `not_dialled`.
   * @throws ApiResponseError session_not_found, not_found, hangup_failed (nothing changed),
   *   telephony_not_configured; DaemonUnreachableError.
   */
  async hangUpCall(id: string, options?: RequestOptions): Promise<CallHangup> {
    return (await this.request<CallHangup>('POST', `/v1/calls/${encodeURIComponent(id)}/hangup`, undefined, withKey(options))).body;
  }
  /** `GET /v1/calls` (extension): one page of calls, newest first. */
  async listCalls(query: CallListQuery = {}): Promise<ListResponse<CallStatus>> {
    const params = new URLSearchParams();
    if (query.status !== undefined) params.set('status', query.status);
    if (query.source !== undefined) params.set('source', query.source);
    if (query.limit !== undefined) params.set('limit', String(query.limit));
    if (query.cursor !== undefined) params.set('cursor', query.cursor);
    const qs = params.toString();
    return (await this.request<ListResponse<CallStatus>>('GET', `/v1/calls${qs ? `?${qs}` : ''}`)).body;
  }
  /** `PUT /v1/carriers/{dialect}`: stores the dialect's credentials (write-only). */
  async setCarrier(dialect: string, body: Record<string, unknown>, options?: RequestOptions): Promise<CarrierView> {
    return (await this.request<CarrierView>('PUT', `/v1/carriers/${encodeURIComponent(dialect)}`, body, withKey(options))).body;
  }
  /** `GET /v1/carriers`. */
  async listCarriers(): Promise<CarrierList> {
    return (await this.request<CarrierList>('GET', '/v1/carriers')).body;
  }
  /** `DELETE /v1/carriers/{dialect}`. */
  async deleteCarrier(dialect: string, options?: RequestOptions): Promise<{ dialect: string; deleted: true }> {
    return (
      await this.request<{ dialect: string; deleted: true }>(
        'DELETE',
        `/v1/carriers/${encodeURIComponent(dialect)}`,
        undefined,
        withKey(options),
      )
    ).body;
  }
  /**
   * `POST /v1/carriers/stream_token`: a new stream token (the old one stops working). Sent
   * without an Idempotency-Key, which the route refuses (a replay would have to keep the
   * token), so it is never retried after a failure in transit: run it again instead.
   */
  async rotateStreamToken(): Promise<{ stream_token: string; created_at: number }> {
    return (await this.request<{ stream_token: string; created_at: number }>('POST', '/v1/carriers/stream_token')).body;
  }

  /** `GET /v1/telephony/check`: one authenticated LiveKit request, webhook event counts and the caller's budget. */
  async telephonyCheck(): Promise<TelephonyCheckResult> {
    return (await this.request<TelephonyCheckResult>('GET', '/v1/telephony/check')).body;
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
