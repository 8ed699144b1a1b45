/**
 * A LiveKit webhook whose signature verifies but whose body is not an event is the sender's
 * mistake, 400 `invalid_request`; only a signature that does not verify is 401
 * (docs/api-decisions.md "Errors"; docs/calls.md "Inbound calls"). Signed with the fake LiveKit's
 * key and secret, as LiveKit signs.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { REQUEST_ID } from '../support/expect.js';

let fake: FakeLiveKit;
let t: TestApp;
let hookUrl: string;

beforeAll(async () => {
  fake = await startFakeLiveKit();
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
    },
  );
  hookUrl = `${await t.app.listen({ port: 0, host: '127.0.0.1' })}/v1/telephony/livekit/webhook`;
});
afterAll(async () => {
  await t.close();
  await fake.close();
});

async function post(
  body: string,
  authorization: string | null,
): Promise<{ status: number; error: { code: string; message: string }; requestId: string | null }> {
  const res = await fetch(hookUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/webhook+json', ...(authorization === null ? {} : { authorization }) },
    body,
  });
  return {
    status: res.status,
    error: ((await res.json()) as { error: { code: string; message: string } }).error,
    requestId: res.headers.get('x-request-id'),
  };
}

function recorded(): number {
  return t.runtime.services.repos.store.db.prepare('SELECT COUNT(*) FROM telephony_events').pluck().get() as number;
}

describe('a signed webhook whose event is malformed', () => {
  const joined = (participant: Record<string, unknown>) =>
    JSON.stringify({ event: 'participant_joined', id: 'EV_m', room: { sid: 'RM_m', name: 'call-m' }, participant });
  it.each([
    ['not JSON', 'participant_joined sip.callID=SCL_1', /not JSON/],
    ['truncated JSON', '{"event":"participant_joined","participant":{', /not JSON/],
    ['a JSON array', '[{"event":"participant_joined"}]', /not a LiveKit WebhookEvent/],
    ['JSON null', 'null', /not a LiveKit WebhookEvent/],
    ['a JSON string', '"participant_joined"', /not a LiveKit WebhookEvent/],
    ['attributes as a list', joined({ identity: 'sip_x', kind: 'SIP', attributes: ['sip.callID', 'SCL_1'] }), /not a LiveKit WebhookEvent/],
    ['a participant that is a string', JSON.stringify({ event: 'participant_joined', participant: 'sip_x' }), /not a LiveKit WebhookEvent/],
    [
      'a numeric field as an object',
      joined({ identity: 'sip_x', kind: 'SIP', joinedAt: { at: 1 }, attributes: {} }),
      /not a LiveKit WebhookEvent/,
    ],
  ])('%s → 400 invalid_request, nothing recorded', async (_label, body, message) => {
    const before = recorded();
    const res = await post(body, fake.signWebhook(body));
    expect(res.status).toBe(400);
    expect(res.error.code).toBe('invalid_request');
    expect(res.error.message).toMatch(/^webhook signature is valid, but /);
    expect(res.error.message).toMatch(message);
    expect(res.requestId).toMatch(REQUEST_ID);
    expect(recorded()).toBe(before);
  });

  it('the same malformed bodies with a bad or missing signature are still 401', async () => {
    const body = '[{"event":"participant_joined"}]';
    const foreign = await startFakeLiveKit({ apiSecret: 'another_projects_secret_0123456789_abcdef' });
    try {
      for (const authorization of [null, foreign.signWebhook(body), fake.signWebhook('[]')]) {
        const res = await post(body, authorization);
        expect(res.status).toBe(401);
        expect(res.error.code).toBe('unauthorized');
      }
    } finally {
      await foreign.close();
    }
  });

  it('a well-formed signed event is still accepted', async () => {
    const res = await fake.sendWebhook({ event: 'room_started', room: { sid: 'RM_1', name: 'x' } }, hookUrl);
    expect(res.status).toBe(200);
  });
});
