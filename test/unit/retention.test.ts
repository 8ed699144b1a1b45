/**
 * Retention (docs/api-decisions.md "Retention") on a real SQLite file: the purge deletes exactly
 * what is older than the cut-off (never an open session nor a call whose line may be up), counts
 * exactly in a dry run, leaves the spend ledger alone, commits in bounded batches, lets turns run
 * between them, stops between batches, and applies the instance's and each tenant's retention_days.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import { newSessionNumber } from '../../src/domain/ids.js';
import { startOfLocalDay } from '../../src/domain/time.js';
import { retentionNotice } from '../../src/config/notices.js';
import { RetentionService, type PurgeCounts } from '../../src/app/retention.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';

const DAY = 86_400;
const START = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
let clock = START;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
  clock = START;
});

async function app(settings: Record<string, unknown> = {}): Promise<TestApp> {
  t = await makeTestApp(settings, { nowS: () => clock });
  return t;
}

/** Opens a session at `at` (epoch s), runs a turn, and ends it unless `open`. Returns `se_…`. */
async function session(a: TestApp, at: number, opts: { open?: boolean; tenantKey?: string } = {}): Promise<string> {
  clock = at;
  const key = opts.tenantKey ?? a.key;
  const res = await a.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' }, { key });
  expect(res.statusCode, res.body).toBe(201);
  const id = (res.json() as { session_id: string }).session_id;
  expect((await a.call('POST', `/v1/sessions/${id}/turn`, { text: 'Asha' }, { key })).statusCode).toBe(200);
  if (!opts.open) expect((await a.call('POST', `/v1/sessions/${id}/end`, undefined, { key })).statusCode).toBe(200);
  return id;
}

/** Places a prepared call at `at` (line `not_dialled`, final) and ends its session. Returns the session number. */
async function call(a: TestApp, at: number): Promise<number> {
  clock = at;
  const res = await a.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' });
  expect(res.statusCode, res.body).toBe(201);
  const sid = (res.json() as { session_id: string }).session_id;
  expect((await a.call('POST', `/v1/sessions/${sid}/end`)).statusCode).toBe(200);
  return Number(sid.slice(3));
}

const db = (a: TestApp) => a.runtime.services.repos.store.db;
const rows = (a: TestApp, table: string) => db(a).prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
const sessionExists = (a: TestApp, id: string) => a.runtime.services.repos.sessions.exists(Number(id.slice(3)));
const TABLES = [
  'sessions',
  'session_turns',
  'calls',
  'telephony_events',
  'audit_events',
  'agent_revisions',
  'spend_ledger',
  'agents',
  'tenants',
];
const allRows = (a: TestApp) => Object.fromEntries(TABLES.map((tb) => [tb, rows(a, tb)]));

/** Adds `n` ended copies of session `template` (with its turns) created at `at`, through the store's own functions. */
function copies(a: TestApp, template: string, n: number, at: number): void {
  const repos = a.runtime.services.repos;
  const row = repos.sessions.get(Number(template.slice(3)))!;
  const turns = db(a)
    .prepare('SELECT idx, data, engine, metrics, cost_micro FROM session_turns WHERE session_seq = ? ORDER BY idx')
    .all(row.seq) as Array<{ idx: number; data: string; engine: string; metrics: string; cost_micro: number }>;
  repos.store.writeNow(() => {
    for (let i = 0; i < n; i++) {
      const { seq: _seq, ...rest } = row;
      const seq = repos.sessions.insert({ ...rest, id: newSessionNumber(), created_at: at, ended_at: at + 60 });
      for (const tr of turns) repos.sessions.addTurn(seq, tr.idx, tr.data, tr.engine, tr.metrics, tr.cost_micro);
    }
  });
}

/** A purge service over the app's store with its own batch size (the app's forgets purged sessions the same way). */
function retention(a: TestApp, batchSize: number): RetentionService {
  const s = a.runtime.services;
  return new RetentionService(s.repos, { retentionDays: 0, batchSize, onSessionsPurged: (ids) => s.sessions.forget(ids) }, () => clock);
}

