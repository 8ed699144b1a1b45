/**
 * The carrier WebSocket dialects vagent serves (`GET /v1/media/twilio|exotel|plivo`,
 * docs/media.md): a name stored with carriers and calls, and read by the media stream code.
 */

/** The carrier dialects, as named in the route (`/v1/media/<dialect>`) and in `calls.transport`. */
export type CarrierDialect = 'twilio' | 'exotel' | 'plivo';

/** Every dialect, in route order. */
export const CARRIER_DIALECTS: readonly CarrierDialect[] = ['twilio', 'exotel', 'plivo'];
