/**
 * Twilio Media Streams, bidirectional (`<Connect><Stream>`).
 *
 * Source: https://www.twilio.com/docs/voice/media-streams/websocket-messages — inbound
 * `connected`, `start` (`start.streamSid`, `callSid`, `accountSid`, `tracks`,
 * `customParameters`, `mediaFormat {encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1}`),
 * `media` (`media.track`, `chunk`, `timestamp`, base64 `payload`), `dtmf` (`dtmf.digit`),
 * `mark` (`mark.name`, echoed when the audio before it has played or was cleared), `stop`;
 * outbound `media` (`streamSid`, `media.payload`: base64 μ-law 8 kHz, no headers), `mark`,
 * `clear`. TwiML: https://www.twilio.com/docs/voice/twiml/stream.
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
  stringMap,
  toBase64,
  validate,
} from './common.js';
import { type CarrierDialectModule, type CarrierEvent, type CarrierWriter } from './types.js';

const D = 'twilio' as const;

const startFrame = z.object({
  streamSid: idString.optional(),
  start: z.object({
    streamSid: idString,
    callSid: idString,
    accountSid: idString.optional(),
    tracks: z.array(z.string()).optional(),
    customParameters: stringMap.optional(),
    mediaFormat: z.object({
      encoding: z.literal('audio/x-mulaw', { message: 'expected "audio/x-mulaw"' }),
      sampleRate: intLike.pipe(z.literal(8000, { message: 'expected 8000' })),
      channels: intLike.pipe(z.literal(1, { message: 'expected 1' })).optional(),
    }),
  }),
});

const mediaFrame = z.object({
  streamSid: idString.optional(),
  media: z.object({
    track: z.string().optional(),
    chunk: intLike.optional(),
    timestamp: intLike.optional(),
    payload: z.string(),
  }),
});

const dtmfFrame = z.object({
  streamSid: idString.optional(),
  dtmf: z.object({ digit: dtmfDigit, track: z.string().optional() }),
});
const markFrame = z.object({ streamSid: idString.optional(), mark: z.object({ name: markName }) });
const stopFrame = z.object({
  streamSid: idString.optional(),
  stop: z.object({ callSid: z.string().optional(), accountSid: z.string().optional() }).optional(),
});

/**
 * Parses one Twilio Media Streams text frame. Throws {@link CarrierProtocolError}; event types
 * other than the six documented inbound ones give `{type: 'ignored'}`. Media of the `outbound`
 * track (a `<Start><Stream track="both_tracks">` fork) is ignored: only the caller is heard.
 */
export function parseTwilio(frame: string | Uint8Array): CarrierEvent {
  const { event, body } = parseFrame(D, frame);
  switch (event) {
    case 'connected':
      return { type: 'connected' };
    case 'start': {
      const f = validate(D, event, startFrame, body);
      checkStartStreamId(D, 'streamSid', f.streamSid, f.start.streamSid);
      return {
        type: 'start',
        streamId: f.start.streamSid,
        callId: f.start.callSid,
        ...(f.start.accountSid !== undefined ? { accountId: f.start.accountSid } : {}),
        customParameters: f.start.customParameters ?? {},
        format: { encoding: 'mulaw', sampleRate: 8000 },
      };
    }
    case 'media': {
      const f = validate(D, event, mediaFrame, body);
      if (f.media.track !== undefined && f.media.track !== 'inbound') return { type: 'ignored', event: `media:${f.media.track}` };
      return mediaEvent(D, f.streamSid, f.media);
    }
    case 'dtmf': {
      const f = validate(D, event, dtmfFrame, body);
      return { type: 'dtmf', ...(f.streamSid !== undefined ? { streamId: f.streamSid } : {}), digit: f.dtmf.digit };
    }
    case 'mark': {
      const f = validate(D, event, markFrame, body);
      return { type: 'markAck', ...(f.streamSid !== undefined ? { streamId: f.streamSid } : {}), name: f.mark.name };
    }
    case 'stop': {
      const f = validate(D, event, stopFrame, body);
      return { type: 'stop', ...(f.streamSid !== undefined ? { streamId: f.streamSid } : {}) };
    }
    default:
      return { type: 'ignored', event };
  }
}

/**
 * The outbound frames of Twilio stream `streamSid`: `media` carries μ-law 8 kHz bytes (any
 * whole number of samples; Twilio buffers and plays them in order), `mark` a name echoed back
 * once played, `clear` empties Twilio's buffer (pending marks are echoed).
 */
export function twilioWriter(streamSid: string): CarrierWriter {
  return {
    dialect: D,
    media(encoded) {
      checkOutbound(D, encoded, 1);
      return JSON.stringify({ event: 'media', streamSid, media: { payload: toBase64(encoded) } });
    },
    mark(name) {
      checkMarkName(D, name);
      return JSON.stringify({ event: 'mark', streamSid, mark: { name } });
    },
    clear() {
      return JSON.stringify({ event: 'clear', streamSid });
    },
  };
}

/** The Twilio dialect. */
export const twilio: CarrierDialectModule = {
  dialect: D,
  parse: parseTwilio,
  writer: (start) => twilioWriter(start.streamId),
};
