/**
 * Number records (docs/api-decisions.md "Numbers"). A record says the tenant holds a
 * DID with a carrier; creating or deleting one never buys or releases a number.
 *
 * Functions named `*Tx` must run inside `Store.write`.
 */
import { ApiError } from '../domain/errors.js';
import type { NumberRecord } from '../contract/index.js';
import { isE164 } from '../domain/e164.js';
import { newNumberId } from '../domain/ids.js';
import { missingSessionValues } from '../engine/context-needs.js';
import type { NumberRow } from '../store/index.js';
import { scoped } from './access.js';
import type { AgentService } from './agents.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';
import type { TrunkService } from './trunks.js';
import type { CreateNumberInput } from '../contract/numbers.js';

/** The public number-record shape (`NumberSchema` in src/contract/numbers.ts). */
export type NumberView = NumberRecord;

/** A validated `POST /v1/numbers` body (the contract's, src/contract/numbers.ts). */
export type { CreateNumberInput };

/** Builds the public view of a number row. */
export const numberView = (row: NumberRow): NumberView => ({ ...row });

/** Number-record use cases. */
export class NumberService {
  constructor(
    private readonly deps: ServiceDeps,
    private readonly trunks: TrunkService,
    private readonly agents: AgentService,
  ) {}

  /**
   * Registers a DID for the caller's tenant.
   * @throws ApiError already_exists when the tenant already has it; trunk_not_found when
   *         `trunk_id` does not resolve; for `agent_id`, see {@link requireInboundAgent}.
   */
  create(principal: Principal, input: CreateNumberInput, scope: Scope): Promise<Committed<NumberView>> {
    return this.deps.uow.run(scope, (tx) => this.createTx(tx, principal, input));
  }

  /** The write step of {@link create}. */
  createTx(_tx: Tx, principal: Principal, input: CreateNumberInput): NumberView {
    if (input.trunk_id) this.trunks.resolve(principal, input.trunk_id);
    if (input.agent_id) this.requireInboundAgent(principal.tenantId, input.agent_id);
    if (this.deps.repos.numbers.get(principal.tenantId, input.number)) {
      throw new ApiError('already_exists', `${input.number} is already registered (see: GET /v1/numbers)`, { param: 'number' });
    }
    const row: NumberRow = {
      id: newNumberId(),
      tenant_id: principal.tenantId,
      number: input.number,
      trunk_id: input.trunk_id ?? null,
      agent_id: input.agent_id ?? null,
      label: input.label ?? null,
      created_at: this.deps.nowS(),
    };
    this.deps.repos.numbers.insert(row);
    return numberView(row);
  }

  /** The caller's number records, sorted by number. */
  list(principal: Principal): NumberView[] {
    return this.deps.repos.numbers.list(principal.tenantId).map(numberView);
  }

  /**
   * The record of a DID named in a path.
   * @throws ApiError invalid_request when `number` is not E.164; not_found when it is not
   *         registered for the tenant (in audit mode another tenant's record resolves).
   */
  resolve(principal: Principal, number: string): NumberRow {
    if (!isE164(number)) {
      throw new ApiError(
        'invalid_request',
        'the number in the path must be E.164, with the leading + encoded as %2B (for example /v1/numbers/%2B919876543210)',
        { param: 'number' },
      );
    }
    const row =
      this.deps.repos.numbers.get(principal.tenantId, number) ??
      scoped(this.deps, principal, this.deps.repos.numbers.getAnyTenant(number), number);
    if (!row) throw new ApiError('not_found', `${number} is not registered (see: GET /v1/numbers)`, { param: 'number' });
    return row;
  }

  /**
   * Binds the agent that answers inbound calls on the DID.
   * @throws see {@link resolve} and {@link requireInboundAgent}.
   */
  bind(principal: Principal, number: string, agentId: string, scope: Scope): Promise<Committed<NumberView>> {
    return this.deps.uow.run(scope, (tx) => this.bindTx(tx, principal, number, agentId));
  }

  /** The write step of {@link bind}. */
  bindTx(_tx: Tx, principal: Principal, number: string, agentId: string): NumberView {
    const row = this.resolve(principal, number);
    // The number's own tenant (in audit mode it may not be the caller's) answers its calls.
    this.requireInboundAgent(row.tenant_id, agentId);
    this.deps.repos.numbers.bind(row.id, agentId);
    return numberView({ ...row, agent_id: agentId });
  }

  /**
   * The agent a number is bound to answers the calls that come in on it: it must exist in the
   * number's tenant and be written for inbound calls. An `outbound` agent's script assumes the
   * call was placed with its context (`vagent call place`), so a caller would hear it with blanks.
   * @throws ApiError not_found (param `agent_id`) when the tenant has no such agent;
   *         invalid_request (param `agent_id`) when its direction is `outbound`, or when it
   *         needs a `customer_name` or `required_context` an inbound call does not bring.
   */
  private requireInboundAgent(tenantId: string, agentId: string): void {
    const row = this.deps.repos.agents.get(tenantId, agentId);
    if (!row) {
      throw new ApiError('not_found', `no agent ${agentId} in this tenant (see: GET /v1/agents; add one with vagent agent apply)`, {
        param: 'agent_id',
      });
    }
    const def = this.agents.compiledRevision(row.digest).def;
    if (def.direction !== 'inbound') {
      throw new ApiError(
        'invalid_request',
        `agent ${agentId} has direction ${def.direction}: a number answers inbound calls, so bind an agent with direction inbound (outbound agents are placed with POST /v1/calls)`,
        { param: 'agent_id' },
      );
    }
    // An inbound call brings only its numbers (app/inbound.ts): an agent needing more could never answer it.
    const needs = missingSessionValues(def, {
      customer_name: null,
      context: { call: { direction: 'inbound', to: '+0', from: '+0' } },
    });
    if (needs.length > 0) {
      throw new ApiError(
        'invalid_request',
        `agent ${agentId} needs ${needs.map((m) => m.param).join(', ')}, which an inbound call does not bring: a call on this number could not be answered`,
        { param: 'agent_id' },
      );
    }
  }

  /** Removes the service's record and binding (not the carrier's number). @throws see {@link resolve}. */
  delete(principal: Principal, number: string, scope: Scope): Promise<Committed<{ number: string; deleted: true }>> {
    return this.deps.uow.run(scope, (tx) => this.deleteTx(tx, principal, number));
  }

  /** The write step of {@link delete}. */
  deleteTx(_tx: Tx, principal: Principal, number: string): { number: string; deleted: true } {
    const row = this.resolve(principal, number);
    this.deps.repos.numbers.delete(row.id);
    return { number: row.number, deleted: true };
  }
}
