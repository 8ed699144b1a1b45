/**
 * Webhook delivery (docs/events.md "Webhooks"): at least once, in order per call, from a queue
 * in the store that survives `kill -9` and restarts.
 *
 * - Fan-out: when events become durable ({@link EventLog.subscribe}), each endpoint's events
 *   after its cursor are read from the log (its tenant's only, its types only), and one
 *   `webhook_deliveries` row per event is written with the cursor's move, in one write step:
 *   an event is queued once per endpoint, never lost between the log and the queue.
 * - Sending: per (endpoint, call) only the oldest pending delivery is sent, so a call's events
 *   arrive in order and a failing call or endpoint holds up no other; at most `concurrency`
 *   at once, and at most `perEndpoint` to one endpoint, so a receiver that never answers holds a
 *   few slots until its timeout, never all of them. A 2xx is delivered; anything else (3xx, 4xx, 5xx, a timeout, a closed socket) is
 *   tried again after an exponential, fully jittered wait (src/domain/webhooks.ts), for 3 days
 *   from when it was queued; then the delivery is `dead` and its endpoint `failing` (until a
 *   later delivery to it succeeds).
 * - A restart resumes from the store: a delivery whose answer was not recorded is sent again
 *   (receivers de-duplicate by `webhook-id`, the event id).
 */
import { eventSeq, type EventType } from '../domain/events.js';
import { DEFAULT_RETRY_SCHEDULE, RETRY_WINDOW_S, retryDelayS, type RetrySchedule } from '../domain/webhooks.js';
import type { WebhookDeliveryRow, WebhookEndpointRow } from '../store/index.js';
import type { ServiceDeps } from './context.js';
import { eventView } from './events.js';
import { endpointTypes, type WebhookPort, type WebhookService } from './webhooks.js';

/** Where the worker reports. */
export interface DeliveryLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/** Options of {@link WebhookDelivery}. */
export interface DeliveryOptions {
  /** Deliveries in flight at once, over all endpoints (default 8). */
  concurrency?: number;
  /** Deliveries in flight at once to one endpoint (default 4). */
  perEndpoint?: number;
  /** The retry schedule (default 5 s doubling to 1 hour). */
  schedule?: RetrySchedule;
  /** How long a delivery is tried, in seconds (default 3 days). */
  windowS?: number;
  /** Uniform draws for the jitter (default Math.random). */
  random?: () => number;
  /** Finished deliveries are deleted this long after (seconds; default 7 days). */
  keepS?: number;
  /** How often the log is looked at for events another process appended (ms; default 1000). */
  pollMs?: number;
  log?: DeliveryLog;
}

/** Events read from the log per endpoint per step. */
const FAN_OUT_PAGE = 500;
/** How far an endpoint's stored cursor may lag behind what was read for it with nothing to queue. */
const CURSOR_LAG = 1000;
/** The longest the worker sleeps without looking at the queue (ms). */
const MAX_SLEEP_MS = 60_000;

/** The fan-out and the sender, over one store. */
export class WebhookDelivery {
  private readonly concurrency: number;
  private readonly perEndpoint: number;
  /** Deliveries in flight per endpoint id. */
  private readonly endpointLoad = new Map<string, number>();
  private readonly schedule: RetrySchedule;
  private readonly windowS: number;
  private readonly random: () => number;
  private readonly keepS: number;
  /** Queue keys (endpoint and subject) with a delivery in flight. */
  private readonly inFlight = new Set<string>();
  private readonly writes = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  /**
   * The queue may hold deliveries to start: set by what can add or free one (start, a fan-out
   * that queued, a test or replay, a delivery done, a retry's time come), cleared once a look
   * found none to start. A wake for events that queue nothing (no endpoint wants them: the
   * commonest wake, once per commit) then costs no look at the queue.
   */
  private queueDirty = true;
  private stopped = true;
  private unsubscribe: (() => void) | null = null;
  private lastPurge = 0;
  /**
   * How far each endpoint's log was read with nothing to queue, beyond its stored cursor (lost
   * on a restart, which reads that stretch again and again finds nothing).
   */
  private readonly scanned = new Map<string, number>();
  private poller: NodeJS.Timeout | null = null;
  private readonly pollMs: number;
  /**
   * Endpoints known to have no delivery waiting out a failure of theirs: none at start, so the
   * first success to an endpoint brings its waiting deliveries forward; a failure takes it out.
   */
  private readonly caughtUp = new Set<string>();

