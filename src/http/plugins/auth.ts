/**
 * Bearer-key authentication (docs/api-decisions.md "Auth").
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../domain/errors.js';
import type { TenantService } from '../../app/tenants.js';

const BEARER = /^Bearer[ ]+(\S+)\s*$/i;

/**
 * Adds an `onRequest` hook to `scope` that sets `request.caller` or fails with 401
 * `unauthorized`. Register it inside the plugin holding the authenticated routes.
 */
export function requireApiKey(scope: FastifyInstance, tenants: TenantService): void {
  // A callback-style hook: no promise per request.
  scope.addHook('onRequest', (request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) => {
    try {
      authenticateRequest(request, tenants);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
}

/** Sets `request.caller` from its bearer key. @throws ApiError unauthorized. */
function authenticateRequest(request: FastifyRequest, tenants: TenantService): void {
  const header = request.headers.authorization;
  if (!header) {
    throw new ApiError(
      'unauthorized',
      'missing "Authorization: Bearer <API key>" header; create a key with: vagent admin key create --tenant default',
    );
  }
  const found = bearerKey(header, tenants);
  if (!found) throw new ApiError('unauthorized', 'Authorization header must be "Bearer <API key>"');
  request.principal = {
    tenantId: found.tenantId,
    keyId: found.keyId,
    requestId: request.id,
    method: request.method,
    route: request.routeOptions.url ?? 'unknown',
  };
}

/**
 * The key an `Authorization` header presents, or null when it is not a bearer header.
 * @throws ApiError unauthorized when the bearer key is unknown or revoked
 */
export function bearerKey(header: string, tenants: TenantService): { tenantId: string; keyId: string } | null {
  const match = BEARER.exec(header);
  if (!match) return null;
  const found = tenants.authenticate(match[1]!);
  if (!found) throw new ApiError('unauthorized', 'API key not recognised: unknown or revoked (see: vagent admin key list)');
  return found;
}

/** The principal (the API key holder) of an authenticated request. @throws Error when auth did not run (a wiring bug). */
export function principalOf(request: FastifyRequest) {
  if (!request.principal) throw new Error('route is missing the API key hook');
  return request.principal;
}
