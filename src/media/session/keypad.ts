/**
 * DTMF keys collected into one entry for a {@link CallMediaSession}: `#` ends the entry, or a
 * pause of `pauseMs` after the last key; the entry's keys (without the `#`) go out as one text.
 */
import type { PlayoutClock } from '../playout-clock.js';
import type { DtmfDigit } from '../transport.js';

/** The keys pressed so far and the pause that ends them. */
export class KeypadEntry {
  private keys = '';
  private cancelTimer: (() => void) | null = null;

  /**
   * @param clock   the session's clock
   * @param pauseMs a pause this long after a key ends the entry, ms
   * @param onEntry told each entry that holds at least one key
   */
  constructor(
    private readonly clock: PlayoutClock,
    private readonly pauseMs: number,
    private readonly onEntry: (keys: string) => void,
  ) {}

  /** True while keys are being entered (pressed, not yet sent). */
  get entering(): boolean {
    return this.keys !== '';
  }

  /** Key `digit` was pressed. */
  press(digit: DtmfDigit): void {
    this.stopTimer();
    if (digit === '#') {
      this.flush();
      return;
    }
    this.keys += digit;
    this.cancelTimer = this.clock.setTimer(() => {
      this.cancelTimer = null;
      this.flush();
    }, this.pauseMs);
  }

  /** Stops waiting for the pause (the call closes or ended); the keys so far stay. */
  stopTimer(): void {
    this.cancelTimer?.();
    this.cancelTimer = null;
  }

  private flush(): void {
    const keys = this.keys;
    this.keys = '';
    if (keys !== '') this.onEntry(keys);
  }
}
