/**
 * Exactly-once dialling across `kill -9` (docs/calls.md "Exactly once"): a daemon killed while
 * LiveKit is still answering a CreateSIPParticipant restarts with that call marked `unknown`, and a
 * retry under the same Idempotency-Key never reaches LiveKit again. A dial acknowledged before the
 * kill replays after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { EMI } from '../support/agents.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon } from '../support/daemon.js';

let fake: FakeLiveKit;

beforeAll(async () => {
  requireBuild();
  fake = await startFakeLiveKit();
});
afterAll(async () => {
  await cleanupAll();
  await fake.close();
}, 30_000);

describe('kill -9 during a dial', () => {
  it('never rings twice under one key, and keeps acknowledged dials', { timeout: 60_000 }, async () => {
    const env = {
      LIVEKIT_URL: fake.url,
      LIVEKIT_API_KEY: fake.apiKey,
      LIVEKIT_API_SECRET: fake.apiSecret,
      VAGENT_DEV_FAKE_ROOMS: '1',
      VAGENT_LIVEKIT_WAIT_UNTIL_ANSWERED: 'false',
      VAGENT_SPEECH: 'off',
      VAGENT_LOG_LEVEL: 'warn',
    };
    let daemon = await startDaemon({ env });
    const key = await adminKey(daemon.stateDir);
    expect(
      (await api(daemon, 'POST', '/v1/trunks', { key, body: { address: 'sip.example-carrier.in', numbers: ['+912240001234'] } })).status,
    ).toBe(201);
    const body = { ...EMI, to: '+919876543210', dial: true };

    const done = await api(daemon, 'POST', '/v1/calls', { key, body, headers: { 'idempotency-key': 'acked-1' } });
    expect(done.status).toBe(201);

    fake.behaviour = { delayMs: 5000 };
    const before = fake.sipParticipants().length;
    const pending = api(daemon, 'POST', '/v1/calls', { key, body, headers: { 'idempotency-key': 'killed-1' } }).catch(
      (err: unknown) => err,
    );
    while (fake.sipParticipants().length === before) await new Promise((r) => setTimeout(r, 10));
    daemon.proc.kill('SIGKILL');
    await daemon.exited;
    expect(await pending).toBeInstanceOf(Error);
    fake.behaviour = {};

    daemon = await startDaemon({ env, stateDir: daemon.stateDir });
    await daemon.waitForOutput(/dials in flight when vagent last stopped/, 'stdout');
    const retry = await api(daemon, 'POST', '/v1/calls', { key, body, headers: { 'idempotency-key': 'killed-1' } });
    expect(retry.status).toBe(504);
    expect(retry.body.error.code).toBe('dial_outcome_unknown');
    expect(fake.sipParticipants().length - before).toBe(1);
    const n = /cl_([0-9]+)/.exec(retry.body.error.message)![1];
    const call = await api(daemon, 'GET', `/v1/calls/cl_${n}`, { key });
    expect(call.body).toMatchObject({
      dial_status: 'unknown',
      dial_error: expect.stringMatching(/stopped while LiveKit was dialling/),
    });

    const replay = await api(daemon, 'POST', '/v1/calls', { key, body, headers: { 'idempotency-key': 'acked-1' } });
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body).toEqual(done.body);
    expect(fake.sipParticipants().length - before).toBe(1);
    await daemon.stop();
  });
});
