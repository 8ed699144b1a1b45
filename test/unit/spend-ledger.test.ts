/**
 * Issue 15 item 1 (migration 7): the daily budget check reads the running spend ledger, kept by
 * the store in the same transaction as each cost, instead of walking the day's sessions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { dayBounds } from '../../src/domain/time.js';
import { Store } from '../../src/store/database.js';
import { openRepos, type Repos } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { CallRepo } from '../../src/store/repos/calls.js';

const dirs: string[] = [];
function dbFile(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-ledger-'));
  dirs.push(d);
  return path.join(d, 'vagent.db');
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The spend query of version 6, verbatim: every session of the day, each with its newest metrics. */
const OLD_SPEND = `WITH day AS (
    SELECT s.id, s.status, CASE WHEN s.status = 'ended' THEN s.metrics
      ELSE COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics) END AS m
    FROM sessions s WHERE s.tenant_id = @tenant AND s.created_at >= @start AND s.created_at < @end)
  SELECT COALESCE(SUM(MAX(
    COALESCE(json_extract(day.m, '$.cost.llm'), 0) + COALESCE(json_extract(day.m, '$.cost.tts'), 0) + COALESCE(json_extract(day.m, '$.cost.stt'), 0),
    CASE WHEN day.status = 'open' AND c.reserve_until > @now THEN c.reserved_micro ELSE 0 END)), 0)
  FROM day LEFT JOIN calls c ON c.id = day.id`;

function oldSpend(db: Database.Database, tenant: string, start: number, end: number, now: number): number {
  return Number(db.prepare(OLD_SPEND).pluck().get({ tenant, start, end, now }));
}

