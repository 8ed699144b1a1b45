/**
 * The call's line through its life (docs/calls.md "Call status", "Hanging up"):
 * an outbound call shows as answered — from the dial that waited for the answer, or from a
 * LiveKit webhook showing its SIP participant `active` — and `POST /v1/calls/{id}/hangup`
 * (and ending the session of a dialled call) hangs the line up through LiveKit's RoomService,
 * ends the session and completes the call. All through the real livekit-server-sdk against
 * the fake LiveKit, which records the RoomService requests.
 */
import { RoomServiceClient } from 'livekit-server-sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { buildApp } from '../../src/http/app.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';

const TO = '+919876543210';
const FROM = '+918069000001';
/** What ag_emi_reminder's templates use. */
const EMI = { customer_name: 'Ravi Kumar', context: { emi_amount: '12,500', loan_last4: '4321', due_date: '25 November' } };
let fake: FakeLiveKit;
/** Dials wait for the answer (the default setting). */
let waiting: TestApp;
/** Dials return while the phone rings. */
let ringing: TestApp;

/** An app whose LiveKit is the fake, listening so the fake's webhooks reach it, with one trunk. */
async function dialApp(waitUntilAnswered: boolean): Promise<TestApp & { hookUrl: string }> {
  const app = await makeTestApp(
    {},
    {
      telephony: new LiveKitTelephony({
        url: fake.url,
        apiKey: fake.apiKey,
        apiSecret: fake.apiSecret,
        agentName: 'vagent-media',
        requestTimeoutS: 5,
        waitUntilAnswered,
        answerPollMs: 50,
      }),
    },
  );
  const address = await app.app.listen({ port: 0, host: '127.0.0.1' });
  expect((await app.call('POST', '/v1/trunks', { address: 'sip.example-carrier.in', numbers: [FROM] })).statusCode).toBe(201);
  return Object.assign(app, { hookUrl: `${address}/v1/telephony/livekit/webhook` });
}

