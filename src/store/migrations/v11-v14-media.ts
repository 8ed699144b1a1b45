/**
 * Migrations 11–14, for calls on a media line: the call's transport (11), carrier credentials
 * and stream tokens (12), the call's source (13) and its last activity (14).
 * Released: never edit them.
 */

import type { Migration } from './types.js';

/** Versions 11 to 14, in order. */
export const MEDIA_MIGRATIONS: readonly Migration[] = [
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
