/**
 * The sessions a daemon holds in memory (docs/api-decisions.md "Sessions in memory"): open
 * sessions, least recently used beyond a bound dropped (they reload), a window of recently
 * ended ones, and each session's lock (a turn or an end runs alone on its session).
 */
import { ApiError } from '../domain/errors.js';
import { parseSessionNumber, shortId } from '../domain/ids.js';
import type { EngineState } from '../engine/state.js';
import type { SessionSummary } from '../engine/summary.js';
import type { SessionRow } from '../store/index.js';
import { scoped } from './access.js';
import type { AgentService } from './agents.js';
import type { Principal, ServiceDeps } from './context.js';
import type { SessionMetrics } from './session-model.js';
import type { LiveSession, SessionCacheSizes, Summary } from './session-types.js';
import type { SpeechPort } from './speech-port.js';

/** Bounds of a {@link SessionMemory}. */
export interface SessionMemoryBounds {
  /** Open sessions kept (least recently used beyond this are dropped; they reload). */
  maxCached: number;
  /** Ended sessions kept, most recently used first; 0 keeps none. */
  maxEndedCached: number;
}

/** The sessions held in memory, and their locks. */
export class SessionMemory {
  /** Open sessions in memory, least recently used first. */
  private readonly live = new Map<number, LiveSession>();
  /** The window of recently used ended sessions, least recently used first. */
  private readonly ended = new Map<number, LiveSession>();
  private readonly locks = new Map<number, Promise<unknown>>();
  private readonly maxCached: number;
  private readonly maxEndedCached: number;
  /** The store's `externalVersion()` the ended window was filled under. */
  private endedVersion = -1;

  constructor(
    private readonly deps: ServiceDeps,
    private readonly agents: AgentService,
    private readonly speech: SpeechPort,
    bounds: SessionMemoryBounds,
  ) {
    this.maxCached = bounds.maxCached;
    this.maxEndedCached = bounds.maxEndedCached;
  }

  /** The caller's session `n` from memory or the database. @throws ApiError not_found. */
  load(principal: Principal, n: number, sessionId: string): LiveSession {
    // Another process (`vagent admin purge`) may have deleted ended sessions held here: the
    // window starts afresh once it has committed anything (seen within EXTERNAL_CHECK_MS).
    const version = this.deps.repos.store.externalVersion();
    if (version !== this.endedVersion) {
      this.ended.clear();
      this.endedVersion = version;
    }
    const cached = this.live.get(n) ?? this.ended.get(n);
    if (cached) {
      if (cached.tenantId === principal.tenantId || scoped(this.deps, principal, { tenant_id: cached.tenantId }, sessionId)) {
        this.remember(cached);
        return cached;
      }
      throw notFound(sessionId);
    }
    const row = scoped(this.deps, principal, this.deps.repos.sessions.get(n), sessionId);
    if (!row) throw notFound(sessionId);
    const s = this.fromRow(row);
    this.remember(s);
    return s;
  }

  /** The in-memory form of a stored session (its newest state and metrics). */
  fromRow(row: SessionRow): LiveSession {
    const agent = this.agents.compiledRevision(row.agent_digest);
    const latest = row.status === 'open' ? this.deps.repos.sessions.latestState(row.seq) : undefined;
    return {
      id: row.id,
      seq: row.seq,
      tenantId: row.tenant_id,
      agent,
      voice: this.agents.voiceOf(agent),
      customerName: row.customer_name,
      context: JSON.parse(row.context) as Record<string, unknown>,
      refMs: row.ref_ms,
      status: row.status,
      state: JSON.parse(latest?.engine ?? row.engine) as EngineState,
      metrics: JSON.parse(latest?.metrics ?? row.metrics) as SessionMetrics,
      summary: row.summary === null ? null : (JSON.parse(row.summary) as SessionSummary),
    };
  }

  /**
   * Puts `s` last (most recently used) in its map: open sessions in `live`, ended ones in the
   * ended window; then trims that map to its bound.
   */
  remember(s: LiveSession): void {
    const map = s.status === 'open' ? this.live : this.ended;
    map.delete(s.id);
    map.set(s.id, s);
    this.trim();
  }

  /**
   * Drops the least recently used sessions beyond each map's bound, sparing the ones a request
   * holds (the request's end trims again, see {@link SessionMemory.lock}).
   */
  trim(): void {
    for (const [map, max] of [
      [this.live, this.maxCached],
      [this.ended, this.maxEndedCached],
    ] as const) {
      if (map.size <= max) continue;
      for (const n of map.keys()) {
        if (map.size <= max) break;
        if (this.locks.has(n)) continue;
        map.delete(n);
        // An open session leaving memory keeps only the cache's keep window for its clips.
        if (map === this.live) this.speech.unpin(pinOwner(n));
      }
    }
  }

  async withLock<T>(n: number, fn: () => Promise<T>): Promise<T> {
    const release = await this.lock(n);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Takes session `n`'s lock once its holders before have released it; resolves with the release (call it once). */
  async lock(n: number): Promise<() => void> {
    const prev = this.locks.get(n);
    let release!: () => void;
    const tail = new Promise<void>((resolve) => (release = resolve));
    this.locks.set(n, tail);
    if (prev) await prev;
    return () => {
      release();
      if (this.locks.get(n) === tail) {
        this.locks.delete(n);
        this.trim();
      }
    };
  }

  /** Marks `s` ended in memory (after its end committed) and moves it to the ended window. */
  markEnded(s: LiveSession, summary: Summary): void {
    s.status = 'ended';
    s.summary = summary;
    this.live.delete(s.id);
    this.speech.unpin(pinOwner(s.id));
    this.remember(s);
  }

  /**
   * Drops sessions `ids` from memory: retention purged them, so they read
   * as missing from now on. Only ended sessions are ever purged; an open one is left alone.
   */
  forget(ids: Iterable<number>): void {
    for (const n of ids) this.ended.delete(n);
  }

  /** Sessions held in memory (open and ended). */
  cachedCount(): number {
    return this.live.size + this.ended.size;
  }

  /** Sessions held in memory, open and ended apart (tests assert the bound). */
  cacheSizes(): SessionCacheSizes {
    return { open: this.live.size, ended: this.ended.size };
  }
}

/**
 * The number N of session id `se_<N>`.
 * @throws ApiError session_not_found for a malformed id.
 */
export function parseSessionId(sessionId: string): number {
  const n = parseSessionNumber(sessionId);
  if (n === null)
    throw new ApiError('session_not_found', `session id ${shortId(sessionId)} is malformed: se_ followed by a number`, {
      param: 'session_id',
    });
  return n;
}

/** The owner of an open session's pins in the audio cache. */
export function pinOwner(n: number): string {
  return `se_${n}`;
}

/** The error for a session that is missing, or not the caller's. */
export function notFound(sessionId: string): ApiError {
  return new ApiError('not_found', `no session ${shortId(sessionId)}`, { param: 'session_id' });
}
