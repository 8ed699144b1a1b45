/**
 * Migrations 4–6: the calls table rebuilt around its session's number (4) and its line state
 * machine (5), and the indexes of in-progress idempotency claims and open sessions (6).
 * Released: never edit them.
 */

import type { Database } from 'better-sqlite3';
import type { Migration } from './types.js';

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

/** Versions 4 to 6, in order. */
export const CALL_MIGRATIONS: readonly Migration[] = [
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
];
