/**
 * The events of dialled calls (docs/events.md): through the real livekit-server-sdk against the
 * local fake LiveKit server, each call has its created/answered or failed events and exactly one
 * `call.ended` with its reason and report, numbered with its session's events without a gap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventView } from '../../src/contract/events.js';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { LiveKitTelephony } from '../../src/adapters/livekit/telephony.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';

const FROM = '+918069000001';
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

async function eventsOf(callId: string): Promise<EventView[]> {
  const res = await t.call('GET', `/v1/events?call_id=${callId}`);
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { data: EventView[] }).data;
}

describe('call events', () => {
  it('an answered call hung up by the API: created, answered, its turns, and one call.ended with the whole report', async () => {
    const placed = await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210', from: FROM, dial: true, customer_name: 'Ravi' });
    expect(placed.statusCode, placed.body).toBe(201);
    const { call_id: callId, session_id: sessionId } = placed.json() as { call_id: string; session_id: string };
    expect((await t.call('POST', `/v1/sessions/${sessionId}/turn`, { text: 'yes speaking' })).statusCode).toBe(200);
    expect((await t.call('POST', `/v1/calls/${callId}/hangup`)).statusCode).toBe(200);
    // A second hang-up and an end of its session change nothing: still one end.
    await t.call('POST', `/v1/calls/${callId}/hangup`);
    await t.call('POST', `/v1/sessions/${sessionId}/end`);

    const events = await eventsOf(callId);
    expect(events.map((e) => e.type)).toEqual([
      'session.opened',
      'call.created',
      'call.answered',
      'session.turn',
      'session.ended',
      'call.ended',
    ]);
    expect(events.map((e) => e.sequence)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(events.every((e) => e.session_id === sessionId)).toBe(true);
    // Every event of the call names it, its session's opening included.
    expect(events.map((e) => e.call_id)).toEqual(events.map(() => callId));
    expect(events[1]!.data).toMatchObject({ direction: 'outbound', from: FROM, to: '+919876543210', agent_id: EMI.agent_id });
    const report = events[5]!.data;
    expect(report).toMatchObject({
      end_reason: 'api_hangup',
      direction: 'outbound',
      customer_name: 'Ravi',
      answered_at: expect.any(Number),
      ended_at: expect.any(Number),
      cost: expect.objectContaining({ total_inr: expect.any(Number) }),
      summary: expect.objectContaining({ outcome: expect.any(String) }),
    });
    const transcript = report.transcript as Array<{ speaker: string; text?: string }>;
    expect(transcript[0]).toMatchObject({ speaker: 'agent', layer: 'opening', text: expect.stringMatching(/Am I speaking with Ravi\?$/) });
    expect(transcript[1]).toMatchObject({ speaker: 'caller', text: 'yes speaking' });
    expect(transcript[2]).toMatchObject({ speaker: 'agent' });
    expect(events[0]!.data.opening).toBe(transcript[0]!.text);
  });

  it('a busy callee: call.failed and one call.ended, both saying busy', async () => {
    const res = await t.call('POST', '/v1/calls', { ...EMI, to: '+919876500486', from: FROM, dial: true });
    expect(res.statusCode).toBe(502);
    const n = /cl_([0-9]+)/.exec((res.json() as { error: { message: string } }).error.message)![1];
    const events = await eventsOf(`cl_${n}`);
    expect(events.map((e) => [e.type, e.data.end_reason ?? null])).toEqual([
      ['session.opened', null],
      ['call.created', null],
      ['call.failed', 'busy'],
      ['session.ended', null],
      ['call.ended', 'busy'],
    ]);
    expect(events[2]!.data).toMatchObject({ sip_status: 486, error: expect.stringMatching(/486/) });
    expect(events.map((e) => [e.call_id, e.sequence])).toEqual([1, 2, 3, 4, 5].map((i) => [`cl_${n}`, i]));
  });
});
