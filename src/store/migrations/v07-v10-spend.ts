/**
 * Migrations 7–10: the spend ledger kept by triggers (7), retention columns and purge indexes
 * (8), compressed idempotency bodies with incremental auto-vacuum (9), and what open calls hold
 * in the ledger (10). Released: never edit them.
 */

import type { Database } from 'better-sqlite3';
import { convertIfSmall } from '../space.js';
import type { Migration } from './types.js';

/** A metrics JSON text's cost (`$.cost.llm + tts + stt`), micro-rupees, as SQL over expression `m`. */
const costOf = (m: string): string =>
  `(COALESCE(json_extract(${m}, '$.cost.llm'), 0) + COALESCE(json_extract(${m}, '$.cost.tts'), 0) + COALESCE(json_extract(${m}, '$.cost.stt'), 0))`;

/**
 * Version 7: the running spend ledger (docs/calls.md "The daily budget"). `spend_ledger` holds, per tenant and
 * quarter-hour of session creation (`bucket` = floor(created_at / 900)), the summed cost of
 * those sessions in micro-rupees: each session counts its newest metrics (the final ones once
 * ended). Triggers keep it in the same transaction as every cost write: a session's insert, each
 * turn (the change from the previous turn's metrics) and the session's end (the change to its
 * final metrics). Quarter-hours, not dates, so the ledger needs no timezone: every day boundary
 * of a real zone falls on one, and a day's spend is the sum of at most 100 rows of one index
 * range. Backfilled from the sessions the database already holds.
 */
const SPEND_LEDGER = `
  CREATE TABLE spend_ledger (
    tenant_id TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    cost_micro INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, bucket)
  ) STRICT, WITHOUT ROWID;

  INSERT INTO spend_ledger (tenant_id, bucket, cost_micro)
    SELECT s.tenant_id, CAST(s.created_at / 900 AS INTEGER), SUM(${costOf(`CASE WHEN s.status = 'ended' THEN s.metrics
      ELSE COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics) END`)})
    FROM sessions s GROUP BY 1, 2;

  CREATE TRIGGER spend_session_insert AFTER INSERT ON sessions BEGIN
    INSERT INTO spend_ledger (tenant_id, bucket, cost_micro)
      VALUES (new.tenant_id, CAST(new.created_at / 900 AS INTEGER), ${costOf('new.metrics')})
      ON CONFLICT (tenant_id, bucket) DO UPDATE SET cost_micro = cost_micro + excluded.cost_micro;
  END;

  CREATE TRIGGER spend_turn AFTER INSERT ON session_turns BEGIN
    UPDATE spend_ledger SET cost_micro = cost_micro + ${costOf('new.metrics')} - (
        SELECT ${costOf(`COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq AND t.idx < new.idx
          ORDER BY t.idx DESC LIMIT 1), s.metrics)`)} FROM sessions s WHERE s.seq = new.session_seq)
      WHERE (tenant_id, bucket) = (SELECT s.tenant_id, CAST(s.created_at / 900 AS INTEGER) FROM sessions s
        WHERE s.seq = new.session_seq AND s.status = 'open');
  END;

  CREATE TRIGGER spend_session_end AFTER UPDATE OF status ON sessions
    WHEN old.status = 'open' AND new.status = 'ended' BEGIN
    UPDATE spend_ledger SET cost_micro = cost_micro + ${costOf('new.metrics')} - ${costOf(`COALESCE((SELECT t.metrics FROM session_turns t
        WHERE t.session_seq = new.seq ORDER BY t.idx DESC LIMIT 1), old.metrics)`)}
      WHERE tenant_id = new.tenant_id AND bucket = CAST(new.created_at / 900 AS INTEGER);
  END;
`;

/** A session `s`'s newest metrics while open (its newest turn's, else those it opened with). */
const OPEN_METRICS = `COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics)`;

