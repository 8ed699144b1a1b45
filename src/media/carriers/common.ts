/**
 * Shared pieces of the dialect parsers: bounded JSON parsing, zod validation with errors that
 * name the dialect and the field, strict base64 media decoding, and value coercions carriers
 * need (numbers sent as strings).
 */
import { z } from 'zod';
import {
  CarrierProtocolError,
  MAX_CUSTOM_PARAMETER_CHARS,
  MAX_CUSTOM_PARAMETERS,
  MAX_FRAME_CHARS,
  MAX_MARK_NAME_CHARS,
  MAX_MEDIA_PAYLOAD_BYTES,
  type CarrierDialect,
  type CarrierEvent,
} from './types.js';

const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Parses `frame` (a text frame as a string, or its UTF-8 bytes as a WebSocket library may hand
 * them over) as one JSON object with a string `event`. Throws `oversized` above
 * {@link MAX_FRAME_CHARS} (characters, or bytes before decoding), `malformed_json` when it is
 * not UTF-8 or not a JSON object, `invalid_message` (field `event`) when `event` is missing or
 * not a string.
 */
export function parseFrame(dialect: CarrierDialect, frame: string | Uint8Array): { event: string; body: Record<string, unknown> } {
  let text: string;
  if (typeof frame === 'string') {
    text = frame;
  } else if (frame instanceof Uint8Array) {
    if (frame.length > MAX_FRAME_CHARS) {
      throw new CarrierProtocolError(dialect, 'oversized', `frame of ${frame.length} bytes exceeds the ${MAX_FRAME_CHARS}-character limit`);
    }
    try {
      text = UTF8.decode(frame);
    } catch {
      throw new CarrierProtocolError(dialect, 'malformed_json', 'frame is not UTF-8 text');
    }
  } else {
    throw new CarrierProtocolError(dialect, 'malformed_json', 'frame is not text');
  }
  if (text.length > MAX_FRAME_CHARS) {
    throw new CarrierProtocolError(
      dialect,
      'oversized',
      `frame of ${text.length} characters exceeds the ${MAX_FRAME_CHARS}-character limit`,
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new CarrierProtocolError(dialect, 'malformed_json', `frame is not JSON (${(err as Error).message})`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new CarrierProtocolError(dialect, 'malformed_json', 'frame is not a JSON object');
  }
  const body = value as Record<string, unknown>;
  if (typeof body.event !== 'string' || body.event.length === 0) {
    throw new CarrierProtocolError(dialect, 'invalid_message', 'frame has no string "event"', 'event');
  }
  return { event: body.event, body };
}

/**
 * Validates `body` (a frame of event `event`) against `schema`. Throws `invalid_message` naming
 * the first offending field, e.g. `twilio: start frame: start.streamSid: expected string`.
 */
export function validate<T>(dialect: CarrierDialect, event: string, schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join('.');
  const what = issue.code === 'invalid_type' && /received undefined/.test(issue.message) ? 'missing' : issue.message;
  throw new CarrierProtocolError(dialect, 'invalid_message', `${event} frame: ${field || '(frame)'}: ${what}`, field || undefined);
}

/**
 * Checks a `start` frame's optional top-level stream id (`field`) against the one inside
 * `start`; throws `invalid_message` naming `field` when they differ.
 */
export function checkStartStreamId(dialect: CarrierDialect, field: string, outer: string | undefined, inner: string): void {
  if (outer !== undefined && outer !== inner) {
    throw new CarrierProtocolError(dialect, 'invalid_message', `start frame: ${field} differs from start.${field}`, field);
  }
}

type StartEvent = Extract<CarrierEvent, { type: 'start' }>;

/**
 * The optional `accountId`, `from` and `to` of a `start` event: the account id when sent, the
 * numbers when sent and non-empty.
 */
export function startParties(s: {
  accountId?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}): Pick<StartEvent, 'accountId' | 'from' | 'to'> {
  return {
    ...(s.accountId !== undefined ? { accountId: s.accountId } : {}),
    ...(s.from ? { from: s.from } : {}),
    ...(s.to ? { to: s.to } : {}),
  };
}

/** A non-empty string of at most 256 characters (ids, names). */
export const idString = z.string().min(1).max(256);

/** A mark/checkpoint name as carriers echo it. */
export const markName = z.string().min(1).max(MAX_MARK_NAME_CHARS);

/**
 * A non-negative integer sent as a number or a decimal string (`"8000"`, `8000`), as carriers
 * do for sample rates, chunk numbers and timestamps.
 */
export const intLike = z
  .union([z.number(), z.string().regex(/^\d{1,16}$/, 'expected a decimal integer')])
  .transform((v) => Number(v))
  .pipe(z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER));

/** One DTMF key: `0-9`, `*`, `#`, `A-D` (RFC 4733 §3.2 events 0–15). */
export const dtmfDigit = z
  .string()
  .regex(/^[0-9*#A-Da-d]$/, 'expected one DTMF key (0-9, *, #, A-D)')
  .transform((d) => d.toUpperCase());

/** A flat map of custom parameters; values that are numbers or booleans become strings. */
export const stringMap = z
  .record(z.string().max(256), z.union([z.string().max(MAX_CUSTOM_PARAMETER_CHARS), z.number(), z.boolean()]))
  .refine((m) => Object.keys(m).length <= MAX_CUSTOM_PARAMETERS, `at most ${MAX_CUSTOM_PARAMETERS} parameters`)
  .transform((m) => Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)])) as Record<string, string>);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Decodes a base64 media payload (RFC 4648 §4, padded). Throws `oversized` when it would decode
 * to more than {@link MAX_MEDIA_PAYLOAD_BYTES}, `bad_payload` when it is not canonical base64 or
 * is not a whole number of `sampleBytes`-byte samples (2 for PCM16).
 */
