/**
 * `GET /v1/sessions` (extension: a tenant's sessions, newest first, cursor pages) and Session
 * detail's extension fields (agent, status, outcome, steps with captured values;
 * docs/api-decisions.md "Sessions"). The other fields of `SessionDetailSchema`
 * (src/contract/sessions.ts) stay as they are.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

let t: TestApp;
let clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;

beforeAll(async () => {
  t = await makeTestApp({}, { speech: testSpeech(), nowS: () => clock });
});
afterAll(async () => t.close());

async function open(body: Record<string, unknown>, key?: string): Promise<string> {
  clock += 1;
  const res = await t.call('POST', '/v1/sessions', body, key === undefined ? {} : { key });
  expect(res.statusCode, res.body).toBe(201);
  return (res.json() as { session_id: string }).session_id;
}

const SPEC_DETAIL_KEYS = [
  'session_id',
  'cache_hits',
  'live_tts_calls',
  'llm_calls',
  'total_cost_inr',
  'llm_cost_inr',
  'tts_cost_inr',
  'stt_cost_inr',
  'llm_input_tokens',
  'llm_output_tokens',
  'llm_cached_tokens',
  'tts_chars',
  'stt_seconds',
  'cache_hit_percent',
  'live_tts_percent',
  'avg_latency_ms',
  'total_latency_ms',
  'total_silence_ms',
  'turns',
];

describe('GET /v1/sessions', () => {
  it("lists the tenant's sessions newest first, in cursor pages, and no other tenant's", async () => {
    const acme = t.tenantKey('acme-sessions');
    await t.agent('ag_acme_only', { key: acme });
    const foreign = await open({ agent_id: 'ag_acme_only' }, acme);
    const mine = [];
    for (let i = 0; i < 3; i++) mine.push(await open({ agent_id: 'ag_clinic_booking', customer_name: `Caller ${i}`, title: `t${i}` }));
    const turn = await t.call('POST', `/v1/sessions/${mine[0]}/turn`, { text: 'Priya Sharma' });
    expect(turn.statusCode).toBe(200);
    expect((await t.call('POST', `/v1/sessions/${mine[1]}/end`)).statusCode).toBe(200);

    const all = await t.call('GET', '/v1/sessions?limit=100');
    expect(all.statusCode, all.body).toBe(200);
    const body = all.json() as { data: Array<Record<string, unknown>>; has_more: boolean; next_cursor: string | null };
    expect(body).toMatchObject({ has_more: false, next_cursor: null });
    const ids = body.data.map((s) => s.session_id);
    expect(ids.slice(0, 3)).toEqual([...mine].reverse());
    expect(ids).not.toContain(foreign);
    const [newest, ended, first] = body.data;
    expect(newest).toEqual({
      session_id: mine[2],
      agent_id: 'ag_clinic_booking',
      status: 'open',
      outcome: null,
      title: 't2',
      customer_name: 'Caller 2',
      created_at: expect.any(Number),
      ended_at: null,
      turns: 0,
      cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 0 },
    });
    expect(ended).toMatchObject({ session_id: mine[1], status: 'ended', outcome: 'abandoned', ended_at: expect.any(Number) });
    expect(first).toMatchObject({ session_id: mine[0], status: 'open', turns: 1 });

    const acmeList = (await t.call('GET', '/v1/sessions', undefined, { key: acme })).json() as {
      data: Array<{ session_id: string }>;
    };
    expect(acmeList.data.map((s) => s.session_id)).toEqual([foreign]);

    const page1 = (await t.call('GET', '/v1/sessions?limit=2')).json() as {
      data: Array<{ session_id: string }>;
      has_more: boolean;
      next_cursor: string;
    };
    expect(page1.data.map((s) => s.session_id)).toEqual([mine[2], mine[1]]);
    expect(page1.has_more).toBe(true);
    const page2 = (await t.call('GET', `/v1/sessions?limit=2&cursor=${encodeURIComponent(page1.next_cursor)}`)).json() as {
      data: Array<{ session_id: string }>;
    };
    expect(page2.data[0]!.session_id).toBe(mine[0]);
  });

  it('refuses a bad limit or cursor with invalid_request', async () => {
    for (const q of ['limit=0', 'limit=101', 'limit=two', 'limit=1.5'])
      expectError(await t.call('GET', `/v1/sessions?${q}`), 400, 'invalid_request');
    const bad = await t.call('GET', '/v1/sessions?cursor=bm9wZQ');
    expectError(bad, 400, 'invalid_request');
    expect(bad.json().error.param).toBe('cursor');
    expectError(await t.call('GET', '/v1/sessions', undefined, { key: null }), 401, 'unauthorized');
  });
});

describe('GET /v1/sessions/{id} extension object', () => {
  it('adds `session`: agent, status, outcome, times and each step with its captured value', async () => {
    const id = await open({ agent_id: 'ag_clinic_booking', customer_name: 'Priya', title: 'booking' });
    const fresh = (await t.call('GET', `/v1/sessions/${id}`)).json() as Record<string, unknown>;
    expect(Object.keys(fresh)).toEqual(expect.arrayContaining(SPEC_DETAIL_KEYS));
    expect(fresh.session_id).toBe(Number(id.slice(3)));
    // `SessionDetailSchema` (src/contract/sessions.ts): no top-level status or ended_at in this response.
    expect(fresh).not.toHaveProperty('status');
    expect(fresh).not.toHaveProperty('ended_at');
    const rec = fresh.session as Record<string, unknown>;
    expect(rec).toMatchObject({
      agent_id: 'ag_clinic_booking',
      status: 'open',
      outcome: null,
      title: 'booking',
      customer_name: 'Priya',
      ended_at: null,
    });
    const steps = rec.steps as Array<Record<string, unknown>>;
    expect(steps[0]).toEqual({ id: 'name', status: 'pending', attempts: 0, slot: 'patient_name', value: null });

    for (const text of ['Priya Sharma', 'yes']) expect((await t.call('POST', `/v1/sessions/${id}/turn`, { text })).statusCode).toBe(200);
    const captured = (await t.call('GET', `/v1/sessions/${id}`)).json() as { session: { steps: Array<Record<string, unknown>> } };
    expect(captured.session.steps[0]).toMatchObject({ id: 'name', status: 'done', slot: 'patient_name', value: 'Priya Sharma' });

    expect((await t.call('POST', `/v1/sessions/${id}/end`)).statusCode).toBe(200);
    const ended = (await t.call('GET', `/v1/sessions/${id}`)).json() as Record<string, unknown>;
    expect(ended.session).toMatchObject({ status: 'ended', outcome: 'abandoned', ended_at: expect.any(Number) });
    expect((ended.turns as unknown[]).length).toBe(2);
  });
});
