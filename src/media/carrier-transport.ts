/**
 * {@link CarrierTransport}: one carrier WebSocket stream (Twilio Media Streams, Exotel
 * AgentStream/Voicebot, Plivo Audio Streams) as a {@link MediaTransport} (the behaviour is
 * described in docs/media.md). It sits between a minimal socket — anything that can `send` a
 * text frame and `close` with a code — and the call media session: inbound frames are parsed
 * and ordered by ./carriers (`CarrierStream`), caller audio is decoded (G.711 μ-law or PCM16 LE)
 * and resampled to {@link MEDIA_CORE_SAMPLE_RATE}; outbound frames, marks and `clear` become the
 * dialect's exact JSON.
 *
 * Pure: no `ws`/fastify import, no timers, no globals. The daemon's WebSocket route creates one
 * per upgrade, feeds it {@link CarrierTransport.receive} and {@link CarrierTransport.closed}, and
 * can run it in a worker thread (everything in and out is plain data).
 *
 * Close codes (RFC 6455 §7.4.1) and the shapes the route sees: ./carrier-socket.ts.
 *
 * What ends the carrier call when vagent closes the stream (for docs/media.md):
 * - Twilio: `<Connect><Stream>` (bidirectional) holds the TwiML while the socket is open; once
 *   it closes, Twilio runs the TwiML after `<Connect>` and the call ends when the TwiML runs out.
 *   So closing the stream hangs up only if nothing follows `<Connect>` (or a `<Hangup/>` does)
 *   (https://www.twilio.com/docs/voice/twiml/stream, "Bidirectional Media Streams").
 * - Exotel: closing the Voicebot applet's socket ends the applet; the call flow goes on to the
 *   applet's next step and ends when the flow has none
 *   (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet).
 * - Plivo: `<Stream bidirectional="true" keepCallAlive="true">` holds the XML while the stream
 *   lives; once it closes Plivo goes on with the XML after `<Stream>` and the call ends when the
 *   XML does (https://docs.plivo.com/docs/voice/xml/audiostream).
 * The Exotel and Plivo behaviour is read from their docs and not yet checked on a live account.
 */
import { pcm16FromBytes } from './audio.js';
import { decodeMulaw } from './audio-g711.js';
import { StreamingResampler } from './audio-resample.js';
import {
  carrierOutbound,
  CLOSE_CODES,
  closeReason,
  DEFAULT_CARRIER_FORMATS,
  type CarrierOutboundFormat,
  type CarrierSocket,
  type CarrierTransportOptions,
  type CarrierTransportStats,
} from './carrier-socket.js';
import { CarrierStream, type CarrierStart } from './carriers/stream-state.js';
import { exotelChunkRules, exotelChunks } from './carriers/exotel.js';
import { CarrierProtocolError, type CarrierDialect, type CarrierErrorData, type CarrierWriter } from './carriers/types.js';
import {
  FRAME_MS,
  isDtmfDigit,
  MEDIA_CORE_SAMPLE_RATE,
  type MediaTransport,
  type StopReason,
  type TransportListener,
} from './transport.js';

/**
 * One carrier WebSocket stream as a {@link MediaTransport}. Feed it every inbound frame with
 * {@link receive} and the socket's end with {@link closed}; it never throws from either.
 * `onStop` is called exactly once: `caller-hangup` on the carrier's `stop`, `closed` when the
 * socket ends without one, `hangup` after {@link hangup}, `error` on a protocol error (the
 * socket is then closed with a {@link CLOSE_CODES} code).
 */
export class CarrierTransport implements MediaTransport {
  readonly kind: CarrierDialect;
  private readonly socket: CarrierSocket;
  private readonly options: CarrierTransportOptions;
  private readonly stream: CarrierStream;
  private listener: TransportListener | null = null;
  private writer: CarrierWriter | null = null;
  private resampler: StreamingResampler | null = null;
  private outboundValue: CarrierOutboundFormat;
  /** Exotel: frames held until a whole chunk is ready. */
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private chunkBytes = 0;
  /** No more events to the listener, nothing more sent. */
  private ended = false;
  /** Whether we have not closed the socket nor been told it closed. */
  private socketOpen = true;
  private stopReason: StopReason | null = null;
  private lastErrorValue: CarrierErrorData | null = null;
  private readonly statsValue: CarrierTransportStats = {
    framesIn: 0,
    mediaFramesIn: 0,
    bytesIn: 0,
    samplesOut: 0,
    framesOut: 0,
    bytesOut: 0,
    framesPlayed: 0,
    protocolErrors: 0,
    droppedBeforeStart: 0,
  };

