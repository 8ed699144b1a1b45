/**
 * Tenant scoping of id lookups (docs/api-decisions.md "Auth").
 *
 * A resource of the caller's tenant resolves. One of another tenant resolves only in `audit`
 * mode, and then writes an audit event (who, which id, which route); in `enforce` it is
 * reported as missing.
 */
import type { Principal, ServiceDeps } from './context.js';

/**
 * Applies the tenant rule to a looked-up row.
 *
 * @param row        The row found by id in any tenant, or undefined.
 * @param resourceId The id used in the request (recorded in the audit event).
 * @returns The row when the caller may see it, otherwise undefined (the caller throws its
 *          kind's not-found error).
 */
export function scoped<T extends { tenant_id: string }>(
  deps: ServiceDeps,
  principal: Principal,
  row: T | undefined,
  resourceId: string,
): T | undefined {
  if (!row) return undefined;
  if (row.tenant_id === principal.tenantId) return row;
  if (deps.authMode === 'enforce') return undefined;
  deps.repos.tenants.insertAudit({
    at: deps.nowS(),
    actor_tenant_id: principal.tenantId,
    actor_key_id: principal.keyId,
    owner_tenant_id: row.tenant_id,
    resource_id: resourceId,
    method: principal.method,
    route: principal.route,
    request_id: principal.requestId,
  });
  return row;
}
