/**
 * The caller's script in a simulated carrier call ({@link simulateCall}): which step is due and
 * when — a line once the reply before it has gone quiet (or, for a barge-in, a set time into
 * it), keys one by one, waits, the hang-up, the call's time limit — and the turns it records.
 * Sending frames and pacing them are the call's; the replies heard are {@link SimPhone}'s.
 */
import type { SimPreparedLine } from '../../media/carriers/sim-frames.js';
import type { SimPhone } from './sim-phone.js';
import type { SimClientOptions, SimEventData, SimStep, SimTurn } from './sim-script.js';

/** A `say` step being spoken: its frames and where the caller is in them. */
export interface SimLine {
  turn: number;
  frames: readonly string[];
  next: number;
  /** Offset of the speech onset in the first frame, ms. */
  onsetOffsetMs: number;
  onsetAt?: number;
  overReply: boolean;
  startAt: number;
}

/** What the script needs of the call around it. */
export interface SimScriptHost {
  /** Clock time the socket opened. */
  t0(): number;
  /** Clock time `t` as timeline ms (from the open, 0.1 ms). */
  rel(t: number): number;
  send(text: string): void;
  record(e: SimEventData, at?: number): void;
  /** The caller hangs up (`stop` first unless false). */
  hangup(stop: boolean): void;
  /** True once the call finished or the caller is closing it. */
  stopped(): boolean;
  /** A DTMF key was sent. */
  sentDtmf(): void;
  /** The dialect's `dtmf` frame for `digit` at stream time `ms`. */
  dtmfFrame(digit: string, ms: number): string;
}

/** The steps of a simulated call, run in order (see the module comment). */
export class SimScript {
  /** The line being spoken, if any. */
  line: SimLine | undefined;
  private step = 0;
  private stepSince = 0;
  private pendingDigits: string[] = [];
  private nextDigitAt = 0;
  private turnCount = 0;

  /**
   * @param o        the call's options (steps, delays, time limit)
   * @param prepared each `say` step's frames, by step index
   * @param turns    the call's turns (shared with the phone, which writes latencies in)
   */
  constructor(
    private readonly o: SimClientOptions,
    private readonly prepared: ReadonlyArray<SimPreparedLine | undefined>,
    private readonly turns: SimTurn[],
    private readonly phone: SimPhone,
    private readonly host: SimScriptHost,
  ) {}

  /** The socket opened at `t0`: the first step's delays count from there. */
  opened(t0: number): void {
    this.stepSince = t0;
  }

  /** Line `line` has sent its last frame, due at `due`. */
  lineEnded(line: SimLine, due: number): void {
    this.line = undefined;
    this.endTurn(line.turn, due);
    this.host.record({ type: 'line_end', turn: line.turn }, due);
    this.nextStep(due);
  }

  /** The current step is done at `now`: the next one's delays count from there. */
  nextStep(now: number): void {
    this.step++;
    this.stepSince = now;
  }

  /** When the current step may go ahead, or undefined when it waits for an event. */
  private stepReadyAt(now: number): number | undefined {
    const s = this.o.steps[this.step];
    if (!s) return undefined;
    if (s.kind === 'wait') return this.stepSince + s.ms;
    if (s.kind === 'hangup' && s.afterReply !== true) return now;
    if ((s.kind === 'say' || s.kind === 'dtmf') && s.bargeInAfterMs !== undefined) {
      if (this.phone.replyStartAt !== undefined) return this.phone.replyStartAt + s.bargeInAfterMs;
      return this.stepSince + this.replyTimeout();
    }
    const afterReplyMs = s.kind === 'hangup' ? 0 : (s.afterReplyMs ?? 0);
    if (this.phone.replyDoneAt !== undefined) return this.phone.replyDoneAt + (this.o.replyQuietMs ?? 400) + afterReplyMs;
    return this.stepSince + this.replyTimeout();
  }

  private replyTimeout(): number {
    return this.o.replyTimeoutMs ?? 10_000;
  }