describe('purge before a cut-off', () => {
  it('deletes exactly what is older (cut-off − 1 s goes, the cut-off stays), never open sessions nor live lines', async () => {
    const a = await app();
    const cutoff = START + 10 * DAY;
    const old = await session(a, cutoff - 1);
    const atCutoff = await session(a, cutoff);
    const openOld = await session(a, cutoff - 5 * DAY, { open: true });
    const oldCall = await call(a, cutoff - 2 * DAY);
    const liveCall = await call(a, cutoff - 2 * DAY);
    // A line whose outcome may still arrive (ringing) keeps its call and session.
    db(a).prepare("UPDATE calls SET dial_status = 'ringing' WHERE id = ?").run(liveCall);
    const repos = a.runtime.services.repos;
    repos.store.writeNow(() => {
      for (const [key, at, state] of [
        ['e1', cutoff - 1, 'done'],
        ['e2', cutoff, 'done'],
        ['e3', cutoff - DAY, 'pending'],
      ] as const) {
        const seq = repos.telephonyEvents.insert(key, 'participant_joined', '{}', at)!;
        if (state === 'done') repos.telephonyEvents.finish(seq, 'done', 'session_opened', at);
      }
      for (const at of [cutoff - 1, cutoff]) {
        repos.tenants.insertAudit({
          at,
          actor_tenant_id: 'acme',
          actor_key_id: 'key_x',
          owner_tenant_id: 'default',
          resource_id: old,
          method: 'GET',
          route: '/v1/sessions/:session_id',
          request_id: 'req_x',
        });
      }
    });
    clock = cutoff + DAY;
    const turnsOf = (id: string) => repos.sessions.turns(repos.sessions.get(Number(id.slice(3)))!.seq).length;
    const oldTurns = turnsOf(old) + turnsOf(`se_${oldCall}`);

    const result = await a.runtime.services.retention.purge({ before: cutoff, tenant: null });
    expect(result).toMatchObject({
      complete: true,
      sessions: 2,
      calls: 1,
      turns: oldTurns,
      telephony_events: 1,
      audit_events: 1,
    });
    expect(sessionExists(a, old)).toBe(false);
    expect(repos.calls.get(oldCall)).toBeUndefined();
    expect(sessionExists(a, atCutoff)).toBe(true);
    expect(sessionExists(a, openOld)).toBe(true);
    expect(repos.calls.get(liveCall)?.dial_status).toBe('ringing');
    expect(repos.telephonyEvents.get('e1')).toBeUndefined();
    expect(repos.telephonyEvents.get('e2')).toBeDefined();
    expect(repos.telephonyEvents.get('e3')?.state).toBe('pending');
    expect(repos.tenants.listAudit(10).map((e) => e.at)).toEqual([cutoff]);
    // Nothing left to purge at that cut-off.
    expect(countsTotal(await a.runtime.services.retention.count({ before: cutoff, tenant: null }))).toBe(0);
  });

  it('deletes an agent revision only once no agent has it as current and no remaining session pins it', async () => {
    const a = await app();
    await a.agent('ag_retired');
    const first = a.runtime.services.repos.agents.get('default', 'ag_retired')!.digest;
    const pinned = await (async () => {
      const res = await a.call('POST', '/v1/sessions', { agent_id: 'ag_retired' });
      return (res.json() as { session_id: string }).session_id;
    })();
    clock = START + DAY;
    const changed = { ...(await import('../support/app.js')).minimalAgent('ag_retired'), closing: 'Goodbye!' };
    expect((await a.call('PUT', '/v1/agents/ag_retired', changed)).statusCode).toBeLessThan(300);
    const current = a.runtime.services.repos.agents.get('default', 'ag_retired')!.digest;
    expect(current).not.toBe(first);
    clock = START + 30 * DAY;
    const svc = a.runtime.services.retention;
    // The session pinning the first revision is open: it and the revision stay.
    expect((await svc.purge({ before: START + 20 * DAY, tenant: null })).agent_revisions).toBe(0);
    expect(a.runtime.services.repos.agents.revision(first)).toBeDefined();
    expect((await a.call('POST', `/v1/sessions/${pinned}/end`)).statusCode).toBe(200);
    const dry = await svc.count({ before: START + 20 * DAY, tenant: null });
    const done = await svc.purge({ before: START + 20 * DAY, tenant: null });
    expect(dry.agent_revisions).toBeGreaterThanOrEqual(1);
    expect(done.agent_revisions).toBe(dry.agent_revisions);
    expect(a.runtime.services.repos.agents.revision(first)).toBeUndefined();
    expect(a.runtime.services.repos.agents.revision(current)).toBeDefined();
  });

  it('a dry run counts exactly what the purge then deletes, and changes nothing (rows and file bytes)', async () => {
    const a = await app();
    const cutoff = START + 10 * DAY;
    await session(a, START);
    await session(a, START + DAY, { open: true });
    await call(a, START + 2 * DAY);
    await session(a, cutoff + 1);
    const acme = a.tenantKey('acme');
    await session(a, START + 3 * DAY, { tenantKey: acme });
    clock = cutoff + DAY;
    const file = path.join(a.settings.state_dir, 'vagent.db');
    const store = a.runtime.services.repos.store;
    const svc = a.runtime.services.retention;
    for (const scope of [
      { before: cutoff, tenant: 'acme' },
      { before: cutoff, tenant: null },
    ]) {
      store.db.pragma('wal_checkpoint(TRUNCATE)');
      const before = { rows: allRows(a), bytes: fs.readFileSync(file), wal: fs.statSync(`${file}-wal`).size };
      const dry = await svc.count(scope);
      expect({ rows: allRows(a), bytes: fs.readFileSync(file), wal: fs.statSync(`${file}-wal`).size }).toEqual(before);
      expect(countsTotal(dry)).toBeGreaterThan(0);
      const { complete, ...done } = await svc.purge(scope);
      expect(complete).toBe(true);
      expect(done).toEqual(dry);
    }
  });

  it('leaves the spend ledger alone: a past day and today read the same after a purge, open calls still hold', async () => {
    const a = await app();
    const ledger = () => db(a).prepare('SELECT tenant_id, bucket, cost_micro, held_micro FROM spend_ledger ORDER BY 1, 2').all();
    const holds = () => db(a).prepare('SELECT * FROM call_holds ORDER BY call_id').all();
    /** A prepared call at `at`, its session left open: it holds its reservation (migration 10). */
    const openCall = async (at: number) => {
      clock = at;
      const res = await a.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' });
      expect(res.statusCode, res.body).toBe(201);
    };
    await session(a, START);
    await call(a, START + 2 * DAY);
    const today = START + 5 * DAY;
    await session(a, today);
    await call(a, today + 60);
    await openCall(today + 90);
    clock = today + 120;
    const rowsBefore = ledger();
    const holdsBefore = holds();
    const spentBefore = a.runtime.services.budget.status('default').spent_inr;
    expect(rowsBefore.length).toBeGreaterThan(1);
    expect(holdsBefore).toHaveLength(1);
    expect(spentBefore).toBeGreaterThanOrEqual(a.runtime.services.budget.reservationMicro / 1e6);
    const done = await a.runtime.services.retention.purge({ before: clock, tenant: null });
    expect(done.sessions).toBe(4);
    expect(ledger()).toEqual(rowsBefore);
    expect(holds()).toEqual(holdsBefore);
    expect(a.runtime.services.budget.status('default').spent_inr).toBe(spentBefore);
  });

  it('refuses a cut-off in the future and an unknown tenant, changing nothing', async () => {
    const a = await app();
    await session(a, START);
    const svc = a.runtime.services.retention;
    const before = allRows(a);
    await expect(svc.purge({ before: clock + 60, tenant: null })).rejects.toMatchObject({
      code: 'invalid_request',
      param: 'before',
    });
    await expect(svc.count({ before: clock + 60, tenant: null })).rejects.toBeInstanceOf(ApiError);
    await expect(svc.purge({ before: clock, tenant: 'nobody' })).rejects.toMatchObject({ code: 'not_found', param: 'tenant' });
    expect(allRows(a)).toEqual(before);
  });
});

