/**
 * Prepared calls whose carrier stream never arrives end (docs/calls.md "Prepared calls that
 * never connect"): at their `max_call_duration_s` after being prepared (the default when none
 * was given) the daemon's background task ends the session and records why, and the deadline
 * is read from the stored call, so a daemon restarted after it passed ends the call at start.
 * Time is the services' clock (`now`), moved by the test.
 */
import fs from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DIAL_LIMITS } from '../../src/domain/calls.js';
import { buildApp } from '../../src/http/app.js';
import { startBackgroundTasks } from '../../src/daemon/background.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';

let t: TestApp;
let clock = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
const TO = '+919876543210';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

beforeAll(async () => {
  t = await makeTestApp({}, { nowS: () => clock });
});
afterAll(async () => t.close());

async function prepare(body: Record<string, unknown> = {}): Promise<string> {
  const res = await t.call('POST', '/v1/calls', { ...EMI, to: TO, ...body });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().call_id as string;
}

async function status(callId: string): Promise<Record<string, unknown>> {
  const res = await t.call('GET', `/v1/calls/${callId}`);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Record<string, unknown>;
}

describe('prepared calls whose stream never arrives', { timeout: 30_000 }, () => {
  it('end at max_call_duration_s after being prepared (the default when none was given), with the reason recorded', async () => {
    const start = clock;
    const short = await prepare({ max_call_duration_s: 10 });
    const long = await prepare();
    const hungUp = await prepare({ max_call_duration_s: 10 });
    expect((await t.call('POST', `/v1/calls/${hungUp}/hangup`)).statusCode).toBe(200);
    const expire = () => t.runtime.services.callLines.endExpiredPrepared();

    clock = start + 9;
    expect(await expire()).toBe(0);
    expect(await status(short)).toMatchObject({ status: 'in_progress', dial_status: 'not_dialled', ended_at: null });

    clock = start + 10;
    expect(await expire()).toBe(1);
    const ended = await status(short);
    expect(ended).toMatchObject({ status: 'completed', dial_status: 'not_dialled', ended_at: start + 10, transport: null });
    expect(ended.dial_error).toMatch(/no carrier stream arrived within 10 s \(max_call_duration_s\)/);
    const session = (await t.call('GET', `/v1/sessions/${ended.session_id as string}`)).json();
    expect(session.session.status).toBe('ended');
    // The one hung up by hand keeps its own ending; the default-length one is still waiting.
    expect((await status(hungUp)).dial_error).toBeNull();
    expect(await status(long)).toMatchObject({ status: 'in_progress' });

    clock = start + DIAL_LIMITS.max_call_duration_s.default;
    expect(await expire()).toBe(1);
    expect(await status(long)).toMatchObject({
      status: 'completed',
      dial_status: 'not_dialled',
      dial_error: expect.stringContaining(`${DIAL_LIMITS.max_call_duration_s.default} s`),
    });
    expect(await expire()).toBe(0);
  });

  it("are ended by the daemon's background task", async () => {
    const start = clock;
    const callId = await prepare({ max_call_duration_s: 10 });
    const tasks = startBackgroundTasks(t.runtime, quiet, { preparedExpiryIntervalMs: 20 });
    try {
      clock = start + 11;
      await vi.waitFor(async () => expect((await status(callId)).status).toBe('completed'), { timeout: 10_000, interval: 50 });
    } finally {
      await tasks.stop();
    }
  });

  it('end when the daemon starts again after their deadline passed while it was down', async () => {
    const dir = fs.mkdtempSync(`${t.settings.state_dir}-restart-`);
    let now = clock;
    const settings = { ...t.settings, state_dir: dir };
    const first = openRuntime(settings, { nowS: () => now });
    const key = first.services.tenants.createKey('default').key;
    const app1 = await buildApp({ services: first.services, bodyLimitBytes: 1 << 20, logger: false, version: 'test' });
    const headers = { authorization: `Bearer ${key}` };
    const placed = await app1.inject({
      method: 'POST',
      url: '/v1/calls',
      headers,
      payload: { ...EMI, to: TO, max_call_duration_s: 30 },
    });
    expect(placed.statusCode, placed.body).toBe(201);
    const callId = placed.json().call_id as string;
    await app1.close();
    first.close();

    now += 3600;
    const second = openRuntime(settings, { nowS: () => now });
    const app2 = await buildApp({ services: second.services, bodyLimitBytes: 1 << 20, logger: false, version: 'test' });
    const tasks = startBackgroundTasks(second, quiet);
    try {
      await vi.waitFor(
        async () => {
          const res = await app2.inject({ method: 'GET', url: `/v1/calls/${callId}`, headers });
          expect(res.json()).toMatchObject({ status: 'completed', dial_error: expect.stringContaining('within 30 s') });
        },
        { timeout: 10_000, interval: 50 },
      );
    } finally {
      await tasks.stop();
      await app2.close();
      second.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
