/**
 * LiveKit webhooks (docs/calls.md "Inbound calls"; LiveKit's webhook signing): inbound calls open
 * sessions on bound numbers, the tenant's routing webhook may pick another agent, redeliveries
 * are deduplicated, bad signatures get 401, unknown and unbound numbers are counted, and a
 * phone participant leaving ends its call.
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { postSignedJson } from '../../src/adapters/webhook/routing-webhook.js';
import { SIGNATURE_HEADER, verifyWebhookSignature } from '../../src/adapters/webhook/webhook-signature.js';
import pino from 'pino';
import { buildApp, LOG_SERIALIZERS } from '../../src/http/app.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';

const DID = '+918069001234';
const CALLER = '+919812345678';
let fake: FakeLiveKit;
let t: TestApp;
let hookUrl: string;

/** The tenant's routing webhook: answers with `routeReply` after `routeDelayMs`. */
let routeReply: { status: number; body: string } = { status: 200, body: '{}' };
let routeDelayMs = 0;
const routed: Array<{ body: string; signature: string }> = [];
let router: http.Server;
const ROUTE_SECRET = 'whsec_test_secret_0123456789abcdef';

async function calls(): Promise<Array<Record<string, unknown>>> {
  return (await t.call('GET', '/v1/calls?limit=100')).json().data;
}
async function settle() {
  await t.runtime.services.inbound.settled();
}

beforeAll(async () => {
  fake = await startFakeLiveKit();
  router = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      routed.push({ body, signature: String(req.headers[SIGNATURE_HEADER]) });
      setTimeout(() => {
        res.writeHead(routeReply.status, { 'content-type': 'application/json' }).end(routeReply.body);
      }, routeDelayMs);
    });
  });
  await new Promise<void>((resolve) => router.listen(0, '127.0.0.1', resolve));
  t = await makeTestApp(
    {},
    {
      telephony: new LiveKitTelephony({
        url: fake.url,
        apiKey: fake.apiKey,
        apiSecret: fake.apiSecret,
        agentName: 'vagent-media',
        requestTimeoutS: 5,
        waitUntilAnswered: false,
      }),
      routingWebhook: (url, payload, secret, eventId) =>
        postSignedJson(url, payload, secret, { allowHttp: true, allowPrivate: true, timeoutMs: 300 }, { eventId }),
    },
  );
  const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  hookUrl = `${address}/v1/telephony/livekit/webhook`;
  fake.webhookUrl = hookUrl;
  expect((await t.call('POST', '/v1/numbers', { number: DID, agent_id: 'ag_clinic_booking', label: 'clinic front desk' })).statusCode).toBe(
    201,
  );
});
afterAll(async () => {
  await t.close();
  await fake.close();
  await new Promise((resolve) => router.close(resolve));
});

