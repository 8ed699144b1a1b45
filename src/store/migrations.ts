/**
 * Versioned schema migrations, applied in order at start-up inside one transaction each.
 * Append new versions; never edit a released one.
 */

import type { Database } from 'better-sqlite3';
import { convertIfSmall } from './space.js';

/** What a migration's {@link Migration.afterCommit} step is told by `Store.open`. */
export interface MigrationContext {
  /** Largest database (bytes) converted to incremental auto-vacuum at open (migration 9). */
  autoConvertMaxBytes: number;
}

/** One migration: a version number and the SQL that moves the schema to it. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Runs after `sql`, in the same transaction: for a change that depends on what the database holds. */
  apply?: (db: Database) => void;
  /**
   * Runs once the migration has committed, outside any transaction (for `VACUUM`, which cannot
   * run in one). It runs once: a failure leaves the migration recorded, so it must leave the
   * database usable and say what to do instead. Returns true when it rewrote the database.
   */
  afterCommit?: (db: Database, context: MigrationContext) => boolean;
}

/** The columns of the calls table from version 4 on. */
const CALL_COLUMNS = [
  'seq',
  'id',
  'tenant_id',
  'agent_id',
  'direction',
  'to_number',
  'from_number',
  'dial_status',
  'trunk_id',
  'room_name',
  'provider_call_id',
  'dial_error',
  'idempotency_key',
  'idempotency_print',
  'reserved_micro',
  'reserve_until',
] as const;

/**
 * Version 4: a call is found with its session by their shared number, so the calls table no
 * longer copies the session's seq and creation time. The table is rebuilt (SQLite cannot drop a
 * UNIQUE column) from whichever columns a released version 3 gave it: the earliest had neither
 * idempotency_print nor reserve_until, which then take their defaults.
 */
function rebuildCalls(db: Database): void {
  const present = new Set(db.prepare("SELECT name FROM pragma_table_info('calls')").pluck().all() as string[]);
  const kept = CALL_COLUMNS.filter((c) => present.has(c)).join(', ');
  db.exec(`
    CREATE TABLE calls_v4 (
      seq INTEGER PRIMARY KEY,
      id INTEGER NOT NULL UNIQUE REFERENCES sessions(id),
      tenant_id TEXT NOT NULL REFERENCES tenants(id),
      agent_id TEXT NOT NULL,
      direction TEXT NOT NULL CHECK (direction IN ('outbound', 'inbound')),
      to_number TEXT NOT NULL,
      from_number TEXT,
      dial_status TEXT NOT NULL CHECK (dial_status IN ('not_dialled', 'dialling', 'ringing', 'failed', 'unknown', 'answered')),
      trunk_id TEXT,
      room_name TEXT,
      provider_call_id TEXT,
      dial_error TEXT,
      idempotency_key TEXT,
      idempotency_print TEXT,
      reserved_micro INTEGER NOT NULL DEFAULT 0,
      reserve_until REAL NOT NULL DEFAULT 0,
      UNIQUE (tenant_id, idempotency_key)
    ) STRICT;
    INSERT INTO calls_v4 (${kept}) SELECT ${kept} FROM calls;
    DROP TABLE calls;
    ALTER TABLE calls_v4 RENAME TO calls;
    CREATE INDEX calls_tenant ON calls(tenant_id, seq);
    CREATE INDEX calls_dialling ON calls(dial_status) WHERE dial_status = 'dialling';
    CREATE UNIQUE INDEX calls_provider ON calls(provider_call_id) WHERE provider_call_id IS NOT NULL;
  `);
}

/**
 * Version 5: the call's line has a state machine (domain/calls.ts): `dial_status` may be
 * `completed`, and `answered_at` records when the callee answered. SQLite cannot change a CHECK
 * constraint, so the table is rebuilt. Inbound calls were answered when their session opened;
 * an answered call whose session has ended is completed.
 */
