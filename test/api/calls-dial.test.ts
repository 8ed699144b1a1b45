/**
 * `POST /v1/calls` with `dial: true` through the real livekit-server-sdk against a local fake
 * LiveKit Twirp server (docs/calls.md "Dialling", "Exactly once"; docs/api-decisions.md "Calls",
 * "Errors"): the exact request vagent sends, trunk resolution, caller ID, refused and unknown
 * dials, and exactly-once placement under one Idempotency-Key.
 */
import net from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS, type ErrorCode } from '../../src/domain/errors.js';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { buildApp } from '../../src/http/app.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';
import { expectError as expectErrorWithStatus } from '../support/expect.js';

function expectError(res: Parameters<typeof expectErrorWithStatus>[0], code: ErrorCode, param?: string | null) {
  return expectErrorWithStatus(res, ERROR_STATUS[code], code, param);
}

const TO = '+919876543210';
const FROM = '+918069000001';
let fake: FakeLiveKit;
let t: TestApp;

function telephony(overrides: Partial<{ apiSecret: string; requestTimeoutS: number; url: string; waitUntilAnswered: boolean }> = {}) {
  return new LiveKitTelephony({
    url: overrides.url ?? fake.url,
    apiKey: fake.apiKey,
    apiSecret: overrides.apiSecret ?? fake.apiSecret,
    agentName: 'vagent-media',
    requestTimeoutS: overrides.requestTimeoutS ?? 5,
    waitUntilAnswered: overrides.waitUntilAnswered ?? true,
  });
}