/**
 * Version 10: what open calls hold, in the ledger too. Until now the budget
 * check added to the ledger's costs what each open call of the day holds beyond its session's
 * cost so far (`MAX(0, reserved - cost)`), read from every such session's newest turn: linear in
 * the day's open calls. Now `call_holds` has one row per call with a reservation whose session
 * is open (its cost so far kept by triggers, the same costOf as the ledger), and
 * `spend_ledger.held_micro` is, per tenant and quarter-hour of session creation, the sum of
 * `MAX(0, reserved_micro - cost_micro)` over that quarter-hour's holds. Triggers on `call_holds`
 * keep `held_micro` (insert adds, a cost change adds the difference, delete subtracts), and
 * triggers elsewhere write `call_holds`, all in the same transaction as the write itself:
 * - a call inserted with `reserved_micro > 0` while its session is open: its hold, in the
 *   bucket of the session's creation, at the session's cost so far;
 * - a turn of a session with a hold: the hold's cost becomes that turn's (the ledger's own
 *   turn trigger takes the previous cost from the previous turn, this one from the hold, which
 *   is the same value: so the order in which SQLite fires the two does not matter);
 * - the session's end, or the call's deletion: the hold goes.
 * A hold whose `reserve_until` has passed no longer counts: the spend read subtracts what such
 * holds of the day still hold (index `call_holds_expiry`), and a call's write releases (deletes)
 * its tenant's expired holds (`CallRepo.releaseExpiredHolds`), so that range stays small.
 * `reserved_micro` and `reserve_until` of a call are never updated (nothing does; a later
 * change would need a trigger here). The triggers name the current `calls` table: a migration
 * that rebuilds it (as 4 and 5 did) drops them and must create them again.
 * Backfilled from the open calls the database already holds.
 */
const CALL_HOLDS = `
  ALTER TABLE spend_ledger ADD COLUMN held_micro INTEGER NOT NULL DEFAULT 0;

  CREATE TABLE call_holds (
    call_id INTEGER PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    bucket INTEGER NOT NULL,
    reserved_micro INTEGER NOT NULL,
    cost_micro INTEGER NOT NULL,
    reserve_until REAL NOT NULL
  ) STRICT;

  INSERT INTO call_holds (call_id, tenant_id, bucket, reserved_micro, cost_micro, reserve_until)
    SELECT c.id, s.tenant_id, CAST(s.created_at / 900 AS INTEGER), c.reserved_micro, ${costOf(OPEN_METRICS)}, c.reserve_until
    FROM calls c JOIN sessions s ON s.id = c.id WHERE s.status = 'open' AND c.reserved_micro > 0;

  INSERT INTO spend_ledger (tenant_id, bucket, cost_micro, held_micro)
    SELECT tenant_id, bucket, 0, SUM(MAX(0, reserved_micro - cost_micro)) FROM call_holds GROUP BY tenant_id, bucket
    ON CONFLICT (tenant_id, bucket) DO UPDATE SET held_micro = excluded.held_micro;

  CREATE INDEX call_holds_expiry ON call_holds(tenant_id, reserve_until);

  CREATE TRIGGER hold_insert AFTER INSERT ON call_holds BEGIN
    INSERT INTO spend_ledger (tenant_id, bucket, cost_micro, held_micro)
      VALUES (new.tenant_id, new.bucket, 0, MAX(0, new.reserved_micro - new.cost_micro))
      ON CONFLICT (tenant_id, bucket) DO UPDATE SET held_micro = held_micro + excluded.held_micro;
  END;

  CREATE TRIGGER hold_update AFTER UPDATE OF cost_micro ON call_holds BEGIN
    UPDATE spend_ledger SET held_micro = held_micro + MAX(0, new.reserved_micro - new.cost_micro) - MAX(0, old.reserved_micro - old.cost_micro)
      WHERE tenant_id = new.tenant_id AND bucket = new.bucket;
  END;

  CREATE TRIGGER hold_delete AFTER DELETE ON call_holds BEGIN
    UPDATE spend_ledger SET held_micro = held_micro - MAX(0, old.reserved_micro - old.cost_micro)
      WHERE tenant_id = old.tenant_id AND bucket = old.bucket;
  END;

  CREATE TRIGGER hold_call_insert AFTER INSERT ON calls WHEN new.reserved_micro > 0 BEGIN
    INSERT INTO call_holds (call_id, tenant_id, bucket, reserved_micro, cost_micro, reserve_until)
      SELECT new.id, s.tenant_id, CAST(s.created_at / 900 AS INTEGER), new.reserved_micro, ${costOf(OPEN_METRICS)}, new.reserve_until
      FROM sessions s WHERE s.id = new.id AND s.status = 'open';
  END;

  CREATE TRIGGER hold_call_delete AFTER DELETE ON calls BEGIN
    DELETE FROM call_holds WHERE call_id = old.id;
  END;

  CREATE TRIGGER hold_turn AFTER INSERT ON session_turns BEGIN
    UPDATE call_holds SET cost_micro = ${costOf('new.metrics')}
      WHERE call_id = (SELECT s.id FROM sessions s WHERE s.seq = new.session_seq AND s.status = 'open');
  END;

  CREATE TRIGGER hold_session_end AFTER UPDATE OF status ON sessions
    WHEN old.status = 'open' AND new.status = 'ended' BEGIN
    DELETE FROM call_holds WHERE call_id = new.id;
  END;
`;

