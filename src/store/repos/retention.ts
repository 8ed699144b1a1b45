/**
 * What retention deletes (docs/api-decisions.md "Retention"), in bounded batches: a tenant's ended sessions
 * created before a cut-off with their turns and calls, its audit events, and the instance's
 * telephony events and unused agent revisions. Each batch method runs inside one write (the
 * caller's `Store.write`); each count method answers exactly what the batches would delete.
 *
 * Never deleted: an open session, a session whose call's line is not final (domain/calls.ts:
 * a line that may still be up, or whose outcome may still arrive), a telephony event still
 * pending, an agent revision that is an agent's current one or that a remaining session pins.
 * Deleting sessions leaves the spend ledger as it is (migration 7 has no delete triggers): a
 * past day's spend, and today's, read the same after a purge. Nor does it touch a call hold
 * (migration 10): only open sessions' calls have one, and an open session is never deleted.
 */
import { DIAL_STATUSES, DIAL_TRANSITIONS } from '../../domain/calls.js';
import type { Db } from '../database.js';

/** Line statuses no call leaves (`not_dialled`, `completed`, `failed`): only such calls are purged. */
export const FINAL_DIAL_STATUSES = DIAL_STATUSES.filter((s) => DIAL_TRANSITIONS[s].length === 0);

/** A session `s` retention may delete, given `@before` (epoch seconds). */
const PURGEABLE = `s.status = 'ended' AND s.created_at < @before
  AND NOT EXISTS (SELECT 1 FROM calls c WHERE c.id = s.id AND c.dial_status NOT IN (${FINAL_DIAL_STATUSES.map((d) => `'${d}'`).join(', ')}))`;

/** What one batch of sessions deleted. */
export interface SessionBatch {
  /** Session numbers N (`se_<N>`) deleted. */
  ids: number[];
  sessions: number;
  turns: number;
  calls: number;
}

/** Rows each table would lose (a dry run) or lost. */
export interface SessionCounts {
  sessions: number;
  turns: number;
  calls: number;
}

/** Retention queries over one connection. */
export class RetentionRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      // Oldest first, through the index sessions_tenant (tenant_id, created_at).
      sessionBatch: db.prepare(`SELECT s.seq, s.id FROM sessions s WHERE s.tenant_id = @tenant AND ${PURGEABLE}
        ORDER BY s.created_at LIMIT @limit`),
      deleteTurns: db.prepare('DELETE FROM session_turns WHERE session_seq = ?'),
      deleteCall: db.prepare('DELETE FROM calls WHERE id = ?'),
      deleteSession: db.prepare('DELETE FROM sessions WHERE seq = ?'),
      countSessions: db.prepare(`SELECT COUNT(*) AS sessions,
          COALESCE(SUM((SELECT COUNT(*) FROM session_turns t WHERE t.session_seq = s.seq)), 0) AS turns,
          COALESCE(SUM(EXISTS (SELECT 1 FROM calls c WHERE c.id = s.id)), 0) AS calls
        FROM sessions s WHERE s.tenant_id = @tenant AND ${PURGEABLE}`),
      auditBatch: db.prepare(`DELETE FROM audit_events WHERE seq IN (SELECT seq FROM audit_events
        WHERE owner_tenant_id = @tenant AND at < @before ORDER BY at LIMIT @limit)`),
      countAudit: db.prepare('SELECT COUNT(*) FROM audit_events WHERE owner_tenant_id = @tenant AND at < @before').pluck(),
      telephonyBatch: db.prepare(`DELETE FROM telephony_events WHERE seq IN (SELECT seq FROM telephony_events
        WHERE received_at < @before AND state <> 'pending' ORDER BY received_at LIMIT @limit)`),
      countTelephony: db.prepare("SELECT COUNT(*) FROM telephony_events WHERE received_at < @before AND state <> 'pending'").pluck(),
      // After the sessions are gone: applied before the cut-off, no agent's current one, pinned by no session.
      revisionBatch: db.prepare(`DELETE FROM agent_revisions WHERE digest IN (SELECT r.digest FROM agent_revisions r
        WHERE r.applied_at < @before AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.digest = r.digest)
          AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.agent_digest = r.digest) LIMIT @limit)`),
      // Before: the same, counting as gone the sessions an all-tenant purge at the same cut-off deletes.
      countRevisions: db
        .prepare(
          `SELECT COUNT(*) FROM agent_revisions r
        WHERE r.applied_at < @before AND NOT EXISTS (SELECT 1 FROM agents a WHERE a.digest = r.digest)
          AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.agent_digest = r.digest AND NOT (${PURGEABLE}))`,
        )
        .pluck(),
      tenants: db.prepare('SELECT id FROM tenants ORDER BY created_at, id').pluck(),
    };
  }

  /**
   * Deletes up to `limit` of the tenant's purgeable sessions created before `before` (epoch
   * seconds), oldest first, with their turns and calls.
   */
  purgeSessions(tenantId: string, before: number, limit: number): SessionBatch {
    const rows = this.q.sessionBatch.all({ tenant: tenantId, before, limit }) as Array<{ seq: number; id: number }>;
    const out: SessionBatch = { ids: [], sessions: 0, turns: 0, calls: 0 };
    for (const r of rows) {
      out.turns += this.q.deleteTurns.run(r.seq).changes;
      out.calls += this.q.deleteCall.run(r.id).changes;
      out.sessions += this.q.deleteSession.run(r.seq).changes;
      out.ids.push(r.id);
    }
    return out;
  }

  /** What {@link purgeSessions} would delete for the tenant, all batches together. */
  countSessions(tenantId: string, before: number): SessionCounts {
    return this.q.countSessions.get({ tenant: tenantId, before }) as SessionCounts;
  }

  /** Deletes up to `limit` audit events about the tenant's resources (its as owner) recorded before `before`. Returns how many. */
  purgeAudit(tenantId: string, before: number, limit: number): number {
    return this.q.auditBatch.run({ tenant: tenantId, before, limit }).changes;
  }

  /** What {@link purgeAudit} would delete, all batches together. */
  countAudit(tenantId: string, before: number): number {
    return this.q.countAudit.get({ tenant: tenantId, before }) as number;
  }

  /** Deletes up to `limit` processed telephony events received before `before`. Returns how many. */
  purgeTelephonyEvents(before: number, limit: number): number {
    return this.q.telephonyBatch.run({ before, limit }).changes;
  }

  /** What {@link purgeTelephonyEvents} would delete, all batches together. */
  countTelephonyEvents(before: number): number {
    return this.q.countTelephony.get({ before }) as number;
  }

  /** Deletes up to `limit` agent revisions applied before `before` that no agent and no session uses. Returns how many. */
  purgeRevisions(before: number, limit: number): number {
    return this.q.revisionBatch.run({ before, limit }).changes;
  }

  /**
   * What {@link purgeRevisions} would delete once every tenant's sessions before `before` are
   * purged (the all-tenant purge deletes sessions first, revisions last).
   */
  countRevisions(before: number): number {
    return this.q.countRevisions.get({ before }) as number;
  }

  /** Every tenant's name, oldest first. */
  tenantIds(): string[] {
    return this.q.tenants.all() as string[];
  }
}
