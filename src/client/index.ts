/**
 * Typed client of the `/v1` API, used by the CLI and the TUI: one method per endpoint, whose
 * bodies and answers are the contract's types (src/contract: `z.input` of a request schema,
 * `z.infer` of a response schema). It imports the contract for its types only, so no schema
 * (and no zod) loads with the CLI. The transport, retries and errors are in ./http.ts.
 */
import type {
  Agent,
  AgentDeleted,
  AgentSummary,
  BindNumberRequest,
  CallHangup,
  CallListQuery as CallListQuerySchema,
  CallPlacement,
  CallStatus,
  CarrierCredentialsRequest,
  CarrierDeleted,
  CarrierList,
  CarrierView,
  CreateNumberRequest,
  CreateTrunkRequest,
  EventView,
  HealthStatus,
  ListResponse,
  NumberDeleted,
  NumberRecord,
  OpenSessionRequest,
  PlaceCallRequest,
  SessionDetail,
  SessionEndResult,
  SessionListItem,
  SessionListQuery as SessionListQuerySchema,
  SessionOpened,
  StreamToken,
  TelephonyCheckResult,
  Trunk,
  TrunkDeleted,
  TurnRequest,
  TurnResult,
} from '../contract/index.js';
import type { z } from 'zod';
import { DIAL_LIMITS } from '../domain/calls.js';
import { listEvents, streamEvents, type EventListQuery, type EventPage, type StreamEventsOptions } from './events.js';
import { HttpTransport, withKey, type RequestOptions } from './http.js';

export type { EventListQuery, EventPage, StreamEventsOptions, StreamState } from './events.js';
export { WebhookClient } from './webhooks.js';
export {
  API_KEY_PATTERN,
  ApiResponseError,
  DaemonUnreachableError,
  HttpTransport,
  MALFORMED_API_KEY,
  MalformedApiKeyError,
  type ClientOptions,
  type RequestOptions,
} from './http.js';
export type {
  Agent,
  AgentAudioProgress,
  AgentDeleted,
  AgentSummary,
  CallHangup,
  CallPlacement,
  CallSource,
  CallStatus,
  CarrierCredentialsRequest,
  CarrierDeleted,
  CarrierList,
  CarrierView,
  Clip,
  CostInr,
  CreateNumberRequest,
  CreateTrunkRequest,
  DialStatus,
  EventView,
  HealthStatus,
  LineOutcome,
  ListResponse,
  NumberDeleted,
  NumberRecord,
  RecognizerCheck,
  SessionDetail,
  SessionEndResult,
  SessionListItem,
  SessionOpened,
  SessionSummary,
  SessionTotals,
  StepProgress,
  StreamToken,
  TelephonyCheckResult,
  Trunk,
  TrunkDeleted,
  TurnResult,
  TurnState,
  TurnTrace,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookTestResult,
} from '../contract/index.js';

/** Body of `POST /v1/sessions`, as sent (the contract's `OpenSessionBody`). */
export type OpenSessionBody = OpenSessionRequest;
/** Body of `POST /v1/sessions/{session_id}/turn`, as sent (the contract's `TurnBody`). */
export type TurnBody = TurnRequest;
/** Body of `POST /v1/calls`, as sent (the contract's `PlaceCallBody`). Numbers are E.164; timers are whole seconds. */
export type PlaceCallBody = PlaceCallRequest;
/** Query of `GET /v1/sessions`, newest first: any of the contract's validated fields (`limit` 1–100, daemon default 20; `cursor`). */
export type SessionListQuery = Partial<z.infer<typeof SessionListQuerySchema>>;
/** Query of `GET /v1/calls`, newest first: any of the contract's validated fields (`status`, `source`, `limit`, `cursor`). */
export type CallListQuery = Partial<z.infer<typeof CallListQuerySchema>>;

/**
 * Headroom over a dial's ringing time, in milliseconds: the daemon answers a dial once the
 * callee picks up or the ringing times out (+2 s, `livekit.wait_until_answered`), then writes.
 */
const DIAL_HEADROOM_MS = 15_000;

