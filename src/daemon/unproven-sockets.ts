/**
 * Bounds on the media sockets that have not yet proven who they are (docs/media.md "Before
 * `start`"): an upgrade to `/v1/media/*` without credentials is accepted, and only its `start`
 * (with a valid `stream_token`) says whose it is. Until then anyone can open one, so each such
 * socket may hold only a few frames and bytes for a short time, and only so many may be open
 * per source address and in all; over a bound the socket is closed at once with 1013 (RFC 6455
 * §7.4.1 "Try Again Later") and a reason saying which bound.
 */

/** The bounds (docs/media.md "Before `start`" lists them). */
export const UNPROVEN_LIMITS = {
  /**
   * How long any media socket (with credentials or not) may take to send `start`, ms. Carriers
   * send `connected` and `start` as soon as the socket opens (Twilio, Exotel) or `start` first
   * (Plivo); two seconds is ample and frees a silent socket quickly.
   */
  startDeadlineMs: 2_000,
  /** Frames any socket may send before `start` (carriers send at most `connected` first). */
  framesBeforeStart: 20,
  /**
   * Bytes (UTF-8, as received) an unproven socket may send before `start`, its `start`
   * included: a carrier's `connected` and `start` with custom parameters are 1–3 KiB.
   */
  bytesBeforeStart: 16 * 1024,
  /** Unproven sockets open at once from one source address. */
  perAddress: 32,
  /** Unproven sockets open at once in all. */
  total: 128,
} as const;

/** A socket admitted as unproven: release it once (proven, refused or closed). */
export interface UnprovenTicket {
  release(): void;
}

/** The unproven media sockets of a daemon, counted per source address and in total. */
export class UnprovenSockets {
  private readonly byAddress = new Map<string, number>();
  private count = 0;

  /** `limits`: the bounds, {@link UNPROVEN_LIMITS} unless given (tests). */
  constructor(private readonly limits: { perAddress: number; total: number } = UNPROVEN_LIMITS) {}

  /** Unproven sockets open now. */
  get size(): number {
    return this.count;
  }

  /**
   * Admits one unproven socket from `address` (the TCP peer; behind a proxy, the proxy's).
   * @returns its ticket, or the reason it is refused when a bound is reached.
   */
  admit(address: string): UnprovenTicket | { refused: string } {
    const here = this.byAddress.get(address) ?? 0;
    if (here >= this.limits.perAddress) {
      return {
        refused: `too many unauthenticated media sockets from this address (${this.limits.perAddress}) are waiting for start; try again later`,
      };
    }
    if (this.count >= this.limits.total) {
      return { refused: `too many unauthenticated media sockets (${this.limits.total}) are waiting for start; try again later` };
    }
    this.byAddress.set(address, here + 1);
    this.count++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.count--;
        const left = (this.byAddress.get(address) ?? 1) - 1;
        if (left <= 0) this.byAddress.delete(address);
        else this.byAddress.set(address, left);
      },
    };
  }
}