  constructor(
    private readonly deps: ServiceDeps,
    private readonly webhooks: WebhookService,
    private readonly port: WebhookPort,
    options: DeliveryOptions = {},
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 16);
    this.perEndpoint = Math.max(1, Math.min(options.perEndpoint ?? 4, this.concurrency));
    this.schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE;
    this.windowS = options.windowS ?? RETRY_WINDOW_S;
    this.random = options.random ?? Math.random;
    this.keepS = options.keepS ?? 7 * 86_400;
    this.pollMs = options.pollMs ?? 1000;
    this.log = options.log ?? { info: () => {}, warn: () => {} };
  }

  private readonly log: DeliveryLog;

  /** Starts: resumes the queue at once, then works whenever events become durable or a delivery is due. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const offEvents = this.deps.events.subscribe(() => this.wake());
    const offQueued = this.webhooks.onQueued(() => {
      this.queueDirty = true;
      this.wake();
    });
    this.unsubscribe = () => {
      offEvents();
      offQueued();
    };
    // Events appended by another process (an admin command) wake the worker through the log's poll.
    this.poller = setInterval(() => this.deps.events.poll(), this.pollMs);
    this.poller.unref();
    this.wake();
  }

  /** Looks for work now. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.pump().finally(() => {
      this.running = false;
      if (this.again) {
        this.again = false;
        this.wake();
      }
    });
  }

  /**
   * Stops taking work and waits for the writes under way. Sends in flight are not waited for:
   * their answers are not recorded, and those deliveries are sent again after a restart.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.poller) clearInterval(this.poller);
    this.poller = null;
    while (this.writes.size > 0 || this.running) {
      await Promise.allSettled([...this.writes]);
      if (this.running) await new Promise((r) => setTimeout(r, 5));
    }
  }

  private track<T>(p: Promise<T>): Promise<T> {
    this.writes.add(p);
    void p.finally(() => this.writes.delete(p)).catch(() => {});
    return p;
  }

  private async pump(): Promise<void> {
    try {
      while (!this.stopped && (await this.fanOut())) {
        // One page per endpoint per step; go on while there is more.
      }
      const look = this.queueDirty;
      this.queueDirty = false;
      if (!this.stopped && look) this.sendDue();
      if (!this.stopped) await this.purge();
      if (look) this.sleepUntilDue();
    } catch (err) {
      this.queueDirty = true;
      this.log.warn({ err }, 'webhook delivery step failed; retrying shortly');
      this.sleep(1000);
    }
  }

  /** Queues each endpoint's next page of events; true when more remain. */
  private async fanOut(): Promise<boolean> {
    const { repos, events } = this.deps;
    const durable = events.durableSeq();
    const work: { endpoint: WebhookEndpointRow; rows: { seq: number; subject: number | null }[]; cursor: number }[] = [];
    let more = false;
    for (const endpoint of repos.webhooks.all()) {
      const from = Math.max(endpoint.cursor_seq, this.scanned.get(endpoint.id) ?? 0);
      if (from >= durable) continue;
      const types = [...endpointTypes(endpoint)] as EventType[];
      const page = events.page(endpoint.tenant_id, from, FAN_OUT_PAGE, { types, subject: null });
      const rows = page.events.map((v) => ({ seq: eventSeq(v.id)!, subject: subjectOf(v.call_id ?? v.session_id) }));
      // With nothing more of its types, the cursor moves to what was durable when this began.
      const cursor = page.hasMore ? rows[rows.length - 1]!.seq : Math.max(durable, rows.at(-1)?.seq ?? 0);
      more ||= page.hasMore;
      if (rows.length === 0 && cursor - endpoint.cursor_seq < CURSOR_LAG) {
        // Nothing to queue: the stored cursor is moved only now and then, not with every commit.
        this.scanned.set(endpoint.id, cursor);
        continue;
      }
      work.push({ endpoint, rows, cursor });
    }
    if (work.length === 0) return false;
    this.queueDirty ||= work.some((w) => w.rows.length > 0);
    await this.track(
      this.deps.uow.write(() => {
        const now = this.deps.nowS();
        for (const w of work) {
          // Deleted since it was read: nothing to queue.
          if (!repos.webhooks.get(w.endpoint.id)) continue;
          for (const r of w.rows) repos.webhooks.enqueue(w.endpoint.id, r.seq, r.subject, now);
          repos.webhooks.setCursor(w.endpoint.id, w.cursor);
        }
      }),
    );
    return more;
  }

  /** Starts the due deliveries that head their queue, up to the concurrency (overall and per endpoint). */
  private sendDue(): void {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0) return;
    const rows = this.deps.repos.webhooks.due(this.deps.nowS(), this.inFlight.size + free * this.perEndpoint + 64);
    let started = 0;
    for (const row of rows) {
      if (started >= free) break;
      const key = queueKey(row);
      const load = this.endpointLoad.get(row.endpoint_id) ?? 0;
      if (this.inFlight.has(key) || load >= this.perEndpoint) continue;
      this.inFlight.add(key);
      this.endpointLoad.set(row.endpoint_id, load + 1);
      started += 1;
      void this.deliver(row).finally(() => {
        this.queueDirty = true;
        this.inFlight.delete(key);
        const left = (this.endpointLoad.get(row.endpoint_id) ?? 1) - 1;
        if (left > 0) this.endpointLoad.set(row.endpoint_id, left);
        else this.endpointLoad.delete(row.endpoint_id);
        this.wake();
      });
    }
  }

  private async deliver(row: WebhookDeliveryRow): Promise<void> {
    const { repos } = this.deps;
    const endpoint = repos.webhooks.get(row.endpoint_id);
    if (!endpoint) return;
    const event = repos.events.get(row.event_seq);
    if (!event) {
      await this.record(row, endpoint, { ok: false, status: null, error: 'the event was purged by retention', dead: true });
      return;
    }
    let outcome: Outcome;
    try {
      const answer = await this.port.send(
        endpoint.url,
        eventView(event).id,
        JSON.stringify(eventView(event)),
        this.webhooks.secretsOf(endpoint),
      );
      outcome = { ok: true, status: answer.status };
    } catch (err) {
      const status = (err as { status?: unknown }).status;
      outcome = { ok: false, status: typeof status === 'number' ? status : null, error: (err as Error).message, dead: false };
    }
    if (this.stopped) return;
    await this.record(row, endpoint, outcome);
  }

  private async record(row: WebhookDeliveryRow, endpoint: WebhookEndpointRow, outcome: Outcome): Promise<void> {
    const { repos } = this.deps;
    await this.track(
      this.deps.uow.write(() => {
        const now = this.deps.nowS();
        if (outcome.ok) {
          repos.webhooks.markDelivered(row.id, outcome.status, now);
          repos.webhooks.setActive(endpoint.id);
          // The receiver is back: what waits out its outage is due now, not at the end of a
          // backoff grown while it was down (still a call's oldest first, within the limits).
          if (!this.caughtUp.has(endpoint.id)) {
            repos.webhooks.makeDue(endpoint.id, now);
            this.caughtUp.add(endpoint.id);
          }
          return;
        }
        this.caughtUp.delete(endpoint.id);
        const next = now + retryDelayS(row.attempts + 1, this.random(), this.schedule);
        const dead = outcome.dead || next > row.created_at + this.windowS;
        const error = withoutPath(outcome.error, endpoint.url).slice(0, 500);
        repos.webhooks.markFailed(row.id, dead ? 'dead' : 'pending', outcome.status, error, next, now);
        if (dead) repos.webhooks.setFailing(endpoint.id, now);
      }),
    );
    if (!outcome.ok && (outcome.dead || row.attempts === 0)) {
      this.log.warn(
        { endpoint: endpoint.id, event: row.event_seq, status: outcome.status, attempts: row.attempts + 1, dead: outcome.dead },
        `webhook delivery failed: ${outcome.error}`,
      );
    }
  }

  private async purge(): Promise<void> {
    const now = this.deps.nowS();
    if (now - this.lastPurge < 600) return;
    this.lastPurge = now;
    await this.track(this.deps.uow.write(() => this.deps.repos.webhooks.purgeBatch(now - this.keepS, 1000)));
  }

  private sleepUntilDue(): void {
    const next = this.deps.repos.webhooks.nextDue();
    this.sleep(next === null ? MAX_SLEEP_MS : Math.max(0, (next - this.deps.nowS()) * 1000));
  }

  private sleep(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.queueDirty = true;
        this.wake();
      },
      Math.min(ms, MAX_SLEEP_MS) + 5,
    );
    this.timer.unref();
  }
}

type Outcome = { ok: true; status: number } | { ok: false; status: number | null; error: string; dead: boolean };

/** The queue a delivery belongs to: its endpoint and call (each event of no call is a queue of its own). */
function queueKey(row: WebhookDeliveryRow): string {
  return row.subject === null ? `${row.endpoint_id}#${row.id}` : `${row.endpoint_id}/${row.subject}`;
}

/**
 * `error` with the endpoint's URL cut to its origin wherever it appears whole: a path or query may
 * carry a token, and the error is shown by `GET /v1/webhook_endpoints` (the port's errors name
 * the origin only; this holds whatever an error says).
 */
export function withoutPath(error: string, url: string): string {
  let origin: string;
  try {
    origin = new URL(url).origin;
  } catch {
    return error;
  }
  const rest = url.startsWith(origin) ? url.slice(origin.length) : '';
  const cut = url === origin ? error : error.split(url).join(origin);
  return rest.length > 1 ? cut.split(rest).join('/…') : cut;
}

/** The number N of `cl_N` / `se_N`, or null. */
function subjectOf(id: string | null): number | null {
  return id === null ? null : Number(id.slice(3));
}
