/**
 * Calls (docs/api-decisions.md "Calls"; docs/calls.md); LiveKit webhook events are in
 * telephony-events.ts. A call is keyed by its
 * session: call `cl_<N>` belongs to session `se_<N>`, and its status, end time, customer
 * name and cost are read from that session.
 */
import { canMoveDial, DIAL_STATUSES, dialSourcesOf, type CallSource, type DialStatus } from '../../domain/calls.js';
import type { Db } from '../database.js';

export type { DialStatus };

/** A call row. Phone numbers are E.164; times are epoch seconds; money is micro-rupees. */
export interface CallRow {
  seq: number;
  /** The session number N (call `cl_<N>` of session `se_<N>`). */
  id: number;
  tenant_id: string;
  agent_id: string;
  direction: 'outbound' | 'inbound';
  to_number: string;
  from_number: string | null;
  dial_status: DialStatus;
  trunk_id: string | null;
  room_name: string | null;
  /** LiveKit's SIP call id (`SCL_…`). */
  provider_call_id: string | null;
  /** Why a dial failed or has an unknown outcome (no credentials, no personal data). */
  dial_error: string | null;
  /** The `Idempotency-Key` a dial was placed under, so a retry never dials again. */
  idempotency_key: string | null;
  /** The fingerprint of that request (a retry with another body is `idempotency_key_reuse`). */
  idempotency_print: string | null;
  reserved_micro: number;
  /** Epoch seconds after which the reservation no longer counts (the call's longest possible end). */
  reserve_until: number;
  /** When the callee answered (inbound: when vagent answered), epoch seconds; null if never. */
  answered_at: number | null;
  /**
   * What carries the call's audio (migration 11; docs/media.md): a carrier WebSocket stream
   * (`twilio`, `exotel`, `plivo`) or a LiveKit room; null while none has (a prepared call).
   */
  transport: CallTransport | null;
  /**
   * Who made the call (migration 13; docs/api-decisions.md "Simulated calls"): `phone` for a
   * call on a line, `simulator` for a stream `vagent call simulate` opened. A label only.
   */
  source: CallSource;
}

/** The transports a call's audio can travel on (docs/media.md). */
export const CALL_TRANSPORTS = ['twilio', 'exotel', 'plivo', 'livekit'] as const;
/** One of {@link CALL_TRANSPORTS}. */
export type CallTransport = (typeof CALL_TRANSPORTS)[number];

/**
 * What a move of a call's line records beside its new status. An absent field keeps its value;
 * `answered_at` is set once (a later answer never overwrites the first).
 */
export interface DialMove {
  provider_call_id?: string | null;
  dial_error?: string | null;
  /** The key a retry must find (null frees it); absent keeps it. */
  idempotency_key?: string | null;
  answered_at?: number;
}

/** A call row with what its session adds: open/ended, end time, customer name, metrics JSON. */
export interface CallWithSession extends CallRow {
  /** When the call's session opened, epoch seconds. */
  created_at: number;
  session_status: 'open' | 'ended';
  ended_at: number | null;
  customer_name: string | null;
  /** The session's newest metrics (JSON text). */
  metrics: string;
}

/** Metrics of a session: the final ones once ended, else those after its newest turn. */
const METRICS = `CASE WHEN s.status = 'ended' THEN s.metrics
  ELSE COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics) END`;

const WITH_SESSION = `SELECT c.*, s.created_at, s.status AS session_status, s.ended_at, s.customer_name, ${METRICS} AS metrics
  FROM calls c JOIN sessions s ON s.id = c.id`;

/** The spend ledger's bucket, seconds (migration 7): every real zone's midnight falls on one. */
export const SPEND_BUCKET_S = 900;

/**
 * Expired call holds released per write at most ({@link CallRepo.releaseExpiredHolds}): each
 * costs one ledger update, so a burst of calls that expired together is released over a few
 * calls rather than in one long write; the rest are still subtracted by the spend read.
 */
export const RELEASE_BATCH = 500;

