/**
 * The daemon's periodic store upkeep (docs/api-decisions.md "Idempotency"): the purge of expired idempotency
 * records, in small batches, the reclaim of the database's free pages, and the end of prepared
 * calls whose stream never arrived (docs/calls.md). All run through
 * the store's write queue a little at a time, so requests keep flowing meanwhile; their timers
 * are unref'd and {@link BackgroundTasks.stop} waits for the step under way.
 */
import { reclaimFreePages, type ReclaimOptions } from '../store/space.js';
import type { Runtime } from './runtime.js';

/** Minutes between purges of expired idempotency records (and one right after start-up). */
export const PURGE_INTERVAL_MS = 5 * 60_000;
/** Between looks at the database's free list. */
export const RECLAIM_INTERVAL_MS = 60_000;
/**
 * Between looks for prepared calls whose stream never arrived (and one right after start-up,
 * which ends those whose deadline passed while the daemon was down). A call ends at most this
 * long after its deadline.
 */
export const PREPARED_EXPIRY_INTERVAL_MS = 5_000;

/** Where the tasks report (the daemon's pino logger). */
export interface TaskLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Options of {@link startBackgroundTasks} (tests shorten them). */
export interface BackgroundTaskOptions {
  /** Default {@link PURGE_INTERVAL_MS}. */
  purgeIntervalMs?: number;
  /** Default {@link RECLAIM_INTERVAL_MS}. */
  reclaimIntervalMs?: number;
  /** Default {@link PREPARED_EXPIRY_INTERVAL_MS}. */
  preparedExpiryIntervalMs?: number;
  /** Rows per purge transaction (default the service's, 1,000). */
  purgeBatchRows?: number;
  /** Free-list threshold and pages per step (defaults: 1,024 and 256). */
  reclaim?: Omit<ReclaimOptions, 'signal'>;
}

/** Running tasks. */
export interface BackgroundTasks {
  /** Stops the timers and waits for the purge or reclaim step under way (before the store closes). */
  stop(): Promise<void>;
}

/**
 * Starts the purge (at once, then every `purgeIntervalMs`) and the reclaim (every
 * `reclaimIntervalMs`). A run still going when its timer fires again is not doubled. A database
 * at `auto_vacuum = NONE` is said once not to give space back (the start-up notice says how to
 * change that).
 */
export function startBackgroundTasks(runtime: Runtime, log: TaskLog, options: BackgroundTaskOptions = {}): BackgroundTasks {
  const { idempotency, repos } = runtime.services;
  const abort = new AbortController();
  const running = new Set<Promise<unknown>>();
  const track = (p: Promise<unknown>) => {
    running.add(p);
    void p.finally(() => running.delete(p));
  };

  let purging = false;
  const purge = () => {
    if (purging || abort.signal.aborted) return;
    purging = true;
    track(
      idempotency
        .purgeExpired({ signal: abort.signal, ...(options.purgeBatchRows ? { batchRows: options.purgeBatchRows } : {}) })
        .then(async (n) => {
          if (n > 0) log.info({ purged: n }, 'expired idempotency records purged');
          const events = await runtime.services.events.purgeExpired(options.purgeBatchRows ?? 1000, abort.signal);
          if (events > 0) log.info({ purged: events }, 'expired events purged');
        })
        .catch((err: unknown) => log.error({ err }, 'idempotency purge failed'))
        .finally(() => {
          purging = false;
        }),
    );
  };

  let reclaiming = false;
  let toldNone = false;
  const reclaim = () => {
    if (reclaiming || abort.signal.aborted) return;
    reclaiming = true;
    track(
      reclaimFreePages(repos.store, { ...options.reclaim, signal: abort.signal })
        .then((r) => {
          if (r.mode === 'none' && !toldNone) {
            toldNone = true;
            log.info(
              { auto_vacuum: r.mode, free_pages: r.freeBefore },
              'free database pages are not given back to the disk: the database has no incremental auto-vacuum (vagent admin db vacuum converts it)',
            );
          } else if (r.steps > 0) {
            log.info({ pages: r.freeBefore - r.freeAfter, free_pages: r.freeAfter }, 'free database pages given back to the disk');
          }
        })
        .catch((err: unknown) => log.error({ err }, 'reclaiming free database pages failed'))
        .finally(() => {
          reclaiming = false;
        }),
    );
  };

  let expiring = false;
  const expirePrepared = () => {
    if (expiring || abort.signal.aborted) return;
    expiring = true;
    track(
      runtime.services.callLines
        .endExpiredPrepared()
        .then((n) => {
          if (n > 0) log.info({ calls: n }, 'prepared calls ended: no carrier stream arrived within their max_call_duration_s');
        })
        .catch((err: unknown) => log.error({ err }, 'ending expired prepared calls failed'))
        .finally(() => {
          expiring = false;
        }),
    );
  };

  const purgeTimer = setInterval(purge, options.purgeIntervalMs ?? PURGE_INTERVAL_MS);
  const expiryTimer = setInterval(expirePrepared, options.preparedExpiryIntervalMs ?? PREPARED_EXPIRY_INTERVAL_MS);
  expiryTimer.unref();
  const reclaimTimer = setInterval(reclaim, options.reclaimIntervalMs ?? RECLAIM_INTERVAL_MS);
  purgeTimer.unref();
  reclaimTimer.unref();
  purge();
  expirePrepared();

  return {
    async stop() {
      clearInterval(purgeTimer);
      clearInterval(reclaimTimer);
      clearInterval(expiryTimer);
      abort.abort();
      await Promise.allSettled([...running]);
    },
  };
}
