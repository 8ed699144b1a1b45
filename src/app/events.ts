/**
 * The event log (docs/events.md): each state change of a call or session appends its event in
 * the write step that makes the change ({@link EventLog.appendTx}), so a step that fails writes
 * none and a committed one never lacks its event. Readers (the event stream, lists, webhook
 * deliveries) see an event only once its commit is durable ({@link EventLog.durableSeq}): an
 * event sent can never be lost to a crash and its id reused.
 */
import type { EventType } from '../domain/events.js';
import { eventId, typesOf } from '../domain/events.js';
import type { EventView } from '../contract/events.js';
import type { EventRow, NewEvent, Repos, TranscriptRedaction } from '../store/index.js';
import type { Tx } from './unit-of-work.js';
import { redact } from './redaction.js';

export { redact } from './redaction.js';

/** What a change records: its type, its tenant, the session/call number it concerns, and its data. */
export interface EventInput {
  tenantId: string;
  type: EventType;
  /** The number N of the call `cl_N` the event concerns, or null. */
  callId?: number | null;
  /** The number N of the session `se_N` the event concerns, or null. */
  sessionId?: number | null;
  data: Record<string, unknown>;
}

/** Which events a reader wants (`GET /v1/events` `types`, `call_id`, `session_id`). */
export interface EventSelection {
  /** Exact types, or null for all (see `typesOf` for patterns). */
  types: readonly EventType[] | null;
  /** The number of a call or session, or null for all. */
  subject: number | null;
}

/** The API object of a stored event. */
export function eventView(row: EventRow): EventView {
  return {
    id: eventId(row.seq),
    type: row.type as EventType,
    created_at: row.created_at,
    tenant_id: row.tenant_id,
    call_id: row.call_id === null ? null : `cl_${row.call_id}`,
    session_id: row.session_id === null ? null : `se_${row.session_id}`,
    sequence: row.sequence,
    data: JSON.parse(row.data) as Record<string, unknown>,
  };
}

/** The event log over one store: appends, reads up to what is durable, and wakes readers. */
export class EventLog {
  /** The newest event appended in the commit under way (0: none since the last commit). */
  private appendedSeq = 0;
  private durable: number;
  private readonly listeners = new Set<() => void>();
  /** Tenants' redaction settings, read once per change of the database by another process (the admin command that sets them). */
  private redactions = new Map<string, TranscriptRedaction>();
  private redactionsVersion = -1;

  constructor(
    private readonly repos: Repos,
    private readonly nowS: () => number,
    /** How long an event is kept, seconds (`events_retention_days`). */
    private readonly retentionS = 7 * 86400,
  ) {
    this.durable = repos.events.lastSeq();
    repos.store.onCommit(() => {
      if (this.appendedSeq === 0) return null;
      this.appendedSeq = 0;
      // What the commit holds, not what was appended: a step rolled back may have appended one.
      const seq = repos.events.lastSeq();
      return () => this.madeDurable(seq);
    });
  }

  /** The newest event whose commit is durable: readers read up to it, never past. */
  durableSeq(): number {
    return this.durable;
  }

  /**
   * Appends the event of a change, in that change's write step. The subject's next `sequence`
   * is assigned in the same transaction, so sequences have no gap.
   * @returns the event as readers will see it once the step's commit is durable.
   */
  appendTx(_tx: Tx, e: EventInput): EventView {
    const { row, data } = this.rowOf(e);
    const { seq, sequence } = this.repos.events.append(row);
    this.appendedSeq = seq;
    return {
      id: eventId(seq),
      type: e.type,
      created_at: row.created_at,
      tenant_id: row.tenant_id,
      call_id: row.call_id === null ? null : `cl_${row.call_id}`,
      session_id: row.session_id === null ? null : `se_${row.session_id}`,
      sequence,
      data,
    };
  }

  /**
   * Appends the event of a change as {@link EventLog.appendTx} does, returning nothing: one
   * statement instead of two (the subject's next `sequence` is looked up inside the insert), for
   * the hot write of a turn, which needs nothing of the event back.
   */
  recordTx(_tx: Tx, e: EventInput): void {
    this.appendedSeq = this.repos.events.add(this.rowOf(e).row);
  }

  /** The stored row of `e` (its data redacted as its tenant asks), and that data. */
  private rowOf(e: EventInput): { row: NewEvent; data: Record<string, unknown> } {
    const callId = e.callId ?? null;
    const sessionId = e.sessionId ?? null;
    const data = redact(e.data, this.redactionOf(e.tenantId));
    const row: NewEvent = {
      tenant_id: e.tenantId,
      type: e.type,
      subject: callId ?? sessionId,
      call_id: callId,
      session_id: sessionId,
      created_at: this.nowS(),
      data: JSON.stringify(data),
    };
    return { row, data };
  }

  /** Reads tenant `tenantId`'s settings again at its next event (they changed in this process). */
  forgetTenant(tenantId: string): void {
    this.redactions.delete(tenantId);
  }

  private redactionOf(tenantId: string): TranscriptRedaction {
    const version = this.repos.store.externalVersion();
    if (version !== this.redactionsVersion) {
      this.redactions = new Map();
      this.redactionsVersion = version;
    }
    let r = this.redactions.get(tenantId);
    if (r === undefined) {
      r = this.repos.tenants.redaction(tenantId);
      this.redactions.set(tenantId, r);
    }
    return r;
  }

  /**
   * The tenant's durable events after `afterSeq`, oldest first, at most `limit`; `has_more`
   * when more durable ones follow.
   */
  page(tenantId: string, afterSeq: number, limit: number, selection: EventSelection): { events: EventView[]; hasMore: boolean } {
    const rows = this.repos.events.page(tenantId, afterSeq, limit + 1, selection).filter((r) => r.seq <= this.durable);
    const hasMore = rows.length > limit;
    return { events: rows.slice(0, limit).map(eventView), hasMore };
  }

  /**
   * Deletes the events older than the retention, oldest first, `batchRows` per write (requests'
   * writes commit between batches), until none is left or `signal` aborts; how many.
   */
  async purgeExpired(batchRows = 1000, signal?: AbortSignal): Promise<number> {
    const before = this.nowS() - this.retentionS;
    let total = 0;
    while (!signal?.aborted) {
      const n = await this.repos.store.write(() => this.repos.events.purgeBatch(before, batchRows), { savepoint: false });
      total += n;
      if (n < batchRows) break;
    }
    return total;
  }

  /** Calls `listener` whenever more events have become durable; returns its removal. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Picks up events another process appended (an admin command), waking readers if any. */
  poll(): void {
    const last = this.repos.events.lastSeq();
    if (last > this.durable) this.madeDurable(last);
  }

  private madeDurable(seq: number): void {
    if (seq <= this.durable) return;
    this.durable = seq;
    for (const l of this.listeners) l();
  }
}

/** The selection of a query's `types` patterns and call/session id. @throws nothing: unknown patterns come back in `unknown`. */
export function selectionOf(patterns: readonly string[] | null, subject: number | null): EventSelection & { unknown: string[] } {
  if (patterns === null) return { types: null, subject, unknown: [] };
  const { types, unknown } = typesOf(patterns);
  return { types, subject, unknown };
}