describe('inbound calls', () => {
  it('a SIP caller on a bound number opens a session and an inbound call; no agent is dispatched', async () => {
    const before = fake.requests.length;
    const call = await fake.simulateInbound({ from: CALLER, to: DID });
    expect(call.status).toBe(200);
    await settle();
    const found = (await calls()).find((c) => c.provider_call_id === call.callId)!;
    expect(found).toMatchObject({
      direction: 'inbound',
      agent_id: 'ag_clinic_booking',
      to: DID,
      from: CALLER,
      status: 'in_progress',
      dial_status: 'answered',
      room_name: call.room,
    });
    // vagent joins call rooms itself (docs/media.md "LiveKit rooms"): nothing is dispatched.
    expect(fake.requests.slice(before).filter((r) => r.method === 'CreateDispatch')).toEqual([]);
    // The session is a real one: the caller can be answered turn by turn.
    const turn = await t.call('POST', `/v1/sessions/${String(found.session_id)}/turn`, { text: 'mera naam Anjali Verma hai' });
    expect(turn.statusCode, turn.body).toBe(200);

    // The caller hangs up: the session ends and the call completes.
    const left = await fake.hangup({ callId: call.callId, room: call.room, identity: call.identity, inbound: true });
    expect(left.status).toBe(200);
    await settle();
    const done = (await t.call('GET', `/v1/calls/${String(found.call_id)}`)).json();
    expect(done).toMatchObject({ status: 'completed', duration_s: expect.any(Number) });
  });

  it('deduplicates redeliveries of the same event (delivery is at-least-once)', async () => {
    const callId = `SCL_dup${Date.now()}`;
    const event = {
      event: 'participant_joined',
      id: 'EV_dup1',
      createdAt: String(Math.floor(Date.now() / 1000)),
      room: { sid: 'RM_dup', name: 'call-dup' },
      participant: {
        sid: 'PA_dup',
        identity: `sip_${CALLER}`,
        kind: 'SIP',
        state: 'ACTIVE',
        attributes: {
          'sip.callID': callId,
          'sip.ruleID': 'SDR_1',
          'sip.trunkPhoneNumber': DID,
          'sip.phoneNumber': CALLER,
          'sip.callStatus': 'ringing',
        },
      },
    };
    const first = await fake.sendWebhook(event);
    const second = await fake.sendWebhook(event);
    expect(first.status).toBe(200);
    expect(JSON.parse(first.body)).toMatchObject({ received: true, duplicate: false });
    expect(JSON.parse(second.body)).toMatchObject({ received: true, duplicate: true });
    await settle();
    expect((await calls()).filter((c) => c.provider_call_id === callId)).toHaveLength(1);
  });

  it('refuses unsigned, tampered, Bearer-prefixed, foreign-signed and expired deliveries with 401, recording nothing', async () => {
    const body = JSON.stringify({
      event: 'participant_joined',
      id: 'EV_bad',
      participant: {
        identity: 'sip_x',
        kind: 'SIP',
        attributes: { 'sip.callID': 'SCL_bad', 'sip.ruleID': 'SDR', 'sip.trunkPhoneNumber': DID },
      },
    });
    const eventsBefore = (await t.call('GET', '/v1/telephony/check')).json().events;
    const post = (headers: Record<string, string>, payload = body) =>
      fetch(hookUrl, { method: 'POST', headers: { 'content-type': 'application/webhook+json', ...headers }, body: payload });
    const expired = (() => {
      const now = Math.floor(Date.now() / 1000);
      const h = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
      const p = Buffer.from(
        JSON.stringify({
          iss: fake.apiKey,
          nbf: now - 900,
          exp: now - 600,
          sha256: crypto.createHash('sha256').update(body).digest('base64'),
        }),
      ).toString('base64url');
      return `${h}.${p}.${crypto.createHmac('sha256', fake.apiSecret).update(`${h}.${p}`).digest('base64url')}`;
    })();
    const foreign = await startFakeLiveKit({ apiSecret: 'another_projects_secret_0123456789_abcdef' });
    try {
      const cases: Array<[string, Response]> = [
        ['unsigned', await post({})],
        ['tampered', await post({ authorization: fake.signWebhook(body) }, body.replace(DID, '+918069009999'))],
        ['bearer', await post({ authorization: `Bearer ${fake.signWebhook(body)}` })],
        ['foreign', await post({ authorization: foreign.signWebhook(body) })],
        ['expired', await post({ authorization: expired })],
      ];
      for (const [name, res] of cases) {
        expect(res.status, name).toBe(401);
        expect(((await res.json()) as { error: { code: string } }).error.code, name).toBe('unauthorized');
      }
    } finally {
      await foreign.close();
    }
    await settle();
    expect((await calls()).some((c) => c.provider_call_id === 'SCL_bad')).toBe(false);
    expect((await t.call('GET', '/v1/telephony/check')).json().events).toEqual(eventsBefore);
    // A correctly signed copy of the same body is accepted, and answered.
    const ok = await post({ authorization: fake.signWebhook(body) });
    expect(ok.status).toBe(200);
    await settle();
    expect((await calls()).some((c) => c.provider_call_id === 'SCL_bad')).toBe(true);
  });

  it('counts and logs unknown and unbound numbers without opening anything', async () => {
    const before = (await calls()).length;
    await fake.simulateInbound({ from: CALLER, to: '+918069000000' });
    expect((await t.call('POST', '/v1/numbers', { number: '+918069005555' })).statusCode).toBe(201);
    await fake.simulateInbound({ from: CALLER, to: '+918069005555' });
    await settle();
    expect((await calls()).length).toBe(before);
    const check = (await t.call('GET', '/v1/telephony/check')).json();
    expect(check.ok).toBe(true);
    expect(check.events.since_start).toMatchObject({ unknown_number: 1, unbound_number: 1 });
    expect(check.events.recorded).toMatchObject({ unknown_number: 1, unbound_number: 1 });
  });

  it('does not answer a number two tenants registered (either could be the wrong one)', async () => {
    const shared = '+918069004444';
    expect((await t.call('POST', '/v1/numbers', { number: shared, agent_id: 'ag_clinic_booking' })).statusCode).toBe(201);
    const other = t.tenantKey('mallory');
    await t.agent('ag_grabber', { key: other });
    expect((await t.call('POST', '/v1/numbers', { number: shared, agent_id: 'ag_grabber' }, { key: other })).statusCode).toBe(201);
    const call = await fake.simulateInbound({ from: CALLER, to: shared });
    await settle();
    expect((await calls()).some((c) => c.provider_call_id === call.callId)).toBe(false);
    expect((await t.call('GET', '/v1/calls', undefined, { key: other })).json().data).toEqual([]);
    expect((await t.call('GET', '/v1/telephony/check')).json().events.since_start).toMatchObject({ ambiguous_number: 1 });
  });

  it('answers 5xx, not 401, when a valid delivery cannot be recorded, so LiveKit delivers it again', async () => {
    const repo = t.runtime.services.repos.telephonyEvents;
    const insert = repo.insert.bind(repo);
    repo.insert = () => {
      throw new Error('disk I/O error');
    };
    try {
      const call = await fake.simulateInbound({ from: CALLER, to: DID });
      expect(call.status).toBe(500);
    } finally {
      repo.insert = insert;
    }
  });

  it('ignores events that are not a SIP participant joining or leaving', async () => {
    const res = await fake.sendWebhook({ event: 'room_started', room: { sid: 'RM_1', name: 'x' } });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ received: true, recorded: false });
  });
});

