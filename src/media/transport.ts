/**
 * The narrow transport interface of a call's media (docs/architecture.md "A carrier audio frame"): whatever
 * carries a call's audio — a carrier WebSocket stream (Twilio Media Streams, Exotel
 * AgentStream, Plivo Audio Streams) or, next, a LiveKit room — is one {@link MediaTransport}.
 * The call media session sees only this: decoded caller audio, DTMF digits, mark
 * acknowledgements and the end of the stream coming in; reply frames, marks, `clear` and
 * hang-up going out. Codecs, framing, base64, sequence numbers and auth stay in the adapter.
 *
 * The protocol messages each adapter maps onto these members:
 * - Twilio Media Streams: `media` / `dtmf` / `mark` / `stop` in; `media`, `mark`, `clear` out
 *   (https://www.twilio.com/docs/voice/media-streams/websocket-messages).
 * - Exotel AgentStream/Voicebot: `media` / `dtmf` / `mark` / `stop` in; `media` (multiples of
 *   320 bytes, ≥ 100 ms), `mark`, `clear` out
 *   (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet).
 * - Plivo Audio Streams: `media` / `dtmf` / `playedStream` / `clearedAudio` in; `playAudio`,
 *   `checkpoint`, `clearAudio` out
 *   (https://www.plivo.com/docs/voice/xml/the-stream-element/checkpoint-event/).
 *
 * Everything here is plain data so a session can run in a worker thread.
 */

/** Sample rate of the media core, Hz: every transport hands caller audio over at this rate. */
export const MEDIA_CORE_SAMPLE_RATE = 16_000;

/** Duration of one outbound frame on every transport, ms (the carriers' 20 ms packetisation). */
export const FRAME_MS = 20;

/** A DTMF key (ITU-T Q.23 keypad; RFC 4733 events 0–15). */
export type DtmfDigit = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | '8' | '9' | '*' | '#' | 'A' | 'B' | 'C' | 'D';

/** Whether `s` is a {@link DtmfDigit}. */
export function isDtmfDigit(s: string): s is DtmfDigit {
  return /^[0-9*#A-D]$/.test(s);
}

/**
 * Why a transport's stream ended.
 * - `caller-hangup`: the carrier said so (Twilio/Exotel `stop`, Plivo stream end, participant left).
 * - `hangup`: we ended it through {@link MediaTransport.hangup}.
 * - `closed`: the connection closed without a stop message.
 * - `error`: a protocol or network fault; the adapter logged the detail.
 */
export type StopReason = 'caller-hangup' | 'hangup' | 'closed' | 'error';

/**
 * The encoding of outbound frames, as the carrier negotiated it (Twilio: always μ-law 8 kHz;
 * Exotel: `start.media_format`; Plivo: the stream's `contentType`). The media core encodes
 * reply audio to this once per clip; playout treats frames as opaque bytes of this size.
 */
export interface OutboundFormat {
  /** `mulaw`: G.711 μ-law (ITU-T G.711), one byte per sample; `pcm16le`: signed 16-bit little-endian linear PCM. */
  readonly encoding: 'mulaw' | 'pcm16le';
  /** Samples per second, Hz (8000 or 16000 on the carriers named above). */
  readonly sampleRate: number;
  /** Bytes in one {@link FRAME_MS} frame: sampleRate × 0.02 × (1 for μ-law, 2 for PCM16). */
  readonly frameBytes: number;
}

/** The bytes of one {@link FRAME_MS} frame in `format`'s encoding and rate. */
export function frameBytesOf(encoding: OutboundFormat['encoding'], sampleRate: number): number {
  if (!Number.isInteger(sampleRate) || sampleRate <= 0 || (sampleRate * FRAME_MS) % 1000 !== 0) {
    throw new RangeError(
      `sample rate must be a positive whole number of Hz giving whole samples per ${FRAME_MS} ms frame; got ${sampleRate}`,
    );
  }
  return ((sampleRate * FRAME_MS) / 1000) * (encoding === 'mulaw' ? 1 : 2);
}

/** What a transport reports to the call media session. Called on the session's thread, in arrival order. */
export interface TransportListener {
  /**
   * Caller audio: mono signed 16-bit samples at {@link MEDIA_CORE_SAMPLE_RATE} Hz, already
   * decoded and resampled by the adapter. Any length (carriers send 20 ms chunks, Exotel up to
   * 100 ms); the array is the listener's to keep.
   */
  onAudio(pcm: Int16Array): void;
  /** One key the caller pressed. */
  onDtmf(digit: DtmfDigit): void;
  /**
   * The carrier has played every frame sent before the mark called `name` (Twilio/Exotel
   * `mark` echo, Plivo `playedStream`). Carriers also echo marks still pending when audio is
   * cleared (Twilio); the listener must ignore names it no longer waits for.
   */
  onMarkAck(name: string): void;
  /** The stream ended; nothing more arrives and actions are no-ops afterwards. */
  onStop(reason: StopReason): void;
}

/**
 * One call's audio carrier. Actions never block and never throw for a closed stream (they are
 * then no-ops); they throw `RangeError` only for input that breaks the contract (a frame of the
 * wrong size). Sending is fire-and-forget: pacing is the caller's job (see ./playout.ts), the
 * adapter writes each action to the wire at once and in call order.
 */
export interface MediaTransport {
  /** Which transport this is, as recorded on the call (`transport` column). */
  readonly kind: 'twilio' | 'exotel' | 'plivo' | 'livekit' | 'fake';
  /** The encoding {@link play} expects. Fixed for the stream's life once `start` was read. */
  readonly outbound: OutboundFormat;
  /** Sets who hears this transport's events; replaces any earlier listener. */
  listen(listener: TransportListener): void;
  /**
   * Queues one frame of reply audio: exactly `outbound.frameBytes` bytes = {@link FRAME_MS} ms.
   * The adapter may coalesce frames into larger messages (Exotel: ≥ 100 ms chunks).
   */
  play(frame: Uint8Array): void;
  /**
   * Asks the carrier to call {@link TransportListener.onMarkAck} with `name` once every frame
   * played before this call has been heard (Twilio/Exotel `mark`, Plivo `checkpoint`).
   * `name`: 1–64 printable ASCII characters, unique within the stream.
   */
  mark(name: string): void;
  /**
   * Barge-in: drops every frame the carrier has buffered but not yet played (Twilio/Exotel
   * `clear`, Plivo `clearAudio`). Marks still pending are never acknowledged as played.
   */
  clear(): void;
  /** Ends the call on this transport (close the stream / remove the participant); then `onStop('hangup')`. Idempotent. */
  hangup(): void;
}
