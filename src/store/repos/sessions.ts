/**
 * Conversation sessions and their turns (spec: Sessions). The engine state and metrics are
 * JSON documents rewritten after every turn, in the same transaction as the turn row.
 */
import type { Db } from '../database.js';

/** A session row. `engine`, `metrics`, `context` and `summary` are JSON text. */
export interface SessionRow {
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
  engine: string;
  metrics: string;
  status: 'open' | 'ended';
  created_at: number;
  ended_at: number | null;
  summary: string | null;
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
      update: db.prepare('UPDATE sessions SET engine = @engine, metrics = @metrics WHERE id = @id'),
      end: db.prepare(`UPDATE sessions SET engine = @engine, metrics = @metrics, status = 'ended', ended_at = @ended_at, summary = @summary
        WHERE id = @id`),
      addTurn: db.prepare('INSERT INTO session_turns (session_id, idx, data) VALUES (?, ?, ?)'),
      turns: db.prepare('SELECT data FROM session_turns WHERE session_id = ? ORDER BY idx').pluck(),
    };
  }

  /** Inserts a new session. */
  insert(row: SessionRow): void { this.q.insert.run(row); }
  /** A session by id, whatever its tenant. */
  get(id: number): SessionRow | undefined { return this.q.get.get(id) as SessionRow | undefined; }
  /** True when id `id` is taken. */
  exists(id: number): boolean { return this.q.exists.get(id) !== undefined; }
  /** Rewrites the engine state and metrics after a turn. */
  update(id: number, engine: string, metrics: string): void { this.q.update.run({ id, engine, metrics }); }
  /** Marks the session ended with its final state, metrics and summary. */
  end(id: number, engine: string, metrics: string, endedAt: number, summary: string): void {
    this.q.end.run({ id, engine, metrics, ended_at: endedAt, summary });
  }
  /** Appends turn `idx` (JSON text). */
  addTurn(sessionId: number, idx: number, data: string): void { this.q.addTurn.run(sessionId, idx, data); }
  /** The session's turns (JSON text), in order. */
  turns(sessionId: number): string[] { return this.q.turns.all(sessionId) as string[]; }
}
