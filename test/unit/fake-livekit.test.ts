/**
 * The fake LiveKit server (src/devtools/fake-livekit.ts) driven by the real livekit-server-sdk:
 * what the SDK sends is recorded as sent, what the fake answers is parsed by the SDK the way a
 * real server's answer is, and its webhooks pass the SDK's WebhookReceiver.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { SIPOutboundConfig, SIPTransport } from '@livekit/protocol';
import {
  AccessToken,
  AgentDispatchClient,
  RoomServiceClient,
  ServerError,
  SipCallError,
  SipClient,
  WebhookReceiver,
} from 'livekit-server-sdk';
import type { WebhookEvent } from 'livekit-server-sdk';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';

let fake: FakeLiveKit;
let sip: SipClient;
beforeEach(async () => {
  fake = await startFakeLiveKit();
  sip = new SipClient(fake.url, fake.apiKey, fake.apiSecret);
});
afterEach(async () => {
  await fake.close();
  await new Promise<void>((r) => (hooks ? hooks.server.close(() => r()) : r()));
  hooks = undefined;
});

/** A local webhook target that records what LiveKit would POST to vagent. */
interface Delivery {
  contentType: string | undefined;
  authorization: string | undefined;
  body: string;
}
let hooks: { server: http.Server; url: string; got: Delivery[]; next(n: number): Promise<Delivery[]> } | undefined;
async function webhookTarget() {
  const got: Delivery[] = [];
  const waiters: Array<() => void> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      got.push({ contentType: req.headers['content-type'], authorization: req.headers.authorization, body });
      res.writeHead(200).end('ok');
      waiters.splice(0).forEach((w) => w());
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/livekit/webhook`;
  const next = async (n: number) => {
    while (got.length < n) await new Promise<void>((r) => waiters.push(r));
    return got.slice(0, n);
  };
  hooks = { server, url, got, next };
  return hooks;
}

const receive = (d: Delivery): Promise<WebhookEvent> => new WebhookReceiver(fake.apiKey, fake.apiSecret).receive(d.body, d.authorization);

/** A signed API token with exactly these grants. */
async function token(video: Record<string, unknown>, sipGrant?: Record<string, boolean>): Promise<string> {
  const at = new AccessToken(fake.apiKey, fake.apiSecret, { ttl: 60 });
  at.addGrant(video);
  if (sipGrant) at.addSIPGrant(sipGrant);
  return at.toJwt();
}

/** A hand-made Twirp call. */
async function twirp(path: string, body: unknown, auth: string, contentType = 'application/json') {
  const res = await fetch(`${fake.url}/twirp/${path}`, {
    method: 'POST',
    headers: { 'Content-Type': contentType, Authorization: `Bearer ${auth}` },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    json: (await res.json()) as Record<string, unknown>,
  };
}

/** The error a promise rejects with. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

describe('fake LiveKit: CreateSIPParticipant through the real SDK', () => {
  it('answers with a SIPParticipantInfo and records the request exactly as the SDK sent it', async () => {
    const info = await sip.createSipParticipant('ST_abc', '+15551230000', 'call-1', {
      fromNumber: '+15557654321',
      participantIdentity: 'callee-1',
      waitUntilAnswered: true,
    });
    expect(info.participantIdentity).toBe('callee-1');
    expect(info.roomName).toBe('call-1');
    expect(info.participantId).toMatch(/^PA_\w{12}$/);
    expect(info.sipCallId).toMatch(/^SCL_\w{12}$/);
    const [rec] = fake.sipParticipants();
    expect(rec!.contentType).toBe('application/json;charset=UTF-8');
    expect(rec!.grants).toMatchObject({ iss: 'devkey', video: {}, sip: { call: true } });
    expect(rec!.body).toEqual({
      sipTrunkId: 'ST_abc',
      sipCallTo: '+15551230000',
      roomName: 'call-1',
      participantIdentity: 'callee-1',
      sipNumber: '+15557654321',
      ringingTimeout: '30s',
      waitUntilAnswered: true,
    });
  });

  it('records an inline trunk with camelCase fields, credentials included', async () => {
    const trunk = new SIPOutboundConfig({
      hostname: 'sip.provider.example',
      transport: SIPTransport.SIP_TRANSPORT_TCP,
      authUsername: 'u1',
      authPassword: 'p1',
    });
    await sip.createSipParticipant('', '+15551230001', 'call-2', { fromNumber: '+15557654321' }, trunk);
    expect(fake.sipParticipants()[0]!.body.trunk).toEqual({
      hostname: 'sip.provider.example',
      transport: 'SIP_TRANSPORT_TCP',
      authUsername: 'u1',
      authPassword: 'p1',
    });
  });

  it('answers with Content-Type exactly application/json, snake_case keys and defaults emitted', async () => {
    const res = await twirp(
      'livekit.SIP/CreateSIPParticipant',
      { sip_trunk_id: 'ST_x', sip_call_to: '+15551230002', room_name: 'r', participant_attributes: { 'app.key_name': 'v' } },
      await token({}, { call: true }),
    );
    expect(res.status).toBe(200);
    expect(res.contentType).toBe('application/json');
    expect(Object.keys(res.json).sort()).toEqual(['participant_id', 'participant_identity', 'room_name', 'sip_call_id']);
    expect(res.json.participant_identity).toBe('sip_+15551230002');
    // snake_case input is normalised; map keys are user data and stay as sent
    expect(fake.requests[0]!.body).toEqual({
      sipTrunkId: 'ST_x',
      sipCallTo: '+15551230002',
      roomName: 'r',
      participantAttributes: { 'app.key_name': 'v' },
    });
  });

  it('refuses a token signed with the wrong secret: ServerError 401 unauthenticated', async () => {
    const wrong = new SipClient(fake.url, fake.apiKey, 'not_the_secret_but_long_enough_0123456789');
    const err = await rejection(wrong.createSipParticipant('ST_abc', '+15551230000', 'call-1'));
    expect(err).toBeInstanceOf(ServerError);
    expect(err).toMatchObject({ status: 401, code: 'unauthenticated' });
    expect(fake.requests[0]!.grants).toEqual({});
  });

  it('refuses a token without the sip.call grant: 403 permission_denied', async () => {
    const res = await twirp(
      'livekit.SIP/CreateSIPParticipant',
      { sipTrunkId: 'ST_x', sipCallTo: '+1555', roomName: 'r' },
      await token({ roomAdmin: true, room: 'r' }, { admin: true }),
    );
    expect(res).toEqual({
      status: 403,
      contentType: 'application/json',
      json: { code: 'permission_denied', msg: 'permissions denied' },
    });
  });

  it.each([
    ['486', 429, 'resource_exhausted', 'Busy Here'],
    ['603', 403, 'permission_denied', 'Decline'],
    ['480', 503, 'unavailable', 'Temporarily Unavailable'],
    ['404', 404, 'not_found', 'Not Found'],
  ])('with waitUntilAnswered, a number ending %s fails the request with SipCallError (%i %s)', async (digits, status, code, sipStatus) => {
    const err = await rejection(sip.createSipParticipant('ST_abc', `+1555123${digits}`, 'call-3', { waitUntilAnswered: true }));
    expect(err).toBeInstanceOf(SipCallError);
    expect(err).toMatchObject({ status, code, sipStatusCode: Number(digits), sipStatus });
  });

  it('without waitUntilAnswered a busy callee still succeeds, then joins (dialing) and leaves (USER_REJECTED)', async () => {
    fake.webhookUrl = (await webhookTarget()).url;
    const info = await sip.createSipParticipant('ST_abc', '+15551230486', 'call-4', { participantIdentity: 'busy-1' });
    expect(info.participantIdentity).toBe('busy-1');
    const [joined, left] = await Promise.all((await hooks!.next(2)).map(receive));
    expect(joined!.event).toBe('participant_joined');
    expect(left!.event).toBe('participant_left');
    expect(left!.participant?.disconnectReason).toBe(12); // USER_REJECTED
    expect(left!.participant?.attributes['sip.callID']).toBe(info.sipCallId);
  });

  it('validates like LiveKit: 400 invalid_argument', async () => {
    const cases: Array<[Promise<unknown>, string]> = [
      [sip.createSipParticipant('', '+15551230000', 'r'), 'missing sip trunk id'],
      [sip.createSipParticipant('ST_a', '', 'r'), 'missing sip callee number'],
      [sip.createSipParticipant('ST_a', 'bob@example.com', 'r'), 'SipCallTo should be a phone number or SIP user, not a full SIP URI'],
      [sip.createSipParticipant('ST_a', '+15551230000', ''), 'missing room name'],
      [
        sip.createSipParticipant('', '+15551230000', 'r', { fromNumber: '+1' }, new SIPOutboundConfig({})),
        'no outbound hostname specified',
      ],
      [
        sip.createSipParticipant('', '+15551230000', 'r', {}, new SIPOutboundConfig({ hostname: 'h.example' })),
        'trunk outbound number must be set',
      ],
    ];
    for (const [p, msg] of cases) expect(await rejection(p)).toMatchObject({ status: 400, code: 'invalid_argument', message: msg });
  });

  it('behaviour.failNext answers the next call once with the given error', async () => {
    fake.behaviour.failNext = { status: 503, code: 'unavailable', msg: 'no SIP servers available' };
    expect(await rejection(sip.createSipParticipant('ST_a', '+15551230000', 'r'))).toMatchObject({
      status: 503,
      code: 'unavailable',
      message: 'no SIP servers available',
    });
    await expect(sip.createSipParticipant('ST_a', '+15551230000', 'r')).resolves.toMatchObject({ roomName: 'r' });
  });

  it('behaviour.delayMs makes the SDK time out (requestTimeout)', async () => {
    fake.behaviour.delayMs = 2_000;
    const impatient = new SipClient(fake.url, fake.apiKey, fake.apiSecret, { requestTimeout: 0.2 });
    const started = Date.now();
    const err = await rejection(impatient.createSipParticipant('ST_a', '+15551230000', 'r'));
    expect((err as Error).name).toBe('TimeoutError');
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(fake.sipParticipants()).toHaveLength(1);
  });
});

describe('fake LiveKit: other Twirp methods', () => {
  it('creates, lists and deletes outbound trunks (sip.admin)', async () => {
    const t = await sip.createSipOutboundTrunk('acme', 'sip.acme.example', ['+15557654321'], {
      transport: SIPTransport.SIP_TRANSPORT_TLS,
      authUsername: 'u',
      authPassword: 'p',
    });
    expect(t.sipTrunkId).toMatch(/^ST_/);
    expect((await sip.listSipOutboundTrunk()).map((x) => x.sipTrunkId)).toEqual([t.sipTrunkId]);
    expect(await sip.listSipOutboundTrunk({ numbers: ['+19999999999'] })).toEqual([]);
    // a dial through the stored trunk takes its number as caller ID
    await sip.createSipParticipant(t.sipTrunkId, '+15551230000', 'r', { participantIdentity: 'c' });
    const [p] = await new RoomServiceClient(fake.url, fake.apiKey, fake.apiSecret).listParticipants('r');
    expect(p!.attributes).toMatchObject({
      'sip.trunkPhoneNumber': '+15557654321',
      'sip.trunkID': t.sipTrunkId,
      'sip.callStatus': 'active',
    });
    await sip.deleteSipTrunk(t.sipTrunkId);
    expect(await sip.listSipOutboundTrunk()).toEqual([]);
    expect(await rejection(sip.deleteSipTrunk(t.sipTrunkId))).toMatchObject({ status: 404, code: 'not_found' });
    expect(
      fake.requests
        .filter((r) => r.service === 'livekit.SIP' && r.method !== 'CreateSIPParticipant')
        .every((r) => (r.grants.sip as Record<string, unknown>).admin === true),
    ).toBe(true);
  });

  it('CreateDispatch needs video.roomAdmin for the same room, which is what the SDK sends', async () => {
    const d = await new AgentDispatchClient(fake.url, fake.apiKey, fake.apiSecret).createDispatch('call-9', 'vagent-media', {
      metadata: '{"session":"s1"}',
    });
    expect(d).toMatchObject({ agentName: 'vagent-media', room: 'call-9', metadata: '{"session":"s1"}' });
    expect(d.id).toMatch(/^AD_/);
    expect(fake.requests[0]!.grants).toMatchObject({ video: { roomAdmin: true, room: 'call-9' } });
    expect(fake.requests[0]!.grants.sip).toBeUndefined();
    const other = await twirp(
      'livekit.AgentDispatchService/CreateDispatch',
      { room: 'call-9', agentName: 'x' },
      await token({ roomAdmin: true, room: 'elsewhere' }),
    );
    expect(other.status).toBe(403);
  });

  it('routes like Twirp: unknown method or wrong Content-Type is bad_route 404, a broken body is malformed 400', async () => {
    const auth = await token({}, { call: true });
    expect(await twirp('livekit.SIP/NoSuchMethod', {}, auth)).toMatchObject({
      status: 404,
      contentType: 'application/json',
      json: { code: 'bad_route' },
    });
    expect(await twirp('livekit.SIP/CreateSIPParticipant', {}, auth, 'text/plain')).toMatchObject({
      status: 404,
      json: { code: 'bad_route' },
    });
    expect(await twirp('livekit.SIP/CreateSIPParticipant', { sipCallTo: 5 }, auth)).toMatchObject({
      status: 400,
      json: { code: 'malformed' },
    });
    const res = await fetch(`${fake.url}/healthz`);
    expect([res.status, res.headers.get('content-type'), ((await res.json()) as { code: string }).code]).toEqual([
      404,
      'application/json',
      'bad_route',
    ]);
  });
});

describe('fake LiveKit: webhooks', () => {
  it('signs like LiveKit: WebhookReceiver accepts the body and rejects it once tampered', async () => {
    const body = JSON.stringify({ event: 'room_started', id: 'EV_1', createdAt: '1700000000', room: { sid: 'RM_1', name: 'r' } });
    const auth = fake.signWebhook(body);
    expect(auth).not.toMatch(/^Bearer /);
    const ev = await new WebhookReceiver(fake.apiKey, fake.apiSecret).receive(body, auth);
    expect(ev.event).toBe('room_started');
    await expect(new WebhookReceiver(fake.apiKey, fake.apiSecret).receive(body.replace('"r"', '"s"'), auth)).rejects.toThrow(/sha256/);
    await expect(new WebhookReceiver(fake.apiKey, 'another_secret_of_32_characters_at_least').receive(body, auth)).rejects.toThrow();
  });

  it('simulateInbound posts a signed participant_joined for an inbound SIP caller; hangup posts participant_left', async () => {
    const target = await webhookTarget();
    const call = await fake.simulateInbound({ from: '+919876543210', to: '+918000000001', url: target.url });
    expect(call.status).toBe(200);
    expect(call.identity).toBe('sip_+919876543210');
    expect(call.room).toMatch(/^call-\+919876543210_\w+$/);
    const [d] = await target.next(1);
    expect(d!.contentType).toBe('application/webhook+json');
    const ev = await receive(d!);
    expect(ev.event).toBe('participant_joined');
    expect(ev.room?.name).toBe(call.room);
    expect(ev.participant).toMatchObject({ identity: call.identity, name: 'Phone +919876543210', kind: 3, state: 2 });
    expect(ev.participant?.attributes).toMatchObject({
      'sip.callID': call.callId,
      'sip.callStatus': 'ringing',
      'sip.trunkPhoneNumber': '+918000000001',
      'sip.phoneNumber': '+919876543210',
    });
    expect(ev.participant?.attributes['sip.ruleID']).toMatch(/^SDR_/);
    expect(JSON.parse(d!.body)).toMatchObject({
      event: 'participant_joined',
      createdAt: expect.stringMatching(/^\d+$/),
      participant: { kind: 'SIP', state: 'ACTIVE' },
    });

    expect(await fake.hangup({ callId: call.callId, room: call.room, identity: call.identity, url: target.url })).toEqual({
      status: 200,
    });
    const left = await receive((await target.next(2))[1]!);
    expect(left.event).toBe('participant_left');
    expect(left.participant?.attributes).toMatchObject({ 'sip.callID': call.callId, 'sip.callStatus': 'hangup' });
  });

  it('a successful dial sends participant_joined for the outbound participant (dialing, no sip.ruleID)', async () => {
    fake.webhookUrl = (await webhookTarget()).url;
    const info = await sip.createSipParticipant('ST_abc', '+15551230000', 'call-5', {
      fromNumber: '+15557654321',
      participantIdentity: 'callee-5',
    });
    const ev = await receive((await hooks!.next(1))[0]!);
    expect(ev.event).toBe('participant_joined');
    expect(ev.participant?.identity).toBe('callee-5');
    expect(ev.participant?.attributes).toEqual({
      'sip.callID': info.sipCallId,
      'sip.callStatus': 'dialing',
      'sip.trunkPhoneNumber': '+15557654321',
      'sip.phoneNumber': '+15551230000',
      'sip.trunkID': 'ST_abc',
    });
  });
});
