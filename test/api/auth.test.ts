/**
 * Authentication and tenant isolation (docs/api-decisions.md "Auth").
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEventRow } from '../../src/store/index.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { createNumber, createTrunk, enc, expectError, expectOk, listNumbers, listTrunks, type NumberBody } from '../support/expect.js';

const DID = '+919876543210';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

describe('API keys', () => {
  it.each([
    ['no Authorization header', null, undefined],
    ['a Basic scheme', null, 'Basic dXNlcjpwYXNz'],
    ['Bearer without a key', null, 'Bearer '],
    ['a key without the Bearer scheme', 'RAW', undefined],
    ['a malformed key', null, 'Bearer not-a-vagent-key'],
    ['an unknown well-formed key', null, `Bearer vk_${'A'.repeat(43)}`],
  ])('answers 401 unauthorized for %s', async (_label, keyMode, header) => {
    t = await makeTestApp();
    const headers: Record<string, string> = {};
    if (header !== undefined) headers.authorization = header;
    if (keyMode === 'RAW') headers.authorization = t.key;
    expectError(await t.call('GET', '/v1/trunks', undefined, { key: null, headers }), 401, 'unauthorized');
    // and a write with such credentials changes nothing
    expectError(await t.call('POST', '/v1/trunks', { address: 'sip.a.in' }, { key: null, headers }), 401, 'unauthorized');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('accepts a valid key, also with a lower-case scheme', async () => {
    t = await makeTestApp();
    expectOk(await t.call('GET', '/v1/trunks'), 200);
    expectOk(await t.call('GET', '/v1/trunks', undefined, { key: null, headers: { authorization: `bearer ${t.key}` } }), 200);
  });

  it("answers 401 for a revoked key while the tenant's other keys keep working", async () => {
    t = await makeTestApp();
    const { tenants } = t.runtime.services;
    const second = tenants.createKey('default');
    expectOk(await t.call('GET', '/v1/trunks', undefined, { key: second.key }), 200);
    tenants.revokeKey(second.id);
    expectError(await t.call('GET', '/v1/trunks', undefined, { key: second.key }), 401, 'unauthorized');
    expectError(await t.call('POST', '/v1/trunks', { address: 'sip.a.in' }, { key: second.key }), 401, 'unauthorized');
    expectOk(await t.call('GET', '/v1/trunks'), 200);
    expect(await listTrunks(t)).toEqual([]);
  });

  it('needs no key for /v1/health and /v1/openapi.json', async () => {
    t = await makeTestApp();
    expect(expectOk(await t.call('GET', '/v1/health', undefined, { key: null }), 200)).toEqual({ status: 'ok', version: 'test' });
    const doc = expectOk<{ openapi: string; paths: Record<string, Record<string, unknown>> }>(
      await t.call('GET', '/v1/openapi.json', undefined, { key: null }),
      200,
    );
    expect(doc.openapi).toMatch(/^3\./);
    expect(Object.keys(doc.paths['/v1/trunks'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/trunks/{trunk_id}'] ?? {}).sort()).toEqual(['delete', 'get']);
    expect(Object.keys(doc.paths['/v1/numbers'] ?? {}).sort()).toEqual(['get', 'post']);
    expect(Object.keys(doc.paths['/v1/numbers/{number}/bind'] ?? {})).toEqual(['post']);
    expect(Object.keys(doc.paths['/v1/numbers/{number}'] ?? {})).toEqual(['delete']);
  });

  it('serves a self-contained document: every $ref resolves, and Trunk has no auth field', async () => {
    t = await makeTestApp();
    const doc = (await t.call('GET', '/v1/openapi.json', undefined, { key: null })).json() as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const refs: string[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [k, v] of Object.entries(node)) {
          if (k === '$ref' && typeof v === 'string') refs.push(v);
          else walk(v);
        }
      }
    };
    walk(doc);
    expect(refs).toContain('#/components/schemas/Trunk');
    for (const ref of refs) {
      expect(ref).toMatch(/^#\/components\/schemas\//);
      expect(doc.components.schemas, ref).toHaveProperty([ref.split('/').pop()!]);
    }
    const trunk = doc.components.schemas.Trunk!;
    expect(Object.keys(trunk.properties)).toContain('has_credentials');
    expect(Object.keys(trunk.properties)).not.toContain('auth');
  });
});

/**
 * Tenant `default` (A) owns a trunk, a number and agents ag_a_agent and ag_x; tenant `acme` (B)
 * has its own key, trunk, number and agents ag_b_agent and ag_b.
 */
