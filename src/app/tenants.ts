/**
 * Tenants and API keys (docs/api-decisions.md "Auth"; `vagent admin`).
 *
 * Keys look like `vk_` + 43 base62 characters (≈256 bits). Only SHA-256 of a key is stored;
 * a presented key is hashed, found by hash and compared in constant time.
 */
import crypto from 'node:crypto';
import { RECORDING_MODES, type RecordingMode } from '../domain/agent.js';
import { ApiError } from '../domain/errors.js';
import { newApiKeyId, TENANT_NAME_PATTERN } from '../domain/ids.js';
import type { ApiKeyRow, AuditEventRow, Repos, TenantRow, TranscriptRedaction } from '../store/index.js';

/** Longest retention a tenant may set, in days (as the instance's `retention_days`). */
export const MAX_RETENTION_DAYS = 36_500;

/** The tenant every fresh state dir starts with. */
export const DEFAULT_TENANT = 'default';

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const KEY_PATTERN = /^vk_[A-Za-z0-9]{43}$/;

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of crypto.randomBytes(length * 2)) {
      if (b < 248 && out.length < length) out += BASE62[b % 62]; // 248 = 4·62: no modulo bias
    }
  }
  return out;
}

/** SHA-256 of a key, hex: the key cache's form of {@link hashApiKey}. */
function apiKeyHashHex(key: string): string {
  return crypto.hash('sha256', key);
}

/** SHA-256 of a key, the only form stored. */
export function hashApiKey(key: string): Buffer {
  return Buffer.from(apiKeyHashHex(key), 'hex');
}

/** A tenant as shown by `vagent admin tenant list`. */
export interface TenantView {
  name: string;
  created_at: number;
  daily_budget_inr: number | null;
  /**
   * Days this tenant's sessions, calls and audit events are kept: 0 = for ever, null = the
   * instance's `retention_days` applies (docs/api-decisions.md "Retention").
   */
  retention_days: number | null;
  /**
   * Whether the tenant's phone calls are recorded: `off`, `mono` or `dual`; null = not set (off,
   * unless an agent's own `recording` says otherwise; docs/media.md "Recordings").
   */
  recording: RecordingMode | null;
  inbound_webhook_url: string | null;
  /** Whether a signing secret for the inbound webhook is stored (the secret itself never leaves the store). */
  has_inbound_webhook_secret: boolean;
  /** What its events leave out of transcripts: `off`, `digits` (masked), `text` (dropped); docs/events.md "Redaction". */
  redact_transcripts: TranscriptRedaction;
}

/** An API key's metadata (never the secret). */
export interface ApiKeyView {
  id: string;
  tenant: string;
  hint: string;
  created_at: number;
  revoked_at: number | null;
}

const tenantView = (t: TenantRow): TenantView => ({
  name: t.id,
  created_at: t.created_at,
  daily_budget_inr: t.daily_budget_inr,
  retention_days: t.retention_days,
  recording: t.recording,
  inbound_webhook_url: t.inbound_webhook_url,
  has_inbound_webhook_secret: Boolean(t.has_webhook_secret),
  redact_transcripts: t.redact_transcripts,
});
const keyView = (k: ApiKeyRow): ApiKeyView => ({
  id: k.id,
  tenant: k.tenant_id,
  hint: k.hint,
  created_at: k.created_at,
  revoked_at: k.revoked_at,
});

/** Tenant and key administration over a store (used by `vagent admin` and at start-up). */
export class TenantService {
  /** Live keys by SHA-256 hex, valid while no other process has committed (see {@link authenticate}). */
  private readonly keyCache = new Map<string, { tenantId: string; keyId: string }>();
  private keyCacheVersion = -1;

  constructor(
    private readonly repos: Repos,
    private readonly nowS: () => number = () => Date.now() / 1000,
    /** Told when a tenant's redaction changed in this process (the event log reads it again). */
    private readonly onRedactionChanged: (tenant: string) => void = () => {},
  ) {}