function callLifecycle(db: Database): void {
  const kept = CALL_COLUMNS.join(', ');
  db.exec(`
    CREATE TABLE calls_v5 (
      seq INTEGER PRIMARY KEY,
      id INTEGER NOT NULL UNIQUE REFERENCES sessions(id),
      tenant_id TEXT NOT NULL REFERENCES tenants(id),
      agent_id TEXT NOT NULL,
      direction TEXT NOT NULL CHECK (direction IN ('outbound', 'inbound')),
      to_number TEXT NOT NULL,
      from_number TEXT,
      dial_status TEXT NOT NULL
        CHECK (dial_status IN ('not_dialled', 'dialling', 'ringing', 'answered', 'completed', 'failed', 'unknown')),
      trunk_id TEXT,
      room_name TEXT,
      provider_call_id TEXT,
      dial_error TEXT,
      idempotency_key TEXT,
      idempotency_print TEXT,
      reserved_micro INTEGER NOT NULL DEFAULT 0,
      reserve_until REAL NOT NULL DEFAULT 0,
      answered_at REAL,
      UNIQUE (tenant_id, idempotency_key)
    ) STRICT;
    INSERT INTO calls_v5 (${kept}) SELECT ${kept} FROM calls;
    DROP TABLE calls;
    ALTER TABLE calls_v5 RENAME TO calls;
    CREATE INDEX calls_tenant ON calls(tenant_id, seq);
    CREATE INDEX calls_dialling ON calls(dial_status) WHERE dial_status = 'dialling';
    CREATE UNIQUE INDEX calls_provider ON calls(provider_call_id) WHERE provider_call_id IS NOT NULL;
    UPDATE calls SET answered_at = (SELECT s.created_at FROM sessions s WHERE s.id = calls.id)
      WHERE dial_status = 'answered' AND direction = 'inbound';
    UPDATE calls SET dial_status = 'completed'
      WHERE dial_status = 'answered' AND (SELECT s.status FROM sessions s WHERE s.id = calls.id) = 'ended';
  `);
}

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

