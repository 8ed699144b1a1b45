/**
 * A scripted carrier client: it plays the part of Twilio, Exotel or Plivo towards a bot's
 * WebSocket (`ws://HOST:PORT/v1/media/<dialect>`), as `vagent call simulate`, the end-to-end
 * tests and the media bench need.
 *
 * Like the real carrier it opens the socket, sends `connected` and `start` (with custom
 * parameters and the dialect's audio format), streams the caller's audio at real-time pacing
 * in the dialect's frame size — silence between lines, as a live call carries — sends `dtmf`
 * keys, and ends with `stop` (or closes without one). It simulates the phone's playback: the
 * bot's audio goes into a play-out queue drained at real time; a mark/checkpoint is
 * acknowledged when play-out reaches it; a clear empties the queue (Twilio and Exotel then
 * echo the pending marks, Plivo answers `clearedAudio` and drops them: see ../../media/carriers/sim-frames.ts
 * for the carriers' docs).
 *
 * Everything it sees goes into a timeline of plain-data {@link SimEvent}s with monotonic
 * times: lines spoken, the first reply frame after each (response latency), marks, clears
 * (barge-in time from the caller's speech onset), frames and their lateness, the close code.
 *
 * Cost per simulated call: one timer (re-armed for the next due frame, mark or script step),
 * caller frames encoded and base64'd once per line, media frames built with template strings,
 * pacing computed from the stream's start time (no drift), so 100 clients fit in one process.
 */
import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { resample } from '../../media/audio-resample.js';
import { systemClock, type PlayoutClock } from '../../media/playout-clock.js';
import { sampleBytesOf, toBase64 } from '../../media/carriers/common.js';
import {
  defaultSimFormat,
  prepareSimLine,
  simFrameMs,
  SimFrameWriter,
  simStreamIds,
  type SimPreparedLine,
  type SimStreamIds,
} from '../../media/carriers/sim-frames.js';
import { CarrierProtocolError, type CarrierAudioFormat } from '../../media/carriers/types.js';
import { parseSimInbound } from './sim-inbound.js';
import { checkSimOptions } from './sim-options.js';
import { SimScript } from './sim-caller.js';
import { SimPhone } from './sim-phone.js';
import type { SimClientOptions, SimEvent, SimEventData, SimStats, SimStep, SimTimeline, SimTurn } from './sim-script.js';

// The script, options and timeline of a simulated call live in sim-script.ts and a line's frames
// in sim-frames.ts; they are the client's public shapes, so they are exported from here too.
export type { SimClientOptions, SimEvent, SimEventData, SimStats, SimStep, SimTimeline, SimTurn };
export { prepareSimLine, type SimPreparedLine };

/** Why the socket could not be used: `unreachable` (no connection), `refused` (HTTP status instead of an upgrade), `timeout`. */
export class SimConnectError extends Error {
  override readonly name = 'SimConnectError';
  constructor(
    readonly kind: 'unreachable' | 'refused' | 'timeout',
    message: string,
    readonly status?: number,
    readonly body?: string,
  ) {
    super(message);
  }
}

/** Events of a {@link SimCall}. */
export interface SimCallEvents {
  event: [SimEvent];
}

/** A running simulated call: listen to `event`, await {@link SimCall.done}. */
export interface SimCall extends EventEmitter<SimCallEvents> {
  /** The finished timeline; rejects with {@link SimConnectError} when the socket never opened. */
  readonly done: Promise<SimTimeline>;
  readonly ids: SimStreamIds;
  /** Hangs up now (`stop` then close, unless `stop` is false). */
  hangup(stop?: boolean): void;
}

/** Percentiles of `values` (nearest-rank). */
export function simStats(values: readonly number[]): SimStats {
  if (values.length === 0) return { count: 0, p50: 0, p99: 0, max: 0 };
  const s = [...values].sort((a, b) => a - b);
  const at = (p: number): number => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))]!;
  return { count: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1]! };
}

/**
 * Starts a simulated carrier call against `options.url` and returns it at once; the script runs
 * as soon as the socket opens.
 * @throws RangeError for bad options (nothing is connected then)
 */
export function simulateCall(options: SimClientOptions): SimCall {
  checkSimOptions(options);
  return new SimCallImpl(options);
}

class SimCallImpl extends EventEmitter<SimCallEvents> implements SimCall {
  readonly done: Promise<SimTimeline>;
  readonly ids: SimStreamIds;
  private readonly o: SimClientOptions;
  private readonly clock: PlayoutClock;
  private readonly format: CarrierAudioFormat;
  private readonly frameMs: number;
  private readonly bytesPerMs: number;
  private readonly silenceB64: string;
  private readonly writer: SimFrameWriter;
  private readonly ws: WebSocket;
  private resolve!: (t: SimTimeline) => void;
  private reject!: (e: Error) => void;

  private t0 = 0;
  private opened = false;
  private finished = false;
  private timerCancel: (() => void) | undefined;
  private timerAt = Infinity;
  private readonly events: SimEvent[] = [];
  private readonly turns: SimTurn[] = [];