  constructor(dialect: CarrierDialect, socket: CarrierSocket, options: CarrierTransportOptions = {}) {
    this.kind = dialect;
    this.socket = socket;
    this.options = options;
    this.stream = new CarrierStream(dialect);
    this.outboundValue = carrierOutbound(dialect, DEFAULT_CARRIER_FORMATS[dialect]);
  }

  /** The outbound format: the dialect's default until `start`, then the stream's (fixed). */
  get outbound(): CarrierOutboundFormat {
    return this.outboundValue;
  }

  /** The `start` event once read. */
  get start(): CarrierStart | undefined {
    return this.stream.start;
  }

  /** Why the stream ended, or null while it runs. */
  get stopped(): StopReason | null {
    return this.stopReason;
  }

  /** The last protocol error, as plain data. */
  get lastError(): CarrierErrorData | null {
    return this.lastErrorValue;
  }

  /** A copy of the counters. */
  get stats(): CarrierTransportStats {
    return { ...this.statsValue };
  }

  listen(listener: TransportListener): void {
    this.listener = listener;
  }

  /**
   * Handles one inbound frame (text, or its UTF-8 bytes). Never throws: a protocol error closes
   * the socket (1009 for `oversized`, else 1008) and stops the stream with `error`.
   */
  receive(frame: string | Uint8Array): void {
    // After the carrier's `stop` the socket is still open: a further frame is out of order and
    // closes it (1008). After hangup, a protocol close or the socket's end, frames are ignored.
    if (this.ended && (this.stopReason !== 'caller-hangup' || !this.socketOpen)) return;
    this.statsValue.framesIn++;
    let event;
    try {
      event = this.stream.receive(frame);
    } catch (e) {
      this.protocolError(e);
      return;
    }
    try {
      switch (event.type) {
        case 'start':
          this.started(event);
          return;
        case 'media':
          this.audio(event.payload);
          return;
        case 'dtmf':
          if (isDtmfDigit(event.digit)) this.listener?.onDtmf(event.digit);
          return;
        case 'markAck':
          this.listener?.onMarkAck(event.name);
          return;
        case 'stop':
          this.flushAudio();
          this.finish('caller-hangup');
          return;
        default:
          return; // connected, cleared, ignored
      }
    } catch (e) {
      // The listener threw: the session is broken; end the stream rather than the process.
      this.lastErrorValue = {
        code: 'invalid_message',
        dialect: this.kind,
        message: `listener failed: ${e instanceof Error ? e.message : String(e)}`,
      };
      this.closeSocket(CLOSE_CODES.internal, 'internal error');
      this.finish('error');
    }
  }

  /** The socket closed (by the carrier or the network) with `code`; ends the stream with `closed` unless it already ended. */
  closed(_code: number): void {
    this.socketOpen = false;
    if (this.ended) return;
    try {
      this.flushAudio();
    } catch {
      /* the stream ends either way */
    }
    this.finish('closed');
  }

  /**
   * Sends one {@link FRAME_MS} frame of reply audio in the outbound format. Twilio and Plivo
   * send each frame as one `media`/`playAudio` message; Exotel holds frames until a chunk of
   * `outbound.minLeadFrames` frames is ready. No-op once stopped or before `start`.
   *
   * @throws RangeError when `frame` is not `outbound.frameBytes` bytes
   */
  play(frame: Uint8Array): void {
    if (this.ended) return;
    if (!this.writer) {
      this.statsValue.droppedBeforeStart++;
      return;
    }
    if (frame.byteLength !== this.outboundValue.frameBytes) {
      throw new RangeError(
        `frame is ${frame.byteLength} bytes; this ${this.kind} stream takes ${this.outboundValue.frameBytes} (${FRAME_MS} ms of ${this.outboundValue.encoding} at ${this.outboundValue.sampleRate} Hz)`,
      );
    }
    this.statsValue.framesPlayed++;
    if (this.kind !== 'exotel') {
      this.sendMedia(frame);
      return;
    }
    this.pending.push(frame.slice());
    this.pendingBytes += frame.byteLength;
    if (this.pendingBytes >= this.chunkBytes) this.flushPending();
  }

  /**
   * Sends a mark (Plivo: `checkpoint`) after the audio played so far; Exotel first sends the
   * held frames, padded with silence to a valid chunk. No-op once stopped or before `start`.
   *
   * @throws RangeError when `name` is not 1–64 printable ASCII characters
   */
  mark(name: string): void {
    if (!/^[\x20-\x7e]{1,64}$/.test(name))
      throw new RangeError(`mark name must be 1–64 printable ASCII characters; got ${JSON.stringify(name.slice(0, 80))}`);
    if (this.ended) return;
    if (!this.writer) {
      this.statsValue.droppedBeforeStart++;
      return;
    }
    this.flushPending();
    this.send(this.writer.mark(name));
  }

