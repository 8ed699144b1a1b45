/**
 * Retention (docs/api-decisions.md "Retention"): what is older than a cut-off is deleted, in bounded batches,
 * so that the database stops growing for ever.
 *
 * Two ways in:
 * - the daemon's background purge ({@link RetentionService.startBackground}), which applies
 *   each tenant's retention (`tenants.retention_days`, else the instance's `retention_days`;
 *   0 keeps everything, the default) and the instance's to the records of no tenant;
 * - `vagent admin purge --before DATE`, an explicit cut-off ({@link RetentionService.purge}),
 *   whatever the settings; `--dry-run` counts ({@link RetentionService.count}).
 *
 * Both follow the same rules (store/repos/retention.ts): a tenant's ended sessions created
 * before the cut-off go with their turns and calls, never an open session nor a call whose line
 * is not final; its audit events (as the owner of the resource) recorded before it; and, for
 * the instance, processed telephony events received before it and agent revisions applied
 * before it that no agent has as current and no remaining session pins. The spend ledger, and
 * what open calls hold in it, are never touched.
 *
 * Each batch (at most {@link DEFAULT_BATCH_SIZE} sessions with their turns and calls, or as
 * many events or revisions) is one write through the store's group commit, and the purge yields
 * to the event loop between batches: requests keep being served while a large purge runs.
 * Purged sessions leave the session service's memory (see `onSessionsPurged`), so the spec's
 * reads of them answer `not_found`.
 */
import { ApiError } from '../domain/errors.js';
import type { Repos } from '../store/index.js';

/**
 * Sessions (with their turns and calls) deleted per write, and events or revisions per write.
 * Measured on the 2-core machine (4-turn sessions, 50k in the store, background checkpoints):
 * a batch of 100 holds the event loop ~4 ms (p50), 200 ~7–17 ms; 50k sessions purge in ~4–8 s.
 */
export const DEFAULT_BATCH_SIZE = 100;

/** Seconds in a retention day. */
const DAY_S = 86_400;

/** Rows deleted (or, in a dry run, that would be), per table. */
export interface PurgeCounts {
  sessions: number;
  turns: number;
  calls: number;
  telephony_events: number;
  audit_events: number;
  agent_revisions: number;
}

/** What a purge deletes. */
export interface PurgeScope {
  /** Cut-off, epoch seconds: records created strictly before it are purged. */
  before: number;
  /**
   * One tenant's sessions and audit events, or null: every tenant's, and the records of no
   * tenant (telephony events, unused agent revisions) too.
   */
  tenant: string | null;
}

/** Options of {@link RetentionService.purge}. */
export interface PurgeOptions {
  /** Stops the purge between two batches (what was committed stays deleted). */
  signal?: AbortSignal;
  /** Told after each committed batch what it deleted (tests, progress). */
  onBatch?: (deleted: PurgeCounts) => void;
  /**
   * Wait between batches, ms (default 0: one turn of the event loop). A purge from another
   * process than the daemon (`vagent admin purge`) waits a little, so that the daemon's
   * writes, which wait for the write lock, find it free between batches.
   */
  pauseMs?: number;
}

/** What a purge did. */
export interface PurgeResult extends PurgeCounts {
  /** False when the purge was stopped (its signal) before it had deleted everything in scope. */
  complete: boolean;
}

/** Settings and hooks of {@link RetentionService}. */
export interface RetentionOptions {
  /** The instance's `retention_days`: whole days, 0 = keep for ever. */
  retentionDays: number;
  /** Sessions per write (default {@link DEFAULT_BATCH_SIZE}). */
  batchSize?: number;
  /** Told, after each batch committed, the numbers N of the sessions `se_<N>` it deleted. */
  onSessionsPurged?: (ids: number[]) => void;
}

/** Options of {@link RetentionService.startBackground}. */
export interface BackgroundOptions {
  /** Wait before the first pass, ms. */
  firstDelayMs: number;
  /** Wait between the end of one pass and the next, ms. */
  intervalMs: number;
  /** Told what each pass deleted (only when it deleted something). */
  onPurged: (counts: PurgeResult) => void;
  /** Told when a pass failed (the next one runs as planned). */
  onError: (err: unknown) => void;
}