/** A small seeded generator (mulberry32), so a failure replays. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const metrics = (llm: number, tts: number, stt: number): string => JSON.stringify({ turns: 0, cost: { llm, tts, stt } });

function openSession(r: Repos, id: number, tenant: string, createdAt: number, m: string): number {
  return r.sessions.insert({
    id, tenant_id: tenant, agent_id: 'ag_x', agent_digest: 'd', customer_name: null, customer_phone: null, title: null,
    context: '{}', ref_ms: 0, engine: '{}', metrics: m, status: 'open', created_at: createdAt, ended_at: null, summary: null,
  });
}

function placeCall(r: Repos, id: number, tenant: string, reserved: number, until: number): void {
  r.calls.insert({
    id, tenant_id: tenant, agent_id: 'ag_x', direction: 'outbound', to_number: '+919876543210', from_number: null,
    dial_status: 'not_dialled', trunk_id: null, room_name: null, provider_call_id: null, dial_error: null,
    idempotency_key: null, idempotency_print: null, reserved_micro: reserved, reserve_until: until, answered_at: null,
  });
}

function seedRepos(): Repos {
  const r = openRepos(dbFile());
  r.store.db.exec("INSERT INTO agent_revisions (digest, definition) VALUES ('d', '{}')");
  r.tenants.insertTenant('a', 0);
  r.tenants.insertTenant('b', 0);
  return r;
}

type Stmt = { source: string };
const sqlOf = (repo: object, name: string): string => ((repo as { q: Record<string, Stmt> }).q[name]!).source;
function plan(db: Database.Database, sql: string): string {
  const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, null]));
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((x) => x.detail).join('\n');
}

const DAY0 = Date.parse('2026-11-21T00:00:00+05:30') / 1000;
const ZONE = 'Asia/Kolkata';

describe('spend ledger (migration 7)', () => {
  it('the check reads one index range of the ledger, at most 100 rows, and the open sessions only', () => {
    const r = seedRepos();
    try {
      // 300 ended sessions spread over the day, with costs: the day's ledger holds one row per quarter-hour used.
      for (let i = 0; i < 300; i++) {
        const seq = openSession(r, 10 + i, 'a', DAY0 + i * 287, metrics(1000, 0, 0));
        r.sessions.end(seq, '{}', metrics(1000, 500, 0), DAY0 + i * 287 + 60, '{}');
      }
      const { start, end } = dayBounds(DAY0 + 3600, ZONE);
      const rows = r.store.db.prepare('SELECT COUNT(*) FROM spend_ledger WHERE tenant_id = ? AND bucket >= ? AND bucket < ?')
        .pluck().get('a', start / 900, end / 900) as number;
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(96);
      expect(r.calls.spendMicro('a', start, end, DAY0 + 3600)).toBe(300 * 1500);

      const ledger = plan(r.store.db, sqlOf(r.calls, 'ledger'));
      expect(ledger).toMatch(/SEARCH spend_ledger USING PRIMARY KEY \(tenant_id=\? AND bucket>\? AND bucket<\?\)/);
      expect(ledger).not.toMatch(/SCAN/);
      const held = plan(r.store.db, sqlOf(r.calls, 'held'));
      expect(held).toMatch(/SEARCH s USING INDEX sessions_open \(tenant_id=\? AND created_at>\? AND created_at<\?\)/);
      expect(held).not.toMatch(/SCAN/);
    } finally {
      r.store.close();
    }
  });

  it('equals the old full computation after a seeded random mix of sessions, turns, calls and ends', () => {
    for (const seed of [1, 2, 3]) {
      const next = rng(seed);
      const pick = (n: number): number => Math.floor(next() * n);
      const r = seedRepos();
      try {
        const open: Array<{ seq: number; cost: [number, number, number]; idx: number }> = [];
        let id = 100;
        for (let step = 0; step < 400; step++) {
          const op = pick(10);
          const at = DAY0 - 86400 + pick(3 * 86400);
          if (op < 3 || open.length === 0) {
            const tenant = pick(2) === 0 ? 'a' : 'b';
            const cost: [number, number, number] = [pick(3000), pick(3000), 0];
            const seq = openSession(r, ++id, tenant, at, metrics(...cost));
            if (pick(2) === 0) placeCall(r, id, tenant, pick(4) * 1_000_000, at + pick(3600));
            open.push({ seq, cost, idx: 0 });
          } else if (op < 8) {
            const s = open[pick(open.length)]!;
            s.cost = [s.cost[0] + pick(400_000), s.cost[1] + pick(400_000), s.cost[2] + pick(50_000)];
            r.sessions.addTurn(s.seq, s.idx++, '{}', '{}', metrics(...s.cost));
          } else {
            const [s] = open.splice(pick(open.length), 1);
            s!.cost = [s!.cost[0] + pick(1000), s!.cost[1], s!.cost[2]];
            r.sessions.end(s!.seq, '{}', metrics(...s!.cost), at, '{}');
          }
        }
        for (const tenant of ['a', 'b']) {
          for (let d = -1; d <= 1; d++) {
            const { start, end } = dayBounds(DAY0 + d * 86400 + 7200, ZONE);
            for (const now of [start + 600, start + 40_000, end + 5000]) {
              expect(r.calls.spendMicro(tenant, start, end, now)).toBe(oldSpend(r.store.db, tenant, start, end, now));
            }
          }
        }
        expect(oldSpend(r.store.db, 'a', DAY0, DAY0 + 86400, DAY0)).toBeGreaterThan(0);
      } finally {
        r.store.close();
      }
    }
  });

  it('backfills the ledger of an upgraded version 6 database to the spend the old query computed', () => {
    const file = dbFile();
    const raw = new Database(file);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT');
    raw.pragma('foreign_keys = OFF');
    for (const m of MIGRATIONS.filter((x) => x.version <= 6)) {
      raw.exec(m.sql);
      m.apply?.(raw);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
    }
    raw.exec("INSERT INTO tenants (id, created_at) VALUES ('a', 0)");
    const session = raw.prepare(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
      VALUES (?, ?, 'a', 'ag_x', 'd', '{}', 0, '{}', ?, ?, ?)`);
    const turn = raw.prepare("INSERT INTO session_turns (session_seq, idx, data, engine, metrics) VALUES (?, ?, '{}', '{}', ?)");
    const call = raw.prepare(`INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, dial_status, reserved_micro, reserve_until)
      VALUES (?, 'a', 'ag_x', 'outbound', '+919876543210', 'ringing', ?, ?)`);
    // Yesterday: an ended session. Today: an ended one, an open one with turns, an open call under its reservation.
    session.run(1, 11, metrics(700_000, 0, 0), 'ended', DAY0 - 3600);
    session.run(2, 12, metrics(1_200_000, 300_000, 0), 'ended', DAY0 + 100);
    session.run(3, 13, metrics(0, 0, 0), 'open', DAY0 + 200);
    turn.run(3, 0, metrics(100_000, 0, 0));
    turn.run(3, 1, metrics(250_000, 40_000, 5_000));
    session.run(4, 14, metrics(0, 0, 0), 'open', DAY0 + 300);
    call.run(14, 2_000_000, DAY0 + 2100);
    const now = DAY0 + 600;
    const before = [DAY0 - 86400, DAY0].map((d) => oldSpend(raw, 'a', d, d + 86400, now));
    raw.close();

    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const calls = new CallRepo(store.db);
      const after = [DAY0 - 86400, DAY0].map((d) => calls.spendMicro('a', d, d + 86400, now));
      expect(after).toEqual(before);
      expect(after).toEqual([700_000, 1_500_000 + 295_000 + 2_000_000]);
      expect(store.db.prepare('SELECT SUM(cost_micro) FROM spend_ledger').pluck().get()).toBe(700_000 + 1_500_000 + 295_000);
    } finally {
      store.close();
    }
  });
});
