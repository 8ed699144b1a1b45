/**
 * The calls whose media a daemon carries, by call number (carrier streams, LiveKit rooms), and
 * the work still ending them: what hanging one up from the API and stopping the daemon need.
 */

/** A call's media, as far as ending it goes. */
export interface LiveCall {
  /** Hangs the call up from vagent's side; its media then ends on its own. */
  hangup(): void;
}

/** Live calls of one kind of media. */
export class LiveCalls<H extends LiveCall = LiveCall> {
  private readonly calls = new Map<number, H>();
  private readonly pending = new Set<Promise<unknown>>();
  private stopping = false;

  /** Calls carried now. */
  get size(): number {
    return this.calls.size;
  }

  /** Whether {@link closeAll} has begun: no new call is taken. */
  get draining(): boolean {
    return this.stopping;
  }

  /** The numbers of the calls carried now. */
  ids(): number[] {
    return [...this.calls.keys()];
  }

  has(n: number): boolean {
    return this.calls.has(n);
  }

  /** Registers (or replaces) call `n`'s handle. */
  set(n: number, call: H): void {
    this.calls.set(n, call);
  }

  /** Forgets call `n` (its media ended). */
  delete(n: number): void {
    this.calls.delete(n);
  }

  /** Hangs up call `n`. @returns false when this media does not carry it */
  hangUp(n: number): boolean {
    const call = this.calls.get(n);
    if (!call) return false;
    call.hangup();
    return true;
  }

  /** Keeps `work` (a session being ended, a line being hung up) until it settles: {@link closeAll} waits for it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
    return work;
  }

  /** Shutdown: hangs up every call and waits (at most `timeoutMs`) until they and the tracked work are done. */
  async closeAll(timeoutMs = 3000): Promise<void> {
    this.stopping = true;
    for (const call of this.calls.values()) call.hangup();
    const deadline = Date.now() + timeoutMs;
    while ((this.calls.size > 0 || this.pending.size > 0) && Date.now() < deadline) {
      await Promise.race([Promise.allSettled([...this.pending]), new Promise((r) => setTimeout(r, 20))]);
    }
  }
}
