/**
 * Migration 17: webhook endpoints and their delivery queue (docs/events.md "Webhooks").
 */

import type { Migration } from './types.js';

/**
 * Version 17:
 * - `webhook_endpoints`: a tenant's receivers. `events` is the JSON array of type patterns;
 *   `secret_sealed` the signing secret sealed with the master key (src/app/secrets.ts), and
 *   during a rotation `previous_secret_sealed`, which still signs until `previous_until` (epoch
 *   s). `state` is `active` or `failing` (since `failing_since`). `cursor_seq` is the newest
 *   event already queued for it: the fan-out reads the log after it.
 * - `webhook_deliveries`: one row per (endpoint, event), the queue the sender works through.
 *   `subject` is the event's call/session number (NULL for neither): per (endpoint, subject) only
 *   the oldest pending row is sent (index `webhook_deliveries_queue`), so a call's events arrive
 *   in order. `webhook_deliveries_due` finds what is due; `state` is pending, delivered or dead.
 *   Rows of a deleted endpoint go with it (ON DELETE CASCADE).
 */
export const WEBHOOK_MIGRATIONS: readonly Migration[] = [
  {
    version: 17,
    name: 'webhooks: signed webhook endpoints and their delivery queue',
    sql: `
      CREATE TABLE webhook_endpoints (
        id TEXT PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secret_sealed BLOB NOT NULL,
        previous_secret_sealed BLOB,
        previous_until REAL,
        state TEXT NOT NULL DEFAULT 'active' CHECK (state IN ('active', 'failing')),
        failing_since REAL,
        cursor_seq INTEGER NOT NULL,
        created_at REAL NOT NULL
      ) STRICT;
      CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at);
      CREATE TABLE webhook_deliveries (
        id INTEGER PRIMARY KEY,
        endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
        event_seq INTEGER NOT NULL,
        subject INTEGER,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at REAL NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'dead')),
        last_status INTEGER,
        last_error TEXT,
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL
      ) STRICT;
      CREATE UNIQUE INDEX webhook_deliveries_event ON webhook_deliveries (endpoint_id, event_seq);
      CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
      CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, subject, event_seq) WHERE state = 'pending';
    `,
  },
];
