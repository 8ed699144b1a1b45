/**
 * Tenants, API keys and audit events (docs/api-decisions.md "Auth").
 */
import type { Db } from '../database.js';

/** A tenant row. `id` is the tenant's name (a slug). */
export interface TenantRow {
  id: string;
  created_at: number;
  daily_budget_inr: number | null;
  /** Days this tenant's records are kept (0: for ever); null: the instance's `retention_days` (migration 8). */
  retention_days: number | null;
  inbound_webhook_url: string | null;
  /** Whether the tenant's phone calls are recorded (`off`, `mono`, `dual`); null: not set (migration 19). */
  recording: 'off' | 'mono' | 'dual' | null;
  /** The inbound webhook's signing secret, sealed (read only by {@link TenantRepo.webhookSecretSealed}). */
  has_webhook_secret: 0 | 1;
  /** What of transcripts its events leave out (migration 18): `off`, `digits` (masked) or `text` (dropped). */
  redact_transcripts: TranscriptRedaction;
}

/** A tenant's redaction of transcripts in its events (docs/events.md "Redaction"). */
export type TranscriptRedaction = 'off' | 'digits' | 'text';

const TENANT_COLUMNS =
  'id, created_at, daily_budget_inr, retention_days, recording, inbound_webhook_url, inbound_webhook_secret_sealed IS NOT NULL AS has_webhook_secret, redact_transcripts';

/** An API key row; `key_hash` is SHA-256 of the secret, never the secret. */
export interface ApiKeyRow {
  id: string;
  tenant_id: string;
  key_hash: Buffer;
  hint: string;
  created_at: number;
  revoked_at: number | null;
}

/** An audit event: a cross-tenant access observed in `audit` mode. */
export interface AuditEventRow {
  seq: number;
  at: number;
  actor_tenant_id: string;
  actor_key_id: string;
  owner_tenant_id: string;
  resource_id: string;
  method: string;
  route: string;
  request_id: string;
}

