/**
 * The `/v1/webhook_endpoints` calls of the typed client (docs/events.md "Webhooks"), over a
 * {@link HttpTransport}: `new WebhookClient(client).create({url})`.
 */
import type {
  CreateWebhookEndpointRequest,
  ListResponse,
  ReplayEventRequest,
  ReplayRequest,
  ReplayResult,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEndpointDeleted,
  WebhookSecretRotated,
  WebhookTestResult,
} from '../contract/index.js';
import { withKey, type HttpTransport, type RequestOptions } from './http.js';

const path = (id: string, tail = '') => `/v1/webhook_endpoints/${encodeURIComponent(id)}${tail}`;

/** Webhook endpoint calls. Each throws `ApiResponseError` or `DaemonUnreachableError` (./http.ts). */
export class WebhookClient {
  constructor(private readonly http: HttpTransport) {}

  /** `POST /v1/webhook_endpoints`: the answer holds the signing secret, shown this once. */
  async create(body: CreateWebhookEndpointRequest, options?: RequestOptions): Promise<WebhookEndpointCreated> {
    return (await this.http.request<WebhookEndpointCreated>('POST', '/v1/webhook_endpoints', body, withKey(options))).body;
  }
  /** `GET /v1/webhook_endpoints`. */
  async list(): Promise<ListResponse<WebhookEndpoint>> {
    return (await this.http.request<ListResponse<WebhookEndpoint>>('GET', '/v1/webhook_endpoints')).body;
  }
  /** `GET /v1/webhook_endpoints/{id}`. */
  async get(id: string): Promise<WebhookEndpoint> {
    return (await this.http.request<WebhookEndpoint>('GET', path(id))).body;
  }
  /** `DELETE /v1/webhook_endpoints/{id}`. */
  async delete(id: string, options?: RequestOptions): Promise<WebhookEndpointDeleted> {
    return (await this.http.request<WebhookEndpointDeleted>('DELETE', path(id), undefined, withKey(options))).body;
  }
  /** `POST /v1/webhook_endpoints/{id}/rotate_secret`. */
  async rotateSecret(id: string, options?: RequestOptions): Promise<WebhookSecretRotated> {
    return (await this.http.request<WebhookSecretRotated>('POST', path(id, '/rotate_secret'), undefined, withKey(options))).body;
  }
  /** `POST /v1/webhook_endpoints/{id}/test`: a signed `webhook.test` delivery, and what the receiver answered. */
  async test(id: string, options?: RequestOptions): Promise<WebhookTestResult> {
    return (await this.http.request<WebhookTestResult>('POST', path(id, '/test'), undefined, withKey(options))).body;
  }
  /** `POST /v1/webhook_replays`: the events of the last `since` seconds, queued again. */
  async replay(body: ReplayRequest, options?: RequestOptions): Promise<ReplayResult> {
    return (await this.http.request<ReplayResult>('POST', '/v1/webhook_replays', body, withKey(options))).body;
  }
  /** `POST /v1/webhook_replays/event`: one event, queued again. */
  async replayEvent(body: ReplayEventRequest, options?: RequestOptions): Promise<ReplayResult> {
    return (await this.http.request<ReplayResult>('POST', '/v1/webhook_replays/event', body, withKey(options))).body;
  }
}
