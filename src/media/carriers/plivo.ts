/**
 * Plivo Audio Streams, bidirectional (`<Stream bidirectional="true">`).
 *
 * Sources:
 * - https://plivo.com/docs/voice/audio-streaming/audio-streaming and
 *   https://www.plivo.com/docs/voice-agents/audio-streaming/concepts/audio-streaming-reference —
 *   inbound `start` (`start.callId`, `streamId`, `accountId`, `tracks`,
 *   `mediaFormat {encoding, sampleRate}`, top-level `extra_headers` string), `media`
 *   (`streamId`, `media.track`, `timestamp` (Unix ms, string), `chunk`, base64 `payload`), `dtmf`,
 *   `playedStream` (checkpoint reached), `clearedAudio` (queue cleared).
 * - https://plivo.com/docs/voice/xml/the-stream-element/checkpoint-event — `checkpoint`
 *   `{event, streamId, name}` answered by `playedStream {event, streamId, name}`.
 * - https://docs.plivo.com/docs/voice/xml/audiostream/stream-events-to-plivo/play-audio-event —
 *   `playAudio {event, media: {contentType: audio/x-l16|audio/x-mulaw, sampleRate, payload}}`.
 * - https://docs.plivo.com/docs/voice/xml/audiostream/stream-events-to-plivo/clear-audio-stream —
 *   `clearAudio {event, streamId}`.
 * - https://docs.plivo.com/docs/voice/xml/audiostream — `contentType` audio/x-l16;rate=8000|16000
 *   or audio/x-mulaw;rate=8000; `extraHeaders` "test1=12,test2=123" (≤ 512 bytes).
 *
 * Plivo documents no `stop` frame (the socket closes); one is accepted if sent.
 */
import { z } from 'zod';
import {
  checkMarkName,
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
  MAX_CUSTOM_PARAMETERS,
  type CarrierAudioFormat,
  type CarrierDialectModule,
  type CarrierEvent,
  type CarrierWriter,
} from './types.js';

const D = 'plivo' as const;

/** Plivo's content types and the rates each allows. */
const FORMATS: Record<string, { encoding: 'mulaw' | 'pcm16'; rates: number[] }> = {
  'audio/x-mulaw': { encoding: 'mulaw', rates: [8000] },
  'audio/x-l16': { encoding: 'pcm16', rates: [8000, 16000] },
};

const startFrame = z.object({
  streamId: idString.optional(),
  start: z.object({
    callId: idString,
    streamId: idString,
    accountId: idString.optional(),
    from: z.string().max(64).optional(),
    to: z.string().max(64).optional(),
    tracks: z.array(z.string()).optional(),
    mediaFormat: z.object({ encoding: z.string().max(64), sampleRate: intLike }),
  }),
  extra_headers: z.union([z.string().max(4096), stringMap]).optional(),
});

const mediaFrame = z.object({
  streamId: idString.optional(),
  media: z.object({
    track: z.string().optional(),
    timestamp: intLike.optional(),
    chunk: intLike.optional(),
    payload: z.string(),
  }),
});
const dtmfFrame = z
  .object({ streamId: idString.optional(), dtmf: z.object({ digit: dtmfDigit }).optional(), digit: dtmfDigit.optional() })
  .refine((f) => f.dtmf !== undefined || f.digit !== undefined, { message: 'missing', path: ['dtmf', 'digit'] });
const playedFrame = z.object({ streamId: idString.optional(), name: markName });
const clearedFrame = z.object({ streamId: idString.optional() });

function sid(f: { streamId?: string | undefined }): { streamId?: string } {
  return f.streamId !== undefined ? { streamId: f.streamId } : {};
}

/**
 * Parses Plivo's `extra_headers` ("userId=12345;sessionId=abc-xyz" or "a=1,b=2") into a map.
 * Pieces without `=` are ignored; keys and values are trimmed.
 */