  // caller side
  private frameIndex = 0;
  /** The caller's steps and turns. */
  private readonly script: SimScript;
  private sent = { frames: 0, bytes: 0, dtmf: 0, maxSendLagMs: 0 };

  /** The phone's play-out of the bot's audio, and the replies it hears. */
  private readonly phone: SimPhone;
  private closeInfo: SimTimeline['close'] | undefined;
  private callerClosing = false;

  constructor(o: SimClientOptions) {
    super();
    this.o = o;
    this.clock = o.clock ?? systemClock;
    this.format = o.format ?? defaultSimFormat(o.dialect);
    this.frameMs = simFrameMs(o.dialect);
    this.bytesPerMs = (this.format.sampleRate / 1000) * sampleBytesOf(this.format.encoding);
    this.silenceB64 = toBase64(Buffer.alloc(this.frameMs * this.bytesPerMs, this.format.encoding === 'mulaw' ? 0xff : 0));
    this.ids = simStreamIds(o.dialect);
    this.writer = new SimFrameWriter(o.dialect, this.ids, this.format);
    this.phone = new SimPhone(o.dialect, this.writer, this.bytesPerMs, o.replyQuietMs ?? 400, this.turns, {
      send: (text) => this.send(text),
      record: (e, at) => this.record(e, at),
      line: () => this.script.line,
    });
    const prepared = o.steps.map((s) =>
      s.kind !== 'say'
        ? undefined
        : (s.prepared ?? prepareSimLine(s.pcm!, s.sampleRate ?? 16000, o.dialect, this.format, o.speechThreshold ?? 500)),
    );
    this.script = new SimScript(o, prepared, this.turns, this.phone, {
      t0: () => this.t0,
      rel: (t) => this.rel(t),
      send: (text) => this.send(text),
      record: (e, at) => this.record(e, at),
      hangup: (stop) => this.hangup(stop),
      stopped: () => this.finished || this.callerClosing,
      sentDtmf: () => void this.sent.dtmf++,
      dtmfFrame: (digit, ms) => this.writer.dtmf(digit, ms),
    });
    this.done = new Promise((res, rej) => {
      this.resolve = res;
      this.reject = rej;
    });
    this.done.catch(() => undefined); // the caller's await sees it; never an unhandled rejection
    this.ws = new WebSocket(o.url, {
      headers: o.headers ?? {},
      perMessageDeflate: false,
      handshakeTimeout: o.connectTimeoutMs ?? 10_000,
    });
    this.ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        if (body.length < 4096) body += c;
      });
      res.on('end', () =>
        this.fail(new SimConnectError('refused', `the bot refused the stream: HTTP ${res.statusCode ?? '?'}`, res.statusCode, body)),
      );
      res.on('error', () =>
        this.fail(new SimConnectError('refused', `the bot refused the stream: HTTP ${res.statusCode ?? '?'}`, res.statusCode)),
      );
    });
    this.ws.on('error', (err: NodeJS.ErrnoException) => {
      if (!this.opened) {
        const timeout = /timed? ?out/i.test(err.message);
        this.fail(new SimConnectError(timeout ? 'timeout' : 'unreachable', `cannot open ${redact(o.url)}: ${err.code ?? err.message}`));
      } else {
        this.protocolError('socket', err.message);
      }
    });
    this.ws.on('open', () => this.onOpen());
    this.ws.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    this.ws.on('close', (code, reason) => this.onClose(code, reason.toString('utf8')));
  }

  hangup(stop = true): void {
    if (!this.opened || this.finished || this.callerClosing) return;
    this.callerClosing = true;
    const frame = stop ? this.writer.stop() : null;
    this.record({ type: 'hangup', stop: frame !== null });
    if (frame) this.send(frame);
    this.ws.close(1000, 'caller hung up');
  }

  private fail(err: Error): void {
    if (this.finished) return;
    this.finished = true;
    this.stopTimer();
    this.ws.removeAllListeners('message');
    try {
      this.ws.terminate();
    } catch {
      // already gone
    }
    this.reject(err);
  }

  private rel(t: number): number {
    return Math.round((t - this.t0) * 10) / 10;
  }

  private record(e: SimEventData, at = this.clock.now()): void {
    const ev: SimEvent = { ...e, atMs: this.rel(at) };
    this.events.push(ev);
    this.emit('event', ev);
  }

  private send(text: string): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(text);
  }

  private protocolError(code: string, message: string): void {
    this.phone.recv.protocolErrors++;
    this.record({ type: 'protocol_error', code, message });
  }

  private onOpen(): void {
    if (this.finished) return;
    this.opened = true;
    this.t0 = this.clock.now();
    this.script.opened(this.t0);
    this.phone.opened(this.t0);
    this.record({ type: 'open' });
    const connected = this.writer.connected();
    if (connected) this.send(connected);
    const params = { ...(this.o.customParameters ?? {}) };
    this.send(this.writer.start(params, { ...(this.o.from ? { from: this.o.from } : {}), ...(this.o.to ? { to: this.o.to } : {}) }));
    this.phone.started(this.clock.now());
    this.record({ type: 'start', streamId: this.ids.streamId, callId: this.ids.callId });
    this.tick();
  }

  // ------------------------------------------------------------------------------------------
  // Pacing: one timer, re-armed for the earliest of the next caller frame, the next mark to
  // acknowledge and the script's next deadline. Frame k is due at t0 + (k+1)·frameMs (a
  // carrier sends a frame once it has captured it); a late wake-up sends every due frame.
  // ------------------------------------------------------------------------------------------

  private nextFrameDue(): number {
    return this.t0 + (this.frameIndex + 1) * this.frameMs;
  }

  private tick(): void {
    if (this.finished || this.callerClosing) return;
    this.timerCancel = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    this.phone.advance(now);
    this.script.run(now);
    while (!this.finished && !this.callerClosing && this.nextFrameDue() <= now) this.sendFrame(now);
    if (this.finished || this.callerClosing) return;
    this.script.run(now);
    if (this.finished || this.callerClosing) return;
    this.arm(now);
  }

  private arm(now: number): void {
    let at = this.nextFrameDue();
    const mark = this.phone.nextMarkAt();
    if (mark !== undefined) at = Math.min(at, mark);
    const w = this.script.wake(now);
    if (w !== undefined) at = Math.min(at, w);
    const quiet = this.phone.replyQuietAt();
    if (quiet !== undefined) at = Math.min(at, quiet);
    at = Math.max(at, now);
    if (this.timerCancel && this.timerAt <= at) return;
    this.stopTimer();
    this.timerAt = at;
    this.timerCancel = this.clock.setTimer(() => this.tick(), at - now);
  }

  private stopTimer(): void {
    this.timerCancel?.();
    this.timerCancel = undefined;
    this.timerAt = Infinity;
  }

  private sendFrame(now: number): void {
    const due = this.nextFrameDue();
    const streamMs = this.frameIndex * this.frameMs;
    this.frameIndex++;
    this.sent.maxSendLagMs = Math.max(this.sent.maxSendLagMs, now - due);
    let b64 = this.silenceB64;
    // Frame k carries [due − frameMs, due): a line started at `startAt` begins in the first frame after it.
    const current = this.script.line;
    const line = current && current.startAt <= due - this.frameMs ? current : undefined;
    if (line) {
      if (line.next === 0) line.onsetAt = due - this.frameMs + line.onsetOffsetMs;
      b64 = line.frames[line.next++]!;
    }
    this.send(this.writer.media(b64, streamMs));
    this.sent.frames++;
    this.sent.bytes += this.frameMs * this.bytesPerMs;
    if (line && line.next === line.frames.length) this.script.lineEnded(line, due);
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.finished) return;
    const now = this.clock.now();
    if (isBinary) {
      this.protocolError('binary_frame', 'the bot sent a binary frame; carriers take JSON text frames');
      return;
    }
    const text = Array.isArray(data) ? Buffer.concat(data).toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
    let msg;
    try {
      msg = parseSimInbound(this.o.dialect, this.ids, this.format, text);
    } catch (err) {
      if (err instanceof CarrierProtocolError) this.protocolError(err.code, err.message);
      else throw err;
      return;
    }
    this.phone.advance(now);
    if (msg.type === 'media') this.phone.onMedia(msg.bytes.length, now);
    else if (msg.type === 'mark') this.phone.onMark(msg.name, now);
    else if (msg.type === 'clear') this.phone.onClear(now);
    if (!this.callerClosing) {
      this.phone.advance(now);
      this.script.run(now);
      if (!this.finished && !this.callerClosing) this.arm(now);
    }
  }

  private onClose(code: number, reason: string): void {
    if (this.finished) return;
    if (!this.opened) {
      this.fail(
        new SimConnectError('unreachable', `the bot closed the connection before it opened (code ${code}${reason ? `: ${reason}` : ''})`),
      );
      return;
    }
    const now = this.clock.now();
    this.finished = true;
    this.stopTimer();
    this.closeInfo = { code, reason, by: this.callerClosing ? 'caller' : 'bot' };
    this.record({ type: 'closed', ...this.closeInfo }, now);
    this.resolve({
      dialect: this.o.dialect,
      ids: this.ids,
      format: this.format,
      events: this.events,
      turns: this.turns,
      ...(this.phone.openingMs !== undefined ? { openingMs: this.phone.openingMs } : {}),
      sent: { ...this.sent, maxSendLagMs: Math.round(this.sent.maxSendLagMs * 10) / 10 },
      received: { ...this.phone.recv, audioMs: Math.round(this.phone.recv.audioMs), lateness: simStats(this.phone.lateness) },
      close: this.closeInfo,
      durationMs: this.rel(now),
    });
  }
}

/** `url` without credentials or query (a stream token may travel there). */
function redact(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.search = '';
    return u.toString();
  } catch {
    return 'the bot URL';
  }
}

/** Mono PCM16 at `fromRate` as 16 kHz, the rate script lines are given in. */
export function toSimPcm(pcm: Int16Array, fromRate: number): Int16Array {
  return fromRate === 16000 ? pcm : resample(pcm, fromRate, 16000);
}
