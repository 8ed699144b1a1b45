/**
 * Migration 6: start-up's release of in-progress idempotency claims
 * and the calls list filtered to open sessions read through indexes, not the whole table.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { Store } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { CallRepo } from '../../src/store/repos/calls.js';
import { IdempotencyRepo } from '../../src/store/repos/idempotency.js';

const dirs: string[] = [];
function dbFile(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-indexes-'));
  dirs.push(d);
  return path.join(d, 'vagent.db');
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

type Stmt = { source: string };
/** The SQL of a repo's prepared statement `name` (repos keep them in a private `q`). */
function sqlOf(repo: object, name: string): string {
  return (repo as { q: Record<string, Stmt> }).q[name]!.source;
}
/** The details of SQLite's plan for `sql`, with every named parameter bound to null. */
function plan(db: Database.Database, sql: string): string[] {
  const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, null]));
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((r) => r.detail);
}

/** A database at version 5 with two tenants' sessions, calls and idempotency rows. */
function version5(file: string): void {
  const raw = new Database(file);
  raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT');
  raw.pragma('foreign_keys = OFF'); // no agent revision rows: only what the indexes read matters here
  for (const m of MIGRATIONS.filter((x) => x.version <= 5)) {
    raw.exec(m.sql);
    m.apply?.(raw);
    raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
  }
  raw.exec("INSERT INTO tenants (id, created_at) VALUES ('a', 0), ('b', 0)");
  const session =
    raw.prepare(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
    VALUES (?, ?, ?, 'ag_x', 'd', '{}', 0, '{}', '{}', ?, ?)`);
  const call = raw.prepare(`INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, dial_status)
    VALUES (?, ?, 'ag_x', 'outbound', '+919876543210', ?)`);
  // Tenant a: 40 calls, open ones at seq 5, 17 and 33; tenant b: one open call.
  for (let i = 1; i <= 40; i++) {
    const open = [5, 17, 33].includes(i);
    session.run(i, 1000 + i, 'a', open ? 'open' : 'ended', 1700000000 + i);
    call.run(1000 + i, 'a', open ? 'ringing' : 'completed');
  }
  session.run(41, 2001, 'b', 'open', 1700000100);
  call.run(2001, 'b', 'ringing');
  const claim = raw.prepare(
    `INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, created_at) VALUES ('a', ?, 'f', ?, ?, ?, 1700000000)`,
  );
  for (let i = 0; i < 30; i++) {
    if (i % 10 === 0) claim.run(`k${i}`, 'in_progress', null, null);
    else claim.run(`k${i}`, 'done', 201, '{}');
  }
  raw.close();
}

describe('migration 6: indexes for start-up and the open-calls list', () => {
  it('upgrades a version 5 database keeping its rows, and the new statements read through the indexes', () => {
    const file = dbFile();
    version5(file);
    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const count = (t: string): number => store.db.prepare(`SELECT COUNT(*) FROM ${t}`).pluck().get() as number;
      expect([count('sessions'), count('calls'), count('idempotency')]).toEqual([41, 41, 30]);

      const calls = new CallRepo(store.db);
      const idem = new IdempotencyRepo(store.db);

      // Start-up's release: a search of the partial index, never a scan of the table.
      const release = plan(store.db, sqlOf(idem, 'releaseAll'));
      expect(release.join('\n')).toMatch(/SEARCH idempotency USING INDEX idempotency_in_progress/);
      expect(release.join('\n')).not.toMatch(/SCAN/);
      expect(idem.releaseAll()).toBe(3);
      expect(count('idempotency')).toBe(27);

      // The open-calls list starts from the tenant's open sessions: no scan of calls or sessions.
      const open = plan(store.db, sqlOf(calls, 'listOpen'));
      expect(open.join('\n')).toMatch(/SEARCH s USING INDEX sessions_open/);
      expect(open.join('\n')).not.toMatch(/SCAN/);

      // It answers the same calls, newest first, and pages by seq.
      expect(calls.list('a', 'open', Number.MAX_SAFE_INTEGER, 10).map((c) => c.id)).toEqual([1033, 1017, 1005]);
      expect(calls.list('a', 'open', calls.get(1033)!.seq, 1).map((c) => c.id)).toEqual([1017]);
      expect(calls.list('b', 'open', Number.MAX_SAFE_INTEGER, 10).map((c) => c.id)).toEqual([2001]);
      const ended = calls.list('a', 'ended', Number.MAX_SAFE_INTEGER, 100);
      expect(ended).toHaveLength(37);
      expect(ended.every((c) => c.session_status === 'ended')).toBe(true);
      expect(calls.list('a', null, Number.MAX_SAFE_INTEGER, 100)).toHaveLength(40);
    } finally {
      store.close();
    }
  });
});