async function addTrunk(app: TestApp, body: Record<string, unknown>) {
  const res = await app.call('POST', '/v1/trunks', body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

/** A loopback port with nothing listening. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Runs `fn` against an app of its own whose LiveKit has these options, and closes it. */
async function withDialApp(options: Parameters<typeof telephony>[0], fn: (app: TestApp) => Promise<void>): Promise<void> {
  const app = await makeTestApp({}, { telephony: telephony(options) });
  try {
    await fn(app);
  } finally {
    await app.close();
  }
}

beforeAll(async () => {
  fake = await startFakeLiveKit();
  t = await makeTestApp({}, { telephony: telephony() });
});
afterAll(async () => {
  await t.close();
  await fake.close();
});
afterEach(() => {
  fake.behaviour = {};
});

describe('dial through an inline trunk', () => {
  let trunkId: string;
  beforeAll(async () => {
    trunkId = (
      await addTrunk(t, {
        address: 'sip.example-carrier.in:5060',
        numbers: [FROM],
        auth: { username: 'acme-sip', password: 'pa55-w0rd!' },
      })
    ).id;
  });

  it('sends CreateSIPParticipant (no agent dispatch) with the decrypted credentials, room, identity and timeouts', async () => {
    const before = fake.requests.length;
    const res = await t.call(
      'POST',
      '/v1/calls',
      { ...EMI, to: TO, from: FROM, dial: true, customer_name: 'Ravi' },
      { headers: { 'idempotency-key': 'dial-1' } },
    );
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    const n = body.call_id.slice(3);
    expect(body).toEqual({
      call_id: `cl_${n}`,
      session_id: `se_${n}`,
      agent_id: 'ag_emi_reminder',
      to: TO,
      from: FROM,
      idempotent: true,
      status: 'ringing',
      dial_required: false,
      room_name: `call-cl_${n}`,
      provider_call_id: expect.stringMatching(/^SCL_/),
      trunk_id: trunkId,
      // The dial waited for the callee (livekit.wait_until_answered), who answered.
      dial_status: 'answered',
      answered_at: expect.any(Number),
    });
    const sent = fake.requests.slice(before);
    // No agent dispatch: vagent joins call rooms itself (docs/media.md "LiveKit rooms"; none here,
    // as call audio does not run in app tests).
    expect(sent.map((r) => `${r.service}/${r.method}`)).toEqual(['livekit.SIP/CreateSIPParticipant']);
    const [dial] = sent as [(typeof sent)[0]];
    expect(dial.contentType).toBe('application/json;charset=UTF-8');
    expect(dial.grants).toMatchObject({ iss: fake.apiKey, sip: { call: true } });
    expect(dial.body).toEqual({
      sipCallTo: TO,
      sipNumber: FROM,
      roomName: `call-cl_${n}`,
      participantIdentity: `sip-cl_${n}`,
      participantName: 'Ravi',
      participantMetadata: JSON.stringify({ call_id: `cl_${n}`, session_id: `se_${n}`, tenant: 'default' }),
      ringingTimeout: '30s',
      maxCallDuration: '1800s',
      waitUntilAnswered: true,
      trunk: { hostname: 'sip.example-carrier.in:5060', authUsername: 'acme-sip', authPassword: 'pa55-w0rd!' },
    });
    const status = (await t.call('GET', `/v1/calls/cl_${n}`)).json();
    expect(status).toMatchObject({
      status: 'in_progress',
      dial_status: 'answered',
      answered_at: body.answered_at,
      room_name: `call-cl_${n}`,
      provider_call_id: body.provider_call_id,
      trunk_id: trunkId,
    });
    // The password is never in a response.
    expect(JSON.stringify(status)).not.toContain('pa55-w0rd!');
    expect(res.body).not.toContain('pa55-w0rd!');
  });

  it('passes ringing_timeout_s and max_call_duration_s as LiveKit durations', async () => {
    const res = await t.call('POST', '/v1/calls', {
      ...EMI,
      to: TO,
      dial: true,
      ringing_timeout_s: 25,
      max_call_duration_s: 600,
    });
    expect(res.statusCode, res.body).toBe(201);
    const dial = fake.sipParticipants().at(-1)!;
    expect(dial.body).toMatchObject({ ringingTimeout: '25s', maxCallDuration: '600s' });
    // Without from, the trunk's first number is the caller ID; the placement echoes from as sent (null).
    expect(dial.body.sipNumber).toBe(FROM);
    expect(res.json().from).toBeNull();
    expect((await t.call('GET', `/v1/calls/${res.json().call_id}`)).json().from).toBe(FROM);
  });

  it('refuses a from that is not on the trunk before contacting LiveKit', async () => {
    const before = fake.requests.length;
    expectError(await t.call('POST', '/v1/calls', { ...EMI, to: TO, from: '+918069000099', dial: true }), 'caller_id_not_on_trunk', 'from');
    expectError(
      await t.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true, trunk_id: 'tk_aaaaaaaaaaaaaaaaaaaa' }),
      'trunk_not_found',
      'trunk_id',
    );
    expectError(await t.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true, trunk_id: 'bogus' }), 'trunk_not_found', 'trunk_id');
    expect(fake.requests.length).toBe(before);
  });

  it('a carrier refusal is dial_failed with the SIP status; a retry under the key reports it again without ringing again', async () => {
    const busy = '+919876500486';
    const before = fake.sipParticipants().length;
    const body = { ...EMI, to: busy, dial: true };
    const res = await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'busy-1' } });
    const err = expectError(res, 'dial_failed');
    expect(err.message).toMatch(/SIP 486 Busy Here/);
    const n = /cl_([0-9]+)/.exec(err.message)![1];
    const call = (await t.call('GET', `/v1/calls/cl_${n}`)).json();
    expect(call).toMatchObject({ status: 'completed', dial_status: 'failed', dial_error: expect.stringMatching(/486/) });
    // The phone may have rung: the same key runs the handler again, which finds the attempt.
    const again = expectError(await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'busy-1' } }), 'dial_failed');
    expect(again.message).toContain(`cl_${n}`);
    expect(again.message).toMatch(/earlier attempt under this Idempotency-Key/);
    expect(fake.sipParticipants().length).toBe(before + 1);
    // Another body under the key is a reuse of it; a new key dials again.
    expectError(
      await t.call('POST', '/v1/calls', { ...body, customer_name: 'Someone else' }, { headers: { 'idempotency-key': 'busy-1' } }),
      'idempotency_key_reuse',
    );
    expectError(await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'busy-2' } }), 'dial_failed');
    expect(fake.sipParticipants().length).toBe(before + 2);
  });

  it('a request LiveKit itself refuses rang nobody: its key is freed and a retry dials again', async () => {
    const before = fake.sipParticipants().length;
    fake.behaviour = { failNext: { status: 400, code: 'invalid_argument', msg: 'trunk not usable' } };
    const body = { ...EMI, to: TO, dial: true };
    const err = expectError(await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'refused-1' } }), 'dial_failed');
    expect(err.message).toMatch(/400 invalid_argument: trunk not usable/);
    const retry = await t.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'refused-1' } });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(fake.sipParticipants().length).toBe(before + 2);
  });

  it('never passes a trunk credential on from a LiveKit error that echoes it', async () => {
    fake.behaviour = {
      failNext: {
        status: 400,
        code: 'invalid_argument',
        msg: 'proxy echo: {"authUsername":"acme-sip","authPassword":"pa55-w0rd!"}\n\u0007',
      },
    };
    const res = await t.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true });
    const err = expectError(res, 'dial_failed');
    expect(err.message).toContain('[redacted]');
    expect(res.body).not.toContain('pa55-w0rd!');
    expect(res.body).not.toContain('acme-sip');
    const n = /cl_([0-9]+)/.exec(err.message)![1];
    const status = await t.call('GET', `/v1/calls/cl_${n}`);
    expect(status.json().dial_error).toContain('[redacted]');
    expect(status.body).not.toContain('pa55-w0rd!');
    expect([...String(status.json().dial_error)].some((ch) => ch.charCodeAt(0) < 0x20)).toBe(false);
  });

  it('reports a LiveKit credentials problem in plain words, without the secret', async () => {
    await withDialApp({ apiSecret: 'wrong_secret_wrong_secret_wrong_secret' }, async (bad) => {
      await addTrunk(bad, { address: 'sip.example-carrier.in', numbers: [FROM] });
      const err = expectError(await bad.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true }), 'dial_failed');
      expect(err.message).toMatch(/401 unauthenticated/);
      expect(err.message).not.toContain('wrong_secret');
    });
  });

  it('an unreachable LiveKit is a dial_failed naming the connection error', async () => {
    const port = await closedPort();
    await withDialApp({ url: `http://127.0.0.1:${port}` }, async (down) => {
      await addTrunk(down, { address: 'sip.example-carrier.in', numbers: [FROM] });
      const err = expectError(await down.call('POST', '/v1/calls', { ...EMI, to: TO, dial: true }), 'dial_failed');
      expect(err.message).toContain(`cannot reach LiveKit at http://127.0.0.1:${port} (ECONNREFUSED)`);
    });
  });
});

