/**
 * Exotel AgentStream — the Voicebot applet's bidirectional WebSocket.
 *
 * Sources:
 * - https://developer.exotel.com/docs/agentstream/websocket-protocol — inbound `connected`,
 *   `start` (`start.stream_sid`, `call_sid`, `account_sid`, `from`, `to`, `custom_parameters`,
 *   `media_format {encoding, sample_rate, bit_rate}`, numbers as strings), `media`
 *   (`media.chunk`, `timestamp`, base64 `payload`), `dtmf` (`dtmf.digit`, `duration`), `mark`
 *   (`mark.name`), `stop` (`stop.reason`); outbound `media`, `mark`, `clear` with `stream_sid`.
 * - https://developer.exotel.com/docs/agentstream/stream-voicebot-applet — audio is raw/slin
 *   (16-bit PCM little-endian, mono) at 8000 (default), 16000 or 24000 Hz; outbound chunks
 *   "minimum 3.2 KB (100 ms of data), maximum 100 KB, must be a multiple of 320 bytes".
 * - https://developer.exotel.com/docs/exoml/verbs/stream — ExoML streams may use
 *   `audio/x-mulaw;rate=8000` instead, hence `start.media_format` decides the encoding.
 */
import { z } from 'zod';
import {
  checkMarkName,
  checkStartStreamId,
  checkOutbound,
  dtmfDigit,
  idString,
  intLike,
  markName,
  mediaEvent,
  parseFrame,
  sampleBytesOf,
  startParties,
  stringMap,
  toBase64,
  validate,
} from './common.js';
import {
  CarrierProtocolError,
  type CarrierAudioFormat,
  type CarrierDialectModule,
  type CarrierEncoding,
  type CarrierEvent,
  type CarrierWriter,
} from './types.js';

const D = 'exotel' as const;

/** `media_format.encoding` values → our encoding (case-insensitive, parameters after `;` ignored). */
const ENCODINGS: Record<string, CarrierEncoding> = {
  'audio/x-raw': 'pcm16',
  raw: 'pcm16',
  slin: 'pcm16',
  'raw/slin': 'pcm16',
  'audio/x-l16': 'pcm16',
  'audio/l16': 'pcm16',
  pcm: 'pcm16',
  'audio/x-mulaw': 'mulaw',
  mulaw: 'mulaw',
  ulaw: 'mulaw',
  'audio/pcmu': 'mulaw',
};

/** Sample rates the Voicebot applet offers, Hz. */
export const EXOTEL_SAMPLE_RATES = [8000, 16000, 24000] as const;

const startFrame = z.object({
  stream_sid: idString.optional(),
  start: z.object({
    stream_sid: idString,
    call_sid: idString,
    account_sid: idString.optional(),
    from: z.string().max(64).optional(),
    to: z.string().max(64).optional(),
    custom_parameters: stringMap.optional(),
    media_format: z
      .object({
        encoding: z.string().max(64).optional(),
        sample_rate: intLike.optional(),
        bit_rate: intLike.optional(),
      })
      .optional(),
  }),
});

const mediaFrame = z.object({
  stream_sid: idString.optional(),
  media: z.object({ chunk: intLike.optional(), timestamp: intLike.optional(), payload: z.string() }),
});
const dtmfFrame = z.object({
  stream_sid: idString.optional(),
  dtmf: z.object({ digit: dtmfDigit, duration: intLike.optional() }),
});
const markFrame = z.object({ stream_sid: idString.optional(), mark: z.object({ name: markName }) });
const clearFrame = z.object({ stream_sid: idString.optional() });
const stopFrame = z.object({
  stream_sid: idString.optional(),
  stop: z.object({ reason: z.string().max(256).optional() }).optional(),
});

function sid(f: { stream_sid?: string | undefined }): { streamId?: string } {
  return f.stream_sid !== undefined ? { streamId: f.stream_sid } : {};
}

/**
 * The audio format a `start.media_format` announces: absent fields default to the applet's
 * raw/slin 8 kHz. Throws `invalid_message` for an unknown encoding, a rate outside 8000/16000/
 * 24000 Hz, or PCM with a `bit_rate` other than 16.
 */
