/**
 * Request decorations shared by the server plugins.
 */
import type { Principal } from '../app/context.js';
import type { IdempotencyClaim, IdempotencyMode } from '../app/unit-of-work.js';

/**
 * How a route uses `Idempotency-Key` (route `config.idempotency`):
 * - `claim-first` (default): the claim is committed before the handler runs — for handlers
 *   with effects outside the database (placing a call);
 * - `atomic`: the check, the handler's writes and the stored response commit in one
 *   transaction — for handlers that only write the database (trunks, numbers).
 */
export type { IdempotencyMode };

declare module 'fastify' {
  interface FastifyContextConfig {
    /** See {@link IdempotencyMode}; POST/DELETE routes only. A function decides per request (from the raw body). */
    idempotency?: IdempotencyMode | ((request: FastifyRequest) => IdempotencyMode);
  }

  interface FastifyInstance {
    /** See AppOptions.checkResponses. */
    checkResponses: boolean;
  }

  interface FastifyRequest {
    /** The principal (the API key holder); set by the auth plugin on every authenticated route. */
    principal: Principal | null;
    /** Set when the request carried an `Idempotency-Key`. */
    idem: IdempotencyClaim | null;
  }
}
