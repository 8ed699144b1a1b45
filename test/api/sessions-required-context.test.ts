/**
 * An agent's `required_context`, `{{customer_name}}` and `context_defaults` (docs/agents.md
 * "Context: what a session must bring"): no session opens — `POST /v1/sessions`, agent load, `POST
 * /v1/calls` prepare or dial — without the values its prompts speak, and nothing is recorded or
 * dialled when one is missing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { makeTestApp, minimalAgent, type TestApp } from '../support/app.js';
import { expectError, expectOk } from '../support/expect.js';

const TO = '+919876543210';
const FROM = '+918069000001';
const EMI_CONTEXT = { emi_amount: '12,500', due_date: '25 November', loan_last4: '4321' };

let fake: FakeLiveKit;
let t: TestApp;

beforeAll(async () => {
  fake = await startFakeLiveKit();
  const telephony = new LiveKitTelephony({
    url: fake.url,
    apiKey: fake.apiKey,
    apiSecret: fake.apiSecret,
    agentName: 'vagent-media',
    requestTimeoutS: 5,
    waitUntilAnswered: true,
  });
  t = await makeTestApp({}, { telephony });
  expect((await t.call('POST', '/v1/trunks', { address: 'sip.example-carrier.in', numbers: [FROM] })).statusCode).toBe(201);
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

const sessionCount = (): number =>
  (t.runtime.services.repos.store.db.prepare('SELECT COUNT(*) AS n FROM sessions').get() as { n: number }).n;
const callCount = (): number => (t.runtime.services.repos.store.db.prepare('SELECT COUNT(*) AS n FROM calls').get() as { n: number }).n;

describe('required_context of the shipped EMI agent', () => {
  it('POST /v1/sessions without context is invalid_request naming every missing value; nothing is stored', async () => {
    const before = sessionCount();
    const err = expectError(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_emi_reminder' }),
      400,
      'invalid_request',
      'context.emi_amount',
    );
    expect(err.message).toContain('context.emi_amount, context.due_date, context.loan_last4 and customer_name');
    expect(err.message).toContain('ag_emi_reminder');
    expect(sessionCount()).toBe(before);
  });

  it('agent load reports the first missing key in param, an empty or unspeakable one with its reason', async () => {
    const body = { customer_name: 'Ravi Kumar', context: { ...EMI_CONTEXT, due_date: '  ', loan_last4: { digits: '4321' } } };
    const err = expectError(await t.call('POST', '/v1/agents/ag_emi_reminder/load', body), 400, 'invalid_request', 'context.due_date');
    expect(err.message).toContain('context.due_date (empty) and context.loan_last4 (not text or a number)');
  });

  it('a prompt that says {{customer_name}} needs customer_name (param customer_name)', async () => {
    expectError(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_emi_reminder', context: EMI_CONTEXT }),
      400,
      'invalid_request',
      'customer_name',
    );
    expectError(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_emi_reminder', customer_name: ' ', context: EMI_CONTEXT }),
      400,
      'invalid_request',
      'customer_name',
    );
  });

  it('opens with everything given, and no prompt has a blank', async () => {
    const res = await t.call('POST', '/v1/sessions', {
      agent_id: 'ag_emi_reminder',
      customer_name: 'Ravi Kumar',
      context: EMI_CONTEXT,
    });
    const opened = expectOk<{ opening: { text: string } }>(res, 201);
    expect(opened.opening.text).toContain('Am I speaking with Ravi Kumar?');
    const turn = expectOk<{ text: string }>(
      await t.call('POST', `/v1/sessions/${(res.json() as { session_id: string }).session_id}/turn`, { text: 'yes' }),
      200,
    );
    expect(turn.text).toContain('the EMI of rupees 12,500 on your loan account ending 4321 is due on 25 November');
  });

  it('POST /v1/calls (prepare) without a key is refused and records no call', async () => {
    const before = callCount();
    const body = { agent_id: 'ag_delivery_confirmation', to: TO, customer_name: 'Asha', context: { seller_name: 'ShopKart' } };
    const err = expectError(await t.call('POST', '/v1/calls', body), 400, 'invalid_request', 'context.delivery_date');
    expect(err.message).toMatch(/needs context\.delivery_date:/);
    expect(callCount()).toBe(before);
  });

  it('POST /v1/calls with dial: true without a key is refused before anything is dialled', async () => {
    const dials = fake.sipParticipants().length;
    const before = callCount();
    const body = { agent_id: 'ag_emi_reminder', to: TO, from: FROM, dial: true, context: EMI_CONTEXT };
    expectError(
      await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'ctx-dial-1' } }),
      400,
      'invalid_request',
      'customer_name',
    );
    expect(fake.sipParticipants().length).toBe(dials);
    expect(callCount()).toBe(before);
    const placed = await t.call(
      'POST',
      '/v1/calls',
      { ...body, customer_name: 'Ravi Kumar' },
      { headers: { 'idempotency-key': 'ctx-dial-2' } },
    );
    expect(placed.statusCode, placed.body).toBe(201);
    expect(fake.sipParticipants().length).toBe(dials + 1);
  });
});

describe('required_context and context_defaults of an agent', () => {
  const agent = {
    ...minimalAgent('ag_ctx_branch'),
    opening: [{ text: 'Hello from {{context.branch}}, order {{context.order.id}}.', requires_user_input: true }],
    closing: 'Visit us at {{context.branch}}. Bye!',
    required_context: ['order.id'],
    context_defaults: { branch: 'our nearest branch' },
  };
  beforeAll(async () => {
    expect((await t.call('PUT', '/v1/agents/ag_ctx_branch', agent)).statusCode).toBe(200);
  });

  it('a dotted key names a nested value', async () => {
    expectError(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_ctx_branch', context: { order: 'A1' } }),
      400,
      'invalid_request',
      'context.order.id',
    );
    const res = await t.call('POST', '/v1/sessions', { agent_id: 'ag_ctx_branch', context: { order: { id: 'A1' } } });
    expect(expectOk<{ opening: { text: string } }>(res, 201).opening.text).toBe('Hello from our nearest branch, order A1.');
  });

  it('a default fills an absent or blank key; a given value wins', async () => {
    const blank = await t.call('POST', '/v1/sessions', { agent_id: 'ag_ctx_branch', context: { order: { id: 7 }, branch: '' } });
    expect(expectOk<{ opening: { text: string } }>(blank, 201).opening.text).toBe('Hello from our nearest branch, order 7.');
    const given = await t.call('POST', '/v1/sessions', {
      agent_id: 'ag_ctx_branch',
      context: { order: { id: 7 }, branch: 'Koramangala' },
    });
    expect(expectOk<{ opening: { text: string } }>(given, 201).opening.text).toBe('Hello from Koramangala, order 7.');
  });

  it('the default is spoken in later prompts too (the closing line)', async () => {
    const s = expectOk<{ session_id: string }>(
      await t.call('POST', '/v1/sessions', { agent_id: 'ag_ctx_branch', context: { order: { id: 7 } } }),
      201,
    );
    const turn = expectOk<{ text: string }>(await t.call('POST', `/v1/sessions/${s.session_id}/turn`, { text: 'yes' }), 200);
    expect(turn.text).toContain('Visit us at our nearest branch.');
  });

  it('PUT refuses a key both required and defaulted, a key listed twice and a malformed key', async () => {
    expectError(
      await t.call('PUT', '/v1/agents/ag_ctx_bad', { ...agent, id: 'ag_ctx_bad', context_defaults: { 'order.id': 'x' } }),
      400,
      'invalid_request',
      'context_defaults.order.id',
    );
    expectError(
      await t.call('PUT', '/v1/agents/ag_ctx_bad', { ...agent, id: 'ag_ctx_bad', required_context: ['a', 'a'] }),
      400,
      'invalid_request',
      'required_context[1]',
    );
    expectError(
      await t.call('PUT', '/v1/agents/ag_ctx_bad', { ...agent, id: 'ag_ctx_bad', required_context: ['no spaces'] }),
      400,
      'invalid_request',
      'required_context[0]',
    );
    expectError(
      await t.call('PUT', '/v1/agents/ag_ctx_bad', { ...agent, id: 'ag_ctx_bad', context_defaults: { branch: '  ' } }),
      400,
      'invalid_request',
      'context_defaults.branch',
    );
  });
});
