/**
 * Webhook endpoints (docs/events.md "Webhooks"): create, list, show, delete, rotate the
 * signing secret, send a test delivery, and queue events again (replay). The secrets are
 * sealed with the master key (src/app/secrets.ts) and leave this module only in the answer of a
 * create or a rotation. Sending is the daemon's (src/app/webhook-delivery.ts, through
 * {@link WebhookPort}).
 *
 * Functions named `*Tx` must run inside the unit of work's write step.
 */
import crypto from 'node:crypto';
import { ApiError } from '../domain/errors.js';
import { eventSeq, typesOf, type EventType } from '../domain/events.js';
import { randomBase32, shortId } from '../domain/ids.js';
import { ROTATION_OVERLAP_S, WEBHOOK_ENDPOINT_ID_PATTERN } from '../domain/webhooks.js';
import type {
  CreateWebhookEndpointInput,
  ReplayResult,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookSecretRotated,
  WebhookTestResult,
} from '../contract/webhooks.js';
import type { EventRow, WebhookBacklogRow, WebhookEndpointRow } from '../store/index.js';
import { scoped } from './access.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';

/**
 * What the app needs from the outside to reach a receiver (the daemon gives it the adapter of
 * src/adapters/webhook/standard-webhooks.ts, under the routing webhook's allow settings).
 */
export interface WebhookPort {
  /**
   * Checks that `url` may be called: its scheme, and every address its host resolves to.
   * @throws Error whose message says why (names the URL's origin at most) when it may not; with
   *   `needs`, every daemon setting (`inbound_webhook_allow_http`, `…_allow_private`) that would
   *   let it through, when those settings decide.
   */
  checkUrl(url: string): Promise<void>;
  /**
   * POSTs one signed delivery (`webhook-id` = `msgId`), signed by every secret given.
   * @returns the receiver's 2xx status and the time taken (ms).
   * @throws Error with an optional numeric `status` when the receiver answered anything else,
   *   could not be reached, or did not answer in time.
   */
  send(url: string, msgId: string, body: string, secrets: readonly string[]): Promise<{ status: number; ms: number }>;
}

/** The purpose a secret is sealed under (bound to its endpoint). */
const purposeOf = (id: string) => `webhook:${id}`;

/** A new signing secret: `whsec_` and the base64 of 32 random bytes (Standard Webhooks allows 24–64). */
export function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

/** The public view of an endpoint row and its backlog (none: a new endpoint's). */
export function webhookEndpointView(row: WebhookEndpointRow, backlog: WebhookBacklogRow = { pending: 0, last: null }): WebhookEndpoint {
  return {
    id: row.id,
    url: row.url,
    events: JSON.parse(row.events) as string[],
    status: row.state,
    failing_since: row.failing_since,
    pending_deliveries: backlog.pending,
    last_attempt_at: backlog.last?.at ?? null,
    last_status: backlog.last?.status ?? null,
    last_error: backlog.last?.error ?? null,
    created_at: row.created_at,
  };
}

/** The event types an endpoint's patterns select. */
export function endpointTypes(row: WebhookEndpointRow): ReadonlySet<EventType> {
  return new Set(typesOf(JSON.parse(row.events) as string[]).types);
}

/** Most events a `since` replay queues per endpoint. */
const MAX_REPLAY = 10_000;

