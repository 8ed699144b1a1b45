/**
 * The carrier's reading of the frames a bot sends on a simulated stream (`media`/`playAudio`,
 * `mark`/`checkpoint`, `clear`/`clearAudio`), checked the way each carrier would; the frames a
 * carrier sends are built by ../../media/carriers/sim-frames.ts, whose module comment lists the carriers' docs.
 */
import { sampleBytesOf } from '../../media/carriers/common.js';
import { exotelChunkRules } from '../../media/carriers/exotel.js';
import type { SimStreamIds } from '../../media/carriers/sim-frames.js';
import { CarrierProtocolError, MAX_MARK_NAME_CHARS, type CarrierAudioFormat, type CarrierDialect } from '../../media/carriers/types.js';

/**
 * A frame the bot sent to the carrier, as the carrier understands it:
 * - `media`: audio to queue for play-out, decoded from base64, in the stream's format;
 * - `mark`: a Twilio/Exotel mark or Plivo checkpoint, to acknowledge once the audio queued
 *   before it has played;
 * - `clear`: drop the queued audio (Twilio/Exotel `clear`, Plivo `clearAudio`);
 * - `other`: a well-formed frame of another event (ignored, as carriers do).
 */
export type SimInbound =
  { type: 'media'; bytes: Buffer } | { type: 'mark'; name: string } | { type: 'clear' } | { type: 'other'; event: string };

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * Parses one frame the bot sent on stream `ids.streamId` in `format`, checking it the way the
 * carrier would: JSON object with a string `event`; the stream id, when the dialect puts one
 * on the frame, is this stream's; media is non-empty canonical base64 of whole samples; Plivo
 * `playAudio` restates the stream's content type and rate; Exotel chunks follow its size
 * rules (multiple of 320 B, ≥ 100 ms, ≤ 100 KB; ../../media/carriers/exotel.ts `exotelChunkRules`).
 * @throws CarrierProtocolError (`malformed_json`, `invalid_message`, `bad_payload`,
 *   `stream_mismatch`, `oversized`) describing what the carrier would refuse
 */
export function parseSimInbound(dialect: CarrierDialect, ids: SimStreamIds, format: CarrierAudioFormat, text: string): SimInbound {
  let body: Record<string, unknown>;
  try {
    const v: unknown = JSON.parse(text);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    body = v as Record<string, unknown>;
  } catch (err) {
    throw new CarrierProtocolError(dialect, 'malformed_json', `bot frame is not a JSON object (${(err as Error).message})`);
  }
  const event = body.event;
  if (typeof event !== 'string') throw new CarrierProtocolError(dialect, 'invalid_message', 'bot frame has no string "event"', 'event');
  const sidField = dialect === 'twilio' ? 'streamSid' : dialect === 'exotel' ? 'stream_sid' : 'streamId';
  const sid = body[sidField];
  const needsSid = dialect !== 'plivo' || event !== 'playAudio';
  const names =
    dialect === 'plivo'
      ? { media: 'playAudio', mark: 'checkpoint', clear: 'clearAudio' }
      : { media: 'media', mark: 'mark', clear: 'clear' };
  if (event === names.media || event === names.mark || event === names.clear) {
    if (needsSid && sid === undefined)
      throw new CarrierProtocolError(dialect, 'invalid_message', `${event} frame: ${sidField}: missing`, sidField);
    if (sid !== undefined && sid !== ids.streamId)
      throw new CarrierProtocolError(
        dialect,
        'stream_mismatch',
        `${event} frame names stream ${String(sid)}, not ${ids.streamId}`,
        sidField,
      );
  }
  if (event === names.media) {
    const media = body.media as Record<string, unknown> | undefined;
    if (!media || typeof media !== 'object' || typeof media.payload !== 'string') {
      throw new CarrierProtocolError(dialect, 'invalid_message', `${event} frame: media.payload: missing`, 'media.payload');
    }
    if (dialect === 'plivo') {
      const want = format.encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16';
      if (typeof media.contentType !== 'string' || media.contentType.split(';')[0]!.trim().toLowerCase() !== want) {
        throw new CarrierProtocolError(
          dialect,
          'invalid_message',
          `playAudio frame: media.contentType: expected "${want}", got ${JSON.stringify(media.contentType)}`,
          'media.contentType',
        );
      }
      if (Number(media.sampleRate) !== format.sampleRate) {
        throw new CarrierProtocolError(
          dialect,
          'invalid_message',
          `playAudio frame: media.sampleRate: expected ${format.sampleRate}, got ${JSON.stringify(media.sampleRate)}`,
          'media.sampleRate',
        );
      }
    }
    const b64 = media.payload;
    if (b64.length === 0 || b64.length % 4 !== 0 || !BASE64.test(b64))
      throw new CarrierProtocolError(dialect, 'bad_payload', `${event} frame: media.payload is not base64`, 'media.payload');
    const bytes = Buffer.from(b64, 'base64');
    const sampleBytes = sampleBytesOf(format.encoding);
    if (bytes.length % sampleBytes !== 0)
      throw new CarrierProtocolError(
        dialect,
        'bad_payload',
        `${event} frame: ${bytes.length} bytes are not whole ${sampleBytes}-byte samples`,
        'media.payload',
      );
    if (dialect === 'exotel') {
      const rules = exotelChunkRules(format);
      if (bytes.length % rules.multipleBytes !== 0 || bytes.length < rules.minBytes || bytes.length > rules.maxBytes) {
        throw new CarrierProtocolError(
          dialect,
          'oversized',
          `media chunk of ${bytes.length} B breaks Exotel's rules (multiple of ${rules.multipleBytes}, ${rules.minBytes}–${rules.maxBytes} B)`,
          'media.payload',
        );
      }
    }
    return { type: 'media', bytes };
  }
  if (event === names.mark) {
    const name = dialect === 'plivo' ? body.name : (body.mark as Record<string, unknown> | undefined)?.name;
    if (typeof name !== 'string' || name.length === 0 || name.length > MAX_MARK_NAME_CHARS) {
      throw new CarrierProtocolError(
        dialect,
        'invalid_message',
        `${event} frame: ${dialect === 'plivo' ? 'name' : 'mark.name'}: expected 1–${MAX_MARK_NAME_CHARS} characters`,
        dialect === 'plivo' ? 'name' : 'mark.name',
      );
    }
    return { type: 'mark', name };
  }
  if (event === names.clear) return { type: 'clear' };
  return { type: 'other', event };
}
