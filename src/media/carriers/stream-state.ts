/**
 * The order rules of one carrier stream, common to the three dialects: a `start` comes
 * before anything about the call (`media`, `dtmf`, mark acks, `cleared`); a second `start` is
 * refused; nothing is accepted after `stop`; a frame that names a stream names the started one;
 * media is whole samples of the started format. Violations are thrown as typed
 * {@link CarrierProtocolError}s so the transport can close the socket with a reason.
 *
 * Pure and synchronous: one instance per socket, no timers, no globals.
 */
import { parseFrame } from './common.js';
import { exotel } from './exotel.js';
import { plivo } from './plivo.js';
import { twilio } from './twilio.js';
import {
  CarrierProtocolError,
  type CarrierAudioFormat,
  type CarrierDialect,
  type CarrierDialectModule,
  type CarrierEvent,
  type CarrierWriter,
} from './types.js';

/** Where a stream is: before `start`, between `start` and `stop`, or ended. */
export type CarrierStreamPhase = 'awaiting_start' | 'started' | 'stopped';

/** The dialect modules by name. */
export const CARRIER_MODULES: Readonly<Record<CarrierDialect, CarrierDialectModule>> = { twilio, exotel, plivo };

/** The `start` event, as kept by the stream. */
export type CarrierStart = Extract<CarrierEvent, { type: 'start' }>;

/** Counters of one stream (plain data). */
export interface CarrierStreamStats {
  frames: number;
  mediaFrames: number;
  /** Decoded media bytes received, still encoded (μ-law or PCM16). */
  mediaBytes: number;
  ignored: number;
}

/**
 * One carrier socket's protocol state. Feed every inbound text frame to {@link receive}: it
 * parses with the dialect, enforces order, and returns the event to act on.
 */
export class CarrierStream {
  readonly dialect: CarrierDialect;
  private readonly module: CarrierDialectModule;
  private phaseValue: CarrierStreamPhase = 'awaiting_start';
  private startValue: CarrierStart | undefined;
  private writerValue: CarrierWriter | undefined;
  private readonly statsValue: CarrierStreamStats = { frames: 0, mediaFrames: 0, mediaBytes: 0, ignored: 0 };

  constructor(dialect: CarrierDialect) {
    this.dialect = dialect;
    this.module = CARRIER_MODULES[dialect];
  }

  /** The current phase. */
  get phase(): CarrierStreamPhase {
    return this.phaseValue;
  }

  /** The `start` event once received. */
  get start(): CarrierStart | undefined {
    return this.startValue;
  }

  /** The stream's audio format once started. */
  get format(): CarrierAudioFormat | undefined {
    return this.startValue?.format;
  }

  /** Outbound frame builder for this stream; throws `out_of_order` before `start`. */
  get writer(): CarrierWriter {
    if (this.writerValue === undefined)
      throw new CarrierProtocolError(this.dialect, 'out_of_order', 'no outbound frames before the stream has started');
    return this.writerValue;
  }

  /** A copy of the counters. */
  get stats(): CarrierStreamStats {
    return { ...this.statsValue };
  }

  /**
   * Parses and admits one inbound text frame (string or UTF-8 bytes). Throws {@link CarrierProtocolError}: the parser's
   * codes, `out_of_order`, `stream_mismatch`, or `bad_payload` (media not whole samples).
   */
  receive(frame: string | Uint8Array): CarrierEvent {
    if (this.phaseValue === 'stopped') {
      // Refuse without parsing: a stopped stream spends nothing on what follows.
      let what = 'a frame';
      try {
        what = `"${parseFrame(this.dialect, frame).event}"`;
      } catch {
        /* the kind of frame is only for the message */
      }
      throw new CarrierProtocolError(this.dialect, 'out_of_order', `${what} after stop`);
    }
    const event = this.module.parse(frame);
    this.accept(event);
    return event;
  }

  /**
   * Admits an already parsed event (for transports that parse elsewhere). Same errors as
   * {@link receive}; on error the state is unchanged.
   */
  accept(event: CarrierEvent): void {
    this.admit(event);
    this.statsValue.frames++;
  }

  private admit(event: CarrierEvent): void {
    const d = this.dialect;
    if (this.phaseValue === 'stopped') throw new CarrierProtocolError(d, 'out_of_order', `"${event.type}" after stop`);
    switch (event.type) {
      case 'ignored':
        this.statsValue.ignored++;
        return;
      case 'connected':
        if (this.phaseValue !== 'awaiting_start') throw new CarrierProtocolError(d, 'out_of_order', '"connected" after start');
        return;
      case 'start':
        if (this.phaseValue !== 'awaiting_start')
          throw new CarrierProtocolError(
            d,
            'out_of_order',
            `second "start" (stream ${event.streamId}) on stream ${this.startValue!.streamId}`,
          );
        this.startValue = event;
        this.writerValue = this.module.writer(event);
        this.phaseValue = 'started';
        return;
      case 'stop':
        if (this.phaseValue === 'started') this.checkStream(event.streamId);
        this.phaseValue = 'stopped';
        return;
      default:
        break;
    }
    if (this.phaseValue !== 'started') throw new CarrierProtocolError(d, 'out_of_order', `"${event.type}" before start`);
    this.checkStream(event.streamId);
    if (event.type === 'media') {
      const width = this.startValue!.format.encoding === 'pcm16' ? 2 : 1;
      if (event.payload.length % width !== 0) {
        throw new CarrierProtocolError(
          d,
          'bad_payload',
          `media.payload of ${event.payload.length} bytes is not whole ${width}-byte samples`,
          'media.payload',
        );
      }
      this.statsValue.mediaFrames++;
      this.statsValue.mediaBytes += event.payload.length;
    }
  }

  private checkStream(streamId: string | undefined): void {
    if (streamId !== undefined && streamId !== this.startValue!.streamId) {
      throw new CarrierProtocolError(
        this.dialect,
        'stream_mismatch',
        `frame for stream ${streamId} on stream ${this.startValue!.streamId}`,
        'streamId',
      );
    }
  }
}
