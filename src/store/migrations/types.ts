/** The shape of a schema migration and what `Store.open` tells its after-commit step. */

import type { Database } from 'better-sqlite3';

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
