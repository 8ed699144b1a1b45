/**
 * Webhook endpoints and their delivery queue (migration 17; docs/events.md "Webhooks").
 */
import type { Db } from '../database.js';

/** A webhook endpoint as stored, without its sealed secrets. `events` is JSON text. */
export interface WebhookEndpointRow {
  id: string;
  tenant_id: string;
  url: string;
  events: string;
  state: 'active' | 'failing';
  failing_since: number | null;
  /** Until when (epoch s) the previous secret still signs, or null. */
  previous_until: number | null;
  cursor_seq: number;
  created_at: number;
}

/** An endpoint's sealed secrets: the current one, and the previous one during a rotation. */
export interface WebhookSecretsRow {
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  previous_until: number | null;
}

/** A queued delivery. */
export interface WebhookDeliveryRow {
  id: number;
  endpoint_id: string;
  event_seq: number;
  subject: number | null;
  attempts: number;
  next_attempt_at: number;
  state: 'pending' | 'delivered' | 'dead';
  last_status: number | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

/** An endpoint's queue at a glance: its pending deliveries and its latest attempt. */
export interface WebhookBacklogRow {
  /** Deliveries not yet answered 2xx nor given up. */
  pending: number;
  /** The latest attempt (see {@link WebhookRepo.backlog}), or null when none was made. */
  last: { at: number; status: number | null; error: string | null } | null;
}

const ENDPOINT_COLUMNS = 'id, tenant_id, url, events, state, failing_since, previous_until, cursor_seq, created_at';

/** Webhook queries over one connection. */
export class WebhookRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO webhook_endpoints (id, tenant_id, url, events, secret_sealed, cursor_seq, created_at)
        VALUES (@id, @tenant_id, @url, @events, @secret_sealed, @cursor_seq, @created_at)`),
      get: db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ?`),
      list: db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE tenant_id = ? ORDER BY created_at, id`),
      all: db.prepare(`SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints ORDER BY tenant_id, created_at, id`),
      secrets: db.prepare('SELECT secret_sealed, previous_secret_sealed, previous_until FROM webhook_endpoints WHERE id = ?'),
      rotate: db.prepare(`UPDATE webhook_endpoints
        SET previous_secret_sealed = secret_sealed, previous_until = @until, secret_sealed = @sealed WHERE id = @id`),
      delete: db.prepare('DELETE FROM webhook_endpoints WHERE id = ?'),
      setCursor: db.prepare('UPDATE webhook_endpoints SET cursor_seq = ? WHERE id = ? AND cursor_seq < ?'),
      setFailing: db.prepare(`UPDATE webhook_endpoints SET state = 'failing', failing_since = COALESCE(failing_since, ?)
        WHERE id = ?`),
      setActive: db.prepare(`UPDATE webhook_endpoints SET state = 'active', failing_since = NULL
        WHERE id = ? AND state = 'failing'`),
      enqueue: db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_seq, subject, next_attempt_at, created_at, updated_at)
        VALUES (@endpoint_id, @event_seq, @subject, @now, @now, @now) ON CONFLICT (endpoint_id, event_seq) DO NOTHING`),
      requeue: db.prepare(`INSERT INTO webhook_deliveries (endpoint_id, event_seq, subject, next_attempt_at, created_at, updated_at)
        VALUES (@endpoint_id, @event_seq, @subject, @now, @now, @now)
        ON CONFLICT (endpoint_id, event_seq) DO UPDATE SET state = 'pending', attempts = 0, next_attempt_at = @now,
          created_at = @now, updated_at = @now, last_status = NULL, last_error = NULL`),
      due: db.prepare(`SELECT d.* FROM webhook_deliveries d
        WHERE d.state = 'pending' AND d.next_attempt_at <= @now
          AND (d.subject IS NULL OR NOT EXISTS (SELECT 1 FROM webhook_deliveries e
            WHERE e.endpoint_id = d.endpoint_id AND e.subject = d.subject AND e.state = 'pending' AND e.event_seq < d.event_seq))
        ORDER BY d.next_attempt_at, d.event_seq LIMIT @limit`),
      nextDue: db.prepare(`SELECT MIN(next_attempt_at) FROM webhook_deliveries WHERE state = 'pending'`).pluck(),
      getDelivery: db.prepare('SELECT * FROM webhook_deliveries WHERE id = ?'),
      delivered: db.prepare(`UPDATE webhook_deliveries SET state = 'delivered', attempts = attempts + 1, last_status = @status,
        last_error = NULL, updated_at = @now WHERE id = @id AND state = 'pending'`),
      failed: db.prepare(`UPDATE webhook_deliveries SET state = @state, attempts = attempts + 1, last_status = @status,
        last_error = @error, next_attempt_at = @next, updated_at = @now WHERE id = @id AND state = 'pending'`),
      makeDue: db.prepare(`UPDATE webhook_deliveries SET next_attempt_at = @now
        WHERE endpoint_id = @id AND state = 'pending' AND next_attempt_at > @now AND (last_status IS NULL OR last_status >= 500)`),
      pendingCount: db.prepare(`SELECT COUNT(*) FROM webhook_deliveries WHERE endpoint_id = ? AND state = 'pending'`).pluck(),
      // The newest attempted event (walking the (endpoint, event) index back from the newest)…
      lastByEvent: db.prepare(`SELECT updated_at AS at, last_status AS status, last_error AS error FROM webhook_deliveries
        WHERE endpoint_id = ? AND attempts > 0 ORDER BY event_seq DESC LIMIT 1`),
      // …and the latest retry among the pending ones (the partial queue index): their later one.
      lastPending: db.prepare(`SELECT updated_at AS at, last_status AS status, last_error AS error FROM webhook_deliveries
        WHERE endpoint_id = ? AND state = 'pending' AND attempts > 0 ORDER BY updated_at DESC LIMIT 1`),
      ofEndpoint: db.prepare(`SELECT * FROM webhook_deliveries WHERE endpoint_id = ? ORDER BY event_seq`),
      purgeBatch: db.prepare(`DELETE FROM webhook_deliveries WHERE id IN (SELECT id FROM webhook_deliveries
        WHERE state != 'pending' AND updated_at < ? ORDER BY id LIMIT ?)`),
    };
  }

  /** Inserts an endpoint with its sealed secret. */
  insert(row: Omit<WebhookEndpointRow, 'state' | 'failing_since' | 'previous_until'> & { secret_sealed: Buffer }): void {
    this.q.insert.run(row);
  }
  /** The endpoint `id`, whatever its tenant. */
  get(id: string): WebhookEndpointRow | undefined {
    return this.q.get.get(id) as WebhookEndpointRow | undefined;
  }
  /** The tenant's endpoints, oldest first. */
  list(tenantId: string): WebhookEndpointRow[] {
    return this.q.list.all(tenantId) as WebhookEndpointRow[];
  }
  /** Every endpoint of every tenant. */
  all(): WebhookEndpointRow[] {
    return this.q.all.all() as WebhookEndpointRow[];
  }
  /** The endpoint's sealed secrets. For the signer only. */
  secrets(id: string): WebhookSecretsRow | undefined {
    return this.q.secrets.get(id) as WebhookSecretsRow | undefined;
  }
  /** Makes `sealed` the current secret; the current one signs too until `until` (epoch s). */
  rotate(id: string, sealed: Buffer, until: number): void {
    this.q.rotate.run({ id, sealed, until });
  }
  /** Deletes the endpoint and its queue. */
  delete(id: string): void {
    this.q.delete.run(id);
  }
  /** Moves the endpoint's fan-out cursor forward to `seq` (never back). */
  setCursor(id: string, seq: number): void {
    this.q.setCursor.run(seq, id, seq);
  }
  /** Marks the endpoint failing (keeping the first `failing_since`). */
  setFailing(id: string, now: number): void {
    this.q.setFailing.run(now, id);
  }
  /** Marks a failing endpoint active again. */
  setActive(id: string): void {
    this.q.setActive.run(id);
  }
  /** Queues event `seq` for the endpoint, unless it is queued already. */
  enqueue(endpointId: string, seq: number, subject: number | null, now: number): void {
    this.q.enqueue.run({ endpoint_id: endpointId, event_seq: seq, subject, now });
  }
  /** Queues event `seq` for the endpoint again, from scratch, whatever became of it before. */
  requeue(endpointId: string, seq: number, subject: number | null, now: number): void {
    this.q.requeue.run({ endpoint_id: endpointId, event_seq: seq, subject, now });
  }
  /** Pending deliveries due by `now` that head their (endpoint, subject) queue, soonest first. */
  due(now: number, limit: number): WebhookDeliveryRow[] {
    return this.q.due.all({ now, limit }) as WebhookDeliveryRow[];
  }
  /** When the soonest pending delivery is due (epoch s), or null. */
  nextDue(): number | null {
    return this.q.nextDue.get() as number | null;
  }
  /** One delivery. */
  delivery(id: number): WebhookDeliveryRow | undefined {
    return this.q.getDelivery.get(id) as WebhookDeliveryRow | undefined;
  }
  /** Records a 2xx answer. */
  markDelivered(id: number, status: number, now: number): void {
    this.q.delivered.run({ id, status, now });
  }
  /** Records a failed attempt: pending again at `next`, or `dead`. */
  markFailed(id: number, state: 'pending' | 'dead', status: number | null, error: string, next: number, now: number): void {
    this.q.failed.run({ id, state, status, error, next, now });
  }
  /**
   * Makes the endpoint's pending deliveries that wait out a failure of the receiver (no answer,
   * or a 5xx) due at `now` (epoch s); how many were brought forward. One the receiver refused
   * with a 3xx or 4xx keeps its wait: the receiver answered, and would refuse it again. Order
   * per call is kept by {@link due}, which sends only a queue's head.
   */
  makeDue(endpointId: string, now: number): number {
    return this.q.makeDue.run({ id: endpointId, now }).changes;
  }
  /**
   * The endpoint's pending count and latest attempt: the later of the newest attempted event's
   * last attempt and the latest retry of a pending delivery (both read through indexes, so the
   * cost does not grow with the deliveries kept; an older event's delivery finished after a
   * newer one's is not looked at).
   */
  backlog(endpointId: string): WebhookBacklogRow {
    type Last = NonNullable<WebhookBacklogRow['last']>;
    const a = this.q.lastByEvent.get(endpointId) as Last | undefined;
    const b = this.q.lastPending.get(endpointId) as Last | undefined;
    const last = a && b ? (b.at > a.at ? b : a) : (a ?? b ?? null);
    return { pending: this.q.pendingCount.get(endpointId) as number, last };
  }
  /** The endpoint's deliveries, by event. */
  deliveriesOf(endpointId: string): WebhookDeliveryRow[] {
    return this.q.ofEndpoint.all(endpointId) as WebhookDeliveryRow[];
  }
  /** Deletes up to `limit` finished deliveries last changed before `before` (epoch s); how many. */
  purgeBatch(before: number, limit: number): number {
    return this.q.purgeBatch.run(before, limit).changes;
  }
}
