/**
 * Trunks and number records (`TrunkSchema`, `NumberSchema` in src/contract; docs/api-decisions.md "Trunks", "Numbers").
 */
import type { Db } from '../database.js';

/**
 * A trunk row as read: `numbers` is a JSON array; `has_credentials` is 1 when sealed
 * credentials are stored (the blob itself is read only by {@link TrunkRepo.sealedAuth}).
 */
export interface TrunkRow {
  id: string;
  tenant_id: string;
  name: string | null;
  address: string;
  numbers: string;
  provider_trunk_id: string | null;
  has_credentials: 0 | 1;
  created_at: number;
}

const TRUNK_COLUMNS = 'id, tenant_id, name, address, numbers, provider_trunk_id, auth_sealed IS NOT NULL AS has_credentials, created_at';

/** A number-record row: stored exactly as the API shows it. */
export interface NumberRow {
  /** `num_<id>`. */
  id: string;
  tenant_id: string;
  /** E.164. */
  number: string;
  trunk_id: string | null;
  agent_id: string | null;
  label: string | null;
  /** Epoch seconds. */
  created_at: number;
}

/** The columns of a {@link NumberRow} (not the storage-order `seq`). */
const NUMBER_COLUMNS = 'id, tenant_id, number, trunk_id, agent_id, label, created_at';

/** Trunk queries over one connection. */
export class TrunkRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO trunks (id, tenant_id, name, address, numbers, provider_trunk_id, auth_sealed, created_at)
        VALUES (@id, @tenant_id, @name, @address, @numbers, @provider_trunk_id, @auth_sealed, @created_at)`),
      get: db.prepare(`SELECT ${TRUNK_COLUMNS} FROM trunks WHERE id = ?`),
      list: db.prepare(`SELECT ${TRUNK_COLUMNS} FROM trunks WHERE tenant_id = ? ORDER BY seq`),
      sealed: db.prepare('SELECT auth_sealed FROM trunks WHERE id = ?').pluck(),
      del: db.prepare('DELETE FROM trunks WHERE id = ?'),
      unlinkNumbers: db.prepare('UPDATE numbers SET trunk_id = NULL WHERE trunk_id = ?'),
    };
  }

  /** Inserts a trunk with its AES-GCM sealed credentials (or null); `has_credentials` follows from them. */
  insert(row: Omit<TrunkRow, 'has_credentials'>, authSealed: Buffer | null): void {
    // Object.assign, not a spread: V8 copies a spread object that gains a key slowly.
    this.q.insert.run(Object.assign({}, row, { auth_sealed: authSealed }));
  }
  /** The sealed credentials of trunk `id`, or null when it has none. */
  sealedAuth(id: string): Buffer | null {
    return (this.q.sealed.get(id) as Buffer | null | undefined) ?? null;
  }
  /** A trunk by id, whatever its tenant (the caller applies tenant rules). */
  get(id: string): TrunkRow | undefined {
    return this.q.get.get(id) as TrunkRow | undefined;
  }
  /** The tenant's trunks, oldest first. */
  list(tenantId: string): TrunkRow[] {
    return this.q.list.all(tenantId) as TrunkRow[];
  }
  /** Deletes a trunk and clears `trunk_id` on the number records that named it. */
  delete(id: string): void {
    this.q.unlinkNumbers.run(id);
    this.q.del.run(id);
  }
}

/** Number-record queries over one connection. */
export class NumberRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO numbers (id, tenant_id, number, trunk_id, agent_id, label, created_at)
        VALUES (@id, @tenant_id, @number, @trunk_id, @agent_id, @label, @created_at)`),
      get: db.prepare(`SELECT ${NUMBER_COLUMNS} FROM numbers WHERE tenant_id = ? AND number = ?`),
      getAny: db.prepare(`SELECT ${NUMBER_COLUMNS} FROM numbers WHERE number = ? ORDER BY seq LIMIT 1`),
      allTenants: db.prepare(`SELECT ${NUMBER_COLUMNS} FROM numbers WHERE number = ? ORDER BY seq`),
      list: db.prepare(`SELECT ${NUMBER_COLUMNS} FROM numbers WHERE tenant_id = ? ORDER BY number`),
      bind: db.prepare('UPDATE numbers SET agent_id = ? WHERE id = ?'),
      del: db.prepare('DELETE FROM numbers WHERE id = ?'),
      byId: db.prepare(`SELECT ${NUMBER_COLUMNS} FROM numbers WHERE id = ?`),
    };
  }

  /** Inserts a number record; throws on a duplicate (tenant, number). */
  insert(row: NumberRow): void {
    this.q.insert.run(row);
  }
  /** The tenant's record of `number`. */
  get(tenantId: string, number: string): NumberRow | undefined {
    return this.q.get.get(tenantId, number) as NumberRow | undefined;
  }
  /** The oldest record of `number` in any tenant (audit-mode resolution, inbound routing). */
  getAnyTenant(number: string): NumberRow | undefined {
    return this.q.getAny.get(number) as NumberRow | undefined;
  }
  /** Every tenant's record of `number`, oldest first (inbound routing refuses a number held twice). */
  everyTenant(number: string): NumberRow[] {
    return this.q.allTenants.all(number) as NumberRow[];
  }
  /** A number record by `num_…` id, whatever its tenant. */
  byId(id: string): NumberRow | undefined {
    return this.q.byId.get(id) as NumberRow | undefined;
  }
  /** The tenant's records sorted by number. */
  list(tenantId: string): NumberRow[] {
    return this.q.list.all(tenantId) as NumberRow[];
  }
  /** Sets the agent answering inbound calls on record `id`. */
  bind(id: string, agentId: string): void {
    this.q.bind.run(agentId, id);
  }
  /** Deletes number record `id`. */
  delete(id: string): void {
    this.q.del.run(id);
  }
}
