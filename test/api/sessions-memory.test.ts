/**
 * Sessions held in memory (README.md "What grows on disk, and what bounds it";
 * src/app/session-memory.ts): open sessions and a bounded window of recently
 * ended ones; an ended session beyond the window is read back from the database and every
 * response about it (detail, `/end` again with or without an Idempotency-Key, a refused
 * turn) is the same as while it was held. Close-grace sessions stay open, and correct.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_MAX_ENDED_CACHED } from '../../src/app/session-types.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

let t: TestApp | undefined;
let clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;

afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function app(sessionCache: { open?: number; ended?: number }): Promise<TestApp> {
  t = await makeTestApp({}, { speech: testSpeech(), nowS: () => clock, sessionCache });
  return t;
}

async function open(a: TestApp, body: Record<string, unknown> = { agent_id: 'ag_clinic_booking' }): Promise<string> {
  const res = await a.call('POST', '/v1/sessions', body);
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { session_id: string }).session_id;
}

async function turn(a: TestApp, id: string, text: string): Promise<Record<string, unknown>> {
  const res = await a.call('POST', `/v1/sessions/${id}/turn`, { text });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Record<string, unknown>;
}

async function end(a: TestApp, id: string, headers: Record<string, string> = {}) {
  const res = await a.call('POST', `/v1/sessions/${id}/end`, undefined, { headers });
  expect(res.statusCode, res.body).toBe(200);
  return res;
}

/** Opens and ends `n` sessions with a turn each. */
async function churn(a: TestApp, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = await open(a);
    await turn(a, id, 'Asha');
    await end(a, id);
  }
}

/** A booked appointment (summary outcome `completed`), ended. */
async function booked(a: TestApp): Promise<string> {
  const id = await open(a, {
    agent_id: 'ag_clinic_booking',
    customer_name: 'Priya',
    context: { now: '2026-11-21T10:00:00+05:30' },
  });
  for (const text of [
    'My name is Priya Sharma',
    'yes',
    'tomorrow',
    'haan',
    'half past ten in the morning',
    'yes that is right',
    'nine eight seven six five four three two one zero',
    'correct',
    'fever and cough since two days',
  ])
    await turn(a, id, text);
  await end(a, id);
  return id;
}

/** Everything a caller can read of session `id`, as status and body. */
async function reads(a: TestApp, id: string, key: string) {
  const detail = await a.call('GET', `/v1/sessions/${id}`);
  const again = await a.call('POST', `/v1/sessions/${id}/end`);
  const keyed = await a.call('POST', `/v1/sessions/${id}/end`, undefined, { headers: { 'idempotency-key': key } });
  const replay = await a.call('POST', `/v1/sessions/${id}/end`, undefined, { headers: { 'idempotency-key': key } });
  const refused = await a.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello?' });
  expect(replay.headers['idempotency-replayed']).toBe('true');
  expectError(refused, 409, 'session_already_ended');
  return [detail, again, keyed, replay, refused].map((r) => ({ status: r.statusCode, body: r.json() as unknown }));
}

