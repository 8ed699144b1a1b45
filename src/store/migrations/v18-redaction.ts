/**
 * Migration 18: a tenant's redaction of transcripts in its events. Released: never edit it.
 */

import type { Migration } from './types.js';

/**
 * Version 18: `tenants.redact_transcripts` (docs/events.md "Redaction"): `off` (the default),
 * `digits` (every digit of what was heard, said or keyed is masked in the tenant's events), or
 * `text` (that text is left out of them). Applied when an event is written, so what a tenant
 * asked to keep out of its events is never stored in them.
 */
export const REDACTION_MIGRATIONS: readonly Migration[] = [
  {
    version: 18,
    name: 'tenants: redact_transcripts (off, digits, text) for their events',
    sql: `
      ALTER TABLE tenants ADD COLUMN redact_transcripts TEXT NOT NULL DEFAULT 'off'
        CHECK (redact_transcripts IN ('off', 'digits', 'text'));
    `,
  },
];
