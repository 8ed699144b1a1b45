/**
 * Idempotency records (spec: Endpoints › Idempotency; DESIGN.md §4).
 * Rows are keyed by (tenant, key); `in_progress` while the first request runs, `done` with
 * the stored status and body afterwards.
 */
import type { Db } from '../database.js';

/** A stored idempotency record. */
export interface IdempotencyRow {
  tenant_id: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  status: number | null;
  body: string | null;
  created_at: number;
}

/** Idempotency queries over one connection. */
export class IdempotencyRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare('SELECT tenant_id, key, fingerprint, state, status, body, created_at FROM idempotency WHERE tenant_id = ? AND key = ?'),
      claim: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, created_at)
        VALUES (?, ?, ?, 'in_progress', ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
          state = 'in_progress', status = NULL, body = NULL, created_at = excluded.created_at`),
      store: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, created_at)
        VALUES (?, ?, ?, 'done', ?, ?, ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET state = 'done', status = excluded.status, body = excluded.body
        WHERE idempotency.state = 'in_progress' AND idempotency.fingerprint = excluded.fingerprint`),
      put: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, created_at)
        VALUES (?, ?, ?, 'done', ?, ?, ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'done',
          status = excluded.status, body = excluded.body, created_at = excluded.created_at`),
      release: db.prepare(`DELETE FROM idempotency WHERE tenant_id = ? AND key = ? AND state = 'in_progress'`),
      releaseAll: db.prepare(`DELETE FROM idempotency WHERE state = 'in_progress'`),
      purge: db.prepare('DELETE FROM idempotency WHERE created_at < ?'),
    };
  }

  /** The record of (tenant, key), expired or not. */
  get(tenantId: string, key: string): IdempotencyRow | undefined {
    return this.q.get.get(tenantId, key) as IdempotencyRow | undefined;
  }
  /** Inserts (or takes over an expired row as) an `in_progress` claim. */
  claim(tenantId: string, key: string, fingerprint: string, at: number): void {
    this.q.claim.run(tenantId, key, fingerprint, at);
  }
  /** Stores a done response: inserts it, or completes this fingerprint's claim; a done row is kept. */
  store(tenantId: string, key: string, fingerprint: string, status: number, body: string, at: number): void {
    this.q.store.run(tenantId, key, fingerprint, status, body, at);
  }
  /**
   * Records a done response, replacing whatever row the key has: only for a key found free (no
   * row, or an expired one) earlier in the same transaction.
   */
  put(tenantId: string, key: string, fingerprint: string, status: number, body: string, at: number): void {
    this.q.put.run(tenantId, key, fingerprint, status, body, at);
  }
  /** Drops a claim so the key can be used again (5xx, 429, crashed handler). */
  release(tenantId: string, key: string): void { this.q.release.run(tenantId, key); }
  /** Drops every claim (start-up: claims of a crashed process). Returns how many. Reads only the claims (partial index `idempotency_in_progress`, migration 6; issue 15 item 5). */
  releaseAll(): number { return this.q.releaseAll.run().changes; }
  /** Deletes records created before `before` (epoch s). Returns how many. */
  purgeBefore(before: number): number { return this.q.purge.run(before).changes; }
}