/** Call queries over one connection. */
export class CallRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, from_number, dial_status,
          trunk_id, room_name, provider_call_id, dial_error, idempotency_key, idempotency_print, reserved_micro, reserve_until, answered_at, transport, source)
        VALUES (@id, @tenant_id, @agent_id, @direction, @to_number, @from_number, @dial_status,
          @trunk_id, @room_name, @provider_call_id, @dial_error, @idempotency_key, @idempotency_print, @reserved_micro, @reserve_until, @answered_at, @transport, @source)`),
      // Calls whose carrier stream was live when the daemon last stopped (their sockets are gone).
      orphanedStreams: db.prepare(`SELECT c.id, c.tenant_id FROM calls c JOIN sessions s ON s.id = c.id
          WHERE s.status = 'open' AND c.transport IN ('twilio', 'exotel', 'plivo')`),
      // LiveKit calls on the line (ringing or answered) with their session open: vagent's
      // media in their rooms died with the daemon.
      orphanedRooms: db.prepare(`SELECT c.id, c.tenant_id, c.room_name, c.direction FROM calls c JOIN sessions s ON s.id = c.id
          WHERE s.status = 'open' AND c.transport = 'livekit' AND c.room_name IS NOT NULL AND c.dial_status IN ('ringing', 'answered')`),
      // Prepared calls no stream reached before their deadline (reserve_until: prepared at +
      // max_call_duration_s), from the open sessions (partial index sessions_open).
      expiredPrepared: db.prepare(`SELECT c.id, c.tenant_id, c.reserve_until, s.created_at FROM sessions s JOIN calls c ON c.id = s.id
          WHERE s.status = 'open' AND c.transport IS NULL AND c.dial_status = 'not_dialled' AND c.reserve_until <= @now
          ORDER BY c.id LIMIT @limit`),
      touch: db.prepare('UPDATE calls SET last_activity_at = MAX(COALESCE(last_activity_at, 0), @at) WHERE id = @id'),
      // The last sign of life of a call: its media heartbeat, its newest turn, its answer, its start.
      lastSeen: db
        .prepare(
          `SELECT MAX(COALESCE(c.last_activity_at, 0), COALESCE(c.answered_at, 0), s.created_at,
          COALESCE((SELECT json_extract(t.data, '$.at') FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), 0))
        FROM calls c JOIN sessions s ON s.id = c.id WHERE c.id = ?`,
        )
        .pluck(),
      // not_dialled is final (DIAL_TRANSITIONS): only the reason is recorded.
      notePrepared: db.prepare(
        `UPDATE calls SET dial_error = @reason WHERE id = @id AND transport IS NULL AND dial_status = 'not_dialled'`,
      ),
      // A carrier stream attaching to a prepared call: only once, only while never dialled.
      attach: db.prepare(`UPDATE calls SET transport = @transport, source = @source, dial_status = 'answered',
          provider_call_id = COALESCE(@provider_call_id, provider_call_id), answered_at = COALESCE(answered_at, @answered_at)
        WHERE id = @id AND transport IS NULL AND dial_status = 'not_dialled'
          AND (SELECT s.status FROM sessions s WHERE s.id = calls.id) = 'open'`),
      has: db.prepare('SELECT 1 FROM calls WHERE id = ?'),
      get: db.prepare(`${WITH_SESSION} WHERE c.id = ?`),
      byKey: db.prepare('SELECT * FROM calls WHERE tenant_id = ? AND idempotency_key = ?'),
      byProvider: db.prepare('SELECT * FROM calls WHERE provider_call_id = ?'),
      // One statement per target status, guarded by the transition table: a move the table does
      // not allow changes nothing.
      move: Object.fromEntries(
        DIAL_STATUSES.map((to) => [
          to,
          db.prepare(`UPDATE calls SET dial_status = '${to}',
          provider_call_id = CASE WHEN @set_provider THEN @provider_call_id ELSE provider_call_id END,
          dial_error = CASE WHEN @set_error THEN @dial_error ELSE dial_error END,
          idempotency_key = CASE WHEN @set_key THEN @idempotency_key ELSE idempotency_key END,
          idempotency_print = CASE WHEN @set_key AND @idempotency_key IS NULL THEN NULL ELSE idempotency_print END,
          answered_at = COALESCE(answered_at, @answered_at)
        WHERE id = @id AND dial_status IN (${
          dialSourcesOf(to)
            .map((f) => `'${f}'`)
            .join(', ') || 'NULL'
        })`),
        ]),
      ) as Record<DialStatus, ReturnType<Db['prepare']>>,
      // Only dials in flight; the table allows dialling → unknown.
      unknownAfterCrash: db.prepare(`UPDATE calls SET dial_status = 'unknown',
          dial_error = 'vagent stopped while LiveKit was dialling; not dialled again'
        WHERE dial_status = 'dialling' AND ${canMoveDial('dialling', 'unknown') ? 1 : 0}`),
      list: db.prepare(`${WITH_SESSION} WHERE c.tenant_id = @tenant AND c.seq < @before
          ORDER BY c.seq DESC LIMIT @limit`),
      // One source's calls (index calls_tenant_source, migration 13), optionally open or ended only.
      listSource: db.prepare(`${WITH_SESSION} WHERE c.tenant_id = @tenant AND c.source = @source AND c.seq < @before
          AND (@status IS NULL OR s.status = @status) ORDER BY c.seq DESC LIMIT @limit`),
      // Ended calls are nearly all calls: walking the tenant's calls newest first finds a page at once.
      listEnded: db.prepare(`${WITH_SESSION} WHERE c.tenant_id = @tenant AND c.seq < @before
          AND s.status = 'ended' ORDER BY c.seq DESC LIMIT @limit`),
      // Open calls are few among many: start from the tenant's open sessions (partial index
      // sessions_open, migration 6) and sort those, never walking ended calls.
      listOpen: db.prepare(`SELECT c.*, s.created_at, s.status AS session_status, s.ended_at, s.customer_name, ${METRICS} AS metrics
          FROM sessions s JOIN calls c ON c.id = s.id
          WHERE s.tenant_id = @tenant AND s.status = 'open' AND c.seq < @before ORDER BY c.seq DESC LIMIT @limit`),
      // The day's spend: the day's ledger rows (costs and what holds add to them), one index range
      // of at most 100 quarter-hours (migrations 7 and 10), less what the day's holds that have
      // passed their reserve_until but are not yet released add (index call_holds_expiry).
      ledger: db
        .prepare(
          `SELECT (SELECT COALESCE(SUM(cost_micro + held_micro), 0) FROM spend_ledger
          WHERE tenant_id = @tenant AND bucket >= @from AND bucket < @to)
        - (SELECT COALESCE(SUM(MAX(0, reserved_micro - cost_micro)), 0) FROM call_holds INDEXED BY call_holds_expiry
          WHERE tenant_id = @tenant AND reserve_until <= @now AND bucket >= @from AND bucket < @to)`,
        )
        .pluck(),
      // Whether the tenant has an expired hold: a read, cheaper than the delete when there is none (the usual case).
      anyExpired: db
        .prepare(
          `SELECT 1 FROM call_holds INDEXED BY call_holds_expiry
          WHERE tenant_id = @tenant AND reserve_until <= @now LIMIT 1`,
        )
        .pluck(),
      // Deletes (through their trigger, from the ledger too) up to @limit of the tenant's expired holds.
      release: db.prepare(`DELETE FROM call_holds WHERE call_id IN (SELECT call_id FROM call_holds INDEXED BY call_holds_expiry
          WHERE tenant_id = @tenant AND reserve_until <= @now LIMIT @limit)`),
      // The walk the ledger replaced, for a day that does not start and end on quarter-hours.
      spendWalk: db
        .prepare(
          `WITH day AS (
          SELECT s.id, s.status, ${METRICS} AS m FROM sessions s
          WHERE s.tenant_id = @tenant AND s.created_at >= @start AND s.created_at < @end)
        SELECT COALESCE(SUM(MAX(
          COALESCE(json_extract(day.m, '$.cost.llm'), 0) + COALESCE(json_extract(day.m, '$.cost.tts'), 0) + COALESCE(json_extract(day.m, '$.cost.stt'), 0),
          CASE WHEN day.status = 'open' AND c.reserve_until > @now THEN c.reserved_micro ELSE 0 END)), 0)
        FROM day LEFT JOIN calls c ON c.id = day.id`,
        )
        .pluck(),
    };
  }

  /**
   * Inserts the call of session `row.id` (`source` default `phone`); returns its `seq`.
   * @throws on a duplicate id or (tenant, key), or no such session.
   */
  insert(row: Omit<CallRow, 'seq' | 'source'> & { source?: CallSource }): number {
    return Number(this.q.insert.run({ ...row, source: row.source ?? 'phone' }).lastInsertRowid);
  }
  /**
   * A carrier stream attaches to prepared call `id` (docs/media.md "Prepare-only + carrier dial"):
   * its line becomes `answered` on `transport`, with the carrier's call id.

   * Only a call never dialled, never attached and whose session is open moves (the one move out
   * of `not_dialled` besides the transition table). `source` records who opened the stream.
   * @returns true when it moved.
   */
  attachTransport(
    id: number,
    transport: CallTransport,
    providerCallId: string | null,
    answeredAt: number,
    source: CallSource = 'phone',
  ): boolean {
    return this.q.attach.run({ id, transport, provider_call_id: providerCallId, answered_at: answeredAt, source }).changes === 1;
  }
  /**
   * Calls on a carrier stream whose session is still open: at start-up, those whose stream
   * died with the previous process (a socket never outlives its daemon).
   */
  orphanedStreams(): Array<{ id: number; tenant_id: string }> {
    return this.q.orphanedStreams.all() as Array<{ id: number; tenant_id: string }>;
  }
  /**
   * Prepared calls (`not_dialled`, no transport) whose session is still open and whose
   * deadline `reserve_until` (epoch seconds: prepared at + `max_call_duration_s`) is at or before
   * `now`: no stream arrived in time. At most `limit`, oldest first.
   */
  expiredPrepared(now: number, limit: number): Array<{ id: number; tenant_id: string; reserve_until: number; created_at: number }> {
    return this.q.expiredPrepared.all({ now, limit }) as Array<{
      id: number;
      tenant_id: string;
      reserve_until: number;
      created_at: number;
    }>;
  }
  /** Records that calls `ids` were alive at `at` (epoch seconds; never moves a call's time back). Run inside a write. */
  touch(ids: Iterable<number>, at: number): void {
    for (const id of ids) this.q.touch.run({ id, at });
  }
  /**
   * When call `id` was last seen alive, epoch seconds: the latest of its media heartbeat
   * (`last_activity_at`), its newest turn, its answer and its start; null for no such call.
   */
  lastSeen(id: number): number | null {
    const v = this.q.lastSeen.get(id) as number | null | undefined;
    return v ?? null;
  }
  /** Records why prepared call `id` ended with no line (its `dial_error`; `not_dialled` stays). */
  notePreparedEnd(id: number, reason: string): void {
    this.q.notePrepared.run({ id, reason });
  }
  /**
   * LiveKit room calls still on the line (`ringing`/`answered`) whose session is open: at
   * start-up these are calls whose media died with the previous daemon.
   */
  orphanedRooms(): Array<{ id: number; tenant_id: string; room_name: string; direction: string }> {
    return this.q.orphanedRooms.all() as Array<{ id: number; tenant_id: string; room_name: string; direction: string }>;
  }
  /** True when session `id` carries a call (`cl_<id>`). */
  has(id: number): boolean {
    return this.q.has.get(id) !== undefined;
  }
  /** Call `cl_<id>` with its session's fields, whatever its tenant. */
  get(id: number): CallWithSession | undefined {
    return this.q.get.get(id) as CallWithSession | undefined;
  }
  /** The call a dial under (tenant, `Idempotency-Key`) created, if any. */
  byIdempotencyKey(tenantId: string, key: string): CallRow | undefined {
    return this.q.byKey.get(tenantId, key) as CallRow | undefined;
  }
  /** The call with LiveKit SIP call id `providerCallId` (`SCL_…`). */
  byProviderCallId(providerCallId: string): CallRow | undefined {
    return this.q.byProvider.get(providerCallId) as CallRow | undefined;
  }
  /**
   * Moves the line of call `id` to `to` with what `m` records, if the transition table
   * (domain/calls.ts `DIAL_TRANSITIONS`) allows it from the call's current status; otherwise
   * changes nothing (a late report never moves a call backwards).
   * @returns true when the call moved.
   */
  moveDial(id: number, to: DialStatus, m: DialMove = {}): boolean {
    return (
      this.q.move[to].run({
        id,
        set_provider: m.provider_call_id === undefined ? 0 : 1,
        provider_call_id: m.provider_call_id ?? null,
        set_error: m.dial_error === undefined ? 0 : 1,
        dial_error: m.dial_error ?? null,
        set_key: m.idempotency_key === undefined ? 0 : 1,
        idempotency_key: m.idempotency_key ?? null,
        answered_at: m.answered_at ?? null,
      }).changes === 1
    );
  }
  /** Start-up: dials the previous process left in flight become `unknown` (dialling → unknown). Returns how many. */
  markInterruptedDials(): number {
    return this.q.unknownAfterCrash.run().changes;
  }
  /**
   * The tenant's calls, newest first, with `seq` below `beforeSeq`.
   * @param status `open`/`ended` sessions only, or null for all. `open` reads the tenant's open
   *   sessions through the partial index `sessions_open` (migration 6), so its cost follows
   *   the open sessions, not all calls.
   * @param source one source's calls only (through index `calls_tenant_source`), or null for all
   */
  list(
    tenantId: string,
    status: 'open' | 'ended' | null,
    beforeSeq: number,
    limit: number,
    source: CallSource | null = null,
  ): CallWithSession[] {
    if (source !== null) return this.q.listSource.all({ tenant: tenantId, source, status, before: beforeSeq, limit }) as CallWithSession[];
    const q = status === 'open' ? this.q.listOpen : status === 'ended' ? this.q.listEnded : this.q.list;
    return q.all({ tenant: tenantId, before: beforeSeq, limit }) as CallWithSession[];
  }
  /**
   * The tenant's spend over sessions created in `[start, end)` (epoch seconds), in
   * micro-rupees: each session's cost, or the reservation of its call while it is open (and
   * `now` is before its `reserve_until`) when that is more.
   *
   * One statement over two index ranges, whatever the day's sessions and open
   * calls: the day's spend ledger rows (at most 100 quarter-hours; migration 7's costs plus
   * migration 10's `held_micro`, what open calls hold beyond their cost so far), less what the
   * day's holds past their `reserve_until` and not yet released still add there (few: see
   * {@link releaseExpiredHolds}). A day that does not start and end on quarter-hours (no real
   * zone today) falls back to walking the day's sessions, the reference the ledger must equal.
   * `now` is expected not to go back before a release: a released hold no longer counts for an
   * earlier `now` either.
   */
  spendMicro(tenantId: string, start: number, end: number, now: number): number {
    if (start % SPEND_BUCKET_S !== 0 || end % SPEND_BUCKET_S !== 0) {
      return Number(this.q.spendWalk.get({ tenant: tenantId, start, end, now }));
    }
    return Number(this.q.ledger.get({ tenant: tenantId, from: start / SPEND_BUCKET_S, to: end / SPEND_BUCKET_S, now }));
  }

  /**
   * Releases (deletes) up to `limit` of the tenant's call holds (migration 10) whose
   * `reserve_until` is at or before `now` (epoch seconds): they no longer count, and the
   * ledger's `held_micro` loses what they added, in the same write. The spend read is the same
   * before and after; what changes is that it no longer reads them. Run inside a write
   * (`Store.write`), e.g. the one that places the tenant's next call.
   * @returns how many holds were released.
   */
  releaseExpiredHolds(tenantId: string, now: number, limit: number = RELEASE_BATCH): number {
    if (this.q.anyExpired.get({ tenant: tenantId, now }) === undefined) return 0;
    return this.q.release.run({ tenant: tenantId, now, limit }).changes;
  }
}
