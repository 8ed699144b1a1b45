/**
 * The normalised shape of the three carrier WebSocket dialects vagent serves
 * (`GET /v1/media/twilio|exotel|plivo`; docs/media.md).
 *
 * Each dialect module (./twilio.ts, ./exotel.ts, ./plivo.ts) turns one text frame of its
 * carrier into a {@link CarrierEvent}, and builds that carrier's outbound frames from plain
 * bytes. Everything here is plain data (no classes with hidden state besides the error), so a
 * media worker thread can run it and post the results across a `MessagePort`.
 */

import type { CarrierDialect } from '../../domain/carriers.js';

export { CARRIER_DIALECTS, type CarrierDialect } from '../../domain/carriers.js';

/**
 * How the carrier encodes audio on this stream.
 * - `mulaw`: G.711 μ-law (ITU-T G.711), one byte per sample.
 * - `pcm16`: signed 16-bit linear PCM, little-endian, mono ("raw/slin" at Exotel, `audio/x-l16` at Plivo).
 */
export type CarrierEncoding = 'mulaw' | 'pcm16';

/** The audio format of a stream, as announced by its `start` frame. */
export interface CarrierAudioFormat {
  encoding: CarrierEncoding;
  /** Samples per second, Hz (8000 on the PSTN; Exotel also 16000/24000, Plivo L16 also 16000). */
  sampleRate: number;
}

/**
 * One inbound frame, normalised across dialects.
 *
 * - `connected`: the socket is open (Twilio, Exotel; Plivo sends none).
 * - `start`: the stream's metadata; `customParameters` are Twilio `customParameters`, Exotel
 *   `custom_parameters` or Plivo `extra_headers` (parsed `k=v` pairs), values as strings.
 * - `media`: caller audio, **still encoded** in `format` of the `start` (μ-law or PCM16 LE bytes),
 *   base64-decoded. `timestampMs` is the carrier's own clock (Twilio/Exotel: ms since stream
 *   start; Plivo: Unix epoch ms); `seq` the carrier's chunk number.
 * - `dtmf`: one key pressed by the caller (`0-9`, `*`, `#`, `A-D`).
 * - `markAck`: audio queued before the mark/checkpoint `name` has played (or was cleared).
 * - `cleared`: the carrier confirmed that queued outbound audio was dropped (Plivo `clearedAudio`).
 * - `stop`: the stream ended (caller hung up, or the stream was stopped).
 * - `ignored`: a well-formed frame of an event type this module does not act on.
 */
export type CarrierEvent =
  | { type: 'connected' }
  | {
      type: 'start';
      /** Twilio `streamSid`, Exotel `stream_sid`, Plivo `streamId`. */
      streamId: string;
      /** The carrier's call id (Twilio `callSid`, Exotel `call_sid`, Plivo `callId`). */
      callId: string;
      accountId?: string;
      /** Caller number, when the dialect sends one (Exotel). */
      from?: string;
      /** Called number, when the dialect sends one (Exotel). */
      to?: string;
      /** Twilio `customParameters`, Exotel `custom_parameters`, Plivo `extra_headers`. */
      customParameters: Record<string, string>;
      /** The inbound audio format announced by `start`. */
      format: CarrierAudioFormat;
    }
  | { type: 'media'; streamId?: string; payload: Buffer; timestampMs?: number; seq?: number }
  | { type: 'dtmf'; streamId?: string; digit: string }
  | { type: 'markAck'; streamId?: string; name: string }
  | { type: 'cleared'; streamId?: string }
  | { type: 'stop'; streamId?: string; reason?: string }
  | { type: 'ignored'; event: string };

/** The `type` of a {@link CarrierEvent}. */
export type CarrierEventType = CarrierEvent['type'];

/**
 * Why a frame was refused.
 * - `malformed_json`: not JSON, or not a JSON object.
 * - `invalid_message`: a known event with a missing or mistyped field (`field` names it).
 * - `oversized`: the frame text or the decoded media payload exceeds its limit.
 * - `bad_payload`: the media payload is not valid base64, or not whole samples.
 * - `out_of_order`: the frame is valid but not allowed now (media before `start`, anything after
 *   `stop`, a second `start`; see ./stream-state.ts).
 * - `stream_mismatch`: the frame names another stream than the `start` did.
 * - `invalid_outbound`: an outbound builder was given bytes or a name the carrier refuses.
 */
