/**
 * Migration 15: a turn's own cost in its row, and the ledger's turn triggers read it. Released:
 * never edit it.
 */

import type { Migration } from './types.js';

/**
 * Version 15: `session_turns.cost_micro` is the turn's own cost in micro-rupees (`llm + tts +
 * stt` of that turn alone), and the two ledger triggers on a turn (migrations 7 and 10) add it
 * instead of working it out from JSON. Until now each turn's insert took the cost from three
 * `json_extract`s of its metrics and three of the previous turn's (a look-up of that row), and
 * the hold trigger three more: most of the insert's time, spent even when the turn cost nothing
 * (a cached reply to typed text, the commonest turn). The difference of the two totals is the
 * turn's cost, since a session's metrics are the sum of its turns' costs (src/app/turn-record.ts
 * `meterTurn`), so the ledger keeps the same sums (test/unit/spend-ledger.test.ts compares it
 * with the full computation over the metrics); a turn of cost 0 now skips both triggers (`WHEN`).
 * Rows written before keep 0: the triggers run only on an insert, and theirs has been counted.
 */
export const TURN_COST_MIGRATIONS: readonly Migration[] = [
  {
    version: 15,
    name: "session_turns: cost_micro (the ledger's turn triggers add the turn's own cost)",
    sql: `
      ALTER TABLE session_turns ADD COLUMN cost_micro INTEGER NOT NULL DEFAULT 0;

      DROP TRIGGER spend_turn;
      CREATE TRIGGER spend_turn AFTER INSERT ON session_turns WHEN new.cost_micro <> 0 BEGIN
        UPDATE spend_ledger SET cost_micro = cost_micro + new.cost_micro
          WHERE (tenant_id, bucket) = (SELECT s.tenant_id, CAST(s.created_at / 900 AS INTEGER) FROM sessions s
            WHERE s.seq = new.session_seq AND s.status = 'open');
      END;

      DROP TRIGGER hold_turn;
      CREATE TRIGGER hold_turn AFTER INSERT ON session_turns WHEN new.cost_micro <> 0 BEGIN
        UPDATE call_holds SET cost_micro = cost_micro + new.cost_micro
          WHERE call_id = (SELECT s.id FROM sessions s WHERE s.seq = new.session_seq AND s.status = 'open');
      END;
    `,
  },
];
