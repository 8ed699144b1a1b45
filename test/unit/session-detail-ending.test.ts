/**
 * A session being ended, between its end's commit and that commit's WAL sync: the database
 * already says ended (`GET /v1/sessions`, `GET /v1/calls/{id}` read it), so the session detail
 * must say so too, not the in-memory status that changes only once the sync has finished.
 * The sync is held by stubbing `fs.fdatasync` (the store syncs its WAL with it after each
 * group commit).
 */
import fs from 'node:fs';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
  await t.agent('ag_ending');
});
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

describe('session detail while the end is being made durable', () => {
  it('says ended as soon as the session list does', async () => {
    const opened = await t.call('POST', '/v1/sessions', { agent_id: 'ag_ending' });
    expect(opened.statusCode).toBe(201);
    const id = (opened.json() as { session_id: string }).session_id;

    const held: Array<(err: NodeJS.ErrnoException | null) => void> = [];
    vi.spyOn(fs, 'fdatasync').mockImplementation(((_fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      held.push(cb);
    }) as typeof fs.fdatasync);
    const ending = t.call('POST', `/v1/sessions/${id}/end`);

    // Wait until the end is committed (the list reads the database) while its sync is held.
    let listed: string | undefined;
    for (let i = 0; i < 200 && listed !== 'ended'; i++) {
      await new Promise((r) => setImmediate(r));
      const list = await t.call('GET', '/v1/sessions');
      listed = (list.json() as { data: Array<{ session_id: string; status: string }> }).data.find((s) => s.session_id === id)?.status;
    }
    expect(listed).toBe('ended');
    expect(held.length).toBeGreaterThan(0);

    const detail = await t.call('GET', `/v1/sessions/${id}`);
    expect(detail.statusCode).toBe(200);
    const session = (detail.json() as { session: { status: string; ended_at: number | null } }).session;
    expect(session.status).toBe('ended');
    expect(session.ended_at).toEqual(expect.any(Number));

    vi.restoreAllMocks();
    for (const cb of held) cb(null);
    expect((await ending).statusCode).toBe(200);
  });
});
