/**
 * Migration 7 (docs/calls.md "The daily budget"): the daily budget check reads the running spend
 * ledger, kept by the store in the same transaction as each cost, instead of walking the day's
 * sessions.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { dayBounds } from '../../src/domain/time.js';
import { Store } from '../../src/store/database.js';
import { openRepos, type Repos } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { CallRepo } from '../../src/store/repos/calls.js';
import type { ServiceDeps } from '../../src/app/context.js';
import { EventLog } from '../../src/app/events.js';
import { IdempotencyService } from '../../src/app/idempotency.js';
import { CredentialBox } from '../../src/app/secrets.js';
import { UnitOfWork } from '../../src/app/unit-of-work.js';

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
    id,
    tenant_id: tenant,
    agent_id: 'ag_x',
    agent_digest: 'd',
    customer_name: null,
    customer_phone: null,
    title: null,
    context: '{}',
    ref_ms: 0,
    engine: '{}',
    metrics: m,
    status: 'open',
    created_at: createdAt,
    ended_at: null,
    summary: null,
  });
}

/** What the budget service needs of the app: the repos, a clock, and the unit of work and event log its refusals are recorded with. */
function budgetDeps(r: Repos, nowS: () => number): ServiceDeps {
  const uow = new UnitOfWork(r.store, new IdempotencyService(r, Buffer.alloc(32, 7), 3600, nowS));
  return { repos: r, nowS, uow, events: new EventLog(r, nowS), authMode: 'enforce', credentials: new CredentialBox(Buffer.alloc(32, 7)) };
}

function placeCall(r: Repos, id: number, tenant: string, reserved: number, until: number): void {
  r.calls.insert({
    id,
    tenant_id: tenant,
    agent_id: 'ag_x',
    direction: 'outbound',
    to_number: '+919876543210',
    from_number: null,
    dial_status: 'not_dialled',
    trunk_id: null,
    room_name: null,
    provider_call_id: null,
    dial_error: null,
    idempotency_key: null,
    idempotency_print: null,
    reserved_micro: reserved,
    reserve_until: until,
    answered_at: null,
    transport: null,
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
const sqlOf = (repo: object, name: string): string => (repo as { q: Record<string, Stmt> }).q[name]!.source;
function plan(db: Database.Database, sql: string): string {
  const params = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1]!, null]));
  return (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(params) as Array<{ detail: string }>).map((x) => x.detail).join('\n');
}

const DAY0 = Date.parse('2026-11-21T00:00:00+05:30') / 1000;
const ZONE = 'Asia/Kolkata';

