/**
 * Carrier credentials and media stream tokens (docs/carrier-auth.md; migration 12).
 *
 * A tenant holds at most one credential per carrier dialect, sealed by the service before it
 * gets here (this module never sees a secret in clear), and at most one stream token, stored
 * only as the SHA-256 hex digest of the token.
 */
import type { CarrierDialect } from '../../domain/carriers.js';
import type { Db } from '../database.js';

/**
 * A carrier credential as listed: never the sealed blob (read only by
 * {@link CarrierRepo.sealed}). `hint` is the end of an account id, never of a secret.
 */
export interface CarrierCredentialRow {
  tenant_id: string;
  dialect: CarrierDialect;
  hint: string | null;
  /** Epoch seconds. */
  updated_at: number;
}

/** A tenant's stream token as listed: when it was made (its hash is not read back). */
export interface StreamTokenRow {
  tenant_id: string;
  /** Epoch seconds. */
  created_at: number;
}

/** Carrier credential and stream token queries over one connection. */
export class CarrierRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      upsert: db.prepare(`INSERT INTO carrier_credentials (tenant_id, dialect, sealed, hint, updated_at)
        VALUES (@tenant_id, @dialect, @sealed, @hint, @updated_at)
        ON CONFLICT (tenant_id, dialect) DO UPDATE SET sealed = excluded.sealed, hint = excluded.hint, updated_at = excluded.updated_at`),
      list: db.prepare('SELECT tenant_id, dialect, hint, updated_at FROM carrier_credentials WHERE tenant_id = ? ORDER BY dialect'),
      sealed: db.prepare('SELECT sealed FROM carrier_credentials WHERE tenant_id = ? AND dialect = ?').pluck(),
      del: db.prepare('DELETE FROM carrier_credentials WHERE tenant_id = ? AND dialect = ?'),
      delToken: db.prepare('DELETE FROM media_stream_tokens WHERE tenant_id = ?'),
      insToken: db.prepare('INSERT INTO media_stream_tokens (token_hash, tenant_id, created_at) VALUES (?, ?, ?)'),
      token: db.prepare('SELECT tenant_id, created_at FROM media_stream_tokens WHERE tenant_id = ?'),
      tenantOfHash: db.prepare('SELECT tenant_id FROM media_stream_tokens WHERE token_hash = ?').pluck(),
    };
  }

  /** Stores (or replaces) the tenant's sealed credential for `row.dialect`. */
  upsert(row: CarrierCredentialRow, sealed: Buffer): void {
    this.q.upsert.run({ tenant_id: row.tenant_id, dialect: row.dialect, sealed, hint: row.hint, updated_at: row.updated_at });
  }
  /** The tenant's credentials, by dialect name. */
  list(tenantId: string): CarrierCredentialRow[] {
    return this.q.list.all(tenantId) as CarrierCredentialRow[];
  }
  /** The sealed credential of the tenant for `dialect`, or null when it has none. */
  sealed(tenantId: string, dialect: CarrierDialect): Buffer | null {
    return (this.q.sealed.get(tenantId, dialect) as Buffer | undefined) ?? null;
  }
  /** Deletes the tenant's credential for `dialect`; true when there was one. */
  delete(tenantId: string, dialect: CarrierDialect): boolean {
    return this.q.del.run(tenantId, dialect).changes > 0;
  }

  /** Replaces the tenant's stream token by the one whose SHA-256 hex digest is `tokenHash`. */
  replaceStreamToken(tenantId: string, tokenHash: string, createdAt: number): void {
    this.q.delToken.run(tenantId);
    this.q.insToken.run(tokenHash, tenantId, createdAt);
  }
  /** The tenant's stream token (when it was made), or undefined when it has none. */
  streamToken(tenantId: string): StreamTokenRow | undefined {
    return this.q.token.get(tenantId) as StreamTokenRow | undefined;
  }
  /** The tenant whose stream token has SHA-256 hex digest `tokenHash`, or undefined. */
  tenantOfTokenHash(tokenHash: string): string | undefined {
    return this.q.tenantOfHash.get(tokenHash) as string | undefined;
  }
}