function formatOf(
  mf: { encoding?: string | undefined; sample_rate?: number | undefined; bit_rate?: number | undefined } | undefined,
): CarrierAudioFormat {
  const name = (mf?.encoding ?? 'audio/x-raw').split(';')[0]!.trim().toLowerCase();
  const encoding = ENCODINGS[name];
  if (encoding === undefined) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: start.media_format.encoding: unsupported "${mf?.encoding}"`,
      'start.media_format.encoding',
    );
  }
  const sampleRate = mf?.sample_rate ?? 8000;
  if (!(EXOTEL_SAMPLE_RATES as readonly number[]).includes(sampleRate) || (encoding === 'mulaw' && sampleRate !== 8000)) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: start.media_format.sample_rate: unsupported ${sampleRate} Hz for ${encoding}`,
      'start.media_format.sample_rate',
    );
  }
  if (encoding === 'pcm16' && mf?.bit_rate !== undefined && mf.bit_rate !== 16) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: start.media_format.bit_rate: expected 16, got ${mf.bit_rate}`,
      'start.media_format.bit_rate',
    );
  }
  return { encoding, sampleRate };
}

/**
 * Parses one Exotel AgentStream text frame. Throws {@link CarrierProtocolError}; unknown event
 * types give `{type: 'ignored'}`. An inbound `clear` (the platform confirming a clear) becomes
 * `cleared`. The media payload is returned as sent (its sample width is checked against the
 * `start` format by ./stream-state.ts).
 */
export function parseExotel(frame: string | Uint8Array): CarrierEvent {
  const { event, body } = parseFrame(D, frame);
  switch (event) {
    case 'connected':
      return { type: 'connected' };
    case 'start': {
      const f = validate(D, event, startFrame, body);
      checkStartStreamId(D, 'stream_sid', f.stream_sid, f.start.stream_sid);
      const s = f.start;
      return {
        type: 'start',
        streamId: s.stream_sid,
        callId: s.call_sid,
        ...startParties({ accountId: s.account_sid, from: s.from, to: s.to }),
        customParameters: s.custom_parameters ?? {},
        format: formatOf(s.media_format),
      };
    }
    case 'media': {
      const f = validate(D, event, mediaFrame, body);
      return mediaEvent(D, f.stream_sid, f.media);
    }
    case 'dtmf': {
      const f = validate(D, event, dtmfFrame, body);
      return { type: 'dtmf', ...sid(f), digit: f.dtmf.digit };
    }
    case 'mark': {
      const f = validate(D, event, markFrame, body);
      return { type: 'markAck', ...sid(f), name: f.mark.name };
    }
    case 'clear': {
      const f = validate(D, event, clearFrame, body);
      return { type: 'cleared', ...sid(f) };
    }
    case 'stop': {
      const f = validate(D, event, stopFrame, body);
      return { type: 'stop', ...sid(f), ...(f.stop?.reason !== undefined ? { reason: f.stop.reason } : {}) };
    }
    default:
      return { type: 'ignored', event };
  }
}

/** Outbound chunks must be a multiple of this many bytes (20 ms of 8 kHz PCM16). */
export const EXOTEL_CHUNK_MULTIPLE_BYTES = 320;
/** Largest outbound chunk, bytes ("maximum 100 KB"; larger "might result in timeouts"). */
export const EXOTEL_MAX_CHUNK_BYTES = 100_000;
/** Shortest outbound chunk, ms ("minimum 3.2 KB (100 ms of data)"). */
export const EXOTEL_MIN_CHUNK_MS = 100;
/** Shortest outbound PCM chunk, bytes ("minimum chunk size: 3.2k"). */
export const EXOTEL_MIN_PCM_CHUNK_BYTES = 3200;

/**
 * The outbound chunk size rules for `format`, in bytes: a multiple of 320, at most 100 000 B
 * (rounded down to a multiple of 320), and at least both 3200 B and 100 ms of audio for PCM16.
 * Exotel's docs call 3.2 KB "100 ms", which holds at 16 kHz; at 8 kHz 3200 B is 200 ms, so
 * both floors are applied: 3200 B at 8 and 16 kHz, 4800 B at 24 kHz. For μ-law (ExoML
 * streams; the byte floor is stated for raw/slin) the floor is 100 ms rounded up to a
 * multiple of 320: 960 B.
 */
export function exotelChunkRules(format: CarrierAudioFormat): { multipleBytes: number; minBytes: number; maxBytes: number } {
  const bytesPerMs = (format.sampleRate / 1000) * sampleBytesOf(format.encoding);
  const m = EXOTEL_CHUNK_MULTIPLE_BYTES;
  const floor = Math.max(EXOTEL_MIN_CHUNK_MS * bytesPerMs, format.encoding === 'pcm16' ? EXOTEL_MIN_PCM_CHUNK_BYTES : 0);
  return {
    multipleBytes: m,
    minBytes: Math.ceil(floor / m) * m,
    maxBytes: Math.floor(EXOTEL_MAX_CHUNK_BYTES / m) * m,
  };
}

/**
 * Splits `encoded` audio into chunks Exotel accepts for `format`, each `chunkBytes` long
 * (default: the 100 ms minimum), padding the last one with silence (PCM16 zeros, μ-law 0xFF)
 * up to the minimum and a multiple of 320 bytes. Returns no chunk for empty input. Throws
 * `invalid_outbound` if `chunkBytes` breaks the rules.
 */
export function exotelChunks(encoded: Uint8Array, format: CarrierAudioFormat, chunkBytes?: number): Buffer[] {
  const rules = exotelChunkRules(format);
  const size = chunkBytes ?? rules.minBytes;
  if (!Number.isInteger(size) || size % rules.multipleBytes !== 0 || size < rules.minBytes || size > rules.maxBytes) {
    throw new CarrierProtocolError(
      D,
      'invalid_outbound',
      `chunk size ${size} B breaks Exotel's rules (multiple of ${rules.multipleBytes}, ${rules.minBytes}–${rules.maxBytes} B)`,
    );
  }
  const silence = format.encoding === 'mulaw' ? 0xff : 0;
  const out: Buffer[] = [];
  for (let at = 0; at < encoded.length; at += size) {
    const part = encoded.subarray(at, Math.min(at + size, encoded.length));
    if (part.length === size) {
      out.push(Buffer.from(part));
    } else {
      const len = Math.max(rules.minBytes, Math.ceil(part.length / rules.multipleBytes) * rules.multipleBytes);
      const padded = Buffer.alloc(len, silence);
      padded.set(part);
      out.push(padded);
    }
  }
  return out;
}

