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
 * echo the pending marks, Plivo answers `clearedAudio` and drops them: see ./sim-frames.ts
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
import { resample } from '../audio-resample.js';
import { systemClock, type PlayoutClock } from '../playout.js';
import { sampleBytesOf, toBase64 } from './common.js';
import {
  checkSimParameters,
  defaultSimFormat,
  parseSimInbound,
  prepareSimLine,
  simFrameMs,
  SimFrameWriter,
  simStreamIds,
  type SimPreparedLine,
  type SimStreamIds,
} from './sim-frames.js';
import { CarrierProtocolError, type CarrierAudioFormat } from './types.js';
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

const DTMF = /^[0-9*#A-Da-d]+$/;

/** Checks the options; throws RangeError naming the first bad one. */
function checkOptions(o: SimClientOptions): void {
  if (!/^wss?:\/\//i.test(o.url)) throw new RangeError(`url must start with ws:// or wss://: ${JSON.stringify(o.url)}`);
  if (!['twilio', 'exotel', 'plivo'].includes(o.dialect)) throw new RangeError(`unknown dialect ${JSON.stringify(o.dialect)}`);
  if (o.format) {
    const { encoding, sampleRate } = o.format;
    const ok =
      encoding === 'mulaw'
        ? sampleRate === 8000
        : encoding === 'pcm16' &&
          (o.dialect === 'exotel' ? [8000, 16000, 24000] : o.dialect === 'plivo' ? [8000, 16000] : []).includes(sampleRate);
    if (!ok)
      throw new RangeError(
        `${o.dialect} does not stream ${String(encoding)} at ${String(sampleRate)} Hz (Twilio: mulaw 8000; Exotel: pcm16 8000/16000/24000 or mulaw 8000; Plivo: mulaw 8000 or pcm16 8000/16000)`,
      );
  }
  checkSimParameters(o.customParameters ?? {});
  for (const [i, s] of o.steps.entries()) {
    const where = `step ${i + 1} (${s.kind})`;
    if (s.kind === 'say' || s.kind === 'dtmf') {
      if (s.afterReplyMs !== undefined && s.bargeInAfterMs !== undefined)
        throw new RangeError(`${where}: afterReplyMs and bargeInAfterMs do not go together`);
      for (const v of [s.afterReplyMs, s.bargeInAfterMs])
        if (v !== undefined && !(v >= 0)) throw new RangeError(`${where}: delays must be ≥ 0 ms`);
    }
    if (s.kind === 'say') {
      if ((s.pcm === undefined) === (s.prepared === undefined)) throw new RangeError(`${where}: give pcm or prepared, not both or neither`);
      if (s.pcm !== undefined && (!(s.pcm instanceof Int16Array) || s.pcm.length === 0))
        throw new RangeError(`${where}: pcm must be non-empty 16-bit samples`);
      if (s.prepared) {
        const f = o.format ?? defaultSimFormat(o.dialect);
        if (
          s.prepared.dialect !== o.dialect ||
          s.prepared.format.encoding !== f.encoding ||
          s.prepared.format.sampleRate !== f.sampleRate
        ) {
          throw new RangeError(
            `${where}: the prepared line is for ${s.prepared.dialect} ${s.prepared.format.encoding} ${s.prepared.format.sampleRate} Hz, not this stream's format`,
          );
        }
      }
    } else if (s.kind === 'dtmf') {
      if (!DTMF.test(s.digits)) throw new RangeError(`${where}: digits must be 0-9, *, #, A-D; got ${JSON.stringify(s.digits)}`);
    } else if (s.kind === 'wait') {
      if (!(s.ms >= 0)) throw new RangeError(`${where}: ms must be ≥ 0`);
    }
  }
}

interface Line {
  turn: number;
  frames: readonly string[];
  next: number;
  /** Offset of the speech onset in the first frame, ms. */
  onsetOffsetMs: number;
  onsetAt?: number;
  overReply: boolean;
  startAt: number;
}

/**
 * Starts a simulated carrier call against `options.url` and returns it at once; the script runs
 * as soon as the socket opens.
 * @throws RangeError for bad options (nothing is connected then)
 */
export function simulateCall(options: SimClientOptions): SimCall {
  checkOptions(options);
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
  /** Each `say` step's frames, by step index. */
  private readonly prepared: Array<SimPreparedLine | undefined>;
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
  private line: Line | undefined;
  private step = 0;
  private stepSince = 0;
  private pendingDigits: string[] = [];
  private nextDigitAt = 0;
  private turnCount = 0;
  private startSentAt = 0;
  private sent = { frames: 0, bytes: 0, dtmf: 0, maxSendLagMs: 0 };

  // play-out side
  private tailEnd = 0;
  private midClip = false;
  private readonly marks: Array<{ name: string; at: number }> = [];
  private replyTurn = -1;
  private replyTurnEndAt = 0;
  private replyStartAt: number | undefined;
  private replyDoneAt: number | undefined;
  private replyFrames = 0;
  private replyAudioMs = 0;
  private lastMediaAt = -Infinity;
  private openingMs: number | undefined;
  private readonly lateness: number[] = [];
  private recv = { frames: 0, bytes: 0, audioMs: 0, marks: 0, marksPlayed: 0, marksCleared: 0, clears: 0, protocolErrors: 0 };
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
    this.prepared = o.steps.map((s) =>
      s.kind !== 'say'
        ? undefined
        : (s.prepared ?? prepareSimLine(s.pcm!, s.sampleRate ?? 16000, o.dialect, this.format, o.speechThreshold ?? 500)),
    );
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
    this.recv.protocolErrors++;
    this.record({ type: 'protocol_error', code, message });
  }

  private onOpen(): void {
    if (this.finished) return;
    this.opened = true;
    this.t0 = this.clock.now();
    this.stepSince = this.t0;
    this.tailEnd = this.t0;
    this.replyTurnEndAt = this.t0;
    this.record({ type: 'open' });
    const connected = this.writer.connected();
    if (connected) this.send(connected);
    const params = { ...(this.o.customParameters ?? {}) };
    this.send(this.writer.start(params, { ...(this.o.from ? { from: this.o.from } : {}), ...(this.o.to ? { to: this.o.to } : {}) }));
    this.startSentAt = this.clock.now();
    this.replyTurnEndAt = this.startSentAt;
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
    this.advancePlayout(now);
    this.runScript(now);
    while (!this.finished && !this.callerClosing && this.nextFrameDue() <= now) this.sendFrame(now);
    if (this.finished || this.callerClosing) return;
    this.runScript(now);
    if (this.finished || this.callerClosing) return;
    this.arm(now);
  }

  private arm(now: number): void {
    let at = this.nextFrameDue();
    if (this.marks.length > 0) at = Math.min(at, this.marks[0]!.at);
    const w = this.scriptWake(now);
    if (w !== undefined) at = Math.min(at, w);
    const quiet = this.replyQuietAt();
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
    const line = this.line && this.line.startAt <= due - this.frameMs ? this.line : undefined;
    if (line) {
      if (line.next === 0) line.onsetAt = due - this.frameMs + line.onsetOffsetMs;
      b64 = line.frames[line.next++]!;
    }
    this.send(this.writer.media(b64, streamMs));
    this.sent.frames++;
    this.sent.bytes += this.frameMs * this.bytesPerMs;
    if (line && line.next === line.frames.length) {
      this.line = undefined;
      this.endTurn(line.turn, due);
      this.record({ type: 'line_end', turn: line.turn }, due);
      this.nextStep(due);
    }
  }

  // ------------------------------------------------------------------------------------------
  // The script.
  // ------------------------------------------------------------------------------------------

  private nextStep(now: number): void {
    this.step++;
    this.stepSince = now;
  }

  /** When the current step may go ahead, or undefined when it waits for an event. */
  private stepReadyAt(now: number): number | undefined {
    const s = this.o.steps[this.step];
    if (!s) return undefined;
    if (s.kind === 'wait') return this.stepSince + s.ms;
    if (s.kind === 'hangup') return now;
    if ((s.kind === 'say' || s.kind === 'dtmf') && s.bargeInAfterMs !== undefined) {
      if (this.replyStartAt !== undefined) return this.replyStartAt + s.bargeInAfterMs;
      return this.stepSince + this.replyTimeout();
    }
    if (this.replyDoneAt !== undefined) return this.replyDoneAt + (this.o.replyQuietMs ?? 400) + (s.afterReplyMs ?? 0);
    return this.stepSince + this.replyTimeout();
  }

  private replyTimeout(): number {
    return this.o.replyTimeoutMs ?? 10_000;
  }

  private scriptWake(now: number): number | undefined {
    if (this.pendingDigits.length > 0) return this.nextDigitAt;
    if (this.line) return undefined;
    const at = this.stepReadyAt(now);
    const timeoutAt = this.t0 + (this.o.timeoutMs ?? 120_000);
    return at === undefined ? timeoutAt : Math.min(at, timeoutAt);
  }

  private runScript(now: number): void {
    if (now - this.t0 >= (this.o.timeoutMs ?? 120_000)) {
      this.record({ type: 'timeout' });
      this.hangup(true);
      return;
    }
    while (this.pendingDigits.length > 0 && this.nextDigitAt <= now) {
      const digit = this.pendingDigits.shift()!;
      const s = this.o.steps[this.step] as Extract<SimStep, { kind: 'dtmf' }>;
      this.send(this.writer.dtmf(digit, now - this.t0));
      this.sent.dtmf++;
      this.record({ type: 'dtmf', turn: this.turnCount - 1, digit });
      this.nextDigitAt = now + (s.gapMs ?? 300);
      if (this.pendingDigits.length === 0) {
        this.endTurn(this.turnCount - 1, now);
        this.nextStep(now);
      }
    }
    while (!this.line && this.pendingDigits.length === 0 && !this.finished && !this.callerClosing) {
      const s = this.o.steps[this.step];
      if (!s) return;
      const at = this.stepReadyAt(now);
      if (at === undefined || at > now) return;
      const waitingForReply =
        (s.kind === 'say' || s.kind === 'dtmf') && (s.bargeInAfterMs === undefined ? this.replyDoneAt : this.replyStartAt) === undefined;
      if (waitingForReply) this.record({ type: 'no_reply', turn: this.turnCount, waitedMs: Math.round(now - this.stepSince) });
      if (s.kind === 'wait') {
        this.nextStep(now);
      } else if (s.kind === 'hangup') {
        this.hangup(s.stop !== false);
        return;
      } else if (s.kind === 'say') {
        this.startLine(s, now, waitingForReply);
      } else {
        const turn = this.turnCount++;
        this.turns.push({
          turn,
          kind: 'dtmf',
          digits: s.digits,
          startMs: this.rel(now),
          bargeIn: s.bargeInAfterMs !== undefined,
          ...(waitingForReply ? { noReply: true } : {}),
        });
        this.pendingDigits = [...s.digits.toUpperCase()];
        this.nextDigitAt = now;
        this.runScript(now);
        return;
      }
    }
  }

  private startLine(s: Extract<SimStep, { kind: 'say' }>, now: number, noReply: boolean): void {
    const prepared = this.prepared[this.step]!;
    const turn = this.turnCount++;
    const overReply = this.tailEnd > now;
    this.line = { turn, frames: prepared.frames, next: 0, onsetOffsetMs: 0, overReply, startAt: now };
    const bargeIn = s.bargeInAfterMs !== undefined;
    this.turns.push({
      turn,
      kind: 'say',
      ...(s.text !== undefined ? { text: s.text } : {}),
      startMs: this.rel(now),
      bargeIn,
      ...(noReply ? { noReply: true } : {}),
    });
    this.record({
      type: 'line_start',
      turn,
      ...(s.text !== undefined ? { text: s.text } : {}),
      bargeIn,
      overReply,
      speechMs: prepared.speechMs,
    });
  }

  /** The caller finished turn `turn` at `at`: the next media frame starts the reply to it. */
  private endTurn(turn: number, at: number): void {
    const t = this.turns.find((x) => x.turn === turn);
    if (t) t.endMs = this.rel(at);
    this.replyTurn = turn;
    this.replyTurnEndAt = at;
    this.replyStartAt = undefined;
    this.replyDoneAt = undefined;
    this.replyFrames = 0;
    this.replyAudioMs = 0;
  }

  // ------------------------------------------------------------------------------------------
  // The phone's play-out.
  // ------------------------------------------------------------------------------------------

  private replyQuietAt(): number | undefined {
    if (this.replyStartAt === undefined || this.replyDoneAt !== undefined) return undefined;
    return Math.max(this.tailEnd, this.lastMediaAt) + (this.o.replyQuietMs ?? 400);
  }

  private advancePlayout(now: number): void {
    while (this.marks.length > 0 && this.marks[0]!.at <= now) {
      const m = this.marks.shift()!;
      this.recv.marksPlayed++;
      this.send(this.writer.markAck(m.name));
      this.record({ type: 'mark', name: m.name, by: 'played' }, now);
    }
    const quiet = this.replyQuietAt();
    if (quiet !== undefined && quiet <= now) {
      this.replyDoneAt = Math.max(this.tailEnd, this.lastMediaAt);
      this.record({ type: 'reply_end', turn: this.replyTurn, frames: this.replyFrames, audioMs: Math.round(this.replyAudioMs) }, now);
    }
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
    this.advancePlayout(now);
    if (msg.type === 'media') this.onMedia(msg.bytes.length, now);
    else if (msg.type === 'mark') this.onMark(msg.name, now);
    else if (msg.type === 'clear') this.onClear(now);
    if (!this.callerClosing) {
      this.advancePlayout(now);
      this.runScript(now);
      if (!this.finished && !this.callerClosing) this.arm(now);
    }
  }

  private onMedia(bytes: number, now: number): void {
    const ms = bytes / this.bytesPerMs;
    this.recv.frames++;
    this.recv.bytes += bytes;
    this.recv.audioMs += ms;
    this.lateness.push(this.midClip && this.tailEnd < now ? now - this.tailEnd : 0);
    const start = Math.max(now, this.tailEnd);
    this.tailEnd = start + ms;
    this.midClip = true;
    this.lastMediaAt = now;
    if (this.openingMs === undefined) this.openingMs = Math.round((now - this.startSentAt) * 10) / 10;
    if (this.replyStartAt === undefined) {
      this.replyStartAt = start;
      this.replyDoneAt = undefined;
      this.record({ type: 'reply_start', turn: this.replyTurn, latencyMs: Math.round((now - this.replyTurnEndAt) * 10) / 10 }, now);
      const t = this.turns.find((x) => x.turn === this.replyTurn);
      if (t && t.latencyMs === undefined) t.latencyMs = Math.round((now - this.replyTurnEndAt) * 10) / 10;
    }
    this.replyFrames++;
    this.replyAudioMs += ms;
  }

  private onMark(name: string, now: number): void {
    this.recv.marks++;
    this.midClip = false;
    this.marks.push({ name, at: Math.max(now, this.tailEnd) });
    this.advancePlayout(now);
  }

  private onClear(now: number): void {
    this.recv.clears++;
    const droppedMs = Math.max(0, this.tailEnd - now);
    const pending = this.marks.splice(0);
    this.tailEnd = now;
    this.midClip = false;
    let bargeInMs: number | undefined;
    let turn: number | undefined;
    const line = this.line ?? undefined;
    const candidate = line?.onsetAt !== undefined ? line : undefined;
    const last = [...this.turns].reverse().find((t) => t.kind === 'say' && t.bargeIn);
    const keying = this.turns.at(-1);
    if (keying?.kind === 'dtmf' && keying.bargeIn && keying.bargeInMs === undefined) {
      // Keys pressed over the reply: measured from the first key.
      bargeInMs = Math.round((now - (this.t0 + keying.startMs)) * 10) / 10;
      turn = keying.turn;
    } else if (candidate && candidate.overReply && candidate.onsetAt! <= now) {
      bargeInMs = Math.round((now - candidate.onsetAt!) * 10) / 10;
      turn = candidate.turn;
    } else if (last && last.endMs !== undefined && last.bargeInMs === undefined && last.turn === this.replyTurn) {
      // The clear came after the barging line ended: measure from that line's onset.
      bargeInMs = Math.round((now - (this.t0 + last.startMs)) * 10) / 10;
      turn = last.turn;
    }
    if (turn !== undefined) {
      const t = this.turns.find((x) => x.turn === turn);
      if (t && t.bargeInMs === undefined) t.bargeInMs = bargeInMs;
    }
    this.record(
      {
        type: 'clear',
        droppedMs: Math.round(droppedMs),
        marksPending: pending.length,
        ...(bargeInMs !== undefined ? { bargeInMs, turn } : {}),
      },
      now,
    );
    if (this.o.dialect === 'plivo') {
      // Plivo: "playedStream will only be emitted if the preceding events were played successfully".
      const cleared = this.writer.cleared();
      if (cleared) this.send(cleared);
      return;
    }
    // Twilio: "If you send a clear message, Twilio will empty the audio buffer and send back
    // mark messages matching any remaining mark messages" (websocket-messages, Send a clear
    // message). Exotel's docs do not say; its protocol follows Twilio's, so it is simulated alike.
    for (const m of pending) {
      this.recv.marksCleared++;
      this.send(this.writer.markAck(m.name));
      this.record({ type: 'mark', name: m.name, by: 'clear' }, now);
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
      ...(this.openingMs !== undefined ? { openingMs: this.openingMs } : {}),
      sent: { ...this.sent, maxSendLagMs: Math.round(this.sent.maxSendLagMs * 10) / 10 },
      received: { ...this.recv, audioMs: Math.round(this.recv.audioMs), lateness: simStats(this.lateness) },
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
