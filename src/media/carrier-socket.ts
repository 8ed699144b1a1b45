/**
 * The edge of a {@link CarrierTransport} towards the daemon's WebSocket route: the socket it
 * writes to, the close codes it sends and their reasons, what it reports of a stream's `start`
 * (with the outbound format it then expects), its counters and its options.
 *
 * Close codes (RFC 6455 §7.4.1), sent when an inbound frame breaks the protocol:
 * - 1009 (message too big): `oversized` — a frame over MAX_FRAME_CHARS or a media payload over
 *   MAX_MEDIA_PAYLOAD_BYTES (./carriers/types.ts);
 * - 1008 (policy violation): every other protocol error — malformed JSON, an invalid message,
 *   a bad payload, out-of-order frames (media before `start`, a second `start`, anything after
 *   `stop`) and frames naming another stream;
 * - 1011 (internal error): the listener threw while handling a frame;
 * - 1000 (normal closure): {@link CarrierTransport.hangup}.
 */
import { exotelChunkRules } from './carriers/exotel.js';
import type { CarrierStart } from './carriers/stream-state.js';
import type { CarrierAudioFormat, CarrierDialect, CarrierErrorData } from './carriers/types.js';
import { frameBytesOf, type OutboundFormat } from './transport.js';

/** The socket a {@link CarrierTransport} writes to: a WebSocket's send and close, nothing more. */
export interface CarrierSocket {
  /** Sends one text frame. */
  send(text: string): void;
  /** Closes the connection with an RFC 6455 close `code` and a `reason` of at most 123 UTF-8 bytes. */
  close(code: number, reason: string): void;
}

/** RFC 6455 §7.4.1 close codes this transport sends. */
export const CLOSE_CODES = {
  /** {@link CarrierTransport.hangup}. */
  normal: 1000,
  /** A protocol error other than size. */
  policy: 1008,
  /** A frame or media payload over its limit. */
  tooBig: 1009,
  /** The listener threw while a frame was handled. */
  internal: 1011,
} as const;

/** What the route needs from a stream's `start` to decide auth and which agent answers. Plain data. */
export type CarrierStartInfo = Omit<CarrierStart, 'type'> & {
  dialect: CarrierDialect;
  /** The outbound format {@link CarrierTransport.play} now expects. */
  outbound: CarrierOutboundFormat;
};

/**
 * The outbound descriptor of a carrier stream: the {@link OutboundFormat} plus the shortest
 * playout lead the carrier allows, in {@link FRAME_MS} frames. Exotel only takes chunks of
 * ≥ 100 ms (and ≥ 3200 B for PCM16), so frames are held until a whole chunk is ready: playout
 * must run at least `minLeadFrames` ahead or the caller hears gaps. 1 elsewhere.
 */
export interface CarrierOutboundFormat extends OutboundFormat {
  readonly minLeadFrames: number;
}

/** Counters of one stream (plain data). */
export interface CarrierTransportStats {
  /** Inbound frames handed to {@link CarrierTransport.receive}. */
  framesIn: number;
  /** Inbound `media` frames accepted. */
  mediaFramesIn: number;
  /** Encoded inbound media bytes (μ-law or PCM16, after base64). */
  bytesIn: number;
  /** 16 kHz samples handed to `onAudio`. */
  samplesOut: number;
  /** Outbound text frames sent (media, marks, clears). */
  framesOut: number;
  /** Encoded outbound media bytes sent (silence padding included). */
  bytesOut: number;
  /** Frames passed to {@link CarrierTransport.play}. */
  framesPlayed: number;
  /** Inbound frames refused as protocol errors. */
  protocolErrors: number;
  /** Actions dropped because the stream had not started yet. */
  droppedBeforeStart: number;
}

/** Options of a {@link CarrierTransport}. */
export interface CarrierTransportOptions {
  /** Called once when `start` has been read, before any audio; the route decides auth and the agent from it. */
  onStarted?: (info: CarrierStartInfo) => void;
  /** Called with each protocol error before the socket is closed (for logs). */
  onProtocolError?: (error: CarrierErrorData, closeCode: number) => void;
}

/** Longest close reason RFC 6455 §5.5 allows in a control frame, bytes. */
const MAX_CLOSE_REASON_BYTES = 123;

/** `s` cut to at most {@link MAX_CLOSE_REASON_BYTES} UTF-8 bytes on a character boundary. */
export function closeReason(s: string): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const n = Buffer.byteLength(ch);
    if (bytes + n > MAX_CLOSE_REASON_BYTES) break;
    out += ch;
    bytes += n;
  }
  return out;
}

/** The outbound descriptor of a stream in `format` on `dialect`. */
export function carrierOutbound(dialect: CarrierDialect, format: CarrierAudioFormat): CarrierOutboundFormat {
  const encoding = format.encoding === 'mulaw' ? 'mulaw' : 'pcm16le';
  const frameBytes = frameBytesOf(encoding, format.sampleRate);
  const minLeadFrames = dialect === 'exotel' ? exotelChunkRules(format).minBytes / frameBytes : 1;
  return { encoding, sampleRate: format.sampleRate, frameBytes, minLeadFrames };
}

/** What each dialect carries before `start` says otherwise (Twilio: always this). */
export const DEFAULT_CARRIER_FORMATS: Readonly<Record<CarrierDialect, CarrierAudioFormat>> = {
  twilio: { encoding: 'mulaw', sampleRate: 8000 },
  exotel: { encoding: 'pcm16', sampleRate: 8000 },
  plivo: { encoding: 'mulaw', sampleRate: 8000 },
};