  /** Creates tenant `default` when the database has no tenant. Returns true when it did. */
  ensureDefaultTenant(): boolean {
    return this.repos.store.writeNow(() => {
      if (this.repos.tenants.listTenants().length > 0) return false;
      this.repos.tenants.insertTenant(DEFAULT_TENANT, this.nowS());
      return true;
    });
  }

  /**
   * Creates a tenant.
   * @throws ApiError invalid_request for a name that is not a slug; already_exists for a taken name.
   */
  createTenant(name: string): TenantView {
    if (!TENANT_NAME_PATTERN.test(name)) {
      throw new ApiError(
        'invalid_request',
        'tenant name must be 1–63 lowercase letters, digits, "-" or "_", starting with a letter or digit (for example acme-collections)',
        { param: 'name' },
      );
    }
    return this.repos.store.writeNow(() => {
      if (this.repos.tenants.getTenant(name)) throw new ApiError('already_exists', `tenant ${name} already exists`, { param: 'name' });
      this.repos.tenants.insertTenant(name, this.nowS());
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  listTenants(): TenantView[] {
    return this.repos.tenants.listTenants().map(tenantView);
  }

  /** One tenant. @throws ApiError not_found. */
  getTenant(name: string): TenantView {
    const row = this.repos.tenants.getTenant(name);
    if (!row) throw new ApiError('not_found', `no tenant named ${name} (see: vagent admin tenant list)`, { param: 'tenant' });
    return tenantView(row);
  }

  /**
   * Sets a tenant's daily budget in INR: 0 = no budget for this tenant, null = the instance's
   * `tenant_daily_budget_inr` applies.
   * @throws ApiError not_found (tenant), invalid_request (negative or not finite).
   */
  setBudget(name: string, inr: number | null): TenantView {
    if (inr !== null && (!Number.isFinite(inr) || inr < 0 || inr > 1e9)) {
      throw new ApiError('invalid_request', 'budget must be a number of rupees from 0 (no budget) to 1000000000', {
        param: 'budget',
      });
    }
    return this.repos.store.writeNow(() => {
      this.getTenant(name);
      this.repos.tenants.setBudget(name, inr);
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  /**
   * Sets a tenant's retention in whole days: 0 = keep its records for ever, null = the
   * instance's `retention_days` applies (docs/api-decisions.md "Retention").
   * @throws ApiError not_found (tenant), invalid_request (not a whole number from 0 to {@link MAX_RETENTION_DAYS}).
   */
  setRetention(name: string, days: number | null): TenantView {
    if (days !== null && (!Number.isInteger(days) || days < 0 || days > MAX_RETENTION_DAYS)) {
      throw new ApiError('invalid_request', `retention must be a whole number of days from 0 (keep for ever) to ${MAX_RETENTION_DAYS}`, {
        param: 'retention_days',
      });
    }
    return this.repos.store.writeNow(() => {
      this.getTenant(name);
      this.repos.tenants.setRetention(name, days);
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  /**
   * Sets what a tenant's events leave out of transcripts from now on (docs/events.md
   * "Redaction"); events written before keep what they hold.
   * @throws ApiError not_found (tenant), invalid_request (not off, digits or text).
   */
  setRedaction(name: string, redaction: string): TenantView {
    if (redaction !== 'off' && redaction !== 'digits' && redaction !== 'text') {
      throw new ApiError('invalid_request', 'redact_transcripts must be off, digits or text', { param: 'redact_transcripts' });
    }
    return this.repos.store.writeNow(() => {
      this.getTenant(name);
      this.repos.tenants.setRedaction(name, redaction);
      this.onRedactionChanged(name);
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  /**
   * Sets whether a tenant's phone calls are recorded: `off`, `mono` or `dual`; null = not set. An
   * agent's own `recording` wins over it (docs/media.md "Recordings").
   * @throws ApiError not_found (tenant), invalid_request (another value).
   */
  setRecording(name: string, mode: RecordingMode | null): TenantView {
    if (mode !== null && !(RECORDING_MODES as readonly string[]).includes(mode)) {
      throw new ApiError('invalid_request', 'recording must be off, mono, dual or default', { param: 'recording' });
    }
    return this.repos.store.writeNow(() => {
      this.getTenant(name);
      this.repos.tenants.setRecording(name, mode);
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  /**
   * Sets (or with null clears) a tenant's inbound routing webhook and its signing secret,
   * sealed with the master key. The URL must already have passed the webhook URL policy.
   * @throws ApiError not_found (tenant).
   */
  setInboundWebhook(name: string, webhook: { url: string; secretSealed: Buffer } | null): TenantView {
    return this.repos.store.writeNow(() => {
      this.getTenant(name);
      this.repos.tenants.setInboundWebhook(name, webhook?.url ?? null, webhook?.secretSealed ?? null);
      return tenantView(this.repos.tenants.getTenant(name)!);
    });
  }

  /**
   * Issues a new API key for a tenant. The secret is returned once and never stored.
   * @throws ApiError not_found when the tenant does not exist.
   */
  createKey(tenant: string): { key: string; tenant: string; id: string } {
    return this.repos.store.writeNow(() => {
      if (!this.repos.tenants.getTenant(tenant)) {
        throw new ApiError('not_found', `no tenant named ${tenant} (see: vagent admin tenant list)`, { param: 'tenant' });
      }
      const key = `vk_${randomBase62(43)}`;
      const id = newApiKeyId();
      this.repos.tenants.insertKey({
        id,
        tenant_id: tenant,
        key_hash: hashApiKey(key),
        hint: `${key.slice(0, 7)}…${key.slice(-4)}`,
        created_at: this.nowS(),
      });
      return { key, tenant, id };
    });
  }

  listKeys(tenant?: string): ApiKeyView[] {
    return this.repos.tenants.listKeys(tenant).map(keyView);
  }

  /**
   * Revokes a key by id (`key_…`). Revoked keys get 401 from then on.
   * @throws ApiError not_found for an unknown id.
   */
  revokeKey(id: string): ApiKeyView {
    return this.repos.store.writeNow(() => {
      const row = this.repos.tenants.keyById(id);
      if (!row) throw new ApiError('not_found', `no API key with id ${id} (see: vagent admin key list)`, { param: 'id' });
      this.repos.tenants.revokeKey(id, this.nowS());
      this.keyCache.clear();
      return keyView(this.repos.tenants.keyById(id)!);
    });
  }

  listAudit(limit: number, tenant?: string): AuditEventRow[] {
    return this.repos.tenants.listAudit(limit, tenant);
  }

  /**
   * Finds the live key matching a presented secret.
   * @returns `{tenantId, keyId}`, or undefined for a malformed, unknown or revoked key.
   */
  authenticate(presented: string): { tenantId: string; keyId: string } | undefined {
    if (!KEY_PATTERN.test(presented)) return undefined;
    const hex = apiKeyHashHex(presented);
    // Keys are created and revoked by `vagent admin` in another process: any commit there
    // changes the database's data_version and empties this cache, so a revocation takes
    // effect within Store.externalVersion's 100 ms.
    const version = this.repos.store.externalVersion();
    if (version !== this.keyCacheVersion) {
      this.keyCache.clear();
      this.keyCacheVersion = version;
    }
    const cached = this.keyCache.get(hex);
    if (cached) return cached;
    const hash = Buffer.from(hex, 'hex');
    const row = this.repos.tenants.keyByHash(hash);
    if (!row || !crypto.timingSafeEqual(row.key_hash, hash) || row.revoked_at !== null) return undefined;
    const found = { tenantId: row.tenant_id, keyId: row.id };
    if (this.keyCache.size >= 10_000) this.keyCache.clear();
    this.keyCache.set(hex, found);
    return found;
  }
}
