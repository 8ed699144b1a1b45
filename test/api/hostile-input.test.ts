/**
 * Hostile and malformed input (docs/api-decisions.md "Errors": bad input gets a clear error in
 * the error shape and changes nothing; body limit 1 MiB).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { createNumber, createTrunk, enc, expectError, expectOk, listNumbers, listTrunks } from '../support/expect.js';

const DID = '+919876543210';

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

/** A raw request: `payload` is sent as is, with exactly the given headers plus the API key. */
function raw(method: string, url: string, payload: string | Buffer | undefined, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: method as 'POST',
    url,
    headers: { authorization: `Bearer ${t.key}`, ...headers },
    ...(payload === undefined ? {} : { payload }),
  });
}
const json = { 'content-type': 'application/json' };

/** The state every "changes nothing" check compares against. */
async function snapshot() {
  return { trunks: await listTrunks(t), numbers: await listNumbers(t) };
}

describe('wrong types', () => {
  it.each([
    ['address as a number', { address: 5 }, 'address'],
    ['address as null', { address: null }, 'address'],
    ['address as an object', { address: { host: 'sip.a.in' } }, 'address'],
    ['numbers as a string', { address: 'sip.a.in', numbers: DID }, 'numbers'],
    ['numbers as an object', { address: 'sip.a.in', numbers: { 0: DID } }, 'numbers'],
    ['a numbers entry as a number', { address: 'sip.a.in', numbers: [919876543210] }, 'numbers[0]'],
    ['a numbers entry as null', { address: 'sip.a.in', numbers: [DID, null] }, 'numbers[1]'],
    ['name as a number', { address: 'sip.a.in', name: 42 }, 'name'],
    ['name as an array', { address: 'sip.a.in', name: ['x'] }, 'name'],
    ['provider_trunk_id as a number', { address: 'sip.a.in', provider_trunk_id: 7 }, 'provider_trunk_id'],
    ['provider_trunk_id empty', { address: 'sip.a.in', provider_trunk_id: '' }, 'provider_trunk_id'],
    ['auth.username as a number', { address: 'sip.a.in', auth: { username: 1, password: 'p' } }, 'auth.username'],
    ['auth.password as an object', { address: 'sip.a.in', auth: { username: 'u', password: { p: 1 } } }, 'auth.password'],
  ])('POST /v1/trunks with %s → 400', async (_label, body, param) => {
    const before = await snapshot();
    expectError(await t.call('POST', '/v1/trunks', body), 400, 'invalid_request', param);
    expect(await snapshot()).toEqual(before);
  });

  it.each([
    ['number as a number', { number: 919876543210 }, 'number'],
    ['number as an array', { number: [DID] }, 'number'],
    ['trunk_id as a number', { number: DID, trunk_id: 1 }, 'trunk_id'],
    ['agent_id as a boolean', { number: DID, agent_id: true }, 'agent_id'],
    ['label as an object', { number: DID, label: { text: 'x' } }, 'label'],
  ])('POST /v1/numbers with %s → 400', async (_label, body, param) => {
    expectError(await t.call('POST', '/v1/numbers', body), 400, 'invalid_request', param);
    expect(await listNumbers(t)).toEqual([]);
  });

  it.each([
    ['agent_id as a number', { agent_id: 5 }],
    ['agent_id as null', { agent_id: null }],
    ['agent_id as an array', { agent_id: ['ag_x'] }],
  ])('bind with %s → 400', async (_label, body) => {
    const rec = await createNumber(t, { number: DID, agent_id: 'ag_clinic_booking' });
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}/bind`, body), 400, 'invalid_request', 'agent_id');
    expect(await listNumbers(t)).toEqual([rec]);
  });

  it.each([
    ['an array', '[{"address":"sip.a.in"}]'],
    ['null', 'null'],
    ['a string', '"sip.a.in"'],
    ['a number', '42'],
    ['true', 'true'],
  ])('a JSON body that is %s is not an object → 400', async (_label, payload) => {
    for (const url of ['/v1/trunks', '/v1/numbers', `/v1/numbers/${enc(DID)}/bind`]) {
      const err = expectError(await raw('POST', url, payload, json), 400, 'invalid_request');
      expect(err.message).toMatch(/JSON object/);
    }
    expect(await snapshot()).toEqual({ trunks: [], numbers: [] });
  });

  it('a POST without any body → 400', async () => {
    expectError(await raw('POST', '/v1/trunks', undefined), 400, 'invalid_request');
    expect(await listTrunks(t)).toEqual([]);
  });
});

describe('body framing', () => {
  it('a body over 1 MiB → 413 invalid_request, nothing created', async () => {
    const big = JSON.stringify({ address: 'sip.a.in', name: 'x'.repeat(1024 * 1024) });
    expectError(await raw('POST', '/v1/trunks', big, json), 413, 'invalid_request');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('a body just under the limit is parsed (and then judged on its fields)', async () => {
    const body = JSON.stringify({ address: 'sip.a.in', name: 'x'.repeat(1024 * 1024 - 100) });
    expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    expectError(await raw('POST', '/v1/trunks', body, json), 400, 'invalid_request', 'name');
  });

  it('a text/plain body → 415', async () => {
    expectError(await raw('POST', '/v1/trunks', '{"address":"sip.a.in"}', { 'content-type': 'text/plain' }), 415, 'invalid_request');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('a body without Content-Type → 415', async () => {
    expectError(await raw('POST', '/v1/trunks', '{"address":"sip.a.in"}'), 415, 'invalid_request');
    expect(await listTrunks(t)).toEqual([]);
  });

  it.each([
    ['application/x-www-form-urlencoded', 'address=sip.a.in'],
    ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="address"\r\n\r\nsip.a.in\r\n--x--'],
    ['application/xml', '<trunk><address>sip.a.in</address></trunk>'],
  ])('a %s body → 415', async (type, payload) => {
    expectError(await raw('POST', '/v1/trunks', payload, { 'content-type': type }), 415, 'invalid_request');
  });

  it.each([
    ['truncated', '{"address":'],
    ['single quotes', "{'address':'sip.a.in'}"],
    ['a trailing comma', '{"address":"sip.a.in",}'],
    ['a bare word', 'address'],
  ])('invalid JSON (%s) → 400', async (_label, payload) => {
    const err = expectError(await raw('POST', '/v1/trunks', payload, json), 400, 'invalid_request');
    expect(err.message).toMatch(/not valid JSON/);
    expect(await listTrunks(t)).toEqual([]);
  });

  it('an empty body with Content-Type application/json → 400', async () => {
    expectError(await raw('POST', '/v1/trunks', '', json), 400, 'invalid_request');
    expectError(await raw('DELETE', `/v1/numbers/${enc(DID)}`, '', json), 400, 'invalid_request');
  });
});

describe('prototype pollution', () => {
  it.each([
    ['__proto__', '{"address":"sip.a.in","__proto__":{"polluted":"yes"}}'],
    ['nested __proto__', '{"address":"sip.a.in","auth":{"username":"u","password":"p","__proto__":{"polluted":"yes"}}}'],
    ['constructor.prototype', '{"address":"sip.a.in","constructor":{"prototype":{"polluted":"yes"}}}'],
  ])('a body with %s → 400 and no pollution', async (_label, payload) => {
    expectError(await raw('POST', '/v1/trunks', payload, json), 400, 'invalid_request');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await listTrunks(t)).toEqual([]);
  });
});

describe('text content', () => {
  it.each([
    ['Devanagari', 'मुंबई ट्रंक — मुख्य'],
    ['emoji with ZWJ and flags', '📞 Trunk 👩‍💻 🇮🇳'],
    ['RTL with marks', 'خط الهاتف \u200fالرئيسي\u200e'],
    ['combining marks (not normalised)', 'Cafe\u0301 vs Café'],
  ])('a %s name round-trips exactly', async (_label, name) => {
    const trunk = await createTrunk(t, { address: 'sip.a.in', name });
    expect(trunk.name).toBe(name);
    expect(expectOk<{ name: string }>(await t.call('GET', `/v1/trunks/${trunk.id}`), 200).name).toBe(name);
    expect((await listTrunks(t))[0]!.name).toBe(name);
    const rec = await createNumber(t, { number: DID, label: name });
    expect(rec.label).toBe(name);
    expect((await listNumbers(t))[0]!.label).toBe(name);
  });

  it('control characters in a name are stored and returned exactly (JSON-escaped)', async () => {
    const name = 'a\u0000b\u0007c\u001bd\r\n\u2028e';
    const res = await t.call('POST', '/v1/trunks', { address: 'sip.a.in', name });
    expect(res.body).toContain('\\u0000');
    const trunk = expectOk<{ id: string; name: string }>(res, 201);
    expect(trunk.name).toBe(name);
    expect(expectOk<{ name: string }>(await t.call('GET', `/v1/trunks/${trunk.id}`), 200).name).toBe(name);
  });

  it.each([
    ['name', '/v1/trunks', { address: 'sip.a.in', name: 'bad \ud800 text' }],
    ['provider_trunk_id', '/v1/trunks', { address: 'sip.a.in', provider_trunk_id: 'ST_\udfff' }],
    ['label', '/v1/numbers', { number: DID, label: '\udbff end' }],
  ])('an unpaired surrogate in %s → 400 (it could not be stored exactly)', async (param, url, body) => {
    expectError(await t.call('POST', url, body), 400, 'invalid_request', param);
    expect(await snapshot()).toEqual({ trunks: [], numbers: [] });
  });

  it('a password with an unpaired surrogate is kept exactly (credentials are sealed as JSON)', async () => {
    const trunk = await createTrunk(t, { address: 'sip.a.in', auth: { username: 'u', password: 'p\ud800w' } });
    const row = t.runtime.services.repos.trunks.get(trunk.id)!;
    expect(t.runtime.services.trunks.credentialsOf(row)?.password).toBe('p\ud800w');
  });

  it.each([
    ['a NUL', 'sip.a.in\u0000evil'],
    ['a newline', 'sip.a.in\nVia: evil'],
    ['CRLF', 'sip.a.in\r\n'],
  ])('an address with %s → 400', async (_label, address) => {
    expectError(await t.call('POST', '/v1/trunks', { address }), 400, 'invalid_request', 'address');
  });

  it.each([
    ['name', { address: 'sip.a.in', name: 'n'.repeat(201) }, 'name'],
    ['address', { address: `${'a'.repeat(63)}.`.repeat(5) + 'in' }, 'address'],
    ['provider_trunk_id', { address: 'sip.a.in', provider_trunk_id: 'p'.repeat(201) }, 'provider_trunk_id'],
    ['auth.username', { address: 'sip.a.in', auth: { username: 'u'.repeat(257), password: 'p' } }, 'auth.username'],
    ['auth.password', { address: 'sip.a.in', auth: { username: 'u', password: 'p'.repeat(1025) } }, 'auth.password'],
    [
      'numbers (count)',
      { address: 'sip.a.in', numbers: Array.from({ length: 1001 }, (_, i) => `+9198765${String(i).padStart(5, '0')}`) },
      'numbers',
    ],
  ])('a too-long %s → 400', async (_label, body, param) => {
    expectError(await t.call('POST', '/v1/trunks', body), 400, 'invalid_request', param);
    expect(await listTrunks(t)).toEqual([]);
  });

  it('accepts fields exactly at their limits', async () => {
    const trunk = await createTrunk(t, {
      address: 'sip.a.in',
      name: 'n'.repeat(200),
      provider_trunk_id: 'p'.repeat(200),
      auth: { username: 'u'.repeat(256), password: 'p'.repeat(1024) },
    });
    expect(trunk.name).toHaveLength(200);
    expect((await createNumber(t, { number: '+123456789012345', label: 'l'.repeat(200) })).label).toHaveLength(200);
  });

  it('a too-long label → 400', async () => {
    expectError(await t.call('POST', '/v1/numbers', { number: DID, label: 'l'.repeat(201) }), 400, 'invalid_request', 'label');
  });
});

describe('malformed paths', () => {
  it('a malformed %-escape → 400 invalid_request in the error shape', async () => {
    await createTrunk(t);
    const before = await snapshot();
    expectError(await t.call('GET', '/v1/trunks/%ZZ'), 400, 'invalid_request');
    expectError(await t.call('DELETE', '/v1/trunks/%ZZ'), 400, 'invalid_request');
    expectError(await t.call('DELETE', '/v1/numbers/%2B91%E0%A4'), 400, 'invalid_request');
    expect(await snapshot()).toEqual(before);
  });

  it('a number with an encoded NUL → 400', async () => {
    await createNumber(t, { number: '+91' + '9876543210' });
    expectError(await t.call('DELETE', '/v1/numbers/%2B91%00'), 400, 'invalid_request', 'number');
    expectError(await t.call('POST', `/v1/numbers/${enc(DID)}%00/bind`, { agent_id: 'ag_x' }), 400, 'invalid_request', 'number');
    expect(await listNumbers(t)).toHaveLength(1);
  });

  it('a 1000-character trunk id → trunk_not_found', async () => {
    const id = `tk_${'a'.repeat(997)}`;
    expectError(await t.call('GET', `/v1/trunks/${id}`), 404, 'trunk_not_found', 'trunk_id');
    expectError(await t.call('DELETE', `/v1/trunks/${id}`), 404, 'trunk_not_found', 'trunk_id');
  });

  it('a 1000-digit number → invalid_request', async () => {
    const path = `%2B${'9'.repeat(1000)}`;
    expectError(await t.call('DELETE', `/v1/numbers/${path}`), 400, 'invalid_request', 'number');
    expectError(await t.call('POST', `/v1/numbers/${path}/bind`, { agent_id: 'ag_x' }), 400, 'invalid_request', 'number');
  });

  it('encoded ../ in an id reaches nothing else', async () => {
    const trunk = await createTrunk(t);
    expectError(await t.call('GET', '/v1/trunks/..%2F..%2Fhealth'), 404, 'trunk_not_found');
    expectError(await t.call('DELETE', `/v1/trunks/..%2F${trunk.id}`), 404, 'trunk_not_found');
    expectError(await t.call('DELETE', '/v1/numbers/..%2F..%2Ftrunks'), 400, 'invalid_request', 'number');
    expect(await listTrunks(t)).toEqual([trunk]);
  });

  it('a plain ../ path never escapes /v1 routing', async () => {
    expectError(await t.call('GET', '/v1/trunks/../../etc/passwd'), 404, 'not_found');
  });
});

describe('unknown routes (a known path with another method is 405: hardening-methods.test.ts)', () => {
  it.each([
    ['GET', '/v1/nope'],
    ['GET', '/v2/trunks'],
    ['GET', '/'],
    ['PUT', '/v1/trunks/tk_aaaaaaaaaaaaaaaaaaaa/numbers'],
    ['POST', `/v1/numbers/${enc(DID)}/unbind`],
  ])('%s %s → 404 not_found in the error shape', async (method, url) => {
    const err = expectError(await t.call(method, url), 404, 'not_found', null);
    expect(err.message).toContain(method);
  });

  it('the not-found message does not echo an unbounded URL', async () => {
    const err = expectError(await t.call('GET', `/v1/${'x'.repeat(5000)}`), 404, 'not_found');
    expect(err.message.length).toBeLessThan(400);
  });
});