export function decodePayload(dialect: CarrierDialect, b64: string, field: string, sampleBytes: 1 | 2): Buffer {
  const approx = Math.floor((b64.length * 3) / 4);
  if (approx > MAX_MEDIA_PAYLOAD_BYTES + 2) {
    throw new CarrierProtocolError(
      dialect,
      'oversized',
      `${field} decodes to ~${approx} bytes, over the ${MAX_MEDIA_PAYLOAD_BYTES}-byte limit`,
      field,
    );
  }
  if (b64.length % 4 !== 0 || !BASE64.test(b64)) {
    throw new CarrierProtocolError(dialect, 'bad_payload', `${field} is not base64`, field);
  }
  const bytes = Buffer.from(b64, 'base64');
  if (bytes.length > MAX_MEDIA_PAYLOAD_BYTES) {
    throw new CarrierProtocolError(
      dialect,
      'oversized',
      `${field} decodes to ${bytes.length} bytes, over the ${MAX_MEDIA_PAYLOAD_BYTES}-byte limit`,
      field,
    );
  }
  if (bytes.length % sampleBytes !== 0) {
    throw new CarrierProtocolError(
      dialect,
      'bad_payload',
      `${field} is ${bytes.length} bytes, not whole ${sampleBytes}-byte samples`,
      field,
    );
  }
  return bytes;
}

/** Checks a mark name before sending it; throws `invalid_outbound`. */
export function checkMarkName(dialect: CarrierDialect, name: string): void {
  if (typeof name !== 'string' || name.length === 0 || name.length > MAX_MARK_NAME_CHARS) {
    throw new CarrierProtocolError(dialect, 'invalid_outbound', `mark name must be 1–${MAX_MARK_NAME_CHARS} characters`, 'mark.name');
  }
}

/** Checks outbound bytes are a non-empty byte array of whole samples; throws `invalid_outbound`. */
export function checkOutbound(dialect: CarrierDialect, encoded: Uint8Array, sampleBytes: 1 | 2): void {
  if (!(encoded instanceof Uint8Array) || encoded.length === 0) {
    throw new CarrierProtocolError(dialect, 'invalid_outbound', 'media must be a non-empty byte array', 'media.payload');
  }
  if (encoded.length % sampleBytes !== 0) {
    throw new CarrierProtocolError(
      dialect,
      'invalid_outbound',
      `media of ${encoded.length} bytes is not whole ${sampleBytes}-byte samples`,
      'media.payload',
    );
  }
}

/** Base64 of bytes (no copy for a Buffer). */
export function toBase64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

/** Bytes per sample of an encoding. */
export function sampleBytesOf(encoding: 'mulaw' | 'pcm16'): 1 | 2 {
  return encoding === 'pcm16' ? 2 : 1;
}

/**
 * The `media` event of an inbound frame, the same for every dialect: the stream id when the
 * frame names one, the payload decoded from base64 (still encoded audio), and the carrier's
 * timestamp (ms) and chunk number when sent.
 * @param streamId the frame's stream id (`streamSid`, `stream_sid`, `streamId`), if any
 * @throws CarrierProtocolError for a payload that is not base64 or too big
 */
export function mediaEvent(
  dialect: CarrierDialect,
  streamId: string | undefined,
  media: { payload: string; timestamp?: number | undefined; chunk?: number | undefined },
): CarrierEvent {
  return {
    type: 'media',
    ...(streamId !== undefined ? { streamId } : {}),
    payload: decodePayload(dialect, media.payload, 'media.payload', 1),
    ...(media.timestamp !== undefined ? { timestampMs: media.timestamp } : {}),
    ...(media.chunk !== undefined ? { seq: media.chunk } : {}),
  };
}