async function setupTenants(mode: 'audit' | 'enforce') {
  t = await makeTestApp({ auth_mode: mode });
  const keyB = t.tenantKey('acme');
  for (const id of ['ag_a_agent', 'ag_x']) await t.agent(id);
  for (const id of ['ag_b_agent', 'ag_b']) await t.agent(id, { key: keyB });
  const trunkA = await createTrunk(t, { address: 'sip.a.in', name: 'A trunk' });
  const numberA = await createNumber(t, { number: DID, trunk_id: trunkA.id, agent_id: 'ag_a_agent', label: 'A' });
  const trunkB = await createTrunk(t, { address: 'sip.b.in', name: 'B trunk' }, keyB);
  const numberB = await createNumber(t, { number: '+14155550100' }, keyB);
  return { keyB, trunkA, numberA, trunkB, numberB };
}

function auditOf(tenant: string): AuditEventRow[] {
  return t.runtime.services.tenants.listAudit(100, tenant);
}

describe('auth_mode enforce: foreign ids resolve as missing', () => {
  it("GET and DELETE of another tenant's trunk answer trunk_not_found", async () => {
    const { keyB, trunkA } = await setupTenants('enforce');
    expectError(await t.call('GET', `/v1/trunks/${trunkA.id}`, undefined, { key: keyB }), 404, 'trunk_not_found', 'trunk_id');
    expectError(await t.call('DELETE', `/v1/trunks/${trunkA.id}`, undefined, { key: keyB }), 404, 'trunk_not_found', 'trunk_id');
    expect(await listTrunks(t)).toEqual([trunkA]);
    expect(auditOf('acme')).toEqual([]);
  });

  it("bind and DELETE of another tenant's number answer not_found", async () => {
    const { keyB, numberA } = await setupTenants('enforce');
    expectError(
      await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_b_agent' }, { key: keyB }),
      404,
      'not_found',
      'number',
    );
    expectError(await t.call('DELETE', `/v1/numbers/${enc(DID)}`, undefined, { key: keyB }), 404, 'not_found', 'number');
    expect(await listNumbers(t)).toEqual([numberA]);
    expect(auditOf('acme')).toEqual([]);
  });

  it("POST /v1/numbers with another tenant's trunk_id answers trunk_not_found", async () => {
    const { keyB, trunkA, numberB } = await setupTenants('enforce');
    const res = await t.call('POST', '/v1/numbers', { number: '+442071234567', trunk_id: trunkA.id }, { key: keyB });
    expectError(res, 404, 'trunk_not_found', 'trunk_id');
    expect(await listNumbers(t, keyB)).toEqual([numberB]);
    expect(auditOf('acme')).toEqual([]);
  });

  it('the owner still reaches its own resources', async () => {
    const { trunkA, numberA } = await setupTenants('enforce');
    expect(expectOk(await t.call('GET', `/v1/trunks/${trunkA.id}`), 200)).toEqual(trunkA);
    expect(expectOk(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_x' }), 200)).toEqual({
      ...numberA,
      agent_id: 'ag_x',
    });
  });
});

