/**
 * Migration 16: the event log (docs/events.md). Released: never edit it.
 */

import type { Migration } from './types.js';

/**
 * Version 16: `events`, one row per state change, written in the same transaction as the
 * change. `seq` is the global order (the event id is `evt_` and it, zero-padded); `subject` is
 * the number of the session and call it concerns (a call `cl_N` and its session `se_N` share N;
 * NULL for an event of neither, such as `inbound.unrouted`), and `sequence` counts 1, 2, 3 … per
 * subject, with no gap (index `events_subject`, also the look-up of a subject's next number).
 * `events_tenant` serves a tenant's stream and list after a given event. Purged by age, oldest
 * first, like the idempotency records (the primary key order is creation order).
 */
export const EVENT_MIGRATIONS: readonly Migration[] = [
  {
    version: 16,
    name: 'events: the durable event log',
    sql: `
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY,
        tenant_id TEXT NOT NULL,
        type TEXT NOT NULL,
        subject INTEGER,
        call_id INTEGER,
        session_id INTEGER,
        sequence INTEGER,
        created_at REAL NOT NULL,
        data TEXT NOT NULL,
        CHECK ((subject IS NULL) = (sequence IS NULL))
      ) STRICT;
      CREATE INDEX events_tenant ON events (tenant_id, seq);
      CREATE UNIQUE INDEX events_subject ON events (subject, sequence) WHERE subject IS NOT NULL;
    `,
  },
];