  /**
   * Barge-in: sends `clear` (Plivo: `clearAudio`). Exotel frames still held here were never
   * sent, so they are dropped rather than flushed. No-op once stopped or before `start`.
   */
  clear(): void {
    if (this.ended) return;
    if (!this.writer) {
      this.statsValue.droppedBeforeStart++;
      return;
    }
    this.pending = [];
    this.pendingBytes = 0;
    this.send(this.writer.clear());
  }

  /** Closes the socket normally (1000) and stops the stream with `hangup`; nothing is sent afterwards. Idempotent. */
  hangup(): void {
    if (this.ended) return;
    this.pending = [];
    this.pendingBytes = 0;
    this.closeSocket(CLOSE_CODES.normal, 'hangup');
    this.finish('hangup');
  }

  private started(start: CarrierStart): void {
    const outbound = carrierOutbound(this.kind, start.format);
    this.outboundValue = outbound;
    this.writer = this.stream.writer;
    this.resampler = new StreamingResampler(start.format.sampleRate, MEDIA_CORE_SAMPLE_RATE);
    if (this.kind === 'exotel') this.chunkBytes = exotelChunkRules(start.format).minBytes;
    this.options.onStarted?.({
      dialect: this.kind,
      streamId: start.streamId,
      callId: start.callId,
      ...(start.accountId !== undefined ? { accountId: start.accountId } : {}),
      ...(start.from !== undefined ? { from: start.from } : {}),
      ...(start.to !== undefined ? { to: start.to } : {}),
      customParameters: { ...start.customParameters },
      format: { ...start.format },
      outbound,
    });
  }

  private audio(payload: Uint8Array): void {
    this.statsValue.mediaFramesIn++;
    this.statsValue.bytesIn += payload.length;
    const format = this.stream.format!;
    const pcm = format.encoding === 'mulaw' ? decodeMulaw(payload) : pcm16FromBytes(payload, false);
    this.deliver(this.resampler!.push(pcm));
  }

  private flushAudio(): void {
    if (this.resampler) this.deliver(this.resampler.flush());
  }

  private deliver(pcm: Int16Array): void {
    if (pcm.length === 0) return;
    this.statsValue.samplesOut += pcm.length;
    this.listener?.onAudio(pcm);
  }

  /** Exotel: sends the held frames as chunks, the last padded with silence (exotelChunks). */
  private flushPending(): void {
    if (this.pendingBytes === 0) return;
    const all = new Uint8Array(this.pendingBytes);
    let at = 0;
    for (const f of this.pending) {
      all.set(f, at);
      at += f.byteLength;
    }
    this.pending = [];
    this.pendingBytes = 0;
    for (const chunk of exotelChunks(all, this.stream.format!, this.chunkBytes)) this.sendMedia(chunk);
  }

  private sendMedia(bytes: Uint8Array): void {
    this.send(this.writer!.media(bytes));
    this.statsValue.bytesOut += bytes.byteLength;
  }

  private send(text: string): void {
    this.statsValue.framesOut++;
    this.socket.send(text);
  }

  private protocolError(e: unknown): void {
    const err =
      e instanceof CarrierProtocolError
        ? e
        : new CarrierProtocolError(this.kind, 'malformed_json', e instanceof Error ? e.message : String(e));
    const code = err.code === 'oversized' ? CLOSE_CODES.tooBig : CLOSE_CODES.policy;
    this.statsValue.protocolErrors++;
    this.lastErrorValue = err.toData();
    try {
      this.options.onProtocolError?.(err.toData(), code);
    } catch {
      /* a logging hook must not keep the socket open */
    }
    this.closeSocket(code, `${err.code}: ${err.message}`);
    this.finish('error');
  }

  private closeSocket(code: number, reason: string): void {
    if (!this.socketOpen) return;
    this.socketOpen = false;
    try {
      this.socket.close(code, closeReason(reason));
    } catch {
      /* already closed */
    }
  }

  /** Ends the stream once: no more sends, one `onStop`. */
  private finish(reason: StopReason): void {
    if (this.ended) return;
    this.ended = true;
    this.stopReason = reason;
    this.pending = [];
    this.pendingBytes = 0;
    try {
      this.listener?.onStop(reason);
    } catch {
      /* the stream has ended either way; receive and the actions never throw for it */
    }
  }
}