describe('the session cache', () => {
  it('holds at most the window of ended sessions, and no ended session among the open ones', async () => {
    const a = await app({ ended: 3 });
    await churn(a, 12);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: 3 });
    const id = await open(a);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 1, ended: 3 });
    await end(a, id);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: 3 });
  });

  it(`keeps ${DEFAULT_MAX_ENDED_CACHED} ended sessions by default`, async () => {
    const a = await app({});
    const n = DEFAULT_MAX_ENDED_CACHED + 20;
    for (let i = 0; i < n; i++) await end(a, await open(a));
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: DEFAULT_MAX_ENDED_CACHED });
    expect(a.runtime.services.sessions.cachedCount()).toBe(DEFAULT_MAX_ENDED_CACHED);
  }, 60_000);

  it('reading an evicted ended session does not grow the window beyond its bound', async () => {
    const a = await app({ ended: 2 });
    const first = await open(a);
    await end(a, first);
    await churn(a, 3);
    expect((await a.call('GET', `/v1/sessions/${first}`)).statusCode).toBe(200);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: 2 });
  });

  it('answers every read of an evicted ended session exactly as while it was held', async () => {
    const a = await app({ ended: 1 });
    const done = await booked(a);
    const abandoned = await open(a);
    await turn(a, abandoned, 'Priya');
    await end(a, abandoned);
    // `abandoned` is the one ended session held; `done` was evicted when it ended.
    const held = await reads(a, abandoned, 'held');
    const evictedDone = await reads(a, done, 'done-1');
    await churn(a, 2);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: 1 });
    const evicted = await reads(a, abandoned, 'evicted');
    // The keyed /end's first answer is the same body; its replay replays it.
    expect(evicted).toEqual(held);
    expect((held[0]!.body as { session: { outcome: string } }).session.outcome).toBe('abandoned');

    // `done` again: its reads after eviction equal the ones right after it was evicted (its
    // first read loaded it back into the window), and show the completed booking.
    await churn(a, 2);
    expect(await reads(a, done, 'done-2')).toEqual(evictedDone);
    const detail = evictedDone[0]!.body as {
      turns: unknown[];
      session: { status: string; outcome: string; steps: Array<{ id: string; value: unknown }> };
    };
    expect(detail.turns).toHaveLength(9);
    expect(detail.session).toMatchObject({ status: 'ended', outcome: 'completed' });
    expect(detail.session.steps.find((s) => s.id === 'phone')?.value).toBe('9876543210');
    expect((evictedDone[1]!.body as { summary: { outcome: string } }).summary.outcome).toBe('completed');
  });

  it('an evicted ended session answers as it did right after its end', async () => {
    const a = await app({ ended: 1 });
    const id = await open(a);
    await turn(a, id, 'Priya');
    const ended = await end(a, id);
    const detail = await a.call('GET', `/v1/sessions/${id}`);
    await churn(a, 2);
    expect(a.runtime.services.sessions.cacheSizes().ended).toBe(1);
    expect((await a.call('GET', `/v1/sessions/${id}`)).json()).toEqual(detail.json());
    expect((await end(a, id)).json()).toEqual(ended.json());
    expect((await end(a, id, { 'idempotency-key': 'late' })).json()).toEqual(ended.json());
    expectError(await a.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello' }), 409, 'session_already_ended');
  });
});

describe('close-grace with a small cache', () => {
  it('a session in close-grace stays open in memory while ended ones come and go, then ends on the next turn', async () => {
    const a = await app({ ended: 0 });
    const id = await open(a);
    const bye = await turn(a, id, 'bye');
    expect(bye.ended).toBe(false);
    await churn(a, 3);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 1, ended: 0 });
    expect((await turn(a, id, 'thank you')).ended).toBe(true);
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 0, ended: 0 });
    expectError(await a.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello?' }), 409, 'session_already_ended');
    const detail = (await a.call('GET', `/v1/sessions/${id}`)).json() as { turns: unknown[]; session: { status: string } };
    expect(detail.turns).toHaveLength(2);
    expect(detail.session.status).toBe('ended');
  });

  it('a close-grace session reloaded from the database hears the next turn, or ends when the window lapsed', async () => {
    const a = await app({ open: 1, ended: 0 });
    const heard = await open(a);
    await turn(a, heard, 'bye');
    const lapsed = await open(a);
    await turn(a, lapsed, 'goodbye');
    // Only `lapsed` is held: `heard` reloads, still in its window.
    expect(a.runtime.services.sessions.cacheSizes()).toEqual({ open: 1, ended: 0 });
    expect((await turn(a, heard, 'thank you')).ended).toBe(true);
    await churn(a, 1);
    await open(a);
    clock += 9; // past the 8 s default window
    expectError(await a.call('POST', `/v1/sessions/${lapsed}/turn`, { text: 'still there?' }), 409, 'session_already_ended');
    const endRes = await end(a, lapsed);
    expect((endRes.json() as { ended: boolean }).ended).toBe(true);
    expect((await a.call('GET', `/v1/sessions/${lapsed}`)).json()).toMatchObject({ session: { status: 'ended' } });
    expect(a.runtime.services.sessions.cacheSizes().ended).toBe(0);
  });
});
