/**
 * Versioned schema migrations, applied in order at start-up inside one transaction each
 * (`Store.open`, ../database.ts). Each file holds a group of released versions: never edit a
 * released one; append a new version to the last group, or a new file listed here.
 */

import { BASE_MIGRATIONS } from './v01-v03-base.js';
import { CALL_MIGRATIONS } from './v04-v06-calls.js';
import { SPEND_MIGRATIONS } from './v07-v10-spend.js';
import { MEDIA_MIGRATIONS } from './v11-v14-media.js';
import { TURN_COST_MIGRATIONS } from './v15-turn-cost.js';
import { EVENT_MIGRATIONS } from './v16-events.js';
import { WEBHOOK_MIGRATIONS } from './v17-webhooks.js';
import { REDACTION_MIGRATIONS } from './v18-redaction.js';
import { RECORDING_MIGRATIONS } from './v19-recording.js';
import type { Migration } from './types.js';

/** All migrations, in version order. */
export const MIGRATIONS: readonly Migration[] = [
  ...BASE_MIGRATIONS,
  ...CALL_MIGRATIONS,
  ...SPEND_MIGRATIONS,
  ...MEDIA_MIGRATIONS,
  ...TURN_COST_MIGRATIONS,
  ...EVENT_MIGRATIONS,
  ...WEBHOOK_MIGRATIONS,
  ...REDACTION_MIGRATIONS,
  ...RECORDING_MIGRATIONS,
];
