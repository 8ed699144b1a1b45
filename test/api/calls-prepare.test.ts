/**
 * `POST /v1/calls` without dial, `GET /v1/calls/{id}`, `GET /v1/calls`, and the daily budget
 * (docs/calls.md "Placing calls", "Call status", "The daily budget"; `CallPlacementSchema` and
 * `CallStatusSchema` in src/contract/calls.ts; docs/api-decisions.md "Calls", "Errors").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI, EMI_CONTEXT } from '../support/agents.js';
import { ERROR_STATUS, type ErrorCode } from '../../src/domain/errors.js';
import { expectError as expectErrorWithStatus } from '../support/expect.js';

/** The error body of `code` with its status (`ERROR_STATUS` in src/domain/errors.ts). */
function expectError(res: Parameters<typeof expectErrorWithStatus>[0], code: ErrorCode, param?: string | null) {
  return expectErrorWithStatus(res, ERROR_STATUS[code], code, param);
}

let t: TestApp;
let clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
const TO = '+919876543210';

beforeAll(async () => {
  t = await makeTestApp({}, { nowS: () => clock });
});
afterAll(async () => t.close());

async function place(body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return t.call('POST', '/v1/calls', body, { headers });
}

describe('POST /v1/calls (prepare-only)', () => {
  it('prepares a call: session opened, nothing dialled, dial_required true', async () => {
    const res = await place({ ...EMI, to: TO, context: { ...EMI_CONTEXT, amount_due: 12500 } });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      call_id: expect.stringMatching(/^cl_[1-9][0-9]*$/),
      session_id: expect.stringMatching(/^se_[1-9][0-9]*$/),
      agent_id: 'ag_emi_reminder',
      to: TO,
      from: null,
      idempotent: false,
      status: 'prepared',
      dial_required: true,
    });
    expect(body.call_id.slice(3)).toBe(body.session_id.slice(3));
    const session = await t.call('GET', `/v1/sessions/${body.session_id}`);
    expect(session.statusCode).toBe(200);
  });

  it('records from as metadata and reports idempotent when a key was sent', async () => {
    const res = await place({ ...EMI, to: TO, from: '+918000000001' }, { 'idempotency-key': 'prep-1' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ from: '+918000000001', idempotent: true, status: 'prepared' });
    const again = await place({ ...EMI, to: TO, from: '+918000000001' }, { 'idempotency-key': 'prep-1' });
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json()).toEqual(res.json());
  });

  it.each([
    [{ to: TO }, 'invalid_request', 'agent_id'],
    [{ agent_id: 'ag_emi_reminder' }, 'invalid_request', 'to'],
    [{ ...EMI, to: '98765' }, 'invalid_request', 'to'],
    [{ ...EMI, to: TO, from: 'x' }, 'invalid_request', 'from'],
    [{ ...EMI, to: TO, context: [1] }, 'invalid_request', 'context'],
    [{ ...EMI, to: TO, context: 'x' }, 'invalid_request', 'context'],
    [{ ...EMI, to: TO, dial: 'yes' }, 'invalid_request', 'dial'],
    [{ ...EMI, to: TO, ringing_timeout_s: 2 }, 'invalid_request', 'ringing_timeout_s'],
    [{ ...EMI, to: TO, ringing_timeout_s: 30.5 }, 'invalid_request', 'ringing_timeout_s'],
    [{ ...EMI, to: TO, max_call_duration_s: 999_999 }, 'invalid_request', 'max_call_duration_s'],
    [{ agent_id: 'AG-bad', to: TO }, 'workflow_not_found', 'agent_id'],
    [{ agent_id: 'ag_nope', to: TO }, 'not_found', 'agent_id'],
  ])('rejects %j with %s', async (body, code, param) => {
    expectError(await place(body), code as ErrorCode, param);
  });

  it('rejects an inbound agent with not_found "Workflow not outbound." (a missing one says otherwise)', async () => {
    const inbound = await place({ agent_id: 'ag_clinic_booking', to: TO });
    expectError(inbound, 'not_found');
    expect(inbound.json().error.message).toBe('Workflow not outbound.');
    const missing = await place({ agent_id: 'ag_nope', to: TO });
    expect(missing.json().error.message).not.toBe('Workflow not outbound.');
  });

  it('fails dial: true with telephony_not_configured, never a silent prepare', async () => {
    const before = (await t.call('GET', '/v1/calls?limit=100')).json().data.length;
    expectError(await place({ ...EMI, to: TO, dial: true }), 'telephony_not_configured', 'dial');
    expect((await t.call('GET', '/v1/calls?limit=100')).json().data.length).toBe(before);
  });
});