describe('batches', () => {
  it('deletes 500 sessions in at least 10 commits of at most 50, and stops between batches when asked', async () => {
    const a = await app();
    const template = await session(a, START);
    copies(a, template, 499, START + 60);
    clock = START + 10 * DAY;
    const store = a.runtime.services.repos.store;
    const svc = retention(a, 50);
    const sizes: number[] = [];
    const commits = store.stats().commits;
    const abort = new AbortController();
    const stopped = await svc.purge(
      { before: START + DAY, tenant: 'default' },
      {
        signal: abort.signal,
        onBatch: (c) => {
          sizes.push(c.sessions);
          if (sizes.length === 3) abort.abort();
        },
      },
    );
    expect(stopped).toMatchObject({ complete: false, sessions: 150 });
    expect(rows(a, 'sessions')).toBe(350);
    const rest = await svc.purge({ before: START + DAY, tenant: 'default' }, { onBatch: (c) => sizes.push(c.sessions) });
    expect(rest).toMatchObject({ complete: true, sessions: 350 });
    expect(sizes.reduce((x, y) => x + y, 0)).toBe(500);
    expect(Math.max(...sizes)).toBeLessThanOrEqual(50);
    expect(store.stats().commits - commits).toBeGreaterThanOrEqual(10);
    expect(rows(a, 'sessions')).toBe(0);
    expect(rows(a, 'session_turns')).toBe(0);
  });

  it('lets turns run between batches: every turn succeeds while a big purge runs', async () => {
    const a = await app();
    const template = await session(a, START);
    copies(a, template, 999, START + 60);
    clock = START + 10 * DAY;
    const svc = retention(a, 50);
    const log: string[] = [];
    const statuses: number[] = [];
    let done = false;
    const purging = svc.purge({ before: START + DAY, tenant: 'default' }, { onBatch: () => log.push('batch') }).finally(() => {
      done = true;
    });
    const talk = async () => {
      while (!done) {
        const opened = await a.call('POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
        statuses.push(opened.statusCode);
        const id = (opened.json() as { session_id: string }).session_id;
        const turned = await a.call('POST', `/v1/sessions/${id}/turn`, { text: 'Asha' });
        statuses.push(turned.statusCode);
        log.push('turn');
      }
    };
    await Promise.all([purging, talk(), talk(), talk()]);
    expect((await purging).sessions).toBe(1000);
    expect(statuses.every((s) => s === 200 || s === 201)).toBe(true);
    const first = log.indexOf('batch');
    const last = log.lastIndexOf('batch');
    expect(log.filter((e) => e === 'batch').length).toBeGreaterThanOrEqual(20);
    expect(log.slice(first, last).filter((e) => e === 'turn').length).toBeGreaterThan(0);
  });
});

describe('the background purge', () => {
  it('runs after its first delay, reports what it purged, and stops between two batches when stopped mid-purge', async () => {
    const a = await app();
    const template = await session(a, START);
    copies(a, template, 299, START + 60);
    clock = START + 10 * DAY;
    const s = a.runtime.services;
    let stopping: Promise<void> | undefined;
    let batches = 0;
    const reports: Array<{ sessions: number; complete: boolean }> = [];
    const errors: unknown[] = [];
    let bg: ReturnType<RetentionService['startBackground']> | undefined;
    const svc = new RetentionService(
      s.repos,
      {
        retentionDays: 1,
        batchSize: 10,
        onSessionsPurged: (ids) => {
          s.sessions.forget(ids);
          batches += 1;
          if (batches === 2) stopping = bg!.stop();
        },
      },
      () => clock,
    );
    bg = svc.startBackground({
      firstDelayMs: 0,
      intervalMs: 3_600_000,
      onPurged: (c) => reports.push(c),
      onError: (e) => errors.push(e),
    });
    await new Promise<void>((resolve) => {
      const wait = () => (stopping ? resolve() : setTimeout(wait, 5));
      wait();
    });
    await stopping;
    expect(reports).toEqual([expect.objectContaining({ sessions: 20, complete: false })]);
    expect(rows(a, 'sessions')).toBe(280);
    expect(errors).toEqual([]);

    const finished = new Promise<{ sessions: number; complete: boolean }>((resolve) => {
      bg = svc.startBackground({ firstDelayMs: 0, intervalMs: 3_600_000, onPurged: resolve, onError: (e) => errors.push(e) });
    });
    expect(await finished).toMatchObject({ sessions: 280, complete: true });
    await bg.stop();
    expect(rows(a, 'sessions')).toBe(0);
  });
});

describe('retention settings', () => {
  it("applies each tenant's retention, else the instance's; 0 keeps for ever", async () => {
    const a = await app({ retention_days: 30 });
    const tenants = a.runtime.services.tenants;
    const keys = { acme: a.tenantKey('acme'), keep: a.tenantKey('keep'), short: a.tenantKey('short') };
    tenants.setRetention('keep', 0);
    tenants.setRetention('short', 5);
    const ids: Record<string, string> = {};
    for (const [name, key] of [
      ['default', a.key],
      ['acme', keys.acme],
      ['keep', keys.keep],
      ['short', keys.short],
    ] as const) {
      ids[name] = await session(a, START, { tenantKey: key });
    }
    clock = START + 10 * DAY;
    const first = await a.runtime.services.retention.enforce();
    expect(first).toMatchObject({ complete: true, sessions: 1 });
    expect(Object.fromEntries(Object.entries(ids).map(([n, id]) => [n, sessionExists(a, id)]))).toEqual({
      default: true,
      acme: true,
      keep: true,
      short: false,
    });
    clock = START + 40 * DAY;
    expect((await a.runtime.services.retention.enforce()).sessions).toBe(2);
    expect(Object.fromEntries(Object.entries(ids).map(([n, id]) => [n, sessionExists(a, id)]))).toEqual({
      default: false,
      acme: false,
      keep: true,
      short: false,
    });
  });

  it('keeps everything with the default retention_days 0', async () => {
    const a = await app();
    expect(a.settings.retention_days).toBe(0);
    const id = await session(a, START);
    clock = START + 3650 * DAY;
    expect(countsTotal(await a.runtime.services.retention.enforce())).toBe(0);
    expect(sessionExists(a, id)).toBe(true);
  });

  it("sets a tenant's retention: days, 0, default (null); refuses what is not whole days 0–36500", async () => {
    const a = await app();
    const tenants = a.runtime.services.tenants;
    expect(tenants.getTenant('default').retention_days).toBeNull();
    expect(tenants.setRetention('default', 90).retention_days).toBe(90);
    expect(tenants.setRetention('default', 0).retention_days).toBe(0);
    for (const bad of [-1, 1.5, 36_501, Number.NaN]) {
      expect(() => tenants.setRetention('default', bad)).toThrow(
        expect.objectContaining({ code: 'invalid_request', param: 'retention_days' }),
      );
    }
    expect(tenants.getTenant('default').retention_days).toBe(0);
    expect(tenants.setRetention('default', null).retention_days).toBeNull();
    expect(() => tenants.setRetention('nobody', 3)).toThrow(expect.objectContaining({ code: 'not_found' }));
  });
});

describe('cut-off dates and the start-up line', () => {
  it('reads YYYY-MM-DD as the start of that day in the time zone, and refuses dates that do not exist', () => {
    expect(startOfLocalDay('2026-01-01', 'Asia/Kolkata')).toBe(Date.parse('2026-01-01T00:00:00+05:30') / 1000);
    expect(startOfLocalDay('2026-01-01', 'UTC')).toBe(Date.parse('2026-01-01T00:00:00Z') / 1000);
    expect(startOfLocalDay('2026-01-01', 'Pacific/Kiritimati')).toBe(Date.parse('2026-01-01T00:00:00+14:00') / 1000);
    expect(startOfLocalDay('2026-01-01', 'Pacific/Pago_Pago')).toBe(Date.parse('2026-01-01T00:00:00-11:00') / 1000);
    for (const bad of ['2026-02-30', '2026-13-01', '26-01-01', '2026-1-1', '']) expect(startOfLocalDay(bad, 'UTC'), bad).toBeNull();
  });

  it('says on one line whether records are purged, and how to change it', () => {
    expect(retentionNotice(0)).toMatch(
      /^retention: off, records are kept for ever .*VAGENT_RETENTION_DAYS.*vagent admin purge --before DATE$/,
    );
    expect(retentionNotice(30)).toMatch(/^retention: sessions, calls and events older than 30 days are purged in the background/);
    expect(retentionNotice(1)).toContain('older than 1 day are');
    for (const d of [0, 1, 30]) expect(retentionNotice(d)).not.toContain('\n');
  });
});

function countsTotal(c: PurgeCounts): number {
  return Object.values(c).reduce((x: number, y) => x + (typeof y === 'number' ? y : 0), 0);
}
