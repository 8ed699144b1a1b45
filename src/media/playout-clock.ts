/**
 * The media path's clock: monotonic milliseconds and one-shot timers, injected into playout,
 * the call session, recognisers and the carrier simulator so that each runs the same on the
 * real clock, in a worker thread, and on a fake clock in tests (./fake-clock.ts).
 */
/** A timer source: monotonic milliseconds and one-shot timers. */
export interface PlayoutClock {
  /** Monotonic time, ms (fractional allowed). */
  now(): number;
  /** Calls `fn` once after about `delayMs` ms (≥ 0; may fire late, never early); returns a canceller. */
  setTimer(fn: () => void, delayMs: number): () => void;
}

/** The real clock: `performance.now()` and `setTimeout` (Node ≥ 16 global `performance`). */
export const systemClock: PlayoutClock = {
  now: () => performance.now(),
  setTimer(fn, delayMs) {
    const t = setTimeout(fn, Math.max(0, delayMs));
    return () => clearTimeout(t);
  },
};