/**
 * The outbound frames of Exotel stream `streamSid` in `format`. `media` refuses
 * (`invalid_outbound`) a chunk that breaks {@link exotelChunkRules}; use {@link exotelChunks}.
 */
export function exotelWriter(streamSid: string, format: CarrierAudioFormat): CarrierWriter {
  const rules = exotelChunkRules(format);
  const sampleBytes = sampleBytesOf(format.encoding);
  return {
    dialect: D,
    media(encoded) {
      checkOutbound(D, encoded, sampleBytes);
      if (encoded.length % rules.multipleBytes !== 0 || encoded.length < rules.minBytes || encoded.length > rules.maxBytes) {
        throw new CarrierProtocolError(
          D,
          'invalid_outbound',
          `media chunk of ${encoded.length} B breaks Exotel's rules (multiple of ${rules.multipleBytes}, ${rules.minBytes}–${rules.maxBytes} B)`,
          'media.payload',
        );
      }
      return JSON.stringify({ event: 'media', stream_sid: streamSid, media: { payload: toBase64(encoded) } });
    },
    mark(name) {
      checkMarkName(D, name);
      return JSON.stringify({ event: 'mark', stream_sid: streamSid, mark: { name } });
    },
    clear() {
      return JSON.stringify({ event: 'clear', stream_sid: streamSid });
    },
  };
}

/** The Exotel dialect. */
export const exotel: CarrierDialectModule = {
  dialect: D,
  parse: parseExotel,
  writer: (start) => exotelWriter(start.streamId, start.format),
};
