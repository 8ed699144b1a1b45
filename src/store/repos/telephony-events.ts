/**
 * LiveKit webhook events worth acting on (docs/calls.md): recorded before they are
 * acknowledged, deduplicated by their event key (delivery is at-least-once), processed after.
 */
import type { Db } from '../database.js';

export interface TelephonyEventRow {
  seq: number;
  event_key: string;
  kind: string;
  payload: string;
  state: 'pending' | 'done' | 'ignored' | 'failed';
  outcome: string | null;
  received_at: number;
  processed_at: number | null;
}

/** Webhook event queries over one connection. */
export class TelephonyEventRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      insert: db.prepare(`INSERT INTO telephony_events (event_key, kind, payload, state, received_at)
        VALUES (?, ?, ?, 'pending', ?) ON CONFLICT (event_key) DO NOTHING`),
      pending: db.prepare("SELECT * FROM telephony_events WHERE state = 'pending' ORDER BY seq"),
      finish: db.prepare('UPDATE telephony_events SET state = ?, outcome = ?, processed_at = ? WHERE seq = ?'),
      counts: db.prepare('SELECT COALESCE(outcome, state) AS outcome, COUNT(*) AS n FROM telephony_events GROUP BY 1 ORDER BY 1'),
      get: db.prepare('SELECT * FROM telephony_events WHERE event_key = ?'),
    };
  }

  /** Records an event; returns its `seq`, or null when `eventKey` was already recorded (a redelivery). */
  insert(eventKey: string, kind: string, payload: string, receivedAt: number): number | null {
    const r = this.q.insert.run(eventKey, kind, payload, receivedAt);
    return r.changes === 1 ? Number(r.lastInsertRowid) : null;
  }
  /** Events recorded but not yet processed, oldest first. */
  pending(): TelephonyEventRow[] {
    return this.q.pending.all() as TelephonyEventRow[];
  }
  /** The event recorded under `eventKey`. */
  get(eventKey: string): TelephonyEventRow | undefined {
    return this.q.get.get(eventKey) as TelephonyEventRow | undefined;
  }
  /** Marks event `seq` processed with an outcome such as `session_opened` or `unknown_number`. */
  finish(seq: number, state: TelephonyEventRow['state'], outcome: string, at: number): void {
    this.q.finish.run(state, outcome, at, seq);
  }
  /** How many events ended with each outcome. */
  counts(): Record<string, number> {
    return Object.fromEntries((this.q.counts.all() as Array<{ outcome: string; n: number }>).map((r) => [r.outcome, r.n]));
  }
}
