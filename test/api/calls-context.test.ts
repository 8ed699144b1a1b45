/**
 * `context` of `POST /v1/calls` (and `POST /v1/sessions`) is checked by the body schema:
 * `context.now` must be an ISO 8601 time, and nesting is bounded, before any agent, budget
 * or telephony check and before anything is written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI, EMI_CONTEXT } from '../support/agents.js';
import { expectError } from '../support/expect.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

const TO = '+919876543210';
const NOW_MESSAGE = 'context.now must be an ISO 8601 time such as 2026-11-21T10:30:00+05:30';
const DEPTH_MESSAGE = 'context is nested too deeply: at most 32 levels';

/** JSON text of `fields` plus a `context` nested `levels` deep (`{"a":{"a":…{}}}`), built without recursion. */
function deepBody(fields: Record<string, unknown>, levels: number): string {
  const context = '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
  return JSON.stringify({ ...fields, context: 0 }).replace(/0\}$/, `${context}}`);
}

const JSON_HEADERS = { 'content-type': 'application/json' };

function count(app: TestApp, table: 'calls' | 'sessions'): number {
  return app.runtime.services.repos.store.db.prepare(`SELECT COUNT(*) FROM ${table}`).pluck().get() as number;
}

describe('POST /v1/calls context.now', () => {
  it('rejects a context.now that is not an ISO 8601 time before the telephony check', async () => {
    t = await makeTestApp();
    for (const now of ['x', '', 'tomorrow', '21-11-2026', 12, true, {}, ['2026-11-21']]) {
      const res = await t.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true, context: { ...EMI_CONTEXT, now } });
      const error = expectError(res, 400, 'invalid_request', 'context.now');
      expect(error.message).toBe(NOW_MESSAGE);
    }
    // Prepare-only as well, and nothing was written.
    expectError(await t.call('POST', '/v1/calls', { ...EMI, to: TO, context: { now: 'x' } }), 400, 'invalid_request', 'context.now');
    expect(count(t, 'calls')).toBe(0);
    expect(count(t, 'sessions')).toBe(0);
  });

  it('accepts a valid or null context.now', async () => {
    t = await makeTestApp();
    for (const now of ['2026-11-21T10:30:00+05:30', '2026-11-21', null]) {
      const res = await t.call('POST', '/v1/calls', { ...EMI, to: TO, context: { ...EMI_CONTEXT, now } });
      expect(res.statusCode, res.body).toBe(201);
    }
    // With dial: true and no telephony, the body passes and the telephony check answers.
    expectError(
      await t.call('POST', '/v1/calls', {
        ...EMI,
        to: TO,
        dial: true,
        context: { ...EMI_CONTEXT, now: '2026-11-21T10:30:00+05:30' },
      }),
      503,
      'telephony_not_configured',
    );
  });
});

describe('deeply nested context', () => {
  it('POST /v1/calls: 100 000 levels is 400 and creates nothing; 32 levels is accepted', async () => {
    t = await makeTestApp();
    const body = deepBody({ agent_id: 'ag_emi_reminder', to: TO }, 100_000);
    expect(body.length).toBeGreaterThan(500_000);
    expect(body.length).toBeLessThan(t.settings.body_limit_bytes);
    const res = await t.call('POST', '/v1/calls', body, { headers: JSON_HEADERS });
    expect(expectError(res, 400, 'invalid_request', 'context').message).toBe(DEPTH_MESSAGE);
    const dial = await t.call('POST', '/v1/calls', deepBody({ agent_id: 'ag_emi_reminder', to: TO, dial: true }, 100_000), {
      headers: JSON_HEADERS,
    });
    expectError(dial, 400, 'invalid_request', 'context');
    expectError(
      await t.call('POST', '/v1/calls', deepBody({ agent_id: 'ag_emi_reminder', to: TO }, 33), { headers: JSON_HEADERS }),
      400,
      'invalid_request',
      'context',
    );
    expect(count(t, 'calls')).toBe(0);
    expect(count(t, 'sessions')).toBe(0);

    // The shipped agents require context keys a 32-level chain of "a" lacks: an agent without any.
    await t.agent('ag_no_context', { direction: 'outbound' });
    const ok = await t.call('POST', '/v1/calls', deepBody({ agent_id: 'ag_no_context', to: TO }, 32), { headers: JSON_HEADERS });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(count(t, 'calls')).toBe(1);
    expect((await t.call('GET', '/v1/health', undefined, { key: null })).statusCode).toBe(200);
  });

  it('POST /v1/sessions: 100 000 levels is 400 and creates nothing; 32 levels is accepted', async () => {
    t = await makeTestApp();
    const res = await t.call('POST', '/v1/sessions', deepBody({ agent_id: 'ag_clinic_booking' }, 100_000), {
      headers: JSON_HEADERS,
    });
    expect(expectError(res, 400, 'invalid_request', 'context').message).toBe(DEPTH_MESSAGE);
    expect(count(t, 'sessions')).toBe(0);
    const ok = await t.call('POST', '/v1/sessions', deepBody({ agent_id: 'ag_clinic_booking' }, 32), { headers: JSON_HEADERS });
    expect(ok.statusCode, ok.body).toBe(201);
    expect(count(t, 'sessions')).toBe(1);
  });
});
