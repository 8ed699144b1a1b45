/**
 * The API's reads of a purged session or call (docs/api-decisions.md "Retention") answer
 * `not_found` — also when the session was in the daemon's window of recently ended sessions, and
 * when another process (`vagent admin purge`) purged it while the daemon ran.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { EXTERNAL_CHECK_MS } from '../../src/store/database.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';
import { expectError } from '../support/expect.js';

const START = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
let clock = START;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
  clock = START;
});

/** A call placed (not dialled) at START with a turn, then ended: its session is in the ended window. */
async function endedCall(a: TestApp): Promise<{ session: string; call: string }> {
  const res = await a.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' });
  expect(res.statusCode, res.body).toBe(201);
  const { session_id: session, call_id: call } = res.json() as { session_id: string; call_id: string };
  expect((await a.call('POST', `/v1/sessions/${session}/turn`, { text: 'yes' })).statusCode).toBe(200);
  expect((await a.call('POST', `/v1/sessions/${session}/end`)).statusCode).toBe(200);
  return { session, call };
}

/** Every read of the session and its call answers 404 not_found. */
async function expectGone(a: TestApp, ids: { session: string; call: string }): Promise<void> {
  expectError(await a.call('GET', `/v1/sessions/${ids.session}`), 404, 'not_found', 'session_id');
  expectError(await a.call('POST', `/v1/sessions/${ids.session}/turn`, { text: 'hello' }), 404, 'not_found');
  expectError(await a.call('POST', `/v1/sessions/${ids.session}/end`), 404, 'not_found');
  expectError(await a.call('GET', `/v1/calls/${ids.call}`), 404, 'not_found', 'call_id');
  const list = (await a.call('GET', '/v1/calls')).json() as { data: Array<{ call_id: string }> };
  expect(list.data.map((c) => c.call_id)).not.toContain(ids.call);
  const sessions = (await a.call('GET', '/v1/sessions')).json() as { data: Array<{ session_id: string }> };
  expect(sessions.data.map((s) => s.session_id)).not.toContain(ids.session);
}

describe('reads of a purged session', () => {
  it("answer not_found after the daemon's own purge, though the session was in the ended window", async () => {
    const a = (t = await makeTestApp({}, { nowS: () => clock }));
    const ids = await endedCall(a);
    expect((await a.call('GET', `/v1/sessions/${ids.session}`)).statusCode).toBe(200);
    expect(a.runtime.services.sessions.cacheSizes().ended).toBe(1);
    clock = START + 3600;
    const done = await a.runtime.services.retention.purge({ before: START + 60, tenant: null });
    expect(done).toMatchObject({ sessions: 1, calls: 1 });
    expect(a.runtime.services.sessions.cacheSizes().ended).toBe(0);
    await expectGone(a, ids);
  });

  it('answer not_found after another process purged it (vagent admin purge beside the daemon)', async () => {
    const a = (t = await makeTestApp({}, { nowS: () => clock }));
    const ids = await endedCall(a);
    expect((await a.call('GET', `/v1/sessions/${ids.session}`)).statusCode).toBe(200);
    clock = START + 3600;
    const admin = openRuntime(a.settings, { recover: false, nowS: () => clock });
    try {
      expect(await admin.services.retention.purge({ before: START + 60, tenant: null })).toMatchObject({ sessions: 1, calls: 1 });
    } finally {
      admin.close();
    }
    // The daemon notices another process's commit within EXTERNAL_CHECK_MS.
    await new Promise((resolve) => setTimeout(resolve, EXTERNAL_CHECK_MS + 20));
    await expectGone(a, ids);
  });

  it('a session held in memory whose row is gone answers not_found, not an error', async () => {
    const a = (t = await makeTestApp({}, { nowS: () => clock }));
    const ids = await endedCall(a);
    expect((await a.call('GET', `/v1/sessions/${ids.session}`)).statusCode).toBe(200);
    // The row goes behind the cache's back (as in the moment between another process's purge and the daemon noticing it).
    const repos = a.runtime.services.repos;
    const n = Number(ids.session.slice(3));
    const seq = repos.sessions.get(n)!.seq;
    repos.store.writeNow(() => {
      repos.store.db.prepare('DELETE FROM session_turns WHERE session_seq = ?').run(seq);
      repos.store.db.prepare('DELETE FROM calls WHERE id = ?').run(n);
      repos.store.db.prepare('DELETE FROM sessions WHERE seq = ?').run(seq);
    });
    expectError(await a.call('GET', `/v1/sessions/${ids.session}`), 404, 'not_found', 'session_id');
  });
});
