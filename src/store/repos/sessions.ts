/**
 * Conversation sessions and their turns (docs/api-decisions.md "Sessions"). A turn appends one row to the turn
 * log carrying the session's new engine state and metrics; the session row is written at open
 * and at end only. Writes per turn stay few and sequential: the log and its index grow at their
 * ends, and sessions opened together share pages.
 */
import type { Db } from '../database.js';

/** A session row. `engine`, `metrics`, `context` and `summary` are JSON text. */
export interface SessionRow {
  /** Storage order (creation order). */
  seq: number;
  id: number;
  tenant_id: string;
  agent_id: string;
  agent_digest: string;
  customer_name: string | null;
  customer_phone: string | null;
  title: string | null;
  context: string;
  /** Reference time for relative dates, epoch ms. */
  ref_ms: number;
  /** Engine state at open (or, once ended, the final one). */
  engine: string;
  /** Metrics at open (or, once ended, the final ones). */
  metrics: string;
  status: 'open' | 'ended';
  created_at: number;
  ended_at: number | null;
  summary: string | null;
}

/** A row of {@link SessionRepo.list}: what a session list shows, without context or engine state. */
export interface SessionListRow {
  seq: number;
  id: number;
  agent_id: string;
  customer_name: string | null;
  title: string | null;
  status: 'open' | 'ended';
  /** Epoch seconds. */
  created_at: number;
  ended_at: number | null;
  /** The summary's `outcome` once ended (null while open, or when the summary is `{}`). */
  outcome: string | null;
  /** The session's newest metrics (JSON text): the final ones once ended, else those after its newest turn. */
  metrics: string;
}

/** Session queries over one connection. */
export class SessionRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO sessions (id, tenant_id, agent_id, agent_digest, customer_name, customer_phone, title,
          context, ref_ms, engine, metrics, status, created_at, ended_at, summary)
        VALUES (@id, @tenant_id, @agent_id, @agent_digest, @customer_name, @customer_phone, @title,
          @context, @ref_ms, @engine, @metrics, @status, @created_at, @ended_at, @summary)`),
      get: db.prepare('SELECT * FROM sessions WHERE id = ?'),
      exists: db.prepare('SELECT 1 FROM sessions WHERE id = ?').pluck(),
      latest: db.prepare('SELECT engine, metrics FROM session_turns WHERE session_seq = ? ORDER BY idx DESC LIMIT 1'),
      end: db.prepare(`UPDATE sessions SET engine = @engine, metrics = @metrics, status = 'ended', ended_at = @ended_at, summary = @summary
        WHERE seq = @seq`),
      addTurn: db.prepare('INSERT INTO session_turns (session_seq, idx, data, engine, metrics, cost_micro) VALUES (?, ?, ?, ?, ?, ?)'),
      turns: db.prepare('SELECT data FROM session_turns WHERE session_seq = ? ORDER BY idx').pluck(),
      page: db.prepare(`SELECT * FROM sessions WHERE seq > @after AND created_at >= @since AND created_at < @before
          AND (@tenant IS NULL OR tenant_id = @tenant) ORDER BY seq LIMIT @limit`),
      list: db.prepare(`SELECT s.seq, s.id, s.agent_id, s.customer_name, s.title, s.status, s.created_at, s.ended_at,
          CASE WHEN s.summary IS NULL THEN NULL ELSE json_extract(s.summary, '$.outcome') END AS outcome,
          CASE WHEN s.status = 'ended' THEN s.metrics
            ELSE COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics) END AS metrics
        FROM sessions s WHERE s.tenant_id = @tenant AND s.seq < @before ORDER BY s.seq DESC LIMIT @limit`),
    };
  }

  /** Inserts a new session; returns its `seq`. */
  insert(row: Omit<SessionRow, 'seq'>): number {
    return Number(this.q.insert.run(row).lastInsertRowid);
  }
  /** A session by id, whatever its tenant. */
  get(id: number): SessionRow | undefined {
    return this.q.get.get(id) as SessionRow | undefined;
  }
  /** True when id `id` is taken. */
  exists(id: number): boolean {
    return this.q.exists.get(id) !== undefined;
  }
  /** The engine state and metrics after the session's newest turn (undefined before the first). */
  latestState(sessionSeq: number): { engine: string; metrics: string } | undefined {
    return this.q.latest.get(sessionSeq) as { engine: string; metrics: string } | undefined;
  }
  /**
   * Appends turn `idx` (JSON text) with the state and metrics after it. `costMicro` is the turn's
   * own cost (micro-rupees, llm + tts + stt): what the spend ledger and the call's hold grow by
   * (migration 15); the metrics' cost must be the previous turn's plus it.
   */
  addTurn(sessionSeq: number, idx: number, data: string, engine: string, metrics: string, costMicro: number): void {
    this.q.addTurn.run(sessionSeq, idx, data, engine, metrics, costMicro);
  }
  /** Marks the session ended with its final state, metrics and summary. */
  end(sessionSeq: number, engine: string, metrics: string, endedAt: number, summary: string): void {
    this.q.end.run({ seq: sessionSeq, engine, metrics, ended_at: endedAt, summary });
  }
  /**
   * The tenant's sessions, newest first (creation order), with `seq` below `beforeSeq`.
   * @param limit rows to return at most
   */
  list(tenantId: string, beforeSeq: number, limit: number): SessionListRow[] {
    return this.q.list.all({ tenant: tenantId, before: beforeSeq, limit }) as SessionListRow[];
  }
  /**
   * Sessions created in `[since, before)` (epoch seconds), of one tenant or (null) all, in
   * storage order after `afterSeq`: one page of an export that reads the table a page at a time.
   */
  page(tenantId: string | null, since: number, before: number, afterSeq: number, limit: number): SessionRow[] {
    return this.q.page.all({ tenant: tenantId, since, before, after: afterSeq, limit }) as SessionRow[];
  }
  /** The session's turns (JSON text), in order. */
  turns(sessionSeq: number): string[] {
    return this.q.turns.all(sessionSeq) as string[];
  }
}