export type CarrierErrorCode =
  'malformed_json' | 'invalid_message' | 'oversized' | 'bad_payload' | 'out_of_order' | 'stream_mismatch' | 'invalid_outbound';

/** Plain-data form of a {@link CarrierProtocolError}, for posting across threads and logging. */
export interface CarrierErrorData {
  code: CarrierErrorCode;
  dialect: CarrierDialect;
  /** Dotted path of the offending field (`start.mediaFormat.sampleRate`), when one is at fault. */
  field?: string;
  message: string;
}

/** A frame the carrier sent (or that we were about to send) breaks the dialect's protocol. */
export class CarrierProtocolError extends Error {
  override readonly name = 'CarrierProtocolError';
  readonly code: CarrierErrorCode;
  readonly dialect: CarrierDialect;
  readonly field: string | undefined;

  constructor(dialect: CarrierDialect, code: CarrierErrorCode, message: string, field?: string) {
    super(`${dialect}: ${message}`);
    this.code = code;
    this.dialect = dialect;
    this.field = field;
  }

  /** This error as plain data (structured-clone safe). */
  toData(): CarrierErrorData {
    return {
      code: this.code,
      dialect: this.dialect,
      ...(this.field !== undefined ? { field: this.field } : {}),
      message: this.message,
    };
  }
}

/**
 * Largest inbound text frame accepted, in UTF-16 code units (≈ bytes for JSON; the daemon's
 * WebSocket `maxPayload` is the same number of bytes, so a larger frame is refused with 1009
 * before it is buffered). A Twilio 20 ms μ-law frame is ~300 chars, an Exotel 100 ms PCM16
 * frame at 24 kHz ~6.6 K (docs/media.md); the largest media payload accepted,
 * {@link MAX_MEDIA_PAYLOAD_BYTES}, is 43,692 base64 characters, so 48 KiB holds it with its
 * JSON envelope and bounds what one frame can cost.
 */
export const MAX_FRAME_CHARS = 48 * 1024;

/**
 * Largest decoded inbound media payload, bytes: one second of 16 kHz PCM16 (32 000 B) rounded
 * up. Carriers send 20–100 ms per frame; anything larger is refused as `oversized`.
 */
export const MAX_MEDIA_PAYLOAD_BYTES = 32 * 1024;

/** Longest mark/checkpoint name we send or accept, characters. */
export const MAX_MARK_NAME_CHARS = 256;

/** Most custom parameters kept from a `start` frame (more are refused as `invalid_message`). */
export const MAX_CUSTOM_PARAMETERS = 32;

/** Longest custom parameter value kept from a `start` frame, characters. */
export const MAX_CUSTOM_PARAMETER_CHARS = 4096;

/**
 * The outbound frames of one stream, as that carrier's exact JSON text. Bound to one stream
 * (its id and format) when created from the `start` event.
 */
export interface CarrierWriter {
  readonly dialect: CarrierDialect;
  /**
   * A frame that plays `encoded` (bytes already in the stream's format: μ-law or PCM16 LE at
   * its rate). Throws a {@link CarrierProtocolError} `invalid_outbound` if the carrier refuses
   * that size (Exotel: see ./exotel.ts).
   */
  media(encoded: Uint8Array): string;
  /** A mark (Plivo: checkpoint) named `name`, acknowledged once audio sent before it has played. */
  mark(name: string): string;
  /** A frame that drops all audio queued at the carrier (barge-in). */
  clear(): string;
}

/** One dialect: its frame parser and its writer factory. */
export interface CarrierDialectModule {
  readonly dialect: CarrierDialect;
  /**
   * Parses one inbound text frame (a string, or its UTF-8 bytes). Throws {@link CarrierProtocolError} (`malformed_json`,
   * `invalid_message`, `oversized`, `bad_payload`); unknown event types give `{type:'ignored'}`.
   */
  parse(frame: string | Uint8Array): CarrierEvent;
  /** The writer for the stream a `start` event announced. */
  writer(start: Extract<CarrierEvent, { type: 'start' }>): CarrierWriter;
}
