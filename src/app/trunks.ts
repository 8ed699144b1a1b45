/**
 * Trunks (docs/api-decisions.md "Trunks"). Credentials are sealed before they are stored and
 * never leave this module in a view.
 *
 * Functions named `*Tx` must run inside `Store.write` (one transaction per request).
 */
import { ApiError } from '../domain/errors.js';
import type { Trunk } from '../contract/index.js';
import { isTrunkId, newTrunkId, shortId } from '../domain/ids.js';
import type { TrunkRow } from '../store/index.js';
import { scoped } from './access.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import type { TrunkCredentials } from './secrets.js';
import type { CreateTrunkInput } from '../contract/trunks.js';

/** The public trunk shape (`TrunkSchema` in src/contract/trunks.ts). */
export type TrunkView = Trunk;

/** A validated `POST /v1/trunks` body (the contract's, src/contract/trunks.ts). */
export type { CreateTrunkInput };

/** Builds the public view of a trunk row. */
export function trunkView(row: TrunkRow): TrunkView {
  return {
    id: row.id,
    name: row.name,
    address: row.address,
    numbers: JSON.parse(row.numbers) as string[],
    provider_trunk_id: row.provider_trunk_id,
    has_credentials: row.has_credentials === 1,
    created_at: row.created_at,
  };
}

/** Trunk use cases. */
export class TrunkService {
  constructor(private readonly deps: ServiceDeps) {}

  /** Creates a trunk for the caller's tenant (duplicate caller-ID numbers are collapsed). */
  create(principal: Principal, input: CreateTrunkInput, scope: Scope): Promise<Committed<TrunkView>> {
    return this.deps.uow.run(scope, (tx) => this.createTx(tx, principal, input));
  }

  /** The write step of {@link create}. */
  createTx(_tx: Tx, principal: Principal, input: CreateTrunkInput): TrunkView {
    const id = newTrunkId();
    const sealed = input.auth ? this.deps.credentials.seal(input.auth, principal.tenantId, id) : null;
    const row: TrunkRow = {
      id,
      tenant_id: principal.tenantId,
      name: input.name ?? null,
      address: input.address,
      numbers: JSON.stringify([...new Set(input.numbers ?? [])]),
      provider_trunk_id: input.provider_trunk_id ?? null,
      has_credentials: sealed ? 1 : 0,
      created_at: this.deps.nowS(),
    };
    const { has_credentials: _derived, ...stored } = row;
    this.deps.repos.trunks.insert(stored, sealed);
    return trunkView(row);
  }

  /** The caller's trunks, oldest first. */
  list(principal: Principal): TrunkView[] {
    return this.deps.repos.trunks.list(principal.tenantId).map(trunkView);
  }

  /**
   * The trunk row visible to the caller.
   * @throws ApiError trunk_not_found for a malformed, missing or (in enforce) foreign id.
   */
  resolve(principal: Principal, trunkId: string): TrunkRow {
    const row = isTrunkId(trunkId) ? scoped(this.deps, principal, this.deps.repos.trunks.get(trunkId), trunkId) : undefined;
    if (!row) throw new ApiError('trunk_not_found', `no trunk ${shortId(trunkId)} (see: GET /v1/trunks)`, { param: 'trunk_id' });
    return row;
  }

  /**
   * The decrypted credentials of a trunk the caller may use, or null when it has none.
   * For the dialler only: never put the result in a response, a log line or an error.
   * @throws Error when the sealed blob cannot be opened (wrong master key, tampering).
   */
  credentialsOf(row: TrunkRow): TrunkCredentials | null {
    const sealed = this.deps.repos.trunks.sealedAuth(row.id);
    return sealed ? this.deps.credentials.open(sealed, row.tenant_id, row.id) : null;
  }

  /** One trunk. @throws ApiError trunk_not_found (see {@link resolve}). */
  get(principal: Principal, trunkId: string): TrunkView {
    return trunkView(this.resolve(principal, trunkId));
  }

  /**
   * Deletes a trunk; number records that named it keep their DID with `trunk_id` null.
   * @throws ApiError trunk_not_found (see {@link resolve}).
   */
  delete(principal: Principal, trunkId: string, scope: Scope): Promise<Committed<{ id: string; deleted: true }>> {
    return this.deps.uow.run(scope, (tx) => this.deleteTx(tx, principal, trunkId));
  }

  /** The write step of {@link delete}. */
  deleteTx(_tx: Tx, principal: Principal, trunkId: string): { id: string; deleted: true } {
    const row = this.resolve(principal, trunkId);
    this.deps.repos.trunks.delete(row.id);
    return { id: row.id, deleted: true };
  }
}