describe("the tenant's inbound routing webhook", () => {
  beforeAll(async () => {
    const url = `http://127.0.0.1:${(router.address() as AddressInfo).port}/route`;
    const services = t.runtime.services;
    services.tenants.setInboundWebhook('default', {
      url,
      secretSealed: services.credentials.sealText(ROUTE_SECRET, 'default', 'inbound_webhook'),
    });
  });

  it('may name another agent; the request is signed and carries the call', async () => {
    await t.agent('ag_front_desk');
    routeReply = { status: 200, body: JSON.stringify({ agent_id: 'ag_front_desk' }) };
    routed.length = 0;
    const call = await fake.simulateInbound({ from: CALLER, to: DID });
    await settle();
    expect((await calls()).find((c) => c.provider_call_id === call.callId)).toMatchObject({ agent_id: 'ag_front_desk' });
    expect(routed).toHaveLength(1);
    const sent = routed[0]!;
    expect(verifyWebhookSignature(ROUTE_SECRET, sent.body, sent.signature, Math.floor(Date.now() / 1000))).toBe(true);
    expect(JSON.parse(sent.body)).toMatchObject({
      type: 'inbound_call',
      call: { to: DID, from: CALLER, sip_call_id: call.callId, room_name: call.room },
      number: { number: DID, agent_id: 'ag_clinic_booking', label: 'clinic front desk' },
    });
  });

  it.each([
    ['an error status', { status: 500, body: '{}' }, 0],
    ['an agent the tenant lacks', { status: 200, body: JSON.stringify({ agent_id: 'ag_not_here' }) }, 0],
    ['a malformed agent id', { status: 200, body: JSON.stringify({ agent_id: '../../etc' }) }, 0],
    ['not JSON', { status: 200, body: '<html>' }, 0],
    ['a timeout', { status: 200, body: JSON.stringify({ agent_id: 'ag_delivery_confirmation' }) }, 1000],
  ])('falls back to the bound agent on %s', async (_name, reply, delay) => {
    routeReply = reply;
    routeDelayMs = delay;
    const call = await fake.simulateInbound({ from: CALLER, to: DID });
    await settle();
    routeDelayMs = 0;
    expect((await calls()).find((c) => c.provider_call_id === call.callId)).toMatchObject({ agent_id: 'ag_clinic_booking' });
  });

  it('lets a number with no bound agent be answered by the agent the webhook names', async () => {
    routeReply = { status: 200, body: JSON.stringify({ agent_id: 'ag_clinic_booking' }) };
    expect((await t.call('POST', '/v1/numbers', { number: '+918069007777' })).statusCode).toBe(201);
    const call = await fake.simulateInbound({ from: CALLER, to: '+918069007777' });
    await settle();
    expect((await calls()).find((c) => c.provider_call_id === call.callId)).toMatchObject({
      agent_id: 'ag_clinic_booking',
      to: '+918069007777',
    });
  });

  afterAll(() => {
    t.runtime.services.tenants.setInboundWebhook('default', null);
  });
});

