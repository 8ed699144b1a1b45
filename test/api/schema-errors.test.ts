/**
 * Ids are validated by the request schemas (which the OpenAPI document publishes), yet a malformed
 * one keeps the code the API gives it (docs/api-decisions.md "Errors" › Request shapes); a request
 * also wrong in another way is answered `invalid_request` for that, as when the service checked ids
 * after the schema.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp();
});
afterAll(async () => t.close());

const TO = '+919876543210';
const sessions = () => t.runtime.services.repos.store.db.prepare('SELECT COUNT(*) FROM sessions').pluck().get() as number;

describe('a malformed id keeps its own code', () => {
  it.each([
    ['GET', '/v1/trunks/tk_SHOUTING', undefined, 404, 'trunk_not_found', 'trunk_id'],
    ['DELETE', '/v1/trunks/x', undefined, 404, 'trunk_not_found', 'trunk_id'],
    ['POST', '/v1/sessions/se_0/turn', { text: 'hello' }, 404, 'session_not_found', 'session_id'],
    ['POST', '/v1/sessions/42/end', undefined, 404, 'session_not_found', 'session_id'],
    ['GET', '/v1/sessions/se_x', undefined, 404, 'session_not_found', 'session_id'],
    ['GET', '/v1/calls/se_12', undefined, 404, 'session_not_found', 'call_id'],
    ['GET', '/v1/agents/AG_UPPER', undefined, 404, 'workflow_not_found', 'agent_id'],
    ['POST', '/v1/agents/ag-dash/load', {}, 404, 'workflow_not_found', 'agent_id'],
    ['PUT', '/v1/agents/ag-dash', {}, 400, 'invalid_request', 'agent_id'],
    ['POST', '/v1/sessions', { agent_id: 'clinic' }, 404, 'workflow_not_found', 'agent_id'],
    ['POST', '/v1/calls', { agent_id: `ag_${'x'.repeat(65)}`, to: TO }, 404, 'workflow_not_found', 'agent_id'],
    ['POST', '/v1/calls', { agent_id: 'ag_emi_reminder', to: TO, trunk_id: 'tk_1' }, 404, 'trunk_not_found', 'trunk_id'],
    ['DELETE', '/v1/numbers/919876543210', undefined, 400, 'invalid_request', 'number'],
  ] as const)('%s %s → %s %s', async (method, url, body, status, code, param) => {
    const error = expectError(await t.call(method, url, body), status, code, param);
    expect(error.message.length).toBeLessThan(200);
  });

  it('shortens a long malformed id in the message', async () => {
    const long = `se_${'9'.repeat(5000)}`;
    const error = expectError(await t.call('GET', `/v1/sessions/${long}`), 404, 'session_not_found', 'session_id');
    expect(error.message).toBe(`session id ${long.slice(0, 64)}… is malformed: se_ followed by a number`);
  });

  it('answers invalid_request for another fault of the same request, and creates nothing', async () => {
    expectError(await t.call('POST', '/v1/calls', { agent_id: 'BAD' }), 400, 'invalid_request', 'to');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'BAD', customer_phone: '12' }), 400, 'invalid_request', 'customer_phone');
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 42 }), 400, 'invalid_request', 'agent_id');
    expect(sessions()).toBe(0);
  });

  it('checks the path before the body', async () => {
    expectError(await t.call('POST', '/v1/sessions/se_x/turn', { text: '   ' }), 404, 'session_not_found', 'session_id');
  });
});