describe('hostile input on POST /v1/calls', () => {
  it.each([
    ['an array body', [1, 2], 'invalid_request'],
    ['a null body', null, 'invalid_request'],
    ['a string body', 'call me', 'invalid_request'],
    ['a 16 KiB agent id', { agent_id: `ag_${'x'.repeat(16 * 1024 - 3)}`, to: TO }, 'workflow_not_found'],
    ['a 20 KiB agent id', { agent_id: 'a'.repeat(20 * 1024), to: TO }, 'workflow_not_found'],
    ['a 4 KiB to', { ...EMI, to: `+91${'9'.repeat(4096)}` }, 'invalid_request'],
    ['a customer name over 200 characters', { ...EMI, to: TO, customer_name: 'x'.repeat(201) }, 'invalid_request'],
    ['a lone surrogate in the title', { ...EMI, to: TO, title: 'bad \ud800' }, 'invalid_request'],
    ['a non-numeric ringing timeout', { ...EMI, to: TO, ringing_timeout_s: '30' }, 'invalid_request'],
  ])('%s → %s, nothing created', async (_name, body, code) => {
    const before = (await t.call('GET', '/v1/calls?limit=100')).json().data.length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(body),
    });
    expect(res.statusCode, res.body.slice(0, 200)).toBe(code === 'workflow_not_found' ? 404 : 400);
    expect(res.json().error.code).toBe(code);
    expect(res.body.length).toBeLessThan(2000);
    expect((await t.call('GET', '/v1/calls?limit=100')).json().data.length).toBe(before);
  });

  it('keeps a context with __proto__ and constructor keys as plain data', async () => {
    const payload = `{"agent_id":"ag_emi_reminder","to":"${TO}","context":{"__proto__":{"polluted":true},"constructor":{"prototype":{"x":1}},"emi_amount":"5,000"}}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload,
    });
    expect([201, 400]).toContain(res.statusCode);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

describe('GET /v1/calls/{call_id}', () => {
  it('is in_progress until the session ends, then completed with ended_at, duration_s and cost', async () => {
    const placed = (await place({ ...EMI, to: TO, customer_name: 'Asha' })).json();
    const open = await t.call('GET', `/v1/calls/${placed.call_id}`);
    expect(open.statusCode).toBe(200);
    expect(open.json()).toMatchObject({
      call_id: placed.call_id,
      session_id: placed.session_id,
      agent_id: 'ag_emi_reminder',
      status: 'in_progress',
      started_at: clock,
      ended_at: null,
      duration_s: null,
      customer_name: 'Asha',
      cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 0 },
      direction: 'outbound',
      to: TO,
      dial_status: 'not_dialled',
    });
    clock += 42.5;
    const ended = await t.call('POST', `/v1/sessions/${placed.session_id}/end`);
    expect(ended.statusCode).toBe(200);
    const done = (await t.call('GET', `/v1/calls/${placed.call_id}`)).json();
    expect(done).toMatchObject({ status: 'completed', ended_at: clock, duration_s: 42.5 });
  });

  it('session_not_found for a malformed id, not_found for a missing one', async () => {
    expectError(await t.call('GET', '/v1/calls/cl_abc'), 'session_not_found', 'call_id');
    expectError(await t.call('GET', '/v1/calls/se_12'), 'session_not_found', 'call_id');
    expectError(await t.call('GET', '/v1/calls/cl_12345'), 'not_found', 'call_id');
    expectError(await t.call('GET', `/v1/calls/cl_${'9'.repeat(5000)}`), 'session_not_found', 'call_id');
  });

  it('a plain session has no call', async () => {
    const s = (await t.call('POST', '/v1/sessions', EMI)).json();
    expectError(await t.call('GET', `/v1/calls/cl_${s.session_id.slice(3)}`), 'not_found');
  });

  it("hides another tenant's call in enforce mode", async () => {
    const e = await makeTestApp({ auth_mode: 'enforce' });
    try {
      const placed = (await e.call('POST', '/v1/calls', { ...EMI, to: TO })).json();
      const other = e.tenantKey('acme');
      expectError(await e.call('GET', `/v1/calls/${placed.call_id}`, undefined, { key: other }), 'not_found');
      expect((await e.call('GET', '/v1/calls', undefined, { key: other })).json().data).toEqual([]);
    } finally {
      await e.close();
    }
  });
});

describe('GET /v1/calls', () => {
  it('lists newest first with cursor pagination and a status filter', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await place({ ...EMI, to: TO })).json().call_id);
    await t.call('POST', `/v1/sessions/se_${ids[1]!.slice(3)}/end`);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await t.call('GET', `/v1/calls?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.statusCode).toBe(200);
      const page = res.json() as { data: Array<{ call_id: string }>; has_more: boolean; next_cursor: string | null };
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((c) => c.call_id));
      cursor = page.next_cursor;
      expect(page.has_more).toBe(cursor !== null);
    } while (cursor);
    expect(seen.slice(0, 5)).toEqual([...ids].reverse());
    expect(new Set(seen).size).toBe(seen.length);
    const completed = (await t.call('GET', '/v1/calls?status=completed&limit=100')).json().data as Array<{
      call_id: string;
      status: string;
    }>;
    expect(completed.map((c) => c.call_id)).toContain(ids[1]);
    expect(completed.every((c) => c.status === 'completed')).toBe(true);
    const inProgress = (await t.call('GET', '/v1/calls?status=in_progress&limit=100')).json().data as Array<{ call_id: string }>;
    expect(inProgress.map((c) => c.call_id)).not.toContain(ids[1]);
  });

  it.each(['status=ringing', 'limit=0', 'limit=101', 'limit=abc', 'cursor=bm90LWEtY3Vyc29y'])('rejects %s', async (q) => {
    expectError(await t.call('GET', `/v1/calls?${q}`), 'invalid_request');
  });
});

