/**
 * Migration 19: a tenant's call recording setting. Released: never edit it.
 */

import type { Migration } from './types.js';

/**
 * Version 19: `tenants.recording` is whether the tenant's phone calls are recorded, `off`, `mono`
 * or `dual` (docs/media.md "Recordings"); NULL: not set, so calls are recorded only where their
 * agent's own `recording` says so. An agent's setting, when present, wins over it.
 */
export const RECORDING_MIGRATIONS: readonly Migration[] = [
  {
    version: 19,
    name: 'tenants: recording (off, mono or dual; NULL: not set)',
    sql: `
      ALTER TABLE tenants ADD COLUMN recording TEXT CHECK (recording IS NULL OR recording IN ('off', 'mono', 'dual'));
    `,
  },
];
