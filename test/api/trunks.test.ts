/**
 * `/v1/trunks` (`TrunkSchema` in src/contract/trunks.ts; docs/api-decisions.md "Trunks", "Errors").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import {
  createNumber,
  createTrunk,
  expectError,
  expectOk,
  listNumbers,
  listTrunks,
  type ListBody,
  type TrunkBody,
} from '../support/expect.js';

const TRUNK_ID = /^tk_[a-z2-7]{20}$/;
const TRUNK_KEYS = ['address', 'created_at', 'has_credentials', 'id', 'name', 'numbers', 'provider_trunk_id'];

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('POST /v1/trunks', () => {
  it('creates a trunk with every field and returns 201 without the credentials', async () => {
    const before = Date.now() / 1000;
    const res = await t.call('POST', '/v1/trunks', {
      name: 'Mumbai primary',
      address: 'sip.example-carrier.in:5061',
      numbers: ['+919876543210', '+442071234567', '+919876543210'],
      provider_trunk_id: 'ST_abc123',
      auth: { username: 'acct-42', password: 'hunter2-long-password' },
    });
    const trunk = expectOk<TrunkBody>(res, 201);
    expect(Object.keys(trunk).sort()).toEqual(TRUNK_KEYS);
    expect(trunk.id).toMatch(TRUNK_ID);
    expect(trunk).toMatchObject({
      name: 'Mumbai primary',
      address: 'sip.example-carrier.in:5061',
      numbers: ['+919876543210', '+442071234567'],
      provider_trunk_id: 'ST_abc123',
      has_credentials: true,
    });
    expect(trunk.created_at).toBeGreaterThanOrEqual(before - 1);
    expect(trunk.created_at).toBeLessThanOrEqual(Date.now() / 1000 + 1);
    expect(res.body).not.toContain('hunter2');
    expect(res.body).not.toContain('acct-42');
  });

  it('reports unset optional fields as null / empty and has_credentials false', async () => {
    const trunk = await createTrunk(t, { address: '203.0.113.7' });
    expect(trunk).toEqual({
      id: trunk.id,
      name: null,
      address: '203.0.113.7',
      numbers: [],
      provider_trunk_id: null,
      has_credentials: false,
      created_at: trunk.created_at,
    });
  });

  it('treats explicit nulls as unset', async () => {
    const trunk = await createTrunk(t, { address: 'sip.a.in', name: null, numbers: null, provider_trunk_id: null, auth: null });
    expect(trunk).toMatchObject({ name: null, numbers: [], provider_trunk_id: null, has_credentials: false });
  });

  it('ignores unknown body fields', async () => {
    const res = await t.call('POST', '/v1/trunks', { address: 'sip.a.in', colour: 'blue', id: 'tk_aaaaaaaaaaaaaaaaaaaa' });
    const trunk = expectOk<TrunkBody>(res, 201);
    expect(trunk).not.toHaveProperty('colour');
    expect(trunk.id).not.toBe('tk_aaaaaaaaaaaaaaaaaaaa');
  });

  it('accepts IPv6 addresses with a port', async () => {
    const trunk = await createTrunk(t, { address: '[2001:db8::1]:5060' });
    expect(trunk.address).toBe('[2001:db8::1]:5060');
  });

  it('rejects a missing address with invalid_request (param address)', async () => {
    expectError(await t.call('POST', '/v1/trunks', { name: 'no address' }), 400, 'invalid_request', 'address');
    expect(await listTrunks(t)).toEqual([]);
  });

  it.each([
    ['a sip: URI', 'sip:carrier.example.in'],
    ['a path', 'carrier.example.in/trunk'],
    ['credentials', 'user:pw@carrier.example.in'],
    ['a space', 'carrier example.in'],
    ['an empty string', ''],
    ['port 0', 'carrier.example.in:0'],
    ['port 65536', 'carrier.example.in:65536'],
  ])('rejects an address with %s', async (_label, address) => {
    expectError(await t.call('POST', '/v1/trunks', { address }), 400, 'invalid_request', 'address');
  });

  it('rejects a numbers entry that is not E.164, naming its index', async () => {
    const res = await t.call('POST', '/v1/trunks', { address: 'sip.a.in', numbers: ['+919876543210', '9876543210'] });
    expectError(res, 400, 'invalid_request', 'numbers[1]');
    expect(await listTrunks(t)).toEqual([]);
  });

  it.each([['+0123456789'], ['+1'], ['+1234567890123456'], ['+91 98765 43210'], ['tel:+919876543210']])(
    'rejects the caller-ID number %j',
    async (bad) => {
      expectError(await t.call('POST', '/v1/trunks', { address: 'sip.a.in', numbers: [bad] }), 400, 'invalid_request', 'numbers[0]');
    },
  );

  it.each([
    ['a string', 'user:password'],
    ['a number', 42],
    ['an array', ['user', 'password']],
    ['true', true],
  ])('rejects auth given as %s', async (_label, auth) => {
    expectError(await t.call('POST', '/v1/trunks', { address: 'sip.a.in', auth }), 400, 'invalid_request', 'auth');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('rejects auth without a password or a username', async () => {
    expectError(
      await t.call('POST', '/v1/trunks', { address: 'sip.a.in', auth: { username: 'u' } }),
      400,
      'invalid_request',
      'auth.password',
    );
    expectError(
      await t.call('POST', '/v1/trunks', { address: 'sip.a.in', auth: { password: 'p' } }),
      400,
      'invalid_request',
      'auth.username',
    );
  });
});

describe('GET /v1/trunks', () => {
  it("lists the tenant's trunks oldest first, unpaginated", async () => {
    const a = await createTrunk(t, { address: 'sip.a.in', name: 'zulu' });
    const b = await createTrunk(t, { address: 'sip.b.in', name: 'alpha' });
    const c = await createTrunk(t, { address: 'sip.c.in', name: 'mike' });
    const list = expectOk<ListBody<TrunkBody>>(await t.call('GET', '/v1/trunks'), 200);
    expect(list.has_more).toBe(false);
    expect(list.next_cursor).toBeNull();
    expect(list.data.map((x) => x.id)).toEqual([a.id, b.id, c.id]);
    expect(list.data).toEqual([a, b, c]);
  });

  it('returns an empty list for a tenant without trunks', async () => {
    const list = expectOk<ListBody<TrunkBody>>(await t.call('GET', '/v1/trunks'), 200);
    expect(list).toEqual({ data: [], has_more: false, next_cursor: null });
  });

  it('never shows credentials in the list', async () => {
    await createTrunk(t, { address: 'sip.a.in', auth: { username: 'list-user', password: 'list-password' } });
    const res = await t.call('GET', '/v1/trunks');
    expect(res.body).not.toContain('list-password');
    expect(res.body).not.toContain('list-user');
    expect(res.json().data[0].has_credentials).toBe(true);
    expect(res.json().data[0]).not.toHaveProperty('auth');
  });
});

describe('GET /v1/trunks/{trunk_id}', () => {
  it('returns the trunk as created', async () => {
    const created = await createTrunk(t, { address: 'sip.a.in', name: 'one', numbers: ['+14155550100'] });
    expect(expectOk(await t.call('GET', `/v1/trunks/${created.id}`), 200)).toEqual(created);
  });

  it.each([
    ['an unknown well-formed id', 'tk_aaaaaaaaaaaaaaaaaaaa'],
    ['a malformed id', 'tk_NOT-VALID'],
    ['another kind of id', 'num_aaaaaaaaaaaaaaaaaaaa'],
    ['a bare word', 'trunk'],
  ])('answers trunk_not_found for %s', async (_label, id) => {
    expectError(await t.call('GET', `/v1/trunks/${id}`), 404, 'trunk_not_found', 'trunk_id');
  });
});

describe('DELETE /v1/trunks/{trunk_id}', () => {
  it('deletes the trunk and answers {id, deleted: true}', async () => {
    const keep = await createTrunk(t, { address: 'sip.keep.in' });
    const gone = await createTrunk(t, { address: 'sip.gone.in' });
    const res = await t.call('DELETE', `/v1/trunks/${gone.id}`);
    expect(expectOk(res, 200)).toEqual({ id: gone.id, deleted: true });
    expectError(await t.call('GET', `/v1/trunks/${gone.id}`), 404, 'trunk_not_found');
    expect((await listTrunks(t)).map((x) => x.id)).toEqual([keep.id]);
    expectError(await t.call('DELETE', `/v1/trunks/${gone.id}`), 404, 'trunk_not_found', 'trunk_id');
  });

  it.each([
    ['an unknown well-formed id', 'tk_bbbbbbbbbbbbbbbbbbbb'],
    ['a malformed id', 'tk_1'],
  ])('answers trunk_not_found for %s and deletes nothing', async (_label, id) => {
    const keep = await createTrunk(t);
    expectError(await t.call('DELETE', `/v1/trunks/${id}`), 404, 'trunk_not_found', 'trunk_id');
    expect(await listTrunks(t)).toEqual([keep]);
  });

  it('leaves the numbers that referenced the trunk, with trunk_id null', async () => {
    const gone = await createTrunk(t, { address: 'sip.gone.in' });
    const other = await createTrunk(t, { address: 'sip.other.in' });
    const n1 = await createNumber(t, {
      number: '+919876543210',
      trunk_id: gone.id,
      agent_id: 'ag_clinic_booking',
      label: 'main',
    });
    const n2 = await createNumber(t, { number: '+919876543211', trunk_id: other.id });
    expectOk(await t.call('DELETE', `/v1/trunks/${gone.id}`), 200);
    expect(await listNumbers(t)).toEqual([{ ...n1, trunk_id: null }, n2]);
  });
});