describe('daily budget', () => {
  it('rejects calls over budget with rate_limit_exceeded before any work; the reservation ends with the session', async () => {
    const b = await makeTestApp({ tenant_daily_budget_inr: 4, call_reservation_inr: 2 }, { nowS: () => clock });
    try {
      const first = (await b.call('POST', '/v1/calls', { ...EMI, to: TO })).json();
      const second = await b.call('POST', '/v1/calls', { ...EMI, to: TO });
      expect(second.statusCode, second.body).toBe(201);
      const before = (await b.call('GET', '/v1/calls?limit=100')).json().data.length;
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }), 'rate_limit_exceeded');
      expect((await b.call('GET', '/v1/calls?limit=100')).json().data.length).toBe(before);
      // Ending a call releases its hold (its real cost, here 0, counts instead).
      await b.call('POST', `/v1/sessions/${first.session_id}/end`);
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
      // The budget check comes before the telephony check.
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true }), 'rate_limit_exceeded');
      // Body and agent problems come before the budget.
      expectError(await b.call('POST', '/v1/calls', { agent_id: 'ag_nope', to: TO }), 'not_found');
      // A rejected call is not stored under its key: it runs again once there is room.
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }, { headers: { 'idempotency-key': 'b1' } }), 'rate_limit_exceeded');
      const open = (await b.call('GET', '/v1/calls?status=in_progress&limit=100')).json().data as Array<{ session_id: string }>;
      for (const c of open) await b.call('POST', `/v1/sessions/${c.session_id}/end`);
      const retried = await b.call('POST', '/v1/calls', { ...EMI, to: TO }, { headers: { 'idempotency-key': 'b1' } });
      expect(retried.statusCode, retried.body).toBe(201);
      expect(retried.headers['idempotency-replayed']).toBeUndefined();
    } finally {
      await b.close();
    }
  });

  it('admits exactly one of 20 concurrent calls when the budget holds one', async () => {
    const b = await makeTestApp({ tenant_daily_budget_inr: 2, call_reservation_inr: 2 }, { nowS: () => clock });
    try {
      const results = await Promise.all(Array.from({ length: 20 }, () => b.call('POST', '/v1/calls', { ...EMI, to: TO })));
      const codes = results.map((r) => r.statusCode);
      expect(codes.filter((c) => c === 201)).toHaveLength(1);
      expect(codes.filter((c) => c === 429)).toHaveLength(19);
    } finally {
      await b.close();
    }
  });

  it('admits a call while the tenant is below its budget, even one smaller than a reservation', async () => {
    const b = await makeTestApp({ tenant_daily_budget_inr: 1, call_reservation_inr: 2 }, { nowS: () => clock });
    try {
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }), 'rate_limit_exceeded');
    } finally {
      await b.close();
    }
  });

  it('stops counting a reservation once the call could no longer be running (max_call_duration_s after it was placed)', async () => {
    let now = Date.parse('2026-11-21T09:00:00+05:30') / 1000;
    const b = await makeTestApp({ tenant_daily_budget_inr: 2, call_reservation_inr: 2 }, { nowS: () => now });
    try {
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO, max_call_duration_s: 600 })).statusCode).toBe(201);
      now += 599;
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }), 'rate_limit_exceeded');
      now += 2;
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
      // That one holds the default 1800 s.
      now += 1799;
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }), 'rate_limit_exceeded');
    } finally {
      await b.close();
    }
  });

  it('resets at midnight in the timezone setting and can be set per tenant', async () => {
    let now = Date.parse('2026-11-21T23:59:00+05:30') / 1000;
    const b = await makeTestApp({ tenant_daily_budget_inr: 2, call_reservation_inr: 2, timezone: 'Asia/Kolkata' }, { nowS: () => now });
    try {
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
      expectError(await b.call('POST', '/v1/calls', { ...EMI, to: TO }), 'rate_limit_exceeded');
      now += 120; // 00:01 IST: a new day
      expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
      // A tenant's own budget overrides the instance setting; 0 there means no budget.
      b.runtime.services.tenants.setBudget('default', 0);
      for (let i = 0; i < 3; i++) expect((await b.call('POST', '/v1/calls', { ...EMI, to: TO })).statusCode).toBe(201);
    } finally {
      await b.close();
    }
  });
});
