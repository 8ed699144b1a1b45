/**
 * Request decorations shared by the server plugins.
 */
import type { Caller } from '../services/context.js';

/**
 * How a route uses `Idempotency-Key` (route `config.idempotency`):
 * - `claim-first` (default): the claim is committed before the handler runs — for handlers
 *   with effects outside the database (placing a call);
 * - `atomic`: the check, the claim, the handler's writes and the stored response commit in
 *   one transaction — for handlers that only write the database (trunks, numbers).
 */
export type IdempotencyMode = 'claim-first' | 'atomic';

/** Idempotency state of one request. */
export interface RequestIdempotency {
  key: string;
  /** Request fingerprint (see IdempotencyService.fingerprint). */
  print: string;
  /** `pending`: an atomic route, checked but not yet claimed. */
  state: 'claimed' | 'pending' | 'replay';
  /** True once the response (or the release) has been written. */
  settled: boolean;
}

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
    /** The authenticated caller; set by the auth plugin on every authenticated route. */
    caller: Caller | null;
    /** Set when the request carried an `Idempotency-Key`. */
    idem: RequestIdempotency | null;
  }
}