/** Tenant, key and audit queries over one connection. */
export class TenantRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insertTenant: db.prepare('INSERT INTO tenants (id, created_at) VALUES (?, ?)'),
      getTenant: db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants WHERE id = ?`),
      listTenants: db.prepare(`SELECT ${TENANT_COLUMNS} FROM tenants ORDER BY created_at, id`),
      setBudget: db.prepare('UPDATE tenants SET daily_budget_inr = ? WHERE id = ?'),
      setRetention: db.prepare('UPDATE tenants SET retention_days = ? WHERE id = ?'),
      setRedaction: db.prepare('UPDATE tenants SET redact_transcripts = ? WHERE id = ?'),
      redaction: db.prepare('SELECT redact_transcripts FROM tenants WHERE id = ?').pluck(),
      setRecording: db.prepare('UPDATE tenants SET recording = ? WHERE id = ?'),
      setWebhook: db.prepare('UPDATE tenants SET inbound_webhook_url = ?, inbound_webhook_secret_sealed = ? WHERE id = ?'),
      webhookSecret: db.prepare('SELECT inbound_webhook_secret_sealed FROM tenants WHERE id = ?').pluck(),
      insertKey: db.prepare('INSERT INTO api_keys (id, tenant_id, key_hash, hint, created_at) VALUES (?, ?, ?, ?, ?)'),
      keyByHash: db.prepare('SELECT * FROM api_keys WHERE key_hash = ?'),
      keyById: db.prepare('SELECT * FROM api_keys WHERE id = ?'),
      listKeys: db.prepare('SELECT * FROM api_keys ORDER BY created_at, id'),
      listKeysOf: db.prepare('SELECT * FROM api_keys WHERE tenant_id = ? ORDER BY created_at, id'),
      revokeKey: db.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      insertAudit: db.prepare(`INSERT INTO audit_events
        (at, actor_tenant_id, actor_key_id, owner_tenant_id, resource_id, method, route, request_id)
        VALUES (@at, @actor_tenant_id, @actor_key_id, @owner_tenant_id, @resource_id, @method, @route, @request_id)`),
      listAudit: db.prepare('SELECT * FROM audit_events ORDER BY seq DESC LIMIT ?'),
      listAuditOf: db.prepare('SELECT * FROM audit_events WHERE actor_tenant_id = ? OR owner_tenant_id = ? ORDER BY seq DESC LIMIT ?'),
    };
  }

  /** Inserts a tenant named `id`; `createdAt` in epoch seconds. */
  insertTenant(id: string, createdAt: number): void {
    this.q.insertTenant.run(id, createdAt);
  }
  /** The tenant named `id`, if any. */
  getTenant(id: string): TenantRow | undefined {
    return this.q.getTenant.get(id) as TenantRow | undefined;
  }
  /** Sets what tenant `id`'s events leave out of transcripts. */
  setRedaction(id: string, redaction: TranscriptRedaction): void {
    this.q.setRedaction.run(redaction, id);
  }
  /** What tenant `id`'s events leave out of transcripts (`off` for an unknown tenant). */
  redaction(id: string): TranscriptRedaction {
    return (this.q.redaction.get(id) as TranscriptRedaction | undefined) ?? 'off';
  }
  /** Every tenant, oldest first. */
  listTenants(): TenantRow[] {
    return this.q.listTenants.all() as TenantRow[];
  }

  /** Sets a tenant's daily budget in INR (null: the instance setting applies). */
  setBudget(id: string, inr: number | null): void {
    this.q.setBudget.run(inr, id);
  }
  /** Sets a tenant's retention in whole days (0: keep for ever; null: the instance setting applies). */
  setRetention(id: string, days: number | null): void {
    this.q.setRetention.run(days, id);
  }
  /** Sets a tenant's recording setting (null: not set; an agent's own setting wins over it). */
  setRecording(id: string, mode: 'off' | 'mono' | 'dual' | null): void {
    this.q.setRecording.run(mode, id);
  }
  /** Sets (or with nulls clears) a tenant's inbound routing webhook URL and its sealed signing secret. */
  setInboundWebhook(id: string, url: string | null, secretSealed: Buffer | null): void {
    this.q.setWebhook.run(url, secretSealed, id);
  }
  /** The sealed signing secret of a tenant's inbound webhook, or null. */
  webhookSecretSealed(id: string): Buffer | null {
    return (this.q.webhookSecret.get(id) as Buffer | null | undefined) ?? null;
  }

  /** Inserts a live API key (hash only). */
  insertKey(row: Omit<ApiKeyRow, 'revoked_at'>): void {
    this.q.insertKey.run(row.id, row.tenant_id, row.key_hash, row.hint, row.created_at);
  }
  /** The key whose SHA-256 is `hash`, revoked or not. */
  keyByHash(hash: Buffer): ApiKeyRow | undefined {
    return this.q.keyByHash.get(hash) as ApiKeyRow | undefined;
  }
  /** The key with id `key_…`. */
  keyById(id: string): ApiKeyRow | undefined {
    return this.q.keyById.get(id) as ApiKeyRow | undefined;
  }
  /** Keys of one tenant, or of all, oldest first. */
  listKeys(tenantId?: string): ApiKeyRow[] {
    return (tenantId ? this.q.listKeysOf.all(tenantId) : this.q.listKeys.all()) as ApiKeyRow[];
  }
  /** Marks a key revoked; false when it was already revoked. */
  revokeKey(id: string, at: number): boolean {
    return this.q.revokeKey.run(at, id).changes === 1;
  }

  /** Appends an audit event. */
  insertAudit(row: Omit<AuditEventRow, 'seq'>): void {
    this.q.insertAudit.run(row);
  }
  /** The newest `limit` audit events, optionally where `tenantId` is caller or owner. */
  listAudit(limit: number, tenantId?: string): AuditEventRow[] {
    return (tenantId ? this.q.listAuditOf.all(tenantId, tenantId, limit) : this.q.listAudit.all(limit)) as AuditEventRow[];
  }
}