describe('trunk resolution', () => {
  it('needs trunk_id with zero or several trunks, and uses provider_trunk_id when the trunk has one', async () => {
    await withDialApp({}, async (app) => {
      const body = { ...EMI, to: TO, dial: true };
      expectError(await app.call('POST', '/v1/calls', body), 'invalid_request', 'trunk_id');
      const lk = await addTrunk(app, { address: 'sip.example-carrier.in', provider_trunk_id: 'ST_abc123', numbers: [FROM] });
      const res = await app.call('POST', '/v1/calls', body);
      expect(res.statusCode, res.body).toBe(201);
      const dial = fake.sipParticipants().at(-1)!;
      expect(dial.body.sipTrunkId).toBe('ST_abc123');
      expect(dial.body).not.toHaveProperty('trunk');
      const bare = await addTrunk(app, { address: 'sip2.example-carrier.in' });
      // An inline trunk with no caller-ID numbers needs from.
      const noCallerId = expectError(await app.call('POST', '/v1/calls', { ...body, trunk_id: bare.id }), 'invalid_request', 'from');
      expect(noCallerId.message).toMatch(/no caller-ID numbers/);
      const many = expectError(await app.call('POST', '/v1/calls', body), 'invalid_request', 'trunk_id');
      expect(many.message).toMatch(/2 trunks/);
      expect((await app.call('POST', '/v1/calls', { ...body, trunk_id: lk.id, from: FROM })).statusCode).toBe(201);
    });
  });
});