/** All migrations, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'tenants, keys, audit, idempotency, trunks, numbers',
    sql: `
      CREATE TABLE tenants (
        id TEXT PRIMARY KEY,
        created_at REAL NOT NULL,
        daily_budget_inr REAL,
        inbound_webhook_url TEXT
      ) STRICT;

      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        key_hash BLOB NOT NULL UNIQUE,
        hint TEXT NOT NULL,
        created_at REAL NOT NULL,
        revoked_at REAL
      ) STRICT;

      CREATE TABLE audit_events (
        seq INTEGER PRIMARY KEY,
        at REAL NOT NULL,
        actor_tenant_id TEXT NOT NULL,
        actor_key_id TEXT NOT NULL,
        owner_tenant_id TEXT NOT NULL,
        resource_id TEXT NOT NULL,
        method TEXT NOT NULL,
        route TEXT NOT NULL,
        request_id TEXT NOT NULL
      ) STRICT;

      -- A rowid table (appended in order) with a compact unique index, not a WITHOUT ROWID
      -- table keyed by the random client key: stored bodies then land on shared pages and
      -- each commit rewrites far fewer pages (+45% sustained commit throughput at 100k rows).
      CREATE TABLE idempotency (
        seq INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('in_progress', 'done')),
        status INTEGER,
        body TEXT,
        created_at REAL NOT NULL,
        UNIQUE (tenant_id, key)
      ) STRICT;
      CREATE INDEX idempotency_created ON idempotency(created_at);

      CREATE TABLE trunks (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        name TEXT,
        address TEXT NOT NULL,
        numbers TEXT NOT NULL,
        provider_trunk_id TEXT,
        auth_sealed BLOB,
        created_at REAL NOT NULL
      ) STRICT;
      CREATE INDEX trunks_tenant ON trunks(tenant_id, seq);

      CREATE TABLE numbers (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL UNIQUE,
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        number TEXT NOT NULL,
        trunk_id TEXT,
        agent_id TEXT,
        label TEXT,
        created_at REAL NOT NULL,
        UNIQUE (tenant_id, number)
      ) STRICT;
      CREATE INDEX numbers_number ON numbers(number);
    `,
  },
  {
    version: 2,
    name: 'agents, agent revisions, sessions, session turns',
    sql: `
      CREATE TABLE agent_revisions (
        digest TEXT PRIMARY KEY,
        definition TEXT NOT NULL
      ) STRICT;

      CREATE TABLE agents (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        id TEXT NOT NULL,
        version INTEGER NOT NULL,
        digest TEXT NOT NULL REFERENCES agent_revisions(digest),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        PRIMARY KEY (tenant_id, id)
      ) STRICT;

      -- id: random in 1..2^53-1, never sequential. Rows are stored in creation
      -- order (seq), so sessions active at the same time sit on neighbouring pages.
      -- engine/metrics: the state at open, and the final state once ended; in between the
      -- newest session_turns row holds it (a turn appends one row and rewrites nothing).
      CREATE TABLE sessions (
        seq INTEGER PRIMARY KEY,
        id INTEGER NOT NULL UNIQUE,
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        agent_id TEXT NOT NULL,
        agent_digest TEXT NOT NULL REFERENCES agent_revisions(digest),
        customer_name TEXT,
        customer_phone TEXT,
        title TEXT,
        context TEXT NOT NULL,
        ref_ms REAL NOT NULL,
        engine TEXT NOT NULL,
        metrics TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('open', 'ended')),
        created_at REAL NOT NULL,
        ended_at REAL,
        summary TEXT
      ) STRICT;
      CREATE INDEX sessions_tenant ON sessions(tenant_id, created_at);

      -- Append-only turn log; each row carries the session's engine state and metrics after it.
      CREATE TABLE session_turns (
        seq INTEGER PRIMARY KEY,
        session_seq INTEGER NOT NULL REFERENCES sessions(seq),
        idx INTEGER NOT NULL,
        data TEXT NOT NULL,
        engine TEXT NOT NULL,
        metrics TEXT NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX session_turns_by_session ON session_turns(session_seq, idx);
    `,
  },
  {
    version: 3,
    name: 'calls, telephony events, tenant inbound webhook secret',
    sql: `
      ALTER TABLE tenants ADD COLUMN inbound_webhook_secret_sealed BLOB;

      -- One call per session: id is the session's number (call cl_<N> of session se_<N>).
      -- dial_status: not_dialled (prepared), dialling (claim committed, LiveKit not yet answered),
      -- ringing (LiveKit accepted the dial), failed, unknown (no answer from LiveKit, or the
      -- daemon stopped mid-dial: never re-dialled blindly), answered (inbound).
      -- reserved_micro: what the call holds against the daily budget while its session is open,
      -- until reserve_until (its longest possible end: created_at + max_call_duration_s).
      -- idempotency_print: the fingerprint of the request a dial was placed under.
      CREATE TABLE calls (
        seq INTEGER PRIMARY KEY,
        id INTEGER NOT NULL UNIQUE,
        session_seq INTEGER NOT NULL UNIQUE REFERENCES sessions(seq),
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        agent_id TEXT NOT NULL,
        direction TEXT NOT NULL CHECK (direction IN ('outbound', 'inbound')),
        to_number TEXT NOT NULL,
        from_number TEXT,
        dial_status TEXT NOT NULL CHECK (dial_status IN ('not_dialled', 'dialling', 'ringing', 'failed', 'unknown', 'answered')),
        trunk_id TEXT,
        room_name TEXT,
        provider_call_id TEXT,
        dial_error TEXT,
        idempotency_key TEXT,
        idempotency_print TEXT,
        reserved_micro INTEGER NOT NULL DEFAULT 0,
        reserve_until REAL NOT NULL DEFAULT 0,
        created_at REAL NOT NULL,
        UNIQUE (tenant_id, idempotency_key)
      ) STRICT;
      CREATE INDEX calls_tenant ON calls(tenant_id, seq);
      CREATE INDEX calls_dialling ON calls(dial_status) WHERE dial_status = 'dialling';
      CREATE UNIQUE INDEX calls_provider ON calls(provider_call_id) WHERE provider_call_id IS NOT NULL;

      -- LiveKit webhook deliveries worth acting on, recorded before they are acknowledged.
      -- event_key (event name + sip.callID) deduplicates at-least-once delivery.
      CREATE TABLE telephony_events (
        seq INTEGER PRIMARY KEY,
        event_key TEXT NOT NULL UNIQUE,
        kind TEXT NOT NULL,
        payload TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('pending', 'done', 'ignored', 'failed')),
        outcome TEXT,
        received_at REAL NOT NULL,
        processed_at REAL
      ) STRICT;
      CREATE INDEX telephony_events_pending ON telephony_events(state) WHERE state = 'pending';
    `,
  },
  {
    // One call per session: id is the session's number (call cl_<N> of session se_<N>), so the
    // session row (its tenant, creation time, status, end and metrics) is found by id.
    version: 4,
    name: 'calls keyed by their session number only',
    sql: '',
    apply: rebuildCalls,
  },
  {
    version: 5,
    name: 'call line state machine: completed, answered_at',
    sql: '',
    apply: callLifecycle,
  },
  {
    // Start-up's release of in-progress idempotency claims
    // (IdempotencyRepo.releaseAll) reads only the claims, not the whole table; the calls list
    // filtered to open sessions (GET /v1/calls?status=in_progress) starts from the tenant's
    // open sessions, not from all its calls.
    version: 6,
    name: 'indexes: in-progress idempotency claims, open sessions per tenant',
    sql: `
      CREATE INDEX idempotency_in_progress ON idempotency(state) WHERE state = 'in_progress';
      CREATE INDEX sessions_open ON sessions(tenant_id, created_at) WHERE status = 'open';
    `,
  },
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
  {
    // Which transport carries a call's audio (docs/media.md). NULL: none yet (a prepared call no
    // carrier stream has attached to). Calls with a LiveKit room are LiveKit's.
    version: 11,
    name: 'calls: transport (twilio, exotel, plivo, livekit)',
    sql: `
      ALTER TABLE calls ADD COLUMN transport TEXT CHECK (transport IS NULL OR transport IN ('twilio', 'exotel', 'plivo', 'livekit'));
      UPDATE calls SET transport = 'livekit' WHERE room_name IS NOT NULL;
    `,
  },
  {
    // Carrier WebSocket streams (docs/carrier-auth.md): each tenant's carrier credentials (AES-256-GCM sealed,
    // bound to tenant and purpose carrier:<dialect>; hint: the end of an account id, never of a
    // secret) and the SHA-256 of its one stream token. Version 11 is the calls' transport.
    version: 12,
    name: 'carrier credentials and media stream tokens',
    sql: `
      CREATE TABLE carrier_credentials (
        tenant_id TEXT NOT NULL REFERENCES tenants(id),
        dialect TEXT NOT NULL CHECK (dialect IN ('twilio', 'exotel', 'plivo')),
        sealed BLOB NOT NULL,
        hint TEXT,
        updated_at REAL NOT NULL,
        PRIMARY KEY (tenant_id, dialect)
      ) STRICT;

      CREATE TABLE media_stream_tokens (
        token_hash TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL UNIQUE REFERENCES tenants(id),
        created_at REAL NOT NULL
      ) STRICT;
    `,
  },
  {
    // Who made a call (docs/api-decisions.md "Simulated calls"): 'phone' for every call on a
    // line (carrier stream, LiveKit room, prepared call), 'simulator' for the streams
    // `vagent call simulate` opens. The index serves `GET /v1/calls?source=…` per tenant,
    // newest first, without walking the other source's calls.
    version: 13,
    name: 'calls: source (phone, simulator)',
    sql: `
      ALTER TABLE calls ADD COLUMN source TEXT NOT NULL DEFAULT 'phone' CHECK (source IN ('phone', 'simulator'));
      CREATE INDEX calls_tenant_source ON calls (tenant_id, source, seq);
    `,
  },
  {
    // The last time the daemon saw a call alive (its media flowing, on a coarse heartbeat; see
    // src/daemon/media-runtime.ts), epoch seconds: a call orphaned by a crash ends then, not at
    // the restart. Null until the first heartbeat.
    version: 14,
    name: 'calls: last_activity_at (a call ended after a crash ends when it was last seen)',
    sql: `
      ALTER TABLE calls ADD COLUMN last_activity_at REAL;
    `,
  },
];
