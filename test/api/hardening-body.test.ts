/**
 * The shared JSON body parser (docs/api-decisions.md "Errors" › Request bodies): nesting
 * is bounded for every body of every route before any hook sees it, bytes that are not UTF-8
 * are refused rather than stored as U+FFFD, and prototype keys are refused with `param`
 * naming them. Each refusal is 400 `invalid_request` in the error shape and changes nothing.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { enc, expectError, listNumbers, listTrunks } from '../support/expect.js';

const DID = '+919876543210';
const JSON_TYPE = { 'content-type': 'application/json' };

let t: TestApp;
beforeEach(async () => {
  t = await makeTestApp();
});
afterEach(async () => {
  await t.close();
});

function send(method: string, url: string, payload: string | Buffer, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: method as 'POST',
    url,
    headers: { authorization: `Bearer ${t.key}`, ...JSON_TYPE, ...headers },
    payload,
  });
}

/** `{"address":…,"x":[[…]]}` with `x` nested `levels` deep (the reproduction at 5000). */
function deepTrunk(levels: number): string {
  return `{"address":"sip.example.in","x":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

function rows(table: string): number {
  return t.runtime.services.repos.store.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

describe('nesting depth (item 1)', () => {
  it("the issue's 5000-level body with an Idempotency-Key is 400 naming the field and the limit, not 500", async () => {
    const body = deepTrunk(5000);
    const keyed: Record<string, string> = { 'idempotency-key': 'd1' };
    for (const headers of [keyed, keyed, {}]) {
      const err = expectError(await send('POST', '/v1/trunks', body, headers), 400, 'invalid_request', 'x');
      expect(err.message).toBe('x is nested too deeply: at most 32 levels');
    }
    expect(await listTrunks(t)).toEqual([]);
    expect(rows('idempotency')).toBe(0);
  });

  it('every idempotent route refuses a deep body before its fingerprint is taken', async () => {
    const deep = (fields: string) => `{${fields}"extra":${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}}`;
    const routes: Array<[string, string, string]> = [
      ['POST', '/v1/trunks', deep('"address":"sip.a.in",')],
      ['DELETE', '/v1/trunks/tk_aaaaaaaaaaaaaaaaaaaa', deep('')],
      ['POST', '/v1/numbers', deep(`"number":"${DID}",`)],
      ['POST', `/v1/numbers/${enc(DID)}/bind`, deep('"agent_id":"ag_clinic_booking",')],
      ['DELETE', `/v1/numbers/${enc(DID)}`, deep('')],
      ['PUT', '/v1/agents/ag_deep', deep('"id":"ag_deep",')],
      ['POST', '/v1/sessions', deep('"agent_id":"ag_clinic_booking",')],
      ['POST', '/v1/agents/ag_clinic_booking/load', deep('')],
      ['POST', '/v1/calls', deep(`"agent_id":"ag_emi_reminder","to":"${DID}",`)],
    ];
    let n = 0;
    for (const [method, url, body] of routes) {
      const err = expectError(await send(method, url, body, { 'idempotency-key': `deep-${n++}` }), 400, 'invalid_request', 'extra');
      expect(err.message, `${method} ${url}`).toMatch(/at most 32 levels/);
    }
    expect(await listTrunks(t)).toEqual([]);
    expect(await listNumbers(t)).toEqual([]);
    expect(rows('sessions') + rows('calls') + rows('idempotency')).toBe(0);
  });

  it('a field nested 32 levels is accepted; 33 is refused', async () => {
    expect((await send('POST', '/v1/trunks', deepTrunk(32), { 'idempotency-key': 'ok32' })).statusCode).toBe(201);
    expectError(await send('POST', '/v1/trunks', deepTrunk(33), { 'idempotency-key': 'no33' }), 400, 'invalid_request', 'x');
    expect(await listTrunks(t)).toHaveLength(1);
  });

  it('a body that is itself a deep array is refused without a param', async () => {
    const err = expectError(await send('POST', '/v1/trunks', `${'['.repeat(100_000)}${']'.repeat(100_000)}`), 400, 'invalid_request', null);
    expect(err.message).toBe('request body is nested too deeply: at most 33 levels');
  });
});

describe('UTF-8 (item 5)', () => {
  const withBytes = (bytes: number[]) =>
    Buffer.concat([Buffer.from('{"address":"sip.a.in","name":"a'), Buffer.from(bytes), Buffer.from('b"}')]);

  it.each([
    ['a stray continuation byte', [0x80]],
    ['0xff', [0xff, 0xfe]],
    ['an overlong encoding of /', [0xc0, 0xaf]],
    ['an encoded surrogate (CESU-8)', [0xed, 0xa0, 0x80]],
    ['a truncated sequence', [0xe0, 0xa4]],
    ['a code point above U+10FFFF', [0xf4, 0x90, 0x80, 0x80]],
  ])('%s → 400, nothing stored as U+FFFD', async (_label, bytes) => {
    const err = expectError(await send('POST', '/v1/trunks', withBytes(bytes), { 'idempotency-key': 'utf8' }), 400, 'invalid_request');
    expect(err.message).toMatch(/not valid UTF-8/);
    expectError(
      await send(
        'POST',
        '/v1/numbers',
        Buffer.concat([Buffer.from(`{"number":"${DID}","label":"`), Buffer.from(bytes), Buffer.from('"}')]),
      ),
      400,
      'invalid_request',
    );
    expect(await listTrunks(t)).toEqual([]);
    expect(await listNumbers(t)).toEqual([]);
  });

  it('valid multi-byte UTF-8 and a leading byte-order mark are accepted', async () => {
    const res = await send(
      'POST',
      '/v1/trunks',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"address":"sip.a.in","name":"मुंबई 📞"}')]),
    );
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().name).toBe('मुंबई 📞');
  });
});

describe('prototype keys (item 6)', () => {
  it.each([
    ['__proto__ at the top', '{"address":"sip.a.in","__proto__":{"polluted":"yes"}}', '__proto__'],
    [
      '__proto__ inside auth',
      '{"address":"sip.a.in","auth":{"username":"u","password":"p","__proto__":{"polluted":"yes"}}}',
      'auth.__proto__',
    ],
    ['__proto__ with a primitive value', '{"address":"sip.a.in","__proto__":1}', '__proto__'],
    ['constructor.prototype', '{"address":"sip.a.in","constructor":{"prototype":{"polluted":"yes"}}}', 'constructor.prototype'],
    ['__proto__ inside an array', '{"address":"sip.a.in","numbers":[{"__proto__":{"polluted":"yes"}}]}', 'numbers[0].__proto__'],
  ])('%s is refused, saying what and why', async (_label, payload, param) => {
    const err = expectError(await send('POST', '/v1/trunks', payload, { 'idempotency-key': 'proto' }), 400, 'invalid_request', param);
    expect(err.message).toContain(`${param} is refused`);
    expect(err.message).toMatch(/prototype pollution/);
    expect(Object.prototype).not.toHaveProperty('polluted');
    expect(await listTrunks(t)).toEqual([]);
  });

  it('a constructor key without a prototype inside is an ordinary (ignored) field', async () => {
    const res = await send('POST', '/v1/trunks', '{"address":"sip.a.in","constructor":{"name":"x"}}');
    expect(res.statusCode, res.body).toBe(201);
  });
});
