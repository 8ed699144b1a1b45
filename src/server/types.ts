/**
 * Request decorations shared by the server plugins.
 */
import type { Caller } from '../services/context.js';

/** Idempotency state of one request. */
export interface RequestIdempotency {
  key: string;
  state: 'claimed' | 'replay';
  /** True once the response (or the release) has been written. */
  settled: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated caller; set by the auth plugin on every authenticated route. */
    caller: Caller | null;
    /** Set when the request carried an `Idempotency-Key`. */
    idem: RequestIdempotency | null;
  }
}
