/**
 * The event log (src/app/events.ts, docs/events.md): appended in a write step, numbered per
 * subject without a gap, visible to readers only once durable, and absent when the step failed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/app/events.js';
import { IdempotencyService } from '../../src/app/idempotency.js';
import { UnitOfWork } from '../../src/app/unit-of-work.js';
import { eventId, eventSeq, typesOf } from '../../src/domain/events.js';
import { openRepos, type Repos } from '../../src/store/index.js';

const dirs: string[] = [];
const open: Repos[] = [];
afterEach(() => {
  for (const r of open.splice(0)) r.store.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function setup() {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-events-'));
  dirs.push(d);
  const repos = openRepos(path.join(d, 'vagent.db'));
  open.push(repos);
  const nowS = () => 1_800_000_000;
  const uow = new UnitOfWork(repos.store, new IdempotencyService(repos, Buffer.alloc(32, 1), 3600, nowS));
  return { repos, uow, log: new EventLog(repos, nowS) };
}

const all = { types: null, subject: null };

describe('event log', () => {
  it('numbers events per subject from 1 without a gap, and shows them once durable', async () => {
    const { uow, log } = setup();
    const woken: number[] = [];
    log.subscribe(() => woken.push(log.durableSeq()));
    const first = await uow.write((tx) => [
      log.appendTx(tx, { tenantId: 't1', type: 'session.opened', sessionId: 7, data: {} }),
      log.appendTx(tx, { tenantId: 't1', type: 'call.created', callId: 7, sessionId: 7, data: { direction: 'outbound' } }),
      log.appendTx(tx, { tenantId: 't1', type: 'session.opened', sessionId: 8, data: {} }),
      log.appendTx(tx, { tenantId: 't1', type: 'inbound.unrouted', data: { to: '+912240001234' } }),
    ]);
    expect(first.map((e) => [e.type, e.sequence])).toEqual([
      ['session.opened', 1],
      ['call.created', 2],
      ['session.opened', 1],
      ['inbound.unrouted', null],
    ]);
    expect(woken).toEqual([eventSeq(first[3]!.id)]);
    const page = log.page('t1', 0, 10, all);
    expect(page.events).toEqual(first);
    expect(page.hasMore).toBe(false);
    expect(log.page('t2', 0, 10, all).events).toEqual([]);
  });

  it('records an event in one statement (recordTx) as appendTx would: the same numbers, the same rows', async () => {
    const { uow, log } = setup();
    const woken: number[] = [];
    log.subscribe(() => woken.push(log.durableSeq()));
    await uow.write((tx) => {
      log.appendTx(tx, { tenantId: 't1', type: 'session.opened', sessionId: 7, data: {} });
      log.recordTx(tx, { tenantId: 't1', type: 'session.turn', callId: 7, sessionId: 7, data: { turn: 1 } });
      log.recordTx(tx, { tenantId: 't1', type: 'session.turn', sessionId: 8, data: { turn: 1 } });
      log.recordTx(tx, { tenantId: 't1', type: 'inbound.unrouted', data: { to: '+912240001234' } });
      log.appendTx(tx, { tenantId: 't1', type: 'session.turn', sessionId: 7, data: { turn: 2 } });
    });
    const events = log.page('t1', 0, 10, all).events;
    expect(events.map((e) => [e.type, e.call_id, e.session_id, e.sequence, e.data])).toEqual([
      ['session.opened', null, 'se_7', 1, {}],
      ['session.turn', 'cl_7', 'se_7', 2, { turn: 1 }],
      ['session.turn', null, 'se_8', 1, { turn: 1 }],
      ['inbound.unrouted', null, null, null, { to: '+912240001234' }],
      ['session.turn', null, 'se_7', 3, { turn: 2 }],
    ]);
    expect(woken).toEqual([eventSeq(events[4]!.id)]);
    // A step that records and then fails leaves nothing, and the next number is the same again.
    await expect(
      uow.write((tx) => {
        log.recordTx(tx, { tenantId: 't1', type: 'session.turn', sessionId: 8, data: { turn: 2 } });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    await uow.write((tx) => log.recordTx(tx, { tenantId: 't1', type: 'session.turn', sessionId: 8, data: { turn: 2 } }));
    expect(log.page('t1', eventSeq(events[4]!.id)!, 10, all).events.map((e) => [e.session_id, e.sequence])).toEqual([['se_8', 2]]);
  });

  it('records nothing for a step that fails, and the next event takes the next number', async () => {
    const { uow, log, repos } = setup();
    await expect(
      uow.write((tx) => {
        log.appendTx(tx, { tenantId: 't1', type: 'session.opened', sessionId: 9, data: {} });
        throw new Error('no');
      }),
    ).rejects.toThrow('no');
    expect(repos.events.lastSeq()).toBe(0);
    const e = await uow.write((tx) => log.appendTx(tx, { tenantId: 't1', type: 'session.opened', sessionId: 9, data: {} }));
    expect([e.id, e.sequence]).toEqual([eventId(1), 1]);
  });

  it('filters by type patterns and subject, and pages with has_more', async () => {
    const { uow, log } = setup();
    await uow.write((tx) => {
      for (let i = 0; i < 5; i++) log.appendTx(tx, { tenantId: 't1', type: 'session.turn', sessionId: 3, data: { i } });
      log.appendTx(tx, { tenantId: 't1', type: 'call.ended', callId: 4, sessionId: 4, data: { end_reason: 'busy' } });
    });
    const calls = typesOf(['call.*']);
    expect(calls.unknown).toEqual([]);
    expect(log.page('t1', 0, 10, { types: calls.types, subject: null }).events.map((e) => e.type)).toEqual(['call.ended']);
    const p1 = log.page('t1', 0, 2, { types: null, subject: 3 });
    expect([p1.events.map((e) => e.data.i), p1.hasMore]).toEqual([[0, 1], true]);
    expect(typesOf(['call.nope', 'x.*', '*']).unknown).toEqual(['call.nope', 'x.*']);
  });
});