describe('auth_mode audit (default): foreign ids resolve and are audited', () => {
  function expectOneAudit(route: string, method: string, resourceId: string): void {
    const events = auditOf('acme');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor_tenant_id: 'acme',
      owner_tenant_id: 'default',
      resource_id: resourceId,
      method,
      route,
    });
    expect(events[0]!.actor_key_id).toMatch(/^key_/);
    expect(events[0]!.request_id).toMatch(/^req_/);
  }

  it('is the default mode', async () => {
    t = await makeTestApp();
    expect(t.settings.auth_mode).toBe('audit');
  });

  it("GET of another tenant's trunk returns it and writes an audit event", async () => {
    const { keyB, trunkA } = await setupTenants('audit');
    const res = await t.call('GET', `/v1/trunks/${trunkA.id}`, undefined, { key: keyB });
    expect(expectOk(res, 200)).toEqual(trunkA);
    expectOneAudit('/v1/trunks/:trunk_id', 'GET', trunkA.id);
    expect(auditOf('acme')[0]!.request_id).toBe(res.headers['x-request-id']);
  });

  it("DELETE of another tenant's trunk deletes it and writes an audit event", async () => {
    const { keyB, trunkA } = await setupTenants('audit');
    expect(expectOk(await t.call('DELETE', `/v1/trunks/${trunkA.id}`, undefined, { key: keyB }), 200)).toEqual({
      id: trunkA.id,
      deleted: true,
    });
    expect(await listTrunks(t)).toEqual([]);
    expectOneAudit('/v1/trunks/:trunk_id', 'DELETE', trunkA.id);
  });

  it("bind of another tenant's number binds it (to an agent of the number's tenant) and writes an audit event", async () => {
    const { keyB, numberA } = await setupTenants('audit');
    const res = await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_x' }, { key: keyB });
    expect(expectOk<NumberBody>(res, 200)).toEqual({ ...numberA, agent_id: 'ag_x' });
    expect(await listNumbers(t)).toEqual([{ ...numberA, agent_id: 'ag_x' }]);
    expectOneAudit('/v1/numbers/:number/bind', 'POST', DID);
  });

  it("bind of another tenant's number to an agent only the caller has is not_found: the number's tenant answers its calls", async () => {
    const { keyB, numberA } = await setupTenants('audit');
    expectError(
      await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, { agent_id: 'ag_b_agent' }, { key: keyB }),
      404,
      'not_found',
      'agent_id',
    );
    expect(await listNumbers(t)).toEqual([numberA]);
  });

  it("DELETE of another tenant's number deletes it and writes an audit event", async () => {
    const { keyB } = await setupTenants('audit');
    expect(expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`, undefined, { key: keyB }), 200)).toEqual({
      number: DID,
      deleted: true,
    });
    expect(await listNumbers(t)).toEqual([]);
    expectOneAudit('/v1/numbers/:number', 'DELETE', DID);
  });

  it("POST /v1/numbers with another tenant's trunk_id succeeds and writes an audit event", async () => {
    const { keyB, trunkA } = await setupTenants('audit');
    const rec = await createNumber(t, { number: '+442071234567', trunk_id: trunkA.id }, keyB);
    expect(rec).toMatchObject({ tenant_id: 'acme', trunk_id: trunkA.id });
    expectOneAudit('/v1/numbers', 'POST', trunkA.id);
  });

  it("writes no audit event for a tenant's own resources or for missing ids", async () => {
    const { keyB, trunkB } = await setupTenants('audit');
    expectOk(await t.call('GET', `/v1/trunks/${trunkB.id}`, undefined, { key: keyB }), 200);
    expectOk(await t.call('POST', `/v1/numbers/${enc('+14155550100')}/bind`, { agent_id: 'ag_b' }, { key: keyB }), 200);
    expectError(await t.call('GET', '/v1/trunks/tk_cccccccccccccccccccc', undefined, { key: keyB }), 404, 'trunk_not_found');
    expect(t.runtime.services.tenants.listAudit(100)).toEqual([]);
  });

  it('an audited write that fails later leaves no audit event', async () => {
    const { keyB, trunkA } = await setupTenants('audit');
    // trunk resolves (audited), then the duplicate number is refused: the transaction rolls back
    await createNumber(t, { number: '+442071234567' }, keyB);
    const res = await t.call('POST', '/v1/numbers', { number: '+442071234567', trunk_id: trunkA.id }, { key: keyB });
    expectError(res, 409, 'already_exists');
    expect(auditOf('acme')).toEqual([]);
  });
});

describe.each(['audit', 'enforce'] as const)('lists in %s mode', (mode) => {
  it("show only the caller's tenant", async () => {
    const { keyB, trunkA, numberA, trunkB, numberB } = await setupTenants(mode);
    expect(await listTrunks(t)).toEqual([trunkA]);
    expect(await listNumbers(t)).toEqual([numberA]);
    expect(await listTrunks(t, keyB)).toEqual([trunkB]);
    expect(await listNumbers(t, keyB)).toEqual([numberB]);
    expect(t.runtime.services.tenants.listAudit(100)).toEqual([]);
  });

  it('let two tenants register the same number independently', async () => {
    const { keyB, numberA } = await setupTenants(mode);
    const other = await createNumber(t, { number: DID, label: 'B copy' }, keyB);
    expect(other).toMatchObject({ tenant_id: 'acme', number: DID, label: 'B copy' });
    expect(other.id).not.toBe(numberA.id);
    expect(await listNumbers(t)).toEqual([numberA]);
    // B now acts on its own record, never A's
    expectOk(await t.call('DELETE', `/v1/numbers/${enc(DID)}`, undefined, { key: keyB }), 200);
    expect(await listNumbers(t)).toEqual([numberA]);
    expect(auditOf('acme')).toEqual([]);
  });
});