/**
 * Version 8: retention (docs/api-decisions.md "Retention"). `tenants.retention_days` is a tenant's own retention
 * (NULL: the instance's `retention_days` applies; 0: keep this tenant's records for ever).
 * `agent_revisions.applied_at` says when a revision was last applied (existing revisions: now,
 * so none becomes purgeable before a whole retention period has passed). Indexes let the
 * purge find what is old without walking whole tables: telephony events and audit events by
 * time, and the sessions that still pin an agent revision.
 */
function retention(db: Database): void {
  db.exec(`
    ALTER TABLE tenants ADD COLUMN retention_days INTEGER CHECK (retention_days IS NULL OR retention_days >= 0);
    ALTER TABLE agent_revisions ADD COLUMN applied_at REAL;
    CREATE INDEX telephony_events_received ON telephony_events(received_at);
    CREATE INDEX audit_events_owner_at ON audit_events(owner_tenant_id, at);
    CREATE INDEX sessions_digest ON sessions(agent_digest);
  `);
  db.prepare('UPDATE agent_revisions SET applied_at = ?').run(Date.now() / 1000);
}

/** Versions 7 to 10, in order. */
export const SPEND_MIGRATIONS: readonly Migration[] = [
  {
    version: 7,
    name: 'spend ledger per tenant and quarter-hour, kept by triggers',
    sql: SPEND_LEDGER,
  },
  {
    version: 8,
    name: 'retention: tenant retention_days, revision applied_at, purge indexes',
    sql: '',
    apply: retention,
  },
  {
    // body_z: a stored response over 512 bytes, deflated (repos/idempotency.ts),
    // with body NULL; an older row keeps its plain body. Then the conversion of a database made
    // before auto-vacuum was set at creation (space.ts): at once when it is small, otherwise
    // `vagent admin db vacuum` (daemon stopped), which `vagent serve` names at every start.
    // A failed conversion (e.g. disk full) leaves the database as it was, still NONE, with the
    // same notice.
    version: 9,
    name: 'idempotency: compressed bodies; incremental auto-vacuum',
    sql: 'ALTER TABLE idempotency ADD COLUMN body_z BLOB;',
    afterCommit: (db, context) => {
      try {
        return convertIfSmall(db, context.autoConvertMaxBytes);
      } catch {
        return false;
      }
    },
  },
  {
    version: 10,
    name: 'call holds: what open calls hold, in the spend ledger, kept by triggers',
    sql: CALL_HOLDS,
  },
];
