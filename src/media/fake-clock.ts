/**
 * A manual {@link PlayoutClock} for deterministic tests and the bench: time moves only when
 * told to, and timers can be made to fire late by a chosen amount, as a busy event loop does.
 */
import type { PlayoutClock } from './playout-clock.js';

interface Timer {
  at: number;
  seq: number;
  fn: () => void;
}

/** A clock whose time advances only through {@link advance} / {@link runUntil}. */
export class FakeClock implements PlayoutClock {
  private t: number;
  private seq = 0;
  private timers: Timer[] = [];

  /**
   * @param start   initial time, ms
   * @param delayOf extra ms each timer fires late, ≥ 0, chosen when the timer is set
   *                (e.g. `() => Math.random() * 15`); default none
   */
  constructor(
    start = 0,
    private readonly delayOf: () => number = () => 0,
  ) {
    this.t = start;
  }

  /** Current time, ms. */
  now(): number {
    return this.t;
  }

  /** Schedules `fn` at now + max(0, delayMs) + delayOf(). */
  setTimer(fn: () => void, delayMs: number): () => void {
    const extra = this.delayOf();
    if (!(extra >= 0)) throw new RangeError(`timer lateness must be ≥ 0 ms; got ${extra}`);
    const timer: Timer = { at: this.t + Math.max(0, delayMs) + extra, seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((x) => x !== timer);
    };
  }

  /** Timers not yet fired. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing each timer due on the way at its own time, in order. */
  advance(ms: number): void {
    this.runUntil(this.t + ms);
  }

  /** Moves time to `until` (ms), firing due timers in order, including ones they set. */
  runUntil(until: number): void {
    for (;;) {
      let next: Timer | undefined;
      for (const x of this.timers) if (x.at <= until && (!next || x.at < next.at || (x.at === next.at && x.seq < next.seq))) next = x;
      if (!next) break;
      this.timers = this.timers.filter((x) => x !== next);
      this.t = Math.max(this.t, next.at);
      next.fn();
    }
    this.t = Math.max(this.t, until);
  }
}