  /** When the script next has something to do (a key, a step, the call's time limit), or undefined. */
  wake(now: number): number | undefined {
    if (this.pendingDigits.length > 0) return this.nextDigitAt;
    if (this.line) return undefined;
    const at = this.stepReadyAt(now);
    const timeoutAt = this.host.t0() + (this.o.timeoutMs ?? 120_000);
    return at === undefined ? timeoutAt : Math.min(at, timeoutAt);
  }

  /** Does what the script says is due at `now`: keys, waits, lines, hang-up, the time limit. */
  run(now: number): void {
    if (now - this.host.t0() >= (this.o.timeoutMs ?? 120_000)) {
      this.host.record({ type: 'timeout' });
      this.host.hangup(true);
      return;
    }
    while (this.pendingDigits.length > 0 && this.nextDigitAt <= now) {
      const digit = this.pendingDigits.shift()!;
      const s = this.o.steps[this.step] as Extract<SimStep, { kind: 'dtmf' }>;
      this.host.send(this.host.dtmfFrame(digit, now - this.host.t0()));
      this.host.sentDtmf();
      this.host.record({ type: 'dtmf', turn: this.turnCount - 1, digit });
      this.nextDigitAt = now + (s.gapMs ?? 300);
      if (this.pendingDigits.length === 0) {
        this.endTurn(this.turnCount - 1, now);
        this.nextStep(now);
      }
    }
    while (!this.line && this.pendingDigits.length === 0 && !this.host.stopped()) {
      const s = this.o.steps[this.step];
      if (!s) return;
      const at = this.stepReadyAt(now);
      if (at === undefined || at > now) return;
      const waitingForReply =
        (s.kind === 'say' || s.kind === 'dtmf') &&
        (s.bargeInAfterMs === undefined ? this.phone.replyDoneAt : this.phone.replyStartAt) === undefined;
      if (waitingForReply) this.host.record({ type: 'no_reply', turn: this.turnCount, waitedMs: Math.round(now - this.stepSince) });
      if (s.kind === 'wait') {
        this.nextStep(now);
      } else if (s.kind === 'hangup') {
        this.host.hangup(s.stop !== false);
        return;
      } else if (s.kind === 'say') {
        this.startLine(s, now, waitingForReply);
      } else {
        const turn = this.turnCount++;
        this.turns.push({
          turn,
          kind: 'dtmf',
          digits: s.digits,
          startMs: this.host.rel(now),
          bargeIn: s.bargeInAfterMs !== undefined,
          ...(waitingForReply ? { noReply: true } : {}),
        });
        this.pendingDigits = [...s.digits.toUpperCase()];
        this.nextDigitAt = now;
        this.run(now);
        return;
      }
    }
  }

  private startLine(s: Extract<SimStep, { kind: 'say' }>, now: number, noReply: boolean): void {
    const prepared = this.prepared[this.step]!;
    const turn = this.turnCount++;
    const overReply = this.phone.tailEnd > now;
    this.line = { turn, frames: prepared.frames, next: 0, onsetOffsetMs: 0, overReply, startAt: now };
    const bargeIn = s.bargeInAfterMs !== undefined;
    this.turns.push({
      turn,
      kind: 'say',
      ...(s.text !== undefined ? { text: s.text } : {}),
      startMs: this.host.rel(now),
      bargeIn,
      ...(noReply ? { noReply: true } : {}),
    });
    this.host.record({
      type: 'line_start',
      turn,
      ...(s.text !== undefined ? { text: s.text } : {}),
      bargeIn,
      overReply,
      speechMs: prepared.speechMs,
    });
  }

  /** The caller finished turn `turn` at `at`: the next media frame starts the reply to it. */
  endTurn(turn: number, at: number): void {
    const t = this.turns.find((x) => x.turn === turn);
    if (t) t.endMs = this.host.rel(at);
    this.phone.awaitReply(turn, at);
  }
}