/** Places a dialled call on `app`; returns the placement. */
async function dial(
  app: TestApp,
  key?: string,
): Promise<Record<string, unknown> & { call_id: string; session_id: string; room_name: string; provider_call_id: string }> {
  const res = await app.call(
    'POST',
    '/v1/calls',
    { agent_id: 'ag_emi_reminder', to: TO, dial: true, ...EMI },
    key ? { headers: { 'idempotency-key': key } } : {},
  );
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Waits until every webhook the fake queued has been processed by `app`. */
async function settle(app: TestApp): Promise<void> {
  await new Promise((r) => setTimeout(r, 50));
  await app.runtime.services.inbound.settled();
}

const identityOf = (callId: string) => `sip-${callId}`;
const callOf = async (app: TestApp, id: string) => (await app.call('GET', `/v1/calls/${id}`)).json();

beforeAll(async () => {
  fake = await startFakeLiveKit();
  const w = await dialApp(true);
  const r = await dialApp(false);
  waiting = w;
  ringing = r;
  fake.webhookUrl = w.hookUrl;
});
afterAll(async () => {
  await waiting.close();
  await ringing.close();
  await fake.close();
});
afterEach(() => {
  fake.behaviour = {};
});

describe('outbound calls show as answered', () => {
  it('a dial that waited for the callee is answered, with answered_at, in the placement, call show and call list', async () => {
    const before = Date.now() / 1000;
    const placed = await dial(waiting);
    expect(placed).toMatchObject({ status: 'ringing', dial_status: 'answered', answered_at: expect.any(Number) });
    expect(placed.answered_at as number).toBeGreaterThanOrEqual(before - 1);
    const call = await callOf(waiting, placed.call_id);
    expect(call).toMatchObject({ status: 'in_progress', dial_status: 'answered', answered_at: placed.answered_at });
    const listed = (await waiting.call('GET', '/v1/calls?limit=100'))
      .json()
      .data.find((c: { call_id: string }) => c.call_id === placed.call_id);
    expect(listed).toMatchObject({ dial_status: 'answered', answered_at: placed.answered_at });
  });

  it('a dial that did not wait is watched until the callee picks up, with no webhook (LiveKit sends none for it)', async () => {
    fake.webhookUrl = undefined;
    fake.behaviour = { ringMs: 400 };
    try {
      const gets = () => fake.requests.filter((r) => r.method === 'GetParticipant').length;
      const before = gets();
      const placed = await dial(ringing);
      expect(placed).toMatchObject({ dial_status: 'ringing', answered_at: null });
      let call = await callOf(ringing, placed.call_id);
      for (let i = 0; i < 150 && call.dial_status === 'ringing'; i++) {
        await new Promise((r) => setTimeout(r, 20));
        call = await callOf(ringing, placed.call_id);
      }
      expect(call).toMatchObject({ status: 'in_progress', dial_status: 'answered', answered_at: expect.any(Number) });
      expect(call.answered_at).toBeGreaterThanOrEqual(call.started_at);
      const asked = fake.requests.filter((r) => r.method === 'GetParticipant').at(-1)!;
      expect(asked.body).toEqual({ room: placed.room_name, identity: identityOf(placed.call_id) });
      expect(asked.grants).toMatchObject({ video: { roomAdmin: true, room: placed.room_name } });
      expect(gets() - before).toBeGreaterThan(1);
    } finally {
      fake.webhookUrl = (waiting as TestApp & { hookUrl: string }).hookUrl;
    }
  });

  it('a dial that did not wait rings until a webhook shows its SIP participant active; a repeated or late answer changes nothing', async () => {
    fake.webhookUrl = (ringing as TestApp & { hookUrl: string }).hookUrl;
    // The callee does not pick up within the test: only the webhook can say it answered.
    fake.behaviour = { ringMs: 60_000 };
    try {
      const placed = await dial(ringing);
      expect(placed).toMatchObject({ dial_status: 'ringing', answered_at: null });
      await settle(ringing);
      // participant_joined came while dialing (as LiveKit sends it): still ringing.
      expect(await callOf(ringing, placed.call_id)).toMatchObject({ dial_status: 'ringing', answered_at: null });

      const active = (event: string) => ({
        event,
        room: { sid: 'RM_x', name: placed.room_name },
        participant: {
          sid: 'PA_x',
          identity: identityOf(placed.call_id),
          kind: 'SIP',
          state: 'ACTIVE',
          attributes: { 'sip.callID': placed.provider_call_id, 'sip.callStatus': 'active', 'sip.phoneNumber': TO },
        },
      });
      const res = await fake.sendWebhook(active('track_published'));
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body)).toMatchObject({ recorded: true, duplicate: false });
      await settle(ringing);
      const answered = await callOf(ringing, placed.call_id);
      expect(answered).toMatchObject({ status: 'in_progress', dial_status: 'answered', answered_at: expect.any(Number) });

      // Another event showing it active is the same answer: deduplicated, answered_at kept.
      expect(JSON.parse((await fake.sendWebhook(active('participant_joined'))).body)).toMatchObject({
        recorded: true,
        duplicate: true,
      });
      await settle(ringing);
      expect(await callOf(ringing, placed.call_id)).toMatchObject({ dial_status: 'answered', answered_at: answered.answered_at });

      // Hung up, then an answer reported late (another call's first report) never reopens it.
      expect((await ringing.call('POST', `/v1/calls/${placed.call_id}/hangup`)).statusCode).toBe(200);
      const second = await dial(ringing);
      await ringing.call('POST', `/v1/calls/${second.call_id}/hangup`);
      await settle(ringing);
      const late = await fake.sendWebhook({
        ...active('track_published'),
        participant: {
          ...active('x').participant,
          identity: identityOf(second.call_id),
          attributes: { 'sip.callID': second.provider_call_id, 'sip.callStatus': 'active' },
        },
        room: { sid: 'RM_y', name: second.room_name },
      });
      expect(JSON.parse(late.body)).toMatchObject({ recorded: true, duplicate: false });
      await settle(ringing);
      expect(await callOf(ringing, second.call_id)).toMatchObject({
        status: 'completed',
        dial_status: 'completed',
        answered_at: null,
      });
    } finally {
      fake.webhookUrl = (waiting as TestApp & { hookUrl: string }).hookUrl;
    }
  });
});

