/**
 * `/v1/agents` (docs/api-decisions.md "Agents"; docs/agents.md): apply, read, list, delete,
 * validation errors with field paths, versions, idempotency, tenancy, and the example agents of a
 * fresh dir.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';
import { testSpeech } from '../support/speech.js';

const AGENT = {
  name: 'Test agent',
  direction: 'outbound',
  language: 'en-IN',
  opening: [{ text: 'Hello from the test.' }],
  steps: [{ id: 'ok', ask: 'Is now a good time?', capture: { slot: 'good_time', type: 'yes_no' } }],
  closing: 'Bye!',
};

let t: TestApp;
beforeAll(async () => {
  t = await makeTestApp({}, { speech: testSpeech() });
});
afterAll(async () => t.close());

async function waitForAudio(id: string) {
  for (let i = 0; i < 200; i++) {
    const a = (await t.call('GET', `/v1/agents/${id}`)).json();
    if (a.audio.ready + a.audio.failed === a.audio.total) return a.audio;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('pre-synthesis did not finish');
}

describe('/v1/agents', () => {
  it('loads the four example agents into tenant default on a fresh state dir', async () => {
    const res = await t.call('GET', '/v1/agents');
    expect(res.statusCode).toBe(200);
    const ids = res.json().data.map((a: { id: string }) => a.id);
    expect(ids).toEqual(expect.arrayContaining(['ag_clinic_booking', 'ag_delivery_confirmation', 'ag_emi_reminder', 'ag_emi_reminder_hi']));
    expect(res.json()).toMatchObject({ has_more: false, next_cursor: null });
    expect(res.json().data[0]).not.toHaveProperty('definition');
  });

  it('creates, versions and pre-synthesises an agent', async () => {
    const put = await t.call('PUT', '/v1/agents/ag_test_one', AGENT);
    expect(put.statusCode, put.body).toBe(200);
    expect(put.json()).toMatchObject({
      id: 'ag_test_one',
      name: 'Test agent',
      direction: 'outbound',
      version: 1,
      description: null,
    });
    expect(put.json().definition).toMatchObject({ id: 'ag_test_one', timezone: 'Asia/Kolkata', close_grace_ms: 8000 });
    const audio = await waitForAudio('ag_test_one');
    expect(audio.failed).toBe(0);
    expect(audio.ready).toBe(audio.total);
    expect(audio.total).toBeGreaterThan(5);
    const same = await t.call('PUT', '/v1/agents/ag_test_one', { ...AGENT, id: 'ag_test_one' });
    expect(same.json().version).toBe(1);
    const changed = await t.call('PUT', '/v1/agents/ag_test_one', { ...AGENT, closing: 'Goodbye!' });
    expect(changed.json().version).toBe(2);
    expect(changed.json().digest).not.toBe(put.json().digest);
    const got = await t.call('GET', '/v1/agents/ag_test_one');
    expect(got.json().definition.closing).toBe('Goodbye!');
  });

  it('rejects invalid definitions with the field path, and stores nothing', async () => {
    const e = expectError(
      await t.call('PUT', '/v1/agents/ag_bad', {
        ...AGENT,
        steps: [{ id: 'x', ask: 'Q?', capture: { slot: 'v', type: 'colour' } }],
      }),
      400,
      'invalid_request',
    );
    expect(e.param).toBe('steps[0].capture.type');
    expect(e.message).toContain('steps[0].capture.type');
    expectError(await t.call('PUT', '/v1/agents/ag_bad', { ...AGENT, direction: 'sideways' }), 400, 'invalid_request', 'direction');
    expectError(await t.call('PUT', '/v1/agents/ag_bad', { ...AGENT, colour: 'blue' }), 400, 'invalid_request');
    expectError(
      await t.call('PUT', '/v1/agents/ag_bad', { ...AGENT, steps: [{ id: 'x', ask: 'Q?', confrim: 'readback' }] }),
      400,
      'invalid_request',
    );
    expectError(await t.call('PUT', '/v1/agents/ag_bad', { ...AGENT, id: 'ag_other' }), 400, 'invalid_request', 'id');
    expectError(await t.call('PUT', '/v1/agents/ag_bad', [AGENT]), 400, 'invalid_request');
    expectError(await t.call('PUT', '/v1/agents/Not-An-Id', AGENT), 400, 'invalid_request', 'agent_id');
    expectError(
      await t.call('PUT', '/v1/agents/ag_bad', {
        ...AGENT,
        steps: [
          { id: 'a', ask: 'Q?', capture: { slot: 'v', type: 'text' } },
          { id: 'a', ask: 'Q?' },
        ],
      }),
      400,
      'invalid_request',
      'steps[1].id',
    );
    expectError(await t.call('GET', '/v1/agents/ag_bad'), 404, 'not_found');
  });

  it('answers workflow_not_found for malformed ids and not_found for missing ones', async () => {
    expectError(await t.call('GET', '/v1/agents/nope'), 404, 'workflow_not_found');
    expectError(await t.call('DELETE', '/v1/agents/nope'), 404, 'workflow_not_found');
    expectError(await t.call('GET', '/v1/agents/ag_missing'), 404, 'not_found');
    expectError(await t.call('DELETE', '/v1/agents/ag_missing'), 404, 'not_found');
  });

  it('deletes an agent; sessions opened before keep running on their revision', async () => {
    await t.call('PUT', '/v1/agents/ag_doomed', AGENT);
    const s = (await t.call('POST', '/v1/sessions', { agent_id: 'ag_doomed' })).json();
    const del = await t.call('DELETE', '/v1/agents/ag_doomed');
    expect(del.json()).toEqual({ id: 'ag_doomed', deleted: true });
    expectError(await t.call('POST', '/v1/sessions', { agent_id: 'ag_doomed' }), 404, 'not_found');
    const turn = await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'yes' });
    expect(turn.statusCode).toBe(200);
  });

  it('replays a PUT with the same Idempotency-Key', async () => {
    const headers = { 'idempotency-key': 'put-1' };
    const a = await t.call('PUT', '/v1/agents/ag_idem', AGENT, { headers });
    const b = await t.call('PUT', '/v1/agents/ag_idem', AGENT, { headers });
    expect(b.headers['idempotency-replayed']).toBe('true');
    expect(b.body).toBe(a.body);
  });

  it('keeps agents per tenant', async () => {
    const keyB = t.tenantKey('acme');
    expect((await t.call('GET', '/v1/agents', undefined, { key: keyB })).json().data).toEqual([]);
    const put = await t.call('PUT', '/v1/agents/ag_clinic_booking', { ...AGENT, name: 'Acme clinic' }, { key: keyB });
    expect(put.json().version).toBe(1);
    expect((await t.call('GET', '/v1/agents/ag_clinic_booking')).json().name).toBe('Clinic appointment booking');
    expect((await t.call('GET', '/v1/agents/ag_clinic_booking', undefined, { key: keyB })).json().name).toBe('Acme clinic');
  });
});