/** Webhook endpoint use cases. */
export class WebhookService {
  private readonly queuedListeners = new Set<() => void>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly port: WebhookPort,
  ) {}

  /** Calls `listener` after a write queued deliveries or made them due (a replay, a test answered 2xx); returns its removal. */
  onQueued(listener: () => void): () => void {
    this.queuedListeners.add(listener);
    return () => this.queuedListeners.delete(listener);
  }

  /**
   * Creates an endpoint; the answer holds its secret, which is never shown again.
   * @throws ApiError invalid_request (param `url`) for a URL that may not be called.
   */
  async create(principal: Principal, input: CreateWebhookEndpointInput, scope: Scope): Promise<Committed<WebhookEndpointCreated>> {
    await this.checkUrl(input.url);
    const secret = newWebhookSecret();
    // The answer carries the secret: its stored copy (for a retry under the key) is sealed.
    return this.deps.uow.run(scope, (tx) => this.createTx(tx, principal, input, secret), { sealBody: true });
  }

  /** The write step of {@link create}: the endpoint receives the events logged after it. */
  createTx(_tx: Tx, principal: Principal, input: CreateWebhookEndpointInput, secret: string): WebhookEndpointCreated {
    const id = `we_${randomBase32(20)}`;
    const row: WebhookEndpointRow = {
      id,
      tenant_id: principal.tenantId,
      url: input.url,
      events: JSON.stringify(input.events ?? ['*']),
      state: 'active',
      failing_since: null,
      previous_until: null,
      cursor_seq: this.deps.repos.events.lastSeq(),
      created_at: this.deps.nowS(),
    };
    const { state: _s, failing_since: _f, previous_until: _p, ...stored } = row;
    this.deps.repos.webhooks.insert({ ...stored, secret_sealed: this.deps.credentials.sealText(secret, row.tenant_id, purposeOf(id)) });
    return { ...webhookEndpointView(row), secret };
  }

  /** The caller's endpoints, oldest first, each with its backlog. */
  list(principal: Principal): WebhookEndpoint[] {
    const { webhooks } = this.deps.repos;
    return webhooks.list(principal.tenantId).map((row) => webhookEndpointView(row, webhooks.backlog(row.id)));
  }

  /** One endpoint and its backlog. @throws ApiError not_found. */
  get(principal: Principal, id: string): WebhookEndpoint {
    const row = this.resolve(principal, id);
    return webhookEndpointView(row, this.deps.repos.webhooks.backlog(row.id));
  }

  /** Deletes an endpoint and its queue. @throws ApiError not_found. */
  delete(principal: Principal, id: string, scope: Scope): Promise<Committed<{ id: string; deleted: true }>> {
    return this.deps.uow.run(scope, () => {
      const row = this.resolve(principal, id);
      this.deps.repos.webhooks.delete(row.id);
      return { id: row.id, deleted: true as const };
    });
  }

  /**
   * Gives the endpoint a new secret; the current one goes on signing beside it for 24 hours
   * (two signatures in `webhook-signature`), so receivers can switch without losing a delivery.
   * @throws ApiError not_found.
   */
  rotateSecret(principal: Principal, id: string, scope: Scope): Promise<Committed<WebhookSecretRotated>> {
    const secret = newWebhookSecret();
    return this.deps.uow.run(
      scope,
      () => {
        const row = this.resolve(principal, id);
        const until = this.deps.nowS() + ROTATION_OVERLAP_S;
        this.deps.repos.webhooks.rotate(row.id, this.deps.credentials.sealText(secret, row.tenant_id, purposeOf(row.id)), until);
        return { id: row.id, secret, previous_secret_expires_at: until };
      },
      { sealBody: true },
    );
  }

  /**
   * Sends the endpoint a signed delivery of a `webhook.test` event (not logged, not retried)
   * and says what the receiver answered. A 2xx makes the endpoint's deliveries that wait out an
   * outage of the receiver due at once (the delivery worker sends them, in order per call).
   * @throws ApiError not_found.
   */
  async test(principal: Principal, id: string, scope: Scope): Promise<Committed<WebhookTestResult>> {
    const row = this.resolve(principal, id);
    const msgId = `evt_test_${randomBase32(16)}`;
    const body = JSON.stringify({
      id: msgId,
      type: 'webhook.test',
      created_at: this.deps.nowS(),
      tenant_id: row.tenant_id,
      call_id: null,
      session_id: null,
      sequence: null,
      data: { endpoint_id: row.id },
    });
    const started = Date.now();
    let result: WebhookTestResult;
    try {
      const answer = await this.port.send(row.url, msgId, body, this.secretsOf(row));
      result = { id: row.id, delivered: true, status: answer.status, error: null, ms: answer.ms };
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      result = {
        id: row.id,
        delivered: false,
        status: typeof status === 'number' ? status : null,
        error: (err as Error).message,
        ms: Date.now() - started,
      };
    }
    let broughtForward = 0;
    const done = await this.deps.uow.run(scope, () => {
      // A 2xx shows the receiver is back: what waits out its outage is due now (docs/events.md).
      if (result.delivered) broughtForward = this.deps.repos.webhooks.makeDue(row.id, this.deps.nowS());
      return result;
    });
    if (broughtForward > 0) for (const l of this.queuedListeners) l();
    return done;
  }

  /**
   * Queues events again, from scratch: one (`event_id`), or every durable event of the caller's
   * tenant created in the last `since` seconds (at most 10,000), to one endpoint or to each whose
   * patterns select the event.
   * @throws ApiError not_found (event or endpoint).
   */
  async replay(
    principal: Principal,
    input: { event_id?: string | undefined; since?: number | undefined; endpoint_id?: string | undefined },
    scope: Scope,
  ): Promise<Committed<ReplayResult>> {
    const { events, repos } = this.deps;
    // Prepare: the events are read before the write step (a logged event never changes).
    const rows: EventRow[] = [];
    if (input.event_id !== undefined) {
      const seq = eventSeq(input.event_id);
      const row = seq === null || seq > events.durableSeq() ? undefined : repos.events.get(seq);
      if (!row || row.tenant_id !== principal.tenantId) {
        throw new ApiError('not_found', `no event ${shortId(input.event_id)} (see: GET /v1/events)`, { param: 'event_id' });
      }
      rows.push(row);
    } else {
      const cutoff = this.deps.nowS() - input.since!;
      const durable = events.durableSeq();
      for (let after = 0; rows.length < MAX_REPLAY;) {
        const page = repos.events.page(principal.tenantId, after, 500, { types: null, subject: null }).filter((r) => r.seq <= durable);
        rows.push(...page.filter((r) => r.created_at >= cutoff));
        if (page.length < 500) break;
        after = page[page.length - 1]!.seq;
      }
    }
    const result = await this.deps.uow.run(scope, () => {
      const endpoints =
        input.endpoint_id === undefined
          ? repos.webhooks.list(principal.tenantId)
          : [this.resolve(principal, input.endpoint_id, 'endpoint_id')];
      let queued = 0;
      const now = this.deps.nowS();
      for (const e of endpoints) {
        const types = endpointTypes(e);
        for (const r of rows.slice(0, MAX_REPLAY)) {
          if (!types.has(r.type as EventType)) continue;
          repos.webhooks.requeue(e.id, r.seq, r.subject, now);
          queued += 1;
        }
      }
      return { queued };
    });
    for (const l of this.queuedListeners) l();
    return result;
  }

  /**
   * The secrets that sign a delivery now: the current one, and the previous one until its
   * overlap ends. For the sender only: never in a view, a log line or an error.
   */
  secretsOf(row: WebhookEndpointRow): string[] {
    const sealed = this.deps.repos.webhooks.secrets(row.id);
    if (!sealed) return [];
    const { credentials, nowS } = this.deps;
    const out = [credentials.openText(sealed.secret_sealed, row.tenant_id, purposeOf(row.id))];
    if (sealed.previous_secret_sealed && sealed.previous_until !== null && sealed.previous_until > nowS()) {
      out.push(credentials.openText(sealed.previous_secret_sealed, row.tenant_id, purposeOf(row.id)));
    }
    return out;
  }

  /** The endpoint row the caller may see. @throws ApiError not_found, naming `param`. */
  resolve(principal: Principal, id: string, param = 'webhook_endpoint_id'): WebhookEndpointRow {
    const row = WEBHOOK_ENDPOINT_ID_PATTERN.test(id) ? scoped(this.deps, principal, this.deps.repos.webhooks.get(id), id) : undefined;
    if (!row) {
      throw new ApiError('not_found', `no webhook endpoint ${shortId(id)} (see: GET /v1/webhook_endpoints)`, {
        param,
      });
    }
    return row;
  }

  private async checkUrl(url: string): Promise<void> {
    try {
      await this.port.checkUrl(url);
    } catch (err) {
      throw new ApiError('invalid_request', `url is refused: ${(err as Error).message}${settingsHint(err)}`, { param: 'url' });
    }
  }
}

/**
 * What the operator can change for a URL the daemon's allow settings refuse: every setting it
 * needs at once, and that they are the daemon's (config/schema.ts; environment `VAGENT_` and the
 * name in capitals). Empty for any other refusal.
 */
export function settingsHint(err: unknown): string {
  const needs = (err as { needs?: unknown } | null)?.needs;
  if (!Array.isArray(needs) || needs.length === 0) return '';
  const names = needs.map(String);
  const env = names.map((n) => `VAGENT_${n.toUpperCase()}=true`).join(' ');
  const which = names.length === 1 ? 'the daemon setting' : 'the daemon settings';
  return `; a receiver there needs ${which} ${names.join(' and ')}: restart vagent serve with ${env} (or set ${names.map((n) => `${n}: true`).join(', ')} in its config file)`;
}