describe('spend ledger (migration 7)', () => {
  it('the check reads one index range of the ledger, at most 100 rows, and of the expired call holds', () => {
    const r = seedRepos();
    try {
      // 300 ended sessions spread over the day, with costs: the day's ledger holds one row per quarter-hour used.
      for (let i = 0; i < 300; i++) {
        const seq = openSession(r, 10 + i, 'a', DAY0 + i * 287, metrics(1000, 0, 0));
        r.sessions.end(seq, '{}', metrics(1000, 500, 0), DAY0 + i * 287 + 60, '{}');
      }
      const { start, end } = dayBounds(DAY0 + 3600, ZONE);
      const rows = r.store.db
        .prepare('SELECT COUNT(*) FROM spend_ledger WHERE tenant_id = ? AND bucket >= ? AND bucket < ?')
        .pluck()
        .get('a', start / 900, end / 900) as number;
      expect(rows).toBeGreaterThan(0);
      expect(rows).toBeLessThanOrEqual(96);
      expect(r.calls.spendMicro('a', start, end, DAY0 + 3600)).toBe(300 * 1500);

      const ledger = plan(r.store.db, sqlOf(r.calls, 'ledger'));
      expect(ledger).toMatch(/SEARCH spend_ledger USING PRIMARY KEY \(tenant_id=\? AND bucket>\? AND bucket<\?\)/);
      // The outer SELECT of two scalar subqueries reads one constant row; nothing else is scanned.
      expect(ledger).not.toMatch(/SCAN (?!CONSTANT ROW)/);
      expect(ledger).toMatch(/SEARCH call_holds USING INDEX call_holds_expiry \(tenant_id=\? AND reserve_until<\?\)/);
      expect(ledger).not.toMatch(/sessions|session_turns|calls\b/);
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
            const turn: [number, number, number] = [pick(400_000), pick(400_000), pick(50_000)];
            s.cost = [s.cost[0] + turn[0], s.cost[1] + turn[1], s.cost[2] + turn[2]];
            r.sessions.addTurn(s.seq, s.idx++, '{}', '{}', metrics(...s.cost), turn[0] + turn[1] + turn[2]);
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
    const session =
      raw.prepare(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
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

/** Each (tenant, bucket)'s held_micro against its call holds, and each hold against its call and open session. */
function holdsConsistent(db: Database.Database, now: number): void {
  const drift = db
    .prepare(
      `SELECT l.tenant_id, l.bucket, l.held_micro,
      (SELECT COALESCE(SUM(MAX(0, h.reserved_micro - h.cost_micro)), 0) FROM call_holds h WHERE h.tenant_id = l.tenant_id AND h.bucket = l.bucket) AS held
    FROM spend_ledger l WHERE held <> l.held_micro`,
    )
    .all();
  expect(drift).toEqual([]);
  const orphans = db
    .prepare(
      `SELECT COUNT(*) FROM call_holds h WHERE NOT EXISTS (SELECT 1 FROM spend_ledger l WHERE l.tenant_id = h.tenant_id AND l.bucket = h.bucket)`,
    )
    .pluck()
    .get();
  expect(orphans).toBe(0);
  // What each open call with a reservation should hold, with its session's cost so far.
  const expected = db
    .prepare(
      `SELECT c.id AS call_id, s.tenant_id, CAST(s.created_at / 900 AS INTEGER) AS bucket, c.reserved_micro,
      (SELECT COALESCE(json_extract(m, '$.cost.llm'), 0) + COALESCE(json_extract(m, '$.cost.tts'), 0) + COALESCE(json_extract(m, '$.cost.stt'), 0)
        FROM (SELECT COALESCE((SELECT t.metrics FROM session_turns t WHERE t.session_seq = s.seq ORDER BY t.idx DESC LIMIT 1), s.metrics) AS m)) AS cost_micro,
      c.reserve_until
    FROM calls c JOIN sessions s ON s.id = c.id WHERE s.status = 'open' AND c.reserved_micro > 0 ORDER BY c.id`,
    )
    .all() as Array<{ call_id: number; reserve_until: number }>;
  const holds = db.prepare('SELECT * FROM call_holds ORDER BY call_id').all() as Array<{ call_id: number }>;
  const byId = new Map(expected.map((e) => [e.call_id, e]));
  // Every hold is one of those, exactly; every unexpired one of those has its hold (an expired one may be released).
  for (const h of holds) expect(h).toEqual(byId.get(h.call_id));
  const held = new Set(holds.map((h) => h.call_id));
  expect(expected.filter((e) => e.reserve_until > now && !held.has(e.call_id))).toEqual([]);
}

describe('call holds (migration 10)', () => {
  it('keeps the spend equal to the walk of the day at every step: opens, calls, turns, ends, expiry, releases, purges', () => {
    for (const seed of [11, 12, 13]) {
      const next = rng(seed);
      const pick = (n: number): number => Math.floor(next() * n);
      const r = seedRepos();
      try {
        const open: Array<{
          seq: number;
          id: number;
          tenant: string;
          cost: [number, number, number];
          idx: number;
          call: boolean;
        }> = [];
        let id = 100;
        let now = DAY0 - 86400 + 3 * 3600;
        let released = 0;
        let purged = 0;
        for (let step = 0; step < 500; step++) {
          now += pick(900);
          const op = pick(20);
          const tenant = pick(2) === 0 ? 'a' : 'b';
          if (op < 6 || open.length === 0) {
            const cost: [number, number, number] = [pick(3000), pick(3000), 0];
            const seq = openSession(r, ++id, tenant, now, metrics(...cost));
            // Most with a call (some with no reservation), reserved up to ₹3 for up to 2 hours.
            const call = pick(5) > 0;
            if (call) placeCall(r, id, tenant, pick(4) * 1_000_000, now + pick(7200));
            open.push({ seq, id, tenant, cost, idx: 0, call });
          } else if (op === 6) {
            // A call placed on a session already open, after its turns: its hold starts at their cost.
            const s = open.find((o) => !o.call);
            if (s) {
              s.call = true;
              placeCall(r, s.id, s.tenant, (1 + pick(3)) * 1_000_000, now + pick(7200));
            }
          } else if (op < 13) {
            const s = open[pick(open.length)]!;
            const turn: [number, number, number] = [pick(400_000), pick(400_000), pick(50_000)];
            s.cost = [s.cost[0] + turn[0], s.cost[1] + turn[1], s.cost[2] + turn[2]];
            r.sessions.addTurn(s.seq, s.idx++, '{}', '{}', metrics(...s.cost), turn[0] + turn[1] + turn[2]);
          } else if (op < 17) {
            const [s] = open.splice(pick(open.length), 1);
            s!.cost = [s!.cost[0] + pick(1000), s!.cost[1], s!.cost[2]];
            r.sessions.end(s!.seq, '{}', metrics(...s!.cost), now, '{}');
          } else if (op < 19) {
            released += r.calls.releaseExpiredHolds(tenant, now, 1 + pick(3));
          } else {
            // Ended sessions created before the days the check reads below (retention never
            // deletes an open session, so no hold goes with them).
            const { start } = dayBounds(now - 86400, ZONE);
            purged += r.retention.purgeSessions(tenant, start, 1 + pick(5)).sessions;
          }
          for (const t of ['a', 'b']) {
            for (const d of [-1, 0]) {
              const { start, end } = dayBounds(now + d * 86400, ZONE);
              expect(r.calls.spendMicro(t, start, end, now), `seed ${seed} step ${step} tenant ${t} day ${d}`).toBe(
                oldSpend(r.store.db, t, start, end, now),
              );
            }
          }
          if (step % 25 === 0) holdsConsistent(r.store.db, now);
        }
        holdsConsistent(r.store.db, now);
        // The mix did exercise what it is about.
        expect(released).toBeGreaterThan(0);
        expect(purged).toBeGreaterThan(0);
        expect(r.store.db.prepare('SELECT COUNT(*) FROM call_holds').pluck().get()).toBeGreaterThan(0);
        expect(r.store.db.prepare('SELECT COUNT(*) FROM call_holds WHERE reserve_until <= ?').pluck().get(now)).toBeGreaterThan(0);
      } finally {
        r.store.close();
      }
    }
  });

  it('reads only the two index ranges however many calls are open, and releases expired holds in bounded batches', () => {
    const r = seedRepos();
    try {
      const at = DAY0 + 3600;
      for (let i = 0; i < 40; i++) {
        openSession(r, 1000 + i, 'a', at + i, metrics(100_000, 0, 0));
        // Half expire at at + 600, half at at + 7200.
        placeCall(r, 1000 + i, 'a', 2_000_000, at + (i % 2 === 0 ? 600 : 7200));
      }
      const { start, end } = dayBounds(at, ZONE);
      const held = (): number =>
        r.store.db.prepare('SELECT SUM(held_micro) FROM spend_ledger WHERE tenant_id = ?').pluck().get('a') as number;
      expect(held()).toBe(40 * 1_900_000);
      expect(r.calls.spendMicro('a', start, end, at + 60)).toBe(40 * 2_000_000);
      const later = at + 3600;
      expect(r.calls.spendMicro('a', start, end, later)).toBe(20 * 2_000_000 + 20 * 100_000);
      // Another tenant's release leaves these; this tenant's takes at most `limit` of its expired ones.
      expect(r.calls.releaseExpiredHolds('b', later, 100)).toBe(0);
      expect(r.calls.releaseExpiredHolds('a', later, 15)).toBe(15);
      expect(held()).toBe(25 * 1_900_000);
      expect(r.calls.spendMicro('a', start, end, later)).toBe(20 * 2_000_000 + 20 * 100_000);
      expect(r.calls.releaseExpiredHolds('a', later, 100)).toBe(5);
      expect(r.calls.releaseExpiredHolds('a', later, 100)).toBe(0);
      expect(r.calls.spendMicro('a', start, end, later)).toBe(oldSpend(r.store.db, 'a', start, end, later));
      const release = plan(r.store.db, sqlOf(r.calls, 'release'));
      expect(release).toMatch(/SEARCH call_holds USING (COVERING )?INDEX call_holds_expiry \(tenant_id=\? AND reserve_until<\?\)/);
      expect(release).not.toMatch(/SCAN/);
    } finally {
      r.store.close();
    }
  });

  it('places a call through the budget with its hold released in the same write', async () => {
    const r = seedRepos();
    try {
      // Covered end to end in test/api; here: the service releases before it checks.
      const { BudgetService } = await import('../../src/app/budget.js');
      let now = DAY0 + 3600;
      const budget = new BudgetService(
        budgetDeps(r, () => now),
        {
          dailyBudgetInr: 3,
          timezone: ZONE,
          callReservationInr: 2,
        },
      );
      openSession(r, 2000, 'a', now, metrics(0, 0, 0));
      await r.store.write(() => placeCall(r, 2000, 'a', budget.reserveTx('a'), now + 600));
      openSession(r, 2001, 'a', now, metrics(0, 0, 0));
      // ₹2 held of ₹3: one more call may go (the check is "at or over").
      await r.store.write(() => placeCall(r, 2001, 'a', budget.reserveTx('a'), now + 600));
      expect(() => budget.check('a')).toThrow(/daily budget/);
      now += 601;
      expect(r.store.db.prepare('SELECT COUNT(*) FROM call_holds').pluck().get()).toBe(2);
      budget.check('a');
      await r.store.write(() => budget.reserveTx('a'));
      expect(r.store.db.prepare('SELECT COUNT(*) FROM call_holds').pluck().get()).toBe(0);
      expect(r.store.db.prepare('SELECT SUM(held_micro) FROM spend_ledger').pluck().get()).toBe(0);
    } finally {
      r.store.close();
    }
  });

  it('the budget reads the day of its clock across midnight, forwards and back', async () => {
    const r = seedRepos();
    try {
      const { BudgetService } = await import('../../src/app/budget.js');
      let now = DAY0 - 1;
      const budget = new BudgetService(
        budgetDeps(r, () => now),
        {
          dailyBudgetInr: 3,
          timezone: ZONE,
          callReservationInr: 2,
        },
      );
      openSession(r, 3000, 'a', now, metrics(0, 0, 0));
      await r.store.write(() => placeCall(r, 3000, 'a', budget.reserveTx('a'), now + 600));
      const seen = (): [string, number] => {
        const s = budget.status('a');
        return [s.day, s.spent_inr];
      };
      expect(seen()).toEqual(['2026-11-20', 2]);
      now = DAY0;
      expect(seen()).toEqual(['2026-11-21', 0]);
      now = DAY0 + 86399;
      expect(seen()).toEqual(['2026-11-21', 0]);
      now = DAY0 + 86400;
      expect(seen()).toEqual(['2026-11-22', 0]);
      now = DAY0 - 10;
      expect(seen()).toEqual(['2026-11-20', 2]);
    } finally {
      r.store.close();
    }
  });

  it('backfills the holds of an upgraded version 9 database with open calls', () => {
    const file = dbFile();
    const raw = new Database(file);
    raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT');
    raw.pragma('foreign_keys = OFF');
    for (const m of MIGRATIONS.filter((x) => x.version <= 9)) {
      raw.exec(m.sql);
      m.apply?.(raw);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
    }
    raw.exec("INSERT INTO tenants (id, created_at) VALUES ('a', 0), ('b', 0)");
    const session =
      raw.prepare(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
      VALUES (?, ?, ?, 'ag_x', 'd', '{}', 0, '{}', ?, ?, ?)`);
    const turn = raw.prepare("INSERT INTO session_turns (session_seq, idx, data, engine, metrics) VALUES (?, ?, '{}', '{}', ?)");
    const call = raw.prepare(`INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, dial_status, reserved_micro, reserve_until)
      VALUES (?, ?, 'ag_x', 'outbound', '+919876543210', 'ringing', ?, ?)`);
    // Tenant a today: an open call with turns (cost below its reservation), one whose cost passed
    // it, one expired, an ended call, an open inbound call (no reservation); yesterday: one still open.
    session.run(1, 11, 'a', metrics(0, 0, 0), 'open', DAY0 + 100);
    turn.run(1, 0, metrics(100_000, 0, 0));
    turn.run(1, 1, metrics(250_000, 40_000, 5_000));
    call.run(11, 'a', 2_000_000, DAY0 + 3700);
    session.run(2, 12, 'a', metrics(0, 0, 0), 'open', DAY0 + 200);
    turn.run(2, 0, metrics(2_500_000, 0, 0));
    call.run(12, 'a', 2_000_000, DAY0 + 3800);
    session.run(3, 13, 'a', metrics(10_000, 0, 0), 'open', DAY0 + 1000);
    call.run(13, 'a', 2_000_000, DAY0 + 1100);
    session.run(4, 14, 'a', metrics(600_000, 0, 0), 'ended', DAY0 + 1200);
    call.run(14, 'a', 2_000_000, DAY0 + 4800);
    session.run(5, 15, 'a', metrics(7_000, 0, 0), 'open', DAY0 + 1300);
    call.run(15, 'a', 0, 0);
    session.run(6, 16, 'a', metrics(1_000, 0, 0), 'open', DAY0 - 600);
    call.run(16, 'a', 2_000_000, DAY0 + 3000);
    session.run(7, 17, 'b', metrics(0, 0, 0), 'open', DAY0 + 100);
    call.run(17, 'b', 1_000_000, DAY0 + 3700);
    // The ledger (migration 7's triggers) as the version 9 database kept it.
    const nows = [DAY0 + 600, DAY0 + 2000, DAY0 + 3750, DAY0 + 9000];
    const days = [DAY0 - 86400, DAY0];
    const before = ['a', 'b'].flatMap((t) => days.flatMap((d) => nows.map((now) => oldSpend(raw, t, d, d + 86400, now))));
    raw.close();

    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      holdsConsistent(store.db, DAY0);
      expect(store.db.prepare('SELECT call_id, cost_micro FROM call_holds ORDER BY call_id').all()).toEqual([
        { call_id: 11, cost_micro: 295_000 },
        { call_id: 12, cost_micro: 2_500_000 },
        { call_id: 13, cost_micro: 10_000 },
        { call_id: 16, cost_micro: 1_000 },
        { call_id: 17, cost_micro: 0 },
      ]);
      expect(store.db.prepare("SELECT SUM(held_micro) FROM spend_ledger WHERE tenant_id = 'a'").pluck().get()).toBe(
        1_705_000 + 0 + 1_990_000 + 1_999_000,
      );
      const calls = new CallRepo(store.db);
      const after = ['a', 'b'].flatMap((t) => days.flatMap((d) => nows.map((now) => calls.spendMicro(t, d, d + 86400, now))));
      expect(after).toEqual(before);
      // Today at DAY0 + 2000: 11 holds ₹2, 12 costs ₹2.5, 13 expired (its cost), 14 ended, 15 its cost.
      expect(after[5]).toBe(2_000_000 + 2_500_000 + 10_000 + 600_000 + 7_000);
      // The triggers run on the upgraded database: a turn (₹0.295 → ₹1.9: its own cost, as
      // migration 15 has a turn say) and an end of a backfilled hold.
      store.db
        .prepare("INSERT INTO session_turns (session_seq, idx, data, engine, metrics, cost_micro) VALUES (1, 2, '{}', '{}', ?, ?)")
        .run(metrics(1_900_000, 0, 0), 1_900_000 - 295_000);
      store.db.prepare("UPDATE sessions SET status = 'ended', metrics = ? WHERE seq = 2").run(metrics(2_600_000, 0, 0));
      holdsConsistent(store.db, DAY0);
      expect(calls.spendMicro('a', DAY0, DAY0 + 86400, DAY0 + 2000)).toBe(oldSpend(store.db, 'a', DAY0, DAY0 + 86400, DAY0 + 2000));
    } finally {
      store.close();
    }
  });
});