describe('exactly once', () => {
  it('50 concurrent identical dials with one key reach LiveKit once', async () => {
    await withDialApp({}, async (app) => {
      await addTrunk(app, { address: 'sip.example-carrier.in', numbers: [FROM] });
      fake.behaviour = { delayMs: 150 };
      const before = fake.sipParticipants().length;
      const body = { ...EMI, to: '+919812345678', from: FROM, dial: true };
      const results = await Promise.all(
        Array.from({ length: 50 }, () => app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'same-key' } })),
      );
      expect(fake.sipParticipants().length - before).toBe(1);
      const ok = results.filter((r) => r.statusCode === 201);
      const busy = results.filter((r) => r.statusCode === 409);
      expect(ok.length + busy.length).toBe(50);
      expect(ok.length).toBeGreaterThanOrEqual(1);
      for (const r of busy) expect(r.json().error.code).toBe('idempotency_key_in_progress');
      // After it settles, every retry replays the one placement.
      const replay = await app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'same-key' } });
      expect(replay.statusCode).toBe(201);
      expect(replay.headers['idempotency-replayed']).toBe('true');
      for (const r of ok) expect(r.json()).toEqual(replay.json());
      expect(fake.sipParticipants().length - before).toBe(1);
      expect((await app.call('GET', '/v1/calls?limit=100')).json().data).toHaveLength(1);
    });
  });

  it('a dial LiveKit does not answer in time is recorded unknown and never dialled again under its key', async () => {
    await withDialApp({ requestTimeoutS: 1, waitUntilAnswered: false }, async (app) => {
      await addTrunk(app, { address: 'sip.example-carrier.in', numbers: [FROM] });
      fake.behaviour = { delayMs: 2500 };
      const before = fake.sipParticipants().length;
      const body = { ...EMI, to: TO, dial: true };
      const err = expectError(
        await app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'slow-1' } }),
        'dial_outcome_unknown',
      );
      expect(err.message).toMatch(/within 1 s/);
      const n = /cl_([0-9]+)/.exec(err.message)![1];
      fake.behaviour = {};
      const again = expectError(
        await app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'slow-1' } }),
        'dial_outcome_unknown',
      );
      expect(again.message).toContain(`cl_${n}`);
      expect(fake.sipParticipants().length - before).toBe(1);
      expect((await app.call('GET', `/v1/calls/cl_${n}`)).json()).toMatchObject({
        dial_status: 'unknown',
        status: 'in_progress',
      });
      // The key stays bound to that request: another body under it is a reuse, a prepare-only one too.
      expectError(
        await app.call('POST', '/v1/calls', { ...body, to: '+919812345678' }, { headers: { 'idempotency-key': 'slow-1' } }),
        'idempotency_key_reuse',
      );
      expectError(
        await app.call('POST', '/v1/calls', { ...body, dial: false }, { headers: { 'idempotency-key': 'slow-1' } }),
        'idempotency_key_reuse',
      );
      expect(fake.sipParticipants().length - before).toBe(1);
      // A new key is a new call.
      expect((await app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'slow-2' } })).statusCode).toBe(201);
    });
  });

  it('a dial in flight when the daemon stops becomes unknown at the next start; its retry does not ring again', async () => {
    const app = await makeTestApp({}, { telephony: telephony({ requestTimeoutS: 10, waitUntilAnswered: false }) });
    let second: Awaited<ReturnType<typeof buildApp>> | undefined;
    let runtime2: ReturnType<typeof openRuntime> | undefined;
    try {
      await addTrunk(app, { address: 'sip.example-carrier.in', numbers: [FROM] });
      fake.behaviour = { delayMs: 1500 };
      const before = fake.sipParticipants().length;
      const body = { ...EMI, to: TO, dial: true };
      const inFlight = app.call('POST', '/v1/calls', body, { headers: { 'idempotency-key': 'crash-1' } });
      while (fake.sipParticipants().length === before) await new Promise((r) => setTimeout(r, 10));
      // A second process opens the same state dir as a restarted daemon would (releasing the claim).
      runtime2 = openRuntime(app.settings, { telephony: telephony() });
      expect(runtime2.recovered.interruptedDials).toBe(1);
      second = await buildApp({ services: runtime2.services, bodyLimitBytes: 1 << 20, logger: false, version: 'test' });
      const err = await second.inject({
        method: 'POST',
        url: '/v1/calls',
        payload: body,
        headers: { authorization: `Bearer ${app.key}`, 'idempotency-key': 'crash-1' },
      });
      expect(err.statusCode, err.body).toBe(504);
      expect(err.json().error.code).toBe('dial_outcome_unknown');
      expect(fake.sipParticipants().length - before).toBe(1);
      await inFlight;
    } finally {
      await second?.close();
      runtime2?.close();
      await app.close();
    }
  });
});

describe('GET /v1/telephony/check (the doctor)', () => {
  it('lists outbound trunks with the sip.admin grant and reports the latency', async () => {
    const before = fake.requests.length;
    const res = await t.call('GET', '/v1/telephony/check');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      ok: true,
      url: fake.url,
      outbound_trunks: 0,
      agent_name: 'vagent-media',
      budget: { budget_inr: null },
    });
    const sent = fake.requests.slice(before);
    expect(sent.map((r) => r.method)).toEqual(['ListSIPOutboundTrunk']);
    expect(sent[0]!.grants).toMatchObject({ iss: fake.apiKey, sip: { admin: true } });
  });

  it('explains a wrong key pair and an unreachable server in plain words', async () => {
    const bad = await makeTestApp({}, { telephony: telephony({ apiSecret: 'wrong_secret_wrong_secret_wrong_secret' }) });
    const port = await closedPort();
    const down = await makeTestApp({}, { telephony: telephony({ url: `http://127.0.0.1:${port}` }) });
    try {
      const unauth = (await bad.call('GET', '/v1/telephony/check')).json();
      expect(unauth).toMatchObject({
        ok: false,
        problem: 'unauthenticated',
        message: expect.stringMatching(/LIVEKIT_API_KEY and LIVEKIT_API_SECRET must be a key pair/),
      });
      expect(JSON.stringify(unauth)).not.toContain('wrong_secret');
      const unreachable = (await down.call('GET', '/v1/telephony/check')).json();
      expect(unreachable).toMatchObject({ ok: false, problem: 'unreachable', message: expect.stringContaining('ECONNREFUSED') });
    } finally {
      await bad.close();
      await down.close();
    }
  });
});
