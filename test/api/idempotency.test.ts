/**
 * `Idempotency-Key` on every state-changing `/v1` call (docs/api-decisions.md
 * "Idempotency"; docs/unit-of-work.md "Where idempotency lives").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { createNumber, createTrunk, enc, expectError, expectOk, listNumbers, listTrunks, type TrunkBody } from '../support/expect.js';

const TRUNK = { address: 'sip.example-carrier.in', name: 'primary', numbers: ['+919876543210'] };
const DID = '+919876543210';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await t.close();
});

const withKey = (key: string, extra: { key?: string } = {}) => ({ ...extra, headers: { 'idempotency-key': key } });
const row = (key: string, tenant = 'default') => t.runtime.services.repos.idempotency.get(tenant, key);

describe('replay', () => {
  it('replays the first response byte for byte, with Idempotency-Replayed, without running the handler', async () => {
    const first = await t.call('POST', '/v1/trunks', TRUNK, withKey('create-1'));
    expectOk(first, 201);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    const again = await t.call('POST', '/v1/trunks', TRUNK, withKey('create-1'));
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.headers['content-type']).toMatch(/^application\/json/);
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await listTrunks(t)).toHaveLength(1);
  });

  it('replays a session opened under a key byte for byte from its deflated record; a plain record of an older version replays too', async () => {
    await t.agent('ag_replay');
    const first = await t.call('POST', '/v1/sessions', { agent_id: 'ag_replay', context: { note: 'x'.repeat(300) } }, withKey('open-1'));
    expectOk(first, 201);
    const { db } = t.runtime.services.repos.store;
    const stored = db.prepare("SELECT body, body_z FROM idempotency WHERE key = 'open-1'").get() as {
      body: string | null;
      body_z: Buffer | null;
    };
    expect(stored.body).toBeNull();
    expect(stored.body_z!.length).toBeLessThan(Buffer.byteLength(first.body));
    const again = await t.call('POST', '/v1/sessions', { agent_id: 'ag_replay', context: { note: 'x'.repeat(300) } }, withKey('open-1'));
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([201, 'true', first.body]);

    // A record written before bodies were deflated: its text in body, body_z NULL.
    db.prepare("UPDATE idempotency SET body = ?, body_z = NULL WHERE key = 'open-1'").run(first.body);
    const old = await t.call('POST', '/v1/sessions', { agent_id: 'ag_replay', context: { note: 'x'.repeat(300) } }, withKey('open-1'));
    expect([old.statusCode, old.headers['idempotency-replayed'], old.body]).toEqual([201, 'true', first.body]);
  });

  it("stores a turn's response plain however long, and replays it byte for byte", async () => {
    await t.agent('ag_replay');
    const opened = await t.call('POST', '/v1/sessions', { agent_id: 'ag_replay' });
    const id = (JSON.parse(opened.body) as { session_id: string }).session_id;
    const first = await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello there' }, withKey('turn-1'));
    expectOk(first, 200);
    expect(Buffer.byteLength(first.body)).toBeGreaterThan(512); // long enough to be deflated, were it another response
    const { db } = t.runtime.services.repos.store;
    const stored = db.prepare("SELECT body, body_z FROM idempotency WHERE key = 'turn-1'").get() as {
      body: string | null;
      body_z: Buffer | null;
    };
    expect(stored).toEqual({ body: first.body, body_z: null });
    const again = await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'hello there' }, withKey('turn-1'));
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([200, 'true', first.body]);
  });

  it('treats a body with its keys reordered as the same request', async () => {
    const first = await t.call('POST', '/v1/trunks', { address: 'sip.a.in', name: 'x' }, withKey('order'));
    const again = await t.call('POST', '/v1/trunks', { name: 'x', address: 'sip.a.in' }, withKey('order'));
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    expect(await listTrunks(t)).toHaveLength(1);
  });

  it('without a key, every POST runs', async () => {
    await createTrunk(t, TRUNK);
    await createTrunk(t, TRUNK);
    expect(await listTrunks(t)).toHaveLength(2);
  });

  it('replays POST /v1/numbers and bind as well', async () => {
    await t.agent('ag_one');
    await t.agent('ag_two');
    const first = await t.call('POST', '/v1/numbers', { number: DID }, withKey('num'));
    const again = await t.call('POST', '/v1/numbers', { number: DID }, withKey('num'));
    expect([first.statusCode, again.statusCode]).toEqual([201, 201]);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    const bind1 = await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_one' }, withKey('bind'));
    expectOk(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_two' }), 200);
    const bind2 = await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_one' }, withKey('bind'));
    expect(bind2.headers['idempotency-replayed']).toBe('true');
    expect(bind2.body).toBe(bind1.body);
    // the replay did not re-run the bind: the later binding stands
    expect((await listNumbers(t))[0]!.agent_id).toBe('ag_two');
  });

  it('DELETE honours the key: the retry replays the 200 instead of answering 404', async () => {
    const trunk = await createTrunk(t);
    const first = await t.call('DELETE', `/v1/trunks/${trunk.id}`, undefined, withKey('del'));
    expect(expectOk(first, 200)).toEqual({ id: trunk.id, deleted: true });
    const again = await t.call('DELETE', `/v1/trunks/${trunk.id}`, undefined, withKey('del'));
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expectError(await t.call('DELETE', `/v1/trunks/${trunk.id}`), 404, 'trunk_not_found');
    expectError(await t.call('DELETE', `/v1/trunks/${trunk.id}`, undefined, withKey('del-2')), 404, 'trunk_not_found');
  });

  it('DELETE of a number honours the key', async () => {
    await createNumber(t, { number: DID });
    const first = await t.call('DELETE', `/v1/numbers/${enc(DID)}`, undefined, withKey('del-num'));
    expectOk(first, 200);
    const again = await t.call('DELETE', `/v1/numbers/${enc(DID)}`, undefined, withKey('del-num'));
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([200, 'true', first.body]);
  });

  it('ignores the key on GET', async () => {
    const trunk = await createTrunk(t);
    const res = await t.call('GET', '/v1/trunks', undefined, withKey('get'));
    expectOk(res, 200);
    expect(res.headers['idempotency-replayed']).toBeUndefined();
    expect(row('get')).toBeUndefined();
    expectOk(await t.call('GET', `/v1/trunks/${trunk.id}`, undefined, withKey('')), 200);
  });
});

describe('key reuse and scope', () => {
  it('rejects the same key with a different body (422) and keeps the first response', async () => {
    const first = await t.call('POST', '/v1/trunks', TRUNK, withKey('k'));
    expectError(
      await t.call('POST', '/v1/trunks', { ...TRUNK, name: 'other' }, withKey('k')),
      422,
      'idempotency_key_reuse',
      'Idempotency-Key',
    );
    const again = await t.call('POST', '/v1/trunks', TRUNK, withKey('k'));
    expect(again.body).toBe(first.body);
    expect(await listTrunks(t)).toHaveLength(1);
  });

  it('rejects the same key on a different path', async () => {
    await createTrunk(t, TRUNK);
    expectOk(await t.call('POST', '/v1/trunks', { address: 'sip.a.in' }, withKey('shared')), 201);
    expectError(await t.call('POST', '/v1/numbers', { number: DID }, withKey('shared')), 422, 'idempotency_key_reuse');
    expect(await listNumbers(t)).toEqual([]);
  });

  it('rejects the same key on a different method of the same resource', async () => {
    const trunk = await createTrunk(t);
    expectOk(await t.call('DELETE', `/v1/trunks/${trunk.id}`, undefined, withKey('m')), 200);
    expectError(await t.call('POST', '/v1/trunks', TRUNK, withKey('m')), 422, 'idempotency_key_reuse');
  });

  it('scopes keys per tenant: the same key creates in both tenants', async () => {
    const keyB = t.tenantKey('acme');
    const a = expectOk<TrunkBody>(await t.call('POST', '/v1/trunks', TRUNK, withKey('same')), 201);
    const resB = await t.call('POST', '/v1/trunks', TRUNK, withKey('same', { key: keyB }));
    const b = expectOk<TrunkBody>(resB, 201);
    expect(resB.headers['idempotency-replayed']).toBeUndefined();
    expect(b.id).not.toBe(a.id);
    expect((await listTrunks(t)).map((x) => x.id)).toEqual([a.id]);
    expect((await listTrunks(t, keyB)).map((x) => x.id)).toEqual([b.id]);
  });

  it.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['non-ASCII', 'clé-ключ-キー'],
    ['a control character', 'abc\u0001def'],
    ['a tab', 'abc\tdef'],
    ['DEL', 'abc\u007fdef'],
  ])('rejects a key that is %s with invalid_request and runs nothing', async (_label, key) => {
    expectError(await t.call('POST', '/v1/trunks', TRUNK, withKey(key)), 400, 'invalid_request', 'Idempotency-Key');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('accepts a key of exactly 255 printable characters', async () => {
    const key = `${'~ !'.repeat(85)}`;
    expect(key).toHaveLength(255);
    expectOk(await t.call('POST', '/v1/trunks', TRUNK, withKey(key)), 201);
    expect((await t.call('POST', '/v1/trunks', TRUNK, withKey(key))).headers['idempotency-replayed']).toBe('true');
  });
});

describe('stored 4xx responses', () => {
  it('stores and replays a 400 for an invalid body', async () => {
    const first = await t.call('POST', '/v1/trunks', { name: 'no address' }, withKey('bad'));
    expectError(first, 400, 'invalid_request', 'address');
    const again = await t.call('POST', '/v1/trunks', { name: 'no address' }, withKey('bad'));
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([400, 'true', first.body]);
    expect(row('bad')).toMatchObject({ state: 'done', status: 400 });
    // a corrected body needs a new key
    expectError(await t.call('POST', '/v1/trunks', TRUNK, withKey('bad')), 422, 'idempotency_key_reuse');
  });

  it('replays a stored 409 even after the conflict is gone (the handler does not run again)', async () => {
    await createNumber(t, { number: DID });
    const first = await t.call('POST', '/v1/numbers', { number: DID }, withKey('dup'));
    expectError(first, 409, 'already_exists');
    expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`), 200);
    const again = await t.call('POST', '/v1/numbers', { number: DID }, withKey('dup'));
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([409, 'true', first.body]);
    expect(await listNumbers(t)).toEqual([]);
  });

  it('does not store the idempotency errors themselves', async () => {
    await t.call('POST', '/v1/trunks', TRUNK, withKey('orig'));
    await t.call('POST', '/v1/trunks', { address: 'sip.other.in' }, withKey('orig'));
    expect(row('orig')).toMatchObject({ state: 'done', status: 201 });
  });
});

describe('concurrency and failures', () => {
  it('50 concurrent identical requests create exactly one trunk', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => t.call('POST', '/v1/trunks', TRUNK, withKey('burst'))));
    const trunks = await listTrunks(t);
    expect(trunks).toHaveLength(1);
    const created = results.filter((r) => r.statusCode === 201);
    const busy = results.filter((r) => r.statusCode === 409);
    expect(created.length + busy.length).toBe(50);
    expect(created.length).toBeGreaterThanOrEqual(1);
    for (const r of created) expect(r.json()).toEqual(trunks[0]);
    expect(created.filter((r) => r.headers['idempotency-replayed'] === undefined)).toHaveLength(1);
    for (const r of busy) expectError(r, 409, 'idempotency_key_in_progress', 'Idempotency-Key');
    // once settled, a retry replays
    const after = await t.call('POST', '/v1/trunks', TRUNK, withKey('burst'));
    expect(after.headers['idempotency-replayed']).toBe('true');
    expect(after.json()).toEqual(trunks[0]);
  });

  it("a 5xx leaves the key reusable, leaks nothing internal, and keeps none of the handler's writes", async () => {
    const { trunks } = t.runtime.services;
    const real = trunks.createTx.bind(trunks);
    const spy = vi.spyOn(trunks, 'createTx').mockImplementationOnce((tx, principal, input) => {
      real(tx, principal, input); // writes the trunk, then fails: the write must be rolled back
      throw new Error('disk controller on fire at /var/lib/secret-path');
    });
    const failed = await t.call('POST', '/v1/trunks', TRUNK, withKey('flaky'));
    const err = expectError(failed, 500, 'internal_error', null);
    expect(failed.body).not.toContain('fire');
    expect(failed.body).not.toContain('secret-path');
    expect(err.message).toMatch(/X-Request-Id/i);
    expect(row('flaky')).toBeUndefined();
    expect(await listTrunks(t)).toEqual([]);

    const retry = await t.call('POST', '/v1/trunks', TRUNK, withKey('flaky'));
    const trunk = expectOk<TrunkBody>(retry, 201);
    expect(retry.headers['idempotency-replayed']).toBeUndefined();
    expect(spy).toHaveBeenCalledTimes(2);
    expect(await listTrunks(t)).toEqual([trunk]);
    expect((await t.call('POST', '/v1/trunks', TRUNK, withKey('flaky'))).body).toBe(retry.body);
  });

  it("a response not in its schema's exact shape fails in a checking app, and nothing it wrote is kept", async () => {
    const { trunks } = t.runtime.services;
    const real = trunks.createTx.bind(trunks);
    vi.spyOn(trunks, 'createTx').mockImplementationOnce(
      (tx, principal, input) => ({ ...real(tx, principal, input), tenant_seq: 7 }) as never,
    );
    expectError(await t.call('POST', '/v1/trunks', TRUNK, withKey('shape')), 500, 'internal_error');
    expect(row('shape')).toBeUndefined();
    expect(await listTrunks(t)).toEqual([]);
    expect(t.app.checkResponses).toBe(true);
  });

  it('a request with a key still in progress is refused; recover() releases a crashed claim', async () => {
    const { idempotency, repos } = t.runtime.services;
    const print = idempotency.fingerprint('POST', '/v1/trunks', TRUNK);
    repos.store.writeNow(() => repos.idempotency.claim('default', 'crashed', print, Date.now() / 1000));
    expectError(await t.call('POST', '/v1/trunks', TRUNK, withKey('crashed')), 409, 'idempotency_key_in_progress');
    expect(await listTrunks(t)).toEqual([]);
    expect(idempotency.recover()).toEqual({ released: 1 });
    expect(row('crashed')).toBeUndefined();
    const res = await t.call('POST', '/v1/trunks', TRUNK, withKey('crashed'));
    expectOk(res, 201);
    expect(res.headers['idempotency-replayed']).toBeUndefined();
    expect(await listTrunks(t)).toHaveLength(1);
    // recover() leaves completed records alone
    expect(idempotency.recover()).toEqual({ released: 0 });
    expect(row('crashed')).toMatchObject({ state: 'done', status: 201 });
  });
});

describe('retention', () => {
  const HOUR = 3600;

  function storeOld(key: string, body: unknown, ageS: number, stored = '{"stale":true}'): void {
    const { repos } = t.runtime.services;
    repos.store.writeNow(() =>
      repos.idempotency.store(
        'default',
        key,
        t.runtime.services.idempotency.fingerprint('POST', '/v1/trunks', body),
        201,
        stored,
        Date.now() / 1000 - ageS,
      ),
    );
  }

  it('runs an expired key anew instead of replaying it', async () => {
    storeOld('old', TRUNK, 25 * HOUR);
    const res = await t.call('POST', '/v1/trunks', TRUNK, withKey('old'));
    const trunk = expectOk<TrunkBody>(res, 201);
    expect(res.headers['idempotency-replayed']).toBeUndefined();
    expect(res.body).not.toContain('stale');
    expect(await listTrunks(t)).toEqual([trunk]);
    expect(row('old')!.body).toBe(res.body);
  });

  it('lets an expired key be used with a different body', async () => {
    storeOld('old-diff', { address: 'sip.previous.in' }, 25 * HOUR);
    expectOk(await t.call('POST', '/v1/trunks', TRUNK, withKey('old-diff')), 201);
  });

  it('still replays a record inside the retention period', async () => {
    storeOld('recent', TRUNK, 23 * HOUR, '{"from":"store"}');
    const res = await t.call('POST', '/v1/trunks', TRUNK, withKey('recent'));
    expect([res.statusCode, res.headers['idempotency-replayed'], res.body]).toEqual([201, 'true', '{"from":"store"}']);
    expect(await listTrunks(t)).toEqual([]);
  });

  it('purges records older than the retention period, and only those', async () => {
    const { idempotency } = t.runtime.services;
    storeOld('expired-1', TRUNK, 25 * HOUR);
    storeOld('expired-2', TRUNK, 48 * HOUR);
    storeOld('kept', TRUNK, 1 * HOUR);
    expect(await idempotency.purgeExpired()).toBe(2);
    expect(row('expired-1')).toBeUndefined();
    expect(row('expired-2')).toBeUndefined();
    expect(row('kept')).toBeDefined();
    // Start-up leaves expired records to the background purge (start-up stays flat in the table's size).
    storeOld('expired-3', TRUNK, 30 * HOUR);
    expect(idempotency.recover()).toEqual({ released: 0 });
    expect(row('expired-3')).toBeDefined();
    expect(await idempotency.purgeExpired()).toBe(1);
    expect(row('expired-3')).toBeUndefined();
  });

  it('honours the idempotency_retention_hours setting', async () => {
    await t.close();
    t = await makeTestApp({ idempotency_retention_hours: 1e-6 }); // 3.6 ms
    const first = expectOk<TrunkBody>(await t.call('POST', '/v1/trunks', TRUNK, withKey('short')), 201);
    await sleep(20);
    const second = await t.call('POST', '/v1/trunks', TRUNK, withKey('short'));
    expect(second.headers['idempotency-replayed']).toBeUndefined();
    expect(expectOk<TrunkBody>(second, 201).id).not.toBe(first.id);
    expect(await listTrunks(t)).toHaveLength(2);
  });
});
