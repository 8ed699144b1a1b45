/**
 * A media worker's embedded recogniser (pocketsphinx): one per worker, its engine processes
 * shared by the worker's streams, and when those engines start (docs/media.md "The first call
 * after start").
 */
import { PocketsphinxRecognizer } from '../../adapters/recognizers/pocketsphinx.js';

/** The embedded recogniser of one media worker (see the module comment). */
export class WorkerRecognizer {
  private current: PocketsphinxRecognizer | null = null;
  private prewarmed = false;

  /** The recogniser, or null before {@link load} or when this worker's streams may not use it. */
  get recognizer(): PocketsphinxRecognizer | null {
    return this.current;
  }

  /** Creates the recogniser when `enabled`; no engine process starts yet (see {@link prewarm}). */
  load(enabled: boolean): void {
    if (enabled && this.current === null) this.current = new PocketsphinxRecognizer();
  }

  /**
   * Starts the engine processes of a call's first answers (the opening's step, a yes to a
   * readback) ahead of the call; once only. The worker calls it when its first warm-up has
   * answered, or at its first call if that comes sooner: the eight engines of two workers
   * loading their models at once would take the cores the warm-up needs before the daemon
   * listens, and a caller first speaks after the opening has played, by when they are loaded.
   */
  prewarm(): void {
    if (this.prewarmed || this.current === null) return;
    this.prewarmed = true;
    this.current.prewarm(['free', 'yes_no', 'name']);
  }

  /** Stops the engine processes (at shutdown). */
  close(): Promise<void> {
    return this.current?.close() ?? Promise.resolve();
  }
}
