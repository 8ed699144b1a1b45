/**
 * A known path asked with a method it lacks is 405 with an `Allow` header and the error body of
 * docs/api-decisions.md "Errors" (`invalid_request`), not 404.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { enc, expectError } from '../support/expect.js';

const DID = '+919876543210';
let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(async () => {
  await t.close();
});

describe('405 Method Not Allowed', () => {
  it.each([
    ['PATCH', '/v1/trunks', 'GET, HEAD, POST'],
    ['PUT', '/v1/trunks', 'GET, HEAD, POST'],
    ['DELETE', '/v1/sessions', 'GET, HEAD, POST'],
    ['PATCH', '/v1/numbers', 'GET, HEAD, POST'],
    ['POST', '/v1/trunks/tk_aaaaaaaaaaaaaaaaaaaa', 'DELETE, GET, HEAD'],
    ['GET', `/v1/numbers/${enc(DID)}/bind`, 'POST'],
    ['DELETE', '/v1/sessions/se_1/turn', 'POST'],
    ['POST', '/v1/health', 'GET, HEAD'],
    ['GET', '/v1/telephony/livekit/webhook', 'POST'],
    ['OPTIONS', '/v1/calls', 'GET, HEAD, POST'],
    ['PUT', '/v1/carriers/stream_token', 'POST'],
    ['GET', '/v1/carriers/twilio', 'DELETE, PUT'],
    ['POST', '/v1/carriers', 'GET, HEAD'],
  ])('%s %s → 405 with Allow: %s', async (method, url, allow) => {
    const res = await t.call(method, url);
    const err = expectError(res, 405, 'invalid_request', null);
    expect(res.headers.allow).toBe(allow);
    expect(err.message).toBe(`method ${method} is not allowed on ${url}; it allows ${allow}`);
  });

  it('is answered before authentication, as a 404 is', async () => {
    const res = await t.call('PATCH', '/v1/trunks', undefined, { key: null });
    expectError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('a query string does not hide the path', async () => {
    const res = await t.call('PATCH', '/v1/trunks?limit=1');
    expectError(res, 405, 'invalid_request');
    expect(res.headers.allow).toBe('GET, HEAD, POST');
  });

  it('paths no route has are still 404 not_found, without Allow', async () => {
    for (const [method, url] of [
      ['PATCH', '/v1/nope'],
      ['GET', '/v2/trunks'],
      ['DELETE', '/v1/trunks/tk_a/extra'],
    ] as const) {
      const res = await t.call(method, url);
      expectError(res, 404, 'not_found', null);
      expect(res.headers.allow).toBeUndefined();
    }
  });

  it('every path of the OpenAPI document answers 405 to each method it lacks, its Allow listing exactly its methods', async () => {
    const doc = (await t.call('GET', '/v1/openapi.json')).json() as { paths: Record<string, Record<string, unknown>> };
    const all = ['DELETE', 'GET', 'PATCH', 'POST', 'PUT'];
    let checked = 0;
    for (const [template, ops] of Object.entries(doc.paths)) {
      const url = template.replace(/\{[^}]+\}/g, 'x1');
      const has = Object.keys(ops).map((m) => m.toUpperCase());
      const allow = [...has, ...(has.includes('GET') ? ['HEAD'] : [])].sort().join(', ');
      for (const method of all.filter((m) => !has.includes(m))) {
        const res = await t.call(method, url);
        expect({ route: `${method} ${template}`, status: res.statusCode, allow: res.headers.allow }).toEqual({
          route: `${method} ${template}`,
          status: 405,
          allow,
        });
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThan(30);
  });
});