describe('POST /v1/calls/{call_id}/hangup', () => {
  it('removes the SIP participant and deletes the room through the RoomService, ends the session and completes the call', async () => {
    const placed = await dial(waiting);
    const before = fake.requests.length;
    const res = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`, undefined, {
      headers: { 'idempotency-key': 'hang-1' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      call_id: placed.call_id,
      session_id: placed.session_id,
      status: 'completed',
      dial_status: 'completed',
      line: 'hung_up',
      ended_at: expect.any(Number),
      duration_s: expect.any(Number),
      answered_at: placed.answered_at,
    });
    const sent = fake.requests.slice(before).filter((r) => r.service === 'livekit.RoomService');
    expect(sent.map((r) => r.method)).toEqual(['RemoveParticipant', 'DeleteRoom']);
    expect(sent[0]!.body).toEqual({ room: placed.room_name, identity: identityOf(placed.call_id) });
    expect(sent[0]!.grants).toMatchObject({ iss: fake.apiKey, video: { roomAdmin: true, room: placed.room_name } });
    expect(sent[1]!.body).toEqual({ room: placed.room_name });
    expect(fake.hangups().slice(-2)).toEqual(sent);
    // The session has ended: a turn is refused.
    const turn = await waiting.call('POST', `/v1/sessions/${placed.session_id}/turn`, { text: 'hello?' });
    expectError(turn, 409, 'session_already_ended');

    // A retry under the key replays the response; LiveKit hears nothing more.
    const count = fake.requests.length;
    const replay = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`, undefined, {
      headers: { 'idempotency-key': 'hang-1' },
    });
    expect(replay.statusCode).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.json()).toEqual(body);
    // Hanging up again (another key) succeeds and says the line is already gone, without asking LiveKit.
    const again = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      status: 'completed',
      dial_status: 'completed',
      line: 'already_gone',
      ended_at: body.ended_at,
    });
    await settle(waiting);
    expect(fake.requests.length).toBe(count);
  });

  it('succeeds and says already_gone when LiveKit no longer has the participant or the room', async () => {
    const placed = await dial(waiting);
    // The callee's side went away without vagent hearing of it (no webhook).
    fake.webhookUrl = undefined;
    try {
      const rooms = new RoomServiceClient(fake.url, fake.apiKey, fake.apiSecret);
      await rooms.deleteRoom(placed.room_name);
    } finally {
      fake.webhookUrl = (waiting as TestApp & { hookUrl: string }).hookUrl;
    }
    const before = fake.hangups().length;
    const res = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', dial_status: 'completed', line: 'already_gone' });
    expect(
      fake
        .hangups()
        .slice(before)
        .map((r) => r.method),
    ).toEqual(['RemoveParticipant', 'DeleteRoom']);
  });

  it('ends a prepared call that was never dialled without asking LiveKit (line not_dialled)', async () => {
    const prepared = (await waiting.call('POST', '/v1/calls', { agent_id: 'ag_emi_reminder', to: TO, ...EMI })).json();
    const before = fake.requests.length;
    const res = await waiting.call('POST', `/v1/calls/${prepared.call_id}/hangup`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', dial_status: 'not_dialled', line: 'not_dialled', answered_at: null });
    expect(fake.requests.length).toBe(before);
  });

  it('a hang-up LiveKit refuses is hangup_failed (502) and changes nothing; a retry under the same key hangs up', async () => {
    const placed = await dial(waiting);
    fake.behaviour = { failNextRoom: { status: 503, code: 'unavailable', msg: 'room service unavailable' } };
    const failed = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`, undefined, {
      headers: { 'idempotency-key': 'hang-fail-1' },
    });
    const err = expectError(failed, 502, 'hangup_failed');
    expect(err.message).toMatch(/was not hung up and nothing changed: .*503 unavailable/);
    expect(await callOf(waiting, placed.call_id)).toMatchObject({ status: 'in_progress', dial_status: 'answered' });
    const retry = await waiting.call('POST', `/v1/calls/${placed.call_id}/hangup`, undefined, {
      headers: { 'idempotency-key': 'hang-fail-1' },
    });
    expect(retry.statusCode, retry.body).toBe(200);
    expect(retry.headers['idempotency-replayed']).toBeUndefined();
    expect(retry.json()).toMatchObject({ status: 'completed', line: 'hung_up' });
  });

  it('hangs up an inbound call by deleting its room (vagent does not name that phone participant)', async () => {
    const DID = '+918069001234';
    expect((await waiting.call('POST', '/v1/numbers', { number: DID, agent_id: 'ag_clinic_booking' })).statusCode).toBe(201);
    const inbound = await fake.simulateInbound({ from: '+919812345678', to: DID });
    await settle(waiting);
    const call = (await waiting.call('GET', '/v1/calls?limit=100'))
      .json()
      .data.find((c: { provider_call_id: string }) => c.provider_call_id === inbound.callId);
    expect(call).toMatchObject({ direction: 'inbound', dial_status: 'answered', answered_at: expect.any(Number) });
    const before = fake.hangups().length;
    const res = await waiting.call('POST', `/v1/calls/${call.call_id}/hangup`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', dial_status: 'completed', line: 'hung_up' });
    const sent = fake.hangups().slice(before);
    expect(sent.map((r) => [r.method, r.body])).toEqual([['DeleteRoom', { room: inbound.room }]]);
  });

  it('a call hung up while LiveKit is still dialling stays completed, and its phone participant is removed once the dial returns', async () => {
    fake.behaviour = { delayMs: 400 };
    const dials = fake.sipParticipants().length;
    const placing = waiting.call('POST', '/v1/calls', { agent_id: 'ag_emi_reminder', to: TO, dial: true, ...EMI });
    while (fake.sipParticipants().length === dials) await new Promise((r) => setTimeout(r, 10));
    const n = /^call-cl_([0-9]+)$/.exec(String(fake.sipParticipants().at(-1)!.body.roomName))![1];
    const before = fake.hangups().length;
    const hung = await waiting.call('POST', `/v1/calls/cl_${n}/hangup`);
    expect(hung.statusCode, hung.body).toBe(200);
    expect(hung.json()).toMatchObject({ status: 'completed', dial_status: 'completed' });
    const placed = await placing;
    expect(placed.statusCode, placed.body).toBe(201);
    // The dial's answer came after the hang-up: the call is not reopened as answered.
    expect(placed.json()).toMatchObject({ call_id: `cl_${n}`, dial_status: 'completed', answered_at: null });
    expect(await callOf(waiting, `cl_${n}`)).toMatchObject({ status: 'completed', dial_status: 'completed', answered_at: null });
    // The reply is sent once the call is recorded; the removal follows it.
    const removalsOf = () =>
      fake
        .hangups()
        .slice(before)
        .filter((r) => r.method === 'RemoveParticipant');
    for (let i = 0; i < 100 && removalsOf().length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    const removals = removalsOf();
    expect(removals).toHaveLength(2);
    expect(removals[1]!.body).toEqual({ room: `call-cl_${n}`, identity: `sip-cl_${n}` });
    await expect(new RoomServiceClient(fake.url, fake.apiKey, fake.apiSecret).listParticipants(`call-cl_${n}`)).rejects.toThrow(
      /does not exist/,
    );
  });

  it('refuses a malformed call id (session_not_found) and an unknown one (not_found)', async () => {
    expectError(await waiting.call('POST', '/v1/calls/cl_x/hangup'), 404, 'session_not_found', 'call_id');
    expectError(await waiting.call('POST', '/v1/calls/cl_123456789/hangup'), 404, 'not_found', 'call_id');
  });
});

describe('ending the session of a dialled call', () => {
  it('POST /v1/sessions/{id}/end hangs the line up too', async () => {
    const placed = await dial(waiting);
    const before = fake.hangups().length;
    const res = await waiting.call('POST', `/v1/sessions/${placed.session_id}/end`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ session_id: placed.session_id, ended: true });
    const sent = fake.hangups().slice(before);
    expect(sent.map((r) => r.method)).toEqual(['RemoveParticipant', 'DeleteRoom']);
    expect(sent[0]!.body).toEqual({ room: placed.room_name, identity: identityOf(placed.call_id) });
    expect(await callOf(waiting, placed.call_id)).toMatchObject({ status: 'completed', dial_status: 'completed' });
  });

  it('without LiveKit settings, a hang-up of a line that may be up is telephony_not_configured; ending the session ends only the session', async () => {
    const placed = await dial(waiting);
    // The same state dir served by a daemon started without LIVEKIT_*.
    const runtime = openRuntime(waiting.settings);
    const bare = await buildApp({ services: runtime.services, bodyLimitBytes: 1 << 20, logger: false, version: 'test' });
    try {
      const headers = { authorization: `Bearer ${waiting.key}` };
      const hang = await bare.inject({ method: 'POST', url: `/v1/calls/${placed.call_id}/hangup`, headers });
      const err = expectError(hang, 503, 'telephony_not_configured', 'call_id');
      expect(err.message).toMatch(/may still be on the line/);
      const end = await bare.inject({ method: 'POST', url: `/v1/sessions/${placed.session_id}/end`, headers });
      expect(end.statusCode, end.body).toBe(200);
      const call = (await bare.inject({ method: 'GET', url: `/v1/calls/${placed.call_id}`, headers })).json();
      expect(call).toMatchObject({ status: 'completed', dial_status: 'answered' });
    } finally {
      await bare.close();
      runtime.close();
    }
  });

  it('keeps the session open when the line could not be hung up', async () => {
    const placed = await dial(waiting);
    fake.behaviour = { failNextRoom: { status: 500, code: 'internal', msg: 'boom' } };
    expectError(await waiting.call('POST', `/v1/sessions/${placed.session_id}/end`), 502, 'hangup_failed');
    expect(await callOf(waiting, placed.call_id)).toMatchObject({ status: 'in_progress', dial_status: 'answered' });
  });
});