describe('outbound calls and webhooks', () => {
  it('a placed call whose callee is busy becomes failed when LiveKit reports the participant left (dialled without waiting)', async () => {
    expect((await t.call('POST', '/v1/trunks', { address: 'sip.example-carrier.in', numbers: ['+918069000001'] })).statusCode).toBe(201);
    const res = await t.call('POST', '/v1/calls', { ...EMI, to: '+919876500486', dial: true });
    expect(res.statusCode, res.body).toBe(201);
    const placed = res.json();
    expect(placed.status).toBe('ringing');
    for (let i = 0; i < 100; i++) {
      await settle();
      if ((await t.call('GET', `/v1/calls/${placed.call_id}`)).json().status === 'completed') break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect((await t.call('GET', `/v1/calls/${placed.call_id}`)).json()).toMatchObject({
      status: 'completed',
      dial_status: 'failed',
      dial_error: expect.stringMatching(/busy or declined.*USER_REJECTED/),
    });
  });

  it('a connected outbound call completes when the phone participant leaves', async () => {
    const placed = (await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210', dial: true })).json();
    await fake.hangup({ callId: placed.provider_call_id, room: placed.room_name, identity: `sip-cl_${placed.call_id.slice(3)}` });
    await settle();
    expect((await t.call('GET', `/v1/calls/${placed.call_id}`)).json()).toMatchObject({
      status: 'completed',
      dial_status: 'completed',
    });
  });
});

describe('without LiveKit', () => {
  it('answers webhooks with 503 telephony_not_configured', async () => {
    const bare = await makeTestApp();
    try {
      const res = await bare.app.inject({
        method: 'POST',
        url: '/v1/telephony/livekit/webhook',
        payload: '{}',
        headers: { 'content-type': 'application/webhook+json' },
      });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('telephony_not_configured');
      const check = (await bare.call('GET', '/v1/telephony/check')).json();
      expect(check).toMatchObject({ ok: false, problem: 'not_configured' });
    } finally {
      await bare.close();
    }
  });

  it('logs the first refusal once at warn and only counts the rest (anyone can send them)', async () => {
    const bare = await makeTestApp();
    const logged: Array<{ level: number; msg: string }> = [];
    const logger = pino(
      { level: 'debug', serializers: LOG_SERIALIZERS },
      {
        write: (line: string) => {
          logged.push(JSON.parse(line) as { level: number; msg: string });
        },
      },
    );
    const app = await buildApp({ services: bare.runtime.services, bodyLimitBytes: 1 << 20, logger, version: 'test' });
    try {
      await app.ready();
      for (let i = 0; i < 50; i++) {
        const res = await app.inject({
          method: 'POST',
          url: '/v1/telephony/livekit/webhook',
          payload: `{"n":${i}}`,
          headers: { 'content-type': 'application/webhook+json' },
        });
        expect(res.statusCode).toBe(503);
        expect(res.json().error.code).toBe('telephony_not_configured');
      }
      // pino levels: 40 warn, 50 error.
      expect(logged.filter((l) => l.level >= 50)).toEqual([]);
      const warned = logged.filter((l) => l.level === 40);
      expect(warned).toHaveLength(1);
      expect(warned[0]!.msg).toMatch(/LiveKit is not configured/);
      const check = (await bare.call('GET', '/v1/telephony/check')).json();
      expect(check.events.since_start).toMatchObject({ webhook_refused_not_configured: 50 });
    } finally {
      await app.close();
      await bare.close();
    }
  });
});
