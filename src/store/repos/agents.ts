/**
 * Agents (docs/api-decisions.md "Agents"): the current revision of each agent per tenant, and every revision's
 * definition by digest (sessions pin the revision they opened with).
 */
import type { Db } from '../database.js';

/** An agent row: the tenant's current revision of agent `id`. */
export interface AgentRow {
  tenant_id: string;
  id: string;
  version: number;
  digest: string;
  created_at: number;
  updated_at: number;
}

/** Agent queries over one connection. */
export class AgentRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      putRevision: db.prepare(`INSERT INTO agent_revisions (digest, definition, applied_at) VALUES (?, ?, ?)
        ON CONFLICT (digest) DO UPDATE SET applied_at = excluded.applied_at`),
      revision: db.prepare('SELECT definition FROM agent_revisions WHERE digest = ?').pluck(),
      upsert: db.prepare(`INSERT INTO agents (tenant_id, id, version, digest, created_at, updated_at)
        VALUES (@tenant_id, @id, @version, @digest, @created_at, @updated_at)
        ON CONFLICT (tenant_id, id) DO UPDATE SET version = excluded.version, digest = excluded.digest, updated_at = excluded.updated_at`),
      get: db.prepare('SELECT * FROM agents WHERE tenant_id = ? AND id = ?'),
      getAny: db.prepare('SELECT * FROM agents WHERE id = ? ORDER BY created_at LIMIT 1'),
      list: db.prepare('SELECT * FROM agents WHERE tenant_id = ? ORDER BY id'),
      del: db.prepare('DELETE FROM agents WHERE tenant_id = ? AND id = ?'),
      count: db.prepare('SELECT COUNT(*) FROM agents WHERE tenant_id = ?').pluck(),
      digests: db.prepare('SELECT DISTINCT digest FROM agents ORDER BY updated_at DESC').pluck(),
    };
  }

  /**
   * Stores a definition (JSON text) under its digest, applied at `appliedAt` (epoch seconds); a
   * known digest keeps its definition and gets the new time (retention keeps a revision applied
   * within its period).
   */
  putRevision(digest: string, definition: string, appliedAt: number): void {
    this.q.putRevision.run(digest, definition, appliedAt);
  }
  /** The definition JSON of revision `digest`. */
  revision(digest: string): string | undefined {
    return this.q.revision.get(digest) as string | undefined;
  }
  /** Creates or replaces the tenant's agent row. */
  upsert(row: AgentRow): void {
    this.q.upsert.run(row);
  }
  /** The tenant's agent `id`. */
  get(tenantId: string, id: string): AgentRow | undefined {
    return this.q.get.get(tenantId, id) as AgentRow | undefined;
  }
  /** The oldest agent `id` of any tenant (audit-mode resolution). */
  getAnyTenant(id: string): AgentRow | undefined {
    return this.q.getAny.get(id) as AgentRow | undefined;
  }
  /** The tenant's agents by id. */
  list(tenantId: string): AgentRow[] {
    return this.q.list.all(tenantId) as AgentRow[];
  }
  /** Deletes the tenant's agent `id` (its revisions stay for the sessions that use them). */
  delete(tenantId: string, id: string): void {
    this.q.del.run(tenantId, id);
  }
  /** The current revision digest of every agent of every tenant, newest first. */
  currentDigests(): string[] {
    return this.q.digests.all() as string[];
  }
  /** How many agents the tenant has. */
  count(tenantId: string): number {
    return this.q.count.get(tenantId) as number;
  }
}
