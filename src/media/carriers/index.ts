/**
 * Carrier WebSocket stream protocols (Twilio Media Streams, Exotel AgentStream, Plivo Audio
 * Streams): frame parsers to one normalised {@link CarrierEvent}, outbound frame builders, the
 * per-stream order rules, and the carriers' own upgrade authentication. Pure; no I/O.
 */
export * from './types.js';
export { twilio, parseTwilio, twilioWriter } from './twilio.js';
export {
  exotel,
  parseExotel,
  exotelWriter,
  exotelChunks,
  exotelChunkRules,
  EXOTEL_SAMPLE_RATES,
  EXOTEL_CHUNK_MULTIPLE_BYTES,
  EXOTEL_MAX_CHUNK_BYTES,
  EXOTEL_MIN_CHUNK_MS,
  EXOTEL_MIN_PCM_CHUNK_BYTES,
} from './exotel.js';
export { plivo, parsePlivo, plivoWriter, parsePlivoExtraHeaders } from './plivo.js';
export { CarrierStream, CARRIER_MODULES, type CarrierStart, type CarrierStreamPhase, type CarrierStreamStats } from './stream-state.js';
export {
  constantTimeEqual,
  twilioSignature,
  validateTwilioSignature,
  plivoV3BaseString,
  plivoSignatureV3,
  validatePlivoSignatureV3,
  parseBasicAuth,
  validateExotelBasicAuth,
  MAX_AUTH_INPUT_CHARS,
  type SignedParams,
} from './auth.js';
