/**
 * The phone's side of a simulated carrier call ({@link simulateCall}): the bot's audio goes into
 * a play-out queue drained at real time; a mark/checkpoint is acknowledged when play-out reaches
 * it; a clear empties the queue (Twilio and Exotel then echo the pending marks, Plivo answers
 * `clearedAudio` and drops them: see ../../media/carriers/sim-frames.ts for the carriers' docs). It also measures
 * what the caller would: each reply's start (latency from the end of the caller's turn) and end
 * (a quiet spell), how late frames came for gap-free play-out, and a barge-in's time from the
 * caller's speech onset to the bot's clear.
 */
import type { SimFrameWriter } from '../../media/carriers/sim-frames.js';
import type { SimEventData, SimTimeline, SimTurn } from './sim-script.js';

/** What the phone needs of the call around it. */
export interface SimPhoneHost {
  /** Sends a text frame to the bot (when the socket is open). */
  send(text: string): void;
  /** Adds an event to the timeline at clock time `at` (default now). */
  record(e: SimEventData, at?: number): void;
  /** The line the caller is speaking, if any: its turn, speech onset (clock ms) and whether it began over a reply. */
  line(): { turn: number; onsetAt?: number; overReply: boolean } | undefined;
}

/** The phone's play-out queue and the reply it is hearing (see the module comment). */
export class SimPhone {
  /** Clock time the queued audio ends. */
  tailEnd = 0;
  /** The turn whose reply is expected or playing (-1: the opening). */
  replyTurn = -1;
  /** Clock time the current reply's first frame starts playing (undefined: not yet). */
  replyStartAt: number | undefined;
  /** Clock time the current reply ended (a quiet spell after it; undefined: not yet). */
  replyDoneAt: number | undefined;
  /** `start` sent → first frame received, ms. */
  openingMs: number | undefined;
  /** What the bot sent, counted. */
  readonly recv = { frames: 0, bytes: 0, audioMs: 0, marks: 0, marksPlayed: 0, marksCleared: 0, clears: 0, protocolErrors: 0 };
  /** How late each received frame was for gap-free play-out, ms. */
  readonly lateness: number[] = [];
  private midClip = false;
  private readonly marks: Array<{ name: string; at: number }> = [];
  private replyTurnEndAt = 0;
  private replyFrames = 0;
  private replyAudioMs = 0;
  private lastMediaAt = -Infinity;
  private startSentAt = 0;
  private t0 = 0;

  /**
   * @param dialect      the carrier played (Plivo answers a clear differently)
   * @param writer       the dialect's frames
   * @param bytesPerMs   bytes of the stream's audio per ms
   * @param replyQuietMs a reply has ended after this long without audio, ms
   * @param turns        the caller's turns (the call's, shared): latency and barge-in times are written in
   */
  constructor(
    private readonly dialect: SimTimeline['dialect'],
    private readonly writer: SimFrameWriter,
    private readonly bytesPerMs: number,
    private readonly replyQuietMs: number,
    private readonly turns: SimTurn[],
    private readonly host: SimPhoneHost,
  ) {}

  /** The socket opened at clock time `t0`. */
  opened(t0: number): void {
    this.t0 = t0;
    this.tailEnd = t0;
    this.replyTurnEndAt = t0;
  }

  /** `start` was sent at clock time `at`: the opening's latency counts from there. */
  started(at: number): void {
    this.startSentAt = at;
    this.replyTurnEndAt = at;
  }

  /** Clock time of the next mark to acknowledge, if any. */
  nextMarkAt(): number | undefined {
    return this.marks[0]?.at;
  }

  /** The caller finished turn `turn` at `at`: the next media frame starts the reply to it. */
  awaitReply(turn: number, at: number): void {
    this.replyTurn = turn;
    this.replyTurnEndAt = at;
    this.replyStartAt = undefined;
    this.replyDoneAt = undefined;
    this.replyFrames = 0;
    this.replyAudioMs = 0;
  }

  /** When the reply playing counts as ended if no audio comes, or undefined. */
  replyQuietAt(): number | undefined {
    if (this.replyStartAt === undefined || this.replyDoneAt !== undefined) return undefined;
    return Math.max(this.tailEnd, this.lastMediaAt) + this.replyQuietMs;
  }

  /** Plays out up to `now`: acknowledges the marks reached, ends a reply gone quiet. */
  advance(now: number): void {
    while (this.marks.length > 0 && this.marks[0]!.at <= now) {
      const m = this.marks.shift()!;
      this.recv.marksPlayed++;
      this.host.send(this.writer.markAck(m.name));
      this.host.record({ type: 'mark', name: m.name, by: 'played' }, now);
    }
    const quiet = this.replyQuietAt();
    if (quiet !== undefined && quiet <= now) {
      this.replyDoneAt = Math.max(this.tailEnd, this.lastMediaAt);
      this.host.record({ type: 'reply_end', turn: this.replyTurn, frames: this.replyFrames, audioMs: Math.round(this.replyAudioMs) }, now);
    }
  }

  /** A media frame of `bytes` bytes arrived at `now`. */
  onMedia(bytes: number, now: number): void {
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
      this.host.record({ type: 'reply_start', turn: this.replyTurn, latencyMs: Math.round((now - this.replyTurnEndAt) * 10) / 10 }, now);
      const t = this.turns.find((x) => x.turn === this.replyTurn);
      if (t && t.latencyMs === undefined) t.latencyMs = Math.round((now - this.replyTurnEndAt) * 10) / 10;
    }
    this.replyFrames++;
    this.replyAudioMs += ms;
  }

  /** Mark `name` arrived at `now`: acknowledged when play-out reaches it. */
  onMark(name: string, now: number): void {
    this.recv.marks++;
    this.midClip = false;
    this.marks.push({ name, at: Math.max(now, this.tailEnd) });
    this.advance(now);
  }

  /** A clear arrived at `now`: the queue empties, the barge-in is measured, pending marks answered. */
  onClear(now: number): void {
    this.recv.clears++;
    const droppedMs = Math.max(0, this.tailEnd - now);
    const pending = this.marks.splice(0);
    this.tailEnd = now;
    this.midClip = false;
    let bargeInMs: number | undefined;
    let turn: number | undefined;
    const line = this.host.line();
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
    this.host.record(
      {
        type: 'clear',
        droppedMs: Math.round(droppedMs),
        marksPending: pending.length,
        ...(bargeInMs !== undefined ? { bargeInMs, turn } : {}),
      },
      now,
    );
    if (this.dialect === 'plivo') {
      // Plivo: "playedStream will only be emitted if the preceding events were played successfully".
      const cleared = this.writer.cleared();
      if (cleared) this.host.send(cleared);
      return;
    }
    // Twilio: "If you send a clear message, Twilio will empty the audio buffer and send back
    // mark messages matching any remaining mark messages" (websocket-messages, Send a clear
    // message). Exotel's docs do not say; its protocol follows Twilio's, so it is simulated alike.
    for (const m of pending) {
      this.recv.marksCleared++;
      this.host.send(this.writer.markAck(m.name));
      this.host.record({ type: 'mark', name: m.name, by: 'clear' }, now);
    }
  }
}