/** A running background purge. */
export interface BackgroundPurge {
  /** Stops the timer and any pass under way (between two batches); resolves once it has stopped. */
  stop(): Promise<void>;
}

/** Counts of nothing. */
export function emptyCounts(): PurgeCounts {
  return { sessions: 0, turns: 0, calls: 0, telephony_events: 0, audit_events: 0, agent_revisions: 0 };
}

function add(into: PurgeCounts, from: Partial<PurgeCounts>): void {
  for (const k of Object.keys(from) as Array<keyof PurgeCounts>) into[k] += from[k] ?? 0;
}

/** Lets the event loop serve what waits (requests, their writes) between two batches; `ms` > 0 waits that long. */
const pause = (ms: number) => new Promise<void>((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

/** Retention purges over one store. */
export class RetentionService {
  private readonly batchSize: number;

  constructor(
    private readonly repos: Repos,
    private readonly options: RetentionOptions,
    private readonly nowS: () => number,
  ) {
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  }

  /** The instance's retention in days (0: keep for ever). */
  get instanceDays(): number {
    return this.options.retentionDays;
  }

  /**
   * Counts what {@link purge} would delete for `scope` right now, per table, changing nothing
   * (`vagent admin purge --dry-run`), in one read transaction.
   * @throws ApiError not_found (tenant), invalid_request (a cut-off in the future).
   */
  async count(scope: PurgeScope): Promise<PurgeCounts> {
    this.checkScope(scope);
    const r = this.repos.retention;
    return this.repos.store.read(() => {
      const counts = emptyCounts();
      for (const tenant of this.tenantsOf(scope)) {
        add(counts, r.countSessions(tenant, scope.before));
        counts.audit_events += r.countAudit(tenant, scope.before);
      }
      if (scope.tenant === null) {
        counts.telephony_events = r.countTelephonyEvents(scope.before);
        counts.agent_revisions = r.countRevisions(scope.before);
      }
      return counts;
    });
  }

  /**
   * Deletes what is in `scope`, batch by batch (`vagent admin purge`): for each tenant its
   * sessions (with turns and calls) then its audit events; for an all-tenant scope then the
   * telephony events and last the agent revisions no remaining session pins.
   * @throws ApiError not_found (tenant), invalid_request (a cut-off in the future); a write's error.
   */
  async purge(scope: PurgeScope, options: PurgeOptions = {}): Promise<PurgeResult> {
    this.checkScope(scope);
    const totals = emptyCounts();
    let complete = true;
    for (const tenant of this.tenantsOf(scope)) {
      complete = await this.purgeTenant(tenant, scope.before, totals, options);
      if (!complete) break;
    }
    if (complete && scope.tenant === null) complete = await this.purgeInstance(scope.before, totals, options);
    return { ...totals, complete };
  }

  /**
   * One pass of the retention settings (the daemon's background purge): each tenant whose
   * retention (its own, else the instance's) is on loses what is older than its cut-off; with
   * the instance's on, the records of no tenant older than the instance's cut-off go too.
   * @returns what was deleted; `complete` false when `options.signal` stopped it.
   */
  async enforce(options: PurgeOptions = {}): Promise<PurgeResult> {
    const totals = emptyCounts();
    const now = this.nowS();
    for (const t of this.repos.tenants.listTenants()) {
      const days = t.retention_days ?? this.options.retentionDays;
      if (days <= 0) continue;
      if (!(await this.purgeTenant(t.id, now - days * DAY_S, totals, options))) return { ...totals, complete: false };
    }
    let complete = true;
    if (this.options.retentionDays > 0) complete = await this.purgeInstance(now - this.options.retentionDays * DAY_S, totals, options);
    return { ...totals, complete };
  }

  /**
   * Runs {@link enforce} after `firstDelayMs`, then `intervalMs` after each pass ends, on
   * unref'd timers (they never keep the process alive), until stopped.
   */
  startBackground(options: BackgroundOptions): BackgroundPurge {
    const abort = new AbortController();
    let timer: NodeJS.Timeout | null = null;
    let running: Promise<void> | null = null;
    const pass = async () => {
      try {
        const result = await this.enforce({ signal: abort.signal });
        if (countsTotal(result) > 0) options.onPurged(result);
      } catch (err) {
        if (!abort.signal.aborted) options.onError(err);
      }
    };
    const arm = (ms: number) => {
      if (abort.signal.aborted) return;
      timer = setTimeout(() => {
        timer = null;
        running = pass().finally(() => {
          running = null;
          arm(options.intervalMs);
        });
      }, ms);
      timer.unref();
    };
    arm(options.firstDelayMs);
    return {
      stop: async () => {
        abort.abort();
        if (timer) clearTimeout(timer);
        timer = null;
        await running;
      },
    };
  }

  /** Batches of the tenant's sessions, then of its audit events. False when stopped. */
  private async purgeTenant(tenant: string, before: number, totals: PurgeCounts, options: PurgeOptions): Promise<boolean> {
    const r = this.repos.retention;
    const size = this.batchSize;
    const sessions = await this.batches(options, totals, () => {
      const b = r.purgeSessions(tenant, before, size);
      return { n: b.sessions, ids: b.ids, counts: { sessions: b.sessions, turns: b.turns, calls: b.calls } };
    });
    if (!sessions) return false;
    return this.batches(options, totals, () => {
      const n = r.purgeAudit(tenant, before, size);
      return { n, counts: { audit_events: n } };
    });
  }

  /** Batches of telephony events, then of unused agent revisions. False when stopped. */
  private async purgeInstance(before: number, totals: PurgeCounts, options: PurgeOptions): Promise<boolean> {
    const r = this.repos.retention;
    const size = this.batchSize;
    if (
      !(await this.batches(options, totals, () => {
        const n = r.purgeTelephonyEvents(before, size);
        return { n, counts: { telephony_events: n } };
      }))
    )
      return false;
    return this.batches(options, totals, () => {
      const n = r.purgeRevisions(before, size);
      return { n, counts: { agent_revisions: n } };
    });
  }

  /**
   * Runs `step` in one write after another until a batch comes back short of the batch size,
   * yielding to the event loop between them. False when stopped by `options.signal`.
   */
  private async batches(
    options: PurgeOptions,
    totals: PurgeCounts,
    step: () => { n: number; ids?: number[]; counts: Partial<PurgeCounts> },
  ): Promise<boolean> {
    for (;;) {
      if (options.signal?.aborted) return false;
      const done = await this.repos.store.write(step);
      if (done.ids && done.ids.length > 0) this.options.onSessionsPurged?.(done.ids);
      add(totals, done.counts);
      if (done.n > 0) options.onBatch?.({ ...emptyCounts(), ...done.counts });
      if (done.n < this.batchSize) return true;
      await pause(options.pauseMs ?? 0);
    }
  }

  /** The tenants in scope. */
  private tenantsOf(scope: PurgeScope): string[] {
    return scope.tenant === null ? this.repos.retention.tenantIds() : [scope.tenant];
  }

  /** @throws ApiError not_found for an unknown tenant, invalid_request for a cut-off in the future. */
  private checkScope(scope: PurgeScope): void {
    if (!Number.isFinite(scope.before)) throw new ApiError('invalid_request', 'the cut-off must be a time', { param: 'before' });
    if (scope.before > this.nowS()) {
      throw new ApiError(
        'invalid_request',
        `the cut-off ${new Date(scope.before * 1000).toISOString()} is in the future; a purge deletes only what is older than a past time`,
        { param: 'before' },
      );
    }
    if (scope.tenant !== null && !this.repos.tenants.getTenant(scope.tenant)) {
      throw new ApiError('not_found', `no tenant named ${scope.tenant} (see: vagent admin tenant list)`, { param: 'tenant' });
    }
  }
}

/** Rows in `c`, all tables together. */
export function countsTotal(c: PurgeCounts): number {
  return c.sessions + c.turns + c.calls + c.telephony_events + c.audit_events + c.agent_revisions;
}