/** A small typed HTTP client for `/v1`. Every method throws `ApiResponseError` or `DaemonUnreachableError` (./http.ts). */
export class VagentClient extends HttpTransport {
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
  async createTrunk(body: CreateTrunkRequest, options?: RequestOptions): Promise<Trunk> {
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
  async deleteTrunk(id: string, options?: RequestOptions): Promise<TrunkDeleted> {
    return (await this.request<TrunkDeleted>('DELETE', `/v1/trunks/${encodeURIComponent(id)}`, undefined, withKey(options))).body;
  }

  /** `POST /v1/numbers`. */
  async createNumber(body: CreateNumberRequest, options?: RequestOptions): Promise<NumberRecord> {
    return (await this.request<NumberRecord>('POST', '/v1/numbers', body, withKey(options))).body;
  }
  /** `GET /v1/numbers`. */
  async listNumbers(): Promise<ListResponse<NumberRecord>> {
    return (await this.request<ListResponse<NumberRecord>>('GET', '/v1/numbers')).body;
  }
  /** `POST /v1/numbers/{number}/bind` (the `+` is sent as `%2B`). */
  async bindNumber(number: string, agentId: string, options?: RequestOptions): Promise<NumberRecord> {
    const body: BindNumberRequest = { agent_id: agentId };
    return (await this.request<NumberRecord>('POST', `/v1/numbers/${encodeURIComponent(number)}/bind`, body, withKey(options))).body;
  }
  /** `DELETE /v1/numbers/{number}`. */
  async deleteNumber(number: string, options?: RequestOptions): Promise<NumberDeleted> {
    return (await this.request<NumberDeleted>('DELETE', `/v1/numbers/${encodeURIComponent(number)}`, undefined, withKey(options))).body;
  }

  /** `PUT /v1/agents/{agent_id}`: creates or replaces an agent from its definition (docs/agents.md), sent as given. */
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
  async deleteAgent(id: string, options?: RequestOptions): Promise<AgentDeleted> {
    return (await this.request<AgentDeleted>('DELETE', `/v1/agents/${encodeURIComponent(id)}`, undefined, withKey(options))).body;
  }

  /** `POST /v1/sessions`: opens a text session with an agent. */
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
  /** `GET /v1/sessions/{session_id}`: the session detail (its own record in `session`). */
  async getSession(sessionId: string): Promise<SessionDetail> {
    return (await this.request<SessionDetail>('GET', `/v1/sessions/${encodeURIComponent(sessionId)}`)).body;
  }

  /**
   * `POST /v1/calls`: prepares a call, or with `dial: true` places it (docs/calls.md).
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
  async setCarrier(dialect: string, body: CarrierCredentialsRequest, options?: RequestOptions): Promise<CarrierView> {
    return (await this.request<CarrierView>('PUT', `/v1/carriers/${encodeURIComponent(dialect)}`, body, withKey(options))).body;
  }
  /** `GET /v1/carriers`. */
  async listCarriers(): Promise<CarrierList> {
    return (await this.request<CarrierList>('GET', '/v1/carriers')).body;
  }
  /** `DELETE /v1/carriers/{dialect}`. */
  async deleteCarrier(dialect: string, options?: RequestOptions): Promise<CarrierDeleted> {
    return (await this.request<CarrierDeleted>('DELETE', `/v1/carriers/${encodeURIComponent(dialect)}`, undefined, withKey(options))).body;
  }
  /**
   * `POST /v1/carriers/stream_token`: a new stream token (the old one stops working). Sent
   * without an Idempotency-Key, which the route refuses (a replay would have to keep the
   * token), so it is never retried after a failure in transit: run it again instead.
   */
  async rotateStreamToken(): Promise<StreamToken> {
    return (await this.request<StreamToken>('POST', '/v1/carriers/stream_token')).body;
  }

  /** `GET /v1/telephony/check`: one authenticated LiveKit request, webhook event counts and the caller's budget. */
  async telephonyCheck(): Promise<TelephonyCheckResult> {
    return (await this.request<TelephonyCheckResult>('GET', '/v1/telephony/check')).body;
  }

  /** `GET /v1/events`: one page of the tenant's events, oldest first (docs/events.md). See ./events.ts. */
  async listEvents(query: EventListQuery = {}): Promise<EventPage> {
    return listEvents(this, query);
  }
  /**
   * `GET /v1/events` as Server-Sent Events: the tenant's events as they happen, resumed with
   * `Last-Event-ID` after a dropped connection, none yielded twice. See ./events.ts `streamEvents`.
   */
  streamEvents(options: StreamEventsOptions = {}): AsyncGenerator<EventView> {
    return streamEvents(this, options);
  }
}