export function parsePlivoExtraHeaders(raw: string | Record<string, string> | undefined): Record<string, string> {
  if (raw === undefined) return {};
  if (typeof raw !== 'string') return raw;
  const out: Record<string, string> = {};
  for (const piece of raw.split(/[;,]/)) {
    const eq = piece.indexOf('=');
    if (eq <= 0) continue;
    const key = piece.slice(0, eq).trim();
    if (key.length === 0) continue;
    out[key] = piece.slice(eq + 1).trim();
  }
  if (Object.keys(out).length > MAX_CUSTOM_PARAMETERS) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: extra_headers: at most ${MAX_CUSTOM_PARAMETERS} parameters`,
      'extra_headers',
    );
  }
  return out;
}

function formatOf(encoding: string, sampleRate: number): CarrierAudioFormat {
  const f = FORMATS[encoding.split(';')[0]!.trim().toLowerCase()];
  if (f === undefined) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: start.mediaFormat.encoding: unsupported "${encoding}"`,
      'start.mediaFormat.encoding',
    );
  }
  if (!f.rates.includes(sampleRate)) {
    throw new CarrierProtocolError(
      D,
      'invalid_message',
      `start frame: start.mediaFormat.sampleRate: unsupported ${sampleRate} Hz for ${encoding}`,
      'start.mediaFormat.sampleRate',
    );
  }
  return { encoding: f.encoding, sampleRate };
}

/**
 * Parses one Plivo Audio Streams text frame. Throws {@link CarrierProtocolError}; unknown
 * event types give `{type: 'ignored'}`; media of a track other than `inbound` is ignored.
 */
export function parsePlivo(frame: string | Uint8Array): CarrierEvent {
  const { event, body } = parseFrame(D, frame);
  switch (event) {
    case 'start': {
      const f = validate(D, event, startFrame, body);
      const s = f.start;
      return {
        type: 'start',
        streamId: s.streamId,
        callId: s.callId,
        ...startParties(s),
        customParameters: parsePlivoExtraHeaders(f.extra_headers),
        format: formatOf(s.mediaFormat.encoding, s.mediaFormat.sampleRate),
      };
    }
    case 'media': {
      const f = validate(D, event, mediaFrame, body);
      if (f.media.track !== undefined && f.media.track !== 'inbound') return { type: 'ignored', event: `media:${f.media.track}` };
      return mediaEvent(D, f.streamId, f.media);
    }
    case 'dtmf': {
      const f = validate(D, event, dtmfFrame, body);
      return { type: 'dtmf', ...sid(f), digit: (f.dtmf?.digit ?? f.digit)! };
    }
    case 'playedStream': {
      const f = validate(D, event, playedFrame, body);
      return { type: 'markAck', ...sid(f), name: f.name };
    }
    case 'clearedAudio': {
      const f = validate(D, event, clearedFrame, body);
      return { type: 'cleared', ...sid(f) };
    }
    case 'stop': {
      const f = validate(D, event, clearedFrame, body);
      return { type: 'stop', ...sid(f) };
    }
    default:
      return { type: 'ignored', event };
  }
}

/**
 * The outbound frames of Plivo stream `streamId` in `format`: `playAudio` (whose
 * `media.contentType`/`sampleRate` restate the format), `checkpoint`, `clearAudio`.
 */
export function plivoWriter(streamId: string, format: CarrierAudioFormat): CarrierWriter {
  const contentType = format.encoding === 'mulaw' ? 'audio/x-mulaw' : 'audio/x-l16';
  const sampleBytes = sampleBytesOf(format.encoding);
  return {
    dialect: D,
    media(encoded) {
      checkOutbound(D, encoded, sampleBytes);
      return JSON.stringify({
        event: 'playAudio',
        media: { contentType, sampleRate: format.sampleRate, payload: toBase64(encoded) },
      });
    },
    mark(name) {
      checkMarkName(D, name);
      return JSON.stringify({ event: 'checkpoint', streamId, name });
    },
    clear() {
      return JSON.stringify({ event: 'clearAudio', streamId });
    },
  };
}

/** The Plivo dialect. */
export const plivo: CarrierDialectModule = {
  dialect: D,
  parse: parsePlivo,
  writer: (start) => plivoWriter(start.streamId, start.format),
};
