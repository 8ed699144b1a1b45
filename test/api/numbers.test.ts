/**
 * `/v1/numbers` (`NumberSchema` in src/contract/numbers.ts; docs/api-decisions.md "Numbers", "Errors").
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { createNumber, createTrunk, enc, expectError, expectOk, listNumbers, type ListBody, type NumberBody } from '../support/expect.js';

const NUMBER_ID = /^num_[a-z2-7]{20}$/;
const DID = '+919876543210';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

describe('POST /v1/numbers', () => {
  it('registers a number with every field and returns 201', async () => {
    const trunk = await createTrunk(t);
    const before = Date.now() / 1000;
    const res = await t.call('POST', '/v1/numbers', {
      number: DID,
      trunk_id: trunk.id,
      agent_id: 'ag_clinic_booking',
      label: 'Front desk',
    });
    const rec = expectOk<NumberBody>(res, 201);
    expect(rec.id).toMatch(NUMBER_ID);
    expect(rec).toEqual({
      id: rec.id,
      tenant_id: 'default',
      number: DID,
      trunk_id: trunk.id,
      agent_id: 'ag_clinic_booking',
      label: 'Front desk',
      created_at: rec.created_at,
    });
    expect(rec.created_at).toBeGreaterThanOrEqual(before - 1);
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it('reports unset trunk_id, agent_id and label as null', async () => {
    const rec = await createNumber(t, { number: DID });
    expect(Object.keys(rec).sort()).toEqual(['agent_id', 'created_at', 'id', 'label', 'number', 'tenant_id', 'trunk_id']);
    expect(rec).toMatchObject({ trunk_id: null, agent_id: null, label: null });
    const [listed] = await listNumbers(t);
    expect(listed).toMatchObject({ trunk_id: null, agent_id: null, label: null });
  });

  it.each([
    ['digits without +', '919876543210'],
    ['a leading zero after +', '+0919876543210'],
    ['16 digits', '+9198765432101234'],
    ['one digit', '+9'],
    ['spaces', '+91 98765 43210'],
    ['dashes', '+1-415-555-0100'],
    ['letters', '+91987654321O'],
    ['an empty string', ''],
    ['a trailing newline', '+919876543210\n'],
  ])('rejects a number with %s as invalid_request', async (_label, number) => {
    expectError(await t.call('POST', '/v1/numbers', { number }), 400, 'invalid_request', 'number');
    expect(await listNumbers(t)).toEqual([]);
  });

  it('rejects a missing number as invalid_request', async () => {
    expectError(await t.call('POST', '/v1/numbers', { label: 'x' }), 400, 'invalid_request', 'number');
  });

  it('rejects a duplicate number with already_exists (409) and keeps the first', async () => {
    const first = await createNumber(t, { number: DID, label: 'first' });
    expectError(await t.call('POST', '/v1/numbers', { number: DID, label: 'second' }), 409, 'already_exists', 'number');
    expect(await listNumbers(t)).toEqual([first]);
  });

  it('rejects a trunk_id of a missing trunk with trunk_not_found and creates nothing', async () => {
    const res = await t.call('POST', '/v1/numbers', { number: DID, trunk_id: 'tk_aaaaaaaaaaaaaaaaaaaa' });
    expectError(res, 404, 'trunk_not_found', 'trunk_id');
    expect(await listNumbers(t)).toEqual([]);
  });

  it('rejects a trunk_id of a deleted trunk with trunk_not_found', async () => {
    const trunk = await createTrunk(t);
    expectOk(await t.call('DELETE', `/v1/trunks/${trunk.id}`), 200);
    expectError(await t.call('POST', '/v1/numbers', { number: DID, trunk_id: trunk.id }), 404, 'trunk_not_found');
  });
});

describe('GET /v1/numbers', () => {
  it('lists records sorted by number, unpaginated', async () => {
    const inOrder = ['+14155550100', '+442071234567', '+919876543210'];
    for (const number of [inOrder[2], inOrder[0], inOrder[1]]) await createNumber(t, { number });
    const list = expectOk<ListBody<NumberBody>>(await t.call('GET', '/v1/numbers'), 200);
    expect(list.data.map((r) => r.number)).toEqual(inOrder);
    expect(list.has_more).toBe(false);
    expect(list.next_cursor).toBeNull();
  });

  it('returns an empty list for a tenant without numbers', async () => {
    expect(expectOk(await t.call('GET', '/v1/numbers'), 200)).toEqual({ data: [], has_more: false, next_cursor: null });
  });
});

describe('POST /v1/numbers/{number}/bind', () => {
  beforeEach(async () => {
    for (const id of ['ag_reception', 'ag_old', 'ag_new', 'ag_plus', 'ag_lower', 'ag_keep']) await t.agent(id);
  });

  it('binds an agent and returns the updated record (path with %2B)', async () => {
    const rec = await createNumber(t, { number: DID, label: 'desk' });
    const res = await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_reception' });
    expect(expectOk(res, 200)).toEqual({ ...rec, agent_id: 'ag_reception' });
    expect(await listNumbers(t)).toEqual([{ ...rec, agent_id: 'ag_reception' }]);
  });

  it('rebinding replaces the agent', async () => {
    const rec = await createNumber(t, { number: DID, agent_id: 'ag_old' });
    expectOk(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_new' }), 200);
    expect(await listNumbers(t)).toEqual([{ ...rec, agent_id: 'ag_new' }]);
  });

  it('accepts the number with a literal + and with a lower-case %2b', async () => {
    await createNumber(t, { number: DID });
    expect(expectOk(await t.call('POST', `/v1/numbers/${DID}/bind`, { agent_id: 'ag_plus' }), 200)).toMatchObject({
      number: DID,
      agent_id: 'ag_plus',
    });
    expect(expectOk(await t.call('POST', `/v1/numbers/%2b${DID.slice(1)}/bind`, { agent_id: 'ag_lower' }), 200)).toMatchObject({
      agent_id: 'ag_lower',
    });
  });

  it('rejects a body without agent_id as invalid_request and changes nothing', async () => {
    const rec = await createNumber(t, { number: DID, agent_id: 'ag_keep' });
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, {}), 400, 'invalid_request', 'agent_id');
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent: 'ag_x' }), 400, 'invalid_request', 'agent_id');
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it('rejects a malformed agent_id as invalid_request', async () => {
    await createNumber(t, { number: DID });
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'Reception Bot' }), 400, 'invalid_request', 'agent_id');
  });

  it.each([
    ['digits without +', '919876543210'],
    ['a word', 'reception'],
    ['a space for the + (unencoded form decoding)', '%20919876543210'],
    ['too many digits', '%2B9198765432101234'],
  ])('rejects a path number with %s as invalid_request', async (_label, path) => {
    expectError(await t.call('POST', `/v1/numbers/${path}/bind`, { agent_id: 'ag_x' }), 400, 'invalid_request', 'number');
  });

  it('answers not_found for a well-formed number that is not registered', async () => {
    await createNumber(t, { number: DID });
    expectError(await t.call('POST', `/v1/numbers/${enc('+14155550100')}/bind`, { agent_id: 'ag_x' }), 404, 'not_found', 'number');
    expect(await listNumbers(t)).toHaveLength(1);
  });
});

describe("the bound agent must exist in the caller's tenant", () => {
  it('bind refuses an unknown agent with not_found (param agent_id) and keeps the binding', async () => {
    const rec = await createNumber(t, { number: DID, agent_id: 'ag_clinic_booking', label: 'desk' });
    const err = expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_nobody' }), 404, 'not_found', 'agent_id');
    expect(err.message).toContain('ag_nobody');
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it('bind refuses an agent that has been deleted', async () => {
    await t.agent('ag_doomed');
    const rec = await createNumber(t, { number: DID });
    expectOk(await t.call('DELETE', '/v1/agents/ag_doomed'), 200);
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_doomed' }), 404, 'not_found', 'agent_id');
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it('POST /v1/numbers refuses an unknown agent_id with not_found and creates nothing', async () => {
    const trunk = await createTrunk(t);
    const res = await t.call('POST', '/v1/numbers', { number: DID, trunk_id: trunk.id, agent_id: 'ag_nobody', label: 'x' });
    expectError(res, 404, 'not_found', 'agent_id');
    expect(await listNumbers(t)).toEqual([]);
  });

  it('POST /v1/numbers checks trunk_id before agent_id', async () => {
    const res = await t.call('POST', '/v1/numbers', { number: DID, trunk_id: 'tk_aaaaaaaaaaaaaaaaaaaa', agent_id: 'ag_nobody' });
    expectError(res, 404, 'trunk_not_found', 'trunk_id');
    expect(await listNumbers(t)).toEqual([]);
  });

  it('an unknown number is reported before an unknown agent', async () => {
    const rec = await createNumber(t, { number: DID });
    expectError(await t.call('POST', `/v1/numbers/${enc('+14155550100')}/bind`, { agent_id: 'ag_nobody' }), 404, 'not_found', 'number');
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it("in enforce mode, another tenant's agent is refused for bind and create alike", async () => {
    await t.close();
    t = await makeTestApp({ auth_mode: 'enforce' });
    const keyB = t.tenantKey('acme');
    await t.agent('ag_acme_only', { key: keyB });
    const recA = await createNumber(t, { number: DID, agent_id: 'ag_clinic_booking' });
    const recB = await createNumber(t, { number: '+14155550100' }, keyB);
    // default may not use acme's agent…
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_acme_only' }), 404, 'not_found', 'agent_id');
    expectError(await t.call('POST', '/v1/numbers', { number: '+442071234567', agent_id: 'ag_acme_only' }), 404, 'not_found', 'agent_id');
    expect(await listNumbers(t)).toEqual([recA]);
    // …nor acme default's example agent
    expectError(
      await t.call('POST', `/v1/numbers/${enc('+14155550100')}/bind`, { agent_id: 'ag_clinic_booking' }, { key: keyB }),
      404,
      'not_found',
      'agent_id',
    );
    expectError(
      await t.call('POST', '/v1/numbers', { number: '+442071234567', agent_id: 'ag_clinic_booking' }, { key: keyB }),
      404,
      'not_found',
      'agent_id',
    );
    expect(await listNumbers(t, keyB)).toEqual([recB]);
    // while acme binds its own
    expect(
      expectOk(await t.call('POST', `/v1/numbers/${enc('+14155550100')}/bind`, { agent_id: 'ag_acme_only' }, { key: keyB }), 200),
    ).toEqual({ ...recB, agent_id: 'ag_acme_only' });
  });
});

describe('only an inbound agent answers a number', () => {
  it('bind refuses an outbound agent with invalid_request (param agent_id, naming the direction) and keeps the binding', async () => {
    const rec = await createNumber(t, { number: DID, agent_id: 'ag_clinic_booking' });
    for (const agentId of ['ag_delivery_confirmation', 'ag_emi_reminder']) {
      const err = expectError(
        await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: agentId }),
        400,
        'invalid_request',
        'agent_id',
      );
      expect(err.message).toContain(agentId);
      expect(err.message).toMatch(/direction outbound/);
    }
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it('POST /v1/numbers refuses an outbound agent_id and creates nothing', async () => {
    await t.agent('ag_dialler', { direction: 'outbound' });
    const err = expectError(
      await t.call('POST', '/v1/numbers', { number: DID, agent_id: 'ag_dialler' }),
      400,
      'invalid_request',
      'agent_id',
    );
    expect(err.message).toMatch(/direction outbound/);
    expect(await listNumbers(t)).toEqual([]);
  });

  it('refuses an inbound agent that needs a customer name or context an inbound call does not bring', async () => {
    const rec = await createNumber(t, { number: DID });
    const base = { name: 'Reception', direction: 'inbound', language: 'en-IN', opening: [{ text: 'Hello.' }], closing: 'Bye.' };
    expectOk(await t.call('PUT', '/v1/agents/ag_greets', { ...base, opening: [{ text: 'Hello {{customer_name}}.' }] }), 200);
    expectOk(await t.call('PUT', '/v1/agents/ag_member', { ...base, required_context: ['member_id'] }), 200);
    expectOk(await t.call('PUT', '/v1/agents/ag_caller_id', { ...base, required_context: ['call.from'] }), 200);
    const greets = expectError(
      await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_greets' }),
      400,
      'invalid_request',
      'agent_id',
    );
    expect(greets.message).toContain('needs customer_name, which an inbound call does not bring');
    expectError(await t.call('POST', '/v1/numbers', { number: '+14155550100', agent_id: 'ag_member' }), 400, 'invalid_request', 'agent_id');
    expect(await listNumbers(t)).toEqual([rec]);
    // The caller's number is what an inbound call brings.
    expect(expectOk(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_caller_id' }), 200)).toMatchObject({
      agent_id: 'ag_caller_id',
    });
  });

  it('an agent re-applied as outbound can no longer be bound; as inbound it can', async () => {
    await t.agent('ag_switch', { direction: 'outbound' });
    await createNumber(t, { number: DID });
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_switch' }), 400, 'invalid_request', 'agent_id');
    await t.agent('ag_switch', { direction: 'inbound' });
    expect(expectOk(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_switch' }), 200)).toMatchObject({
      agent_id: 'ag_switch',
    });
  });
});

describe('DELETE /v1/numbers/{number}', () => {
  it('deletes the record (path with %2B) and answers {number, deleted: true}', async () => {
    const keep = await createNumber(t, { number: '+14155550100' });
    await createNumber(t, { number: DID });
    expect(expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`), 200)).toEqual({ number: DID, deleted: true });
    expect(await listNumbers(t)).toEqual([keep]);
    expectError(await t.call('DELETE', `/v1/numbers/${enc(DID)}`), 404, 'not_found', 'number');
  });

  it('deletes with a literal + in the path', async () => {
    await createNumber(t, { number: DID });
    expect(expectOk(await t.call('DELETE', `/v1/numbers/${DID}`), 200)).toEqual({ number: DID, deleted: true });
    expect(await listNumbers(t)).toEqual([]);
  });

  it('lets the number be registered again after deletion', async () => {
    const first = await createNumber(t, { number: DID });
    expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`), 200);
    const second = await createNumber(t, { number: DID });
    expect(second.id).not.toBe(first.id);
  });

  it('rejects a path number that is not E.164 as invalid_request', async () => {
    await createNumber(t, { number: DID });
    expectError(await t.call('DELETE', '/v1/numbers/919876543210'), 400, 'invalid_request', 'number');
    expectError(await t.call('DELETE', '/v1/numbers/%2B0123'), 400, 'invalid_request', 'number');
    expect(await listNumbers(t)).toHaveLength(1);
  });

  it('answers not_found for an unregistered number', async () => {
    expectError(await t.call('DELETE', `/v1/numbers/${enc('+442071234567')}`), 404, 'not_found', 'number');
  });

  it('does not touch the trunk the number referenced', async () => {
    const trunk = await createTrunk(t, { address: 'sip.a.in', numbers: [DID] });
    await createNumber(t, { number: DID, trunk_id: trunk.id });
    expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`), 200);
    expect(expectOk(await t.call('GET', `/v1/trunks/${trunk.id}`), 200)).toEqual(trunk);
  });
});
