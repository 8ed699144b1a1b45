/**
 * Call recordings in the app (docs/media.md "Recordings"): which calls are recorded (the agent's
 * `recording` wins over the tenant's; default off), bad settings refused naming the param,
 * `GET /v1/calls/{id}/recording` scoped to the call's tenant, recordings purged with their session,
 * the disk cap removing the oldest first, the start-up line, and the export naming each file.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { exportSessions } from '../../src/app/archive.js';
import { wavHeader } from '../../src/media/recorder.js';
import { makeTestApp, minimalAgent, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';
import { expectError } from '../support/expect.js';

const START = Date.parse('2026-11-21T10:00:00+05:30') / 1000;
let clock = START;
let t: TestApp | undefined;

afterEach(async () => {
  await t?.close();
  t = undefined;
  clock = START;
});

/** A placed (not dialled) call of the EMI agent: its number N. */
async function placed(a: TestApp, key?: string): Promise<number> {
  const res = await a.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' }, key ? { key } : {});
  expect(res.statusCode, res.body).toBe(201);
  return Number((res.json() as { call_id: string }).call_id.slice(3));
}

/** Writes a small WAV as call N's recording (as a media worker would have), its call now carried by a stream. */
function fakeRecording(a: TestApp, n: number, bytes = 3200): string {
  const { repos } = a.runtime.services;
  if (repos.calls.get(n)?.transport === null)
    repos.store.writeNow(() => repos.calls.attachTransport(n, 'exotel', `CA${n}`, clock, 'phone'));
  const file = a.runtime.services.recordings.pathOf(n);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, Buffer.concat([Buffer.from(wavHeader(1, bytes)), Buffer.alloc(bytes)]));
  return file;
}

describe('which calls are recorded', () => {
  it("is off by default; the tenant's setting applies; the agent's own wins over it", async () => {
    const a = (t = await makeTestApp());
    const rec = a.runtime.services.recordings;
    const tenants = a.runtime.services.tenants;
    expect(rec.settingFor('default', 7, undefined)).toBeNull();
    expect(tenants.setRecording('default', 'dual').recording).toBe('dual');
    expect(rec.settingFor('default', 7, undefined)).toEqual({
      channels: 'dual',
      file: path.join(a.settings.state_dir, 'recordings', 'cl_7.wav'),
    });
    expect(rec.settingFor('default', 7, 'mono')?.channels).toBe('mono');
    expect(rec.settingFor('default', 7, 'off')).toBeNull();
    tenants.setRecording('default', null);
    expect(rec.settingFor('default', 7, 'dual')?.channels).toBe('dual');
    expect(tenants.getTenant('default').recording).toBeNull();
  });

  it('refuses a bad value naming the param, and changes nothing', async () => {
    const a = (t = await makeTestApp());
    const bad = await a.call('PUT', '/v1/agents/ag_rec', { ...minimalAgent('ag_rec'), recording: 'loud' });
    expectError(bad, 400, 'invalid_request', 'recording');
    expect((await a.call('GET', '/v1/agents/ag_rec')).statusCode).toBe(404);
    for (const value of [true, 1, 'DUAL', '']) {
      const res = await a.call('PUT', '/v1/agents/ag_rec', { ...minimalAgent('ag_rec'), recording: value });
      expectError(res, 400, 'invalid_request', 'recording');
    }
    expect(() => a.runtime.services.tenants.setRecording('default', 'stereo' as never)).toThrow(/recording must be/);
    expect(a.runtime.services.tenants.getTenant('default').recording).toBeNull();
    const ok = await a.call('PUT', '/v1/agents/ag_rec', { ...minimalAgent('ag_rec'), recording: 'dual' });
    expect(ok.statusCode, ok.body).toBeLessThan(300);
  });

  it('says at start-up what is on', async () => {
    const a = (t = await makeTestApp());
    const rec = a.runtime.services.recordings;
    expect(rec.notice()).toMatch(/^call recording: off \(no agent or tenant records calls; /);
    await a.call('PUT', '/v1/agents/ag_rec', { ...minimalAgent('ag_rec'), recording: 'mono' });
    a.runtime.services.tenants.createTenant('acme');
    a.runtime.services.tenants.setRecording('acme', 'dual');
    const line = rec.notice();
    expect(line).toContain('default/ag_rec (mono)');
    expect(line).toContain('tenant acme (dual)');
    expect(line).toContain('no disk cap');
    expect(line.split('\n')).toHaveLength(1);
  });
});

describe('GET /v1/calls/{call_id}/recording', () => {
  it("serves the call's WAV to its tenant only, 404 when it has none", async () => {
    const a = (t = await makeTestApp({ auth_mode: 'enforce' }));
    const n = await placed(a);
    expectError(await a.call('GET', `/v1/calls/cl_${n}/recording`), 404, 'not_found', 'call_id');
    const file = fakeRecording(a, n);
    const got = await a.call('GET', `/v1/calls/cl_${n}/recording`);
    expect(got.statusCode).toBe(200);
    expect(got.headers['content-type']).toBe('audio/wav');
    expect(got.rawPayload.equals(fs.readFileSync(file))).toBe(true);
    const other = a.tenantKey('acme');
    expectError(await a.call('GET', `/v1/calls/cl_${n}/recording`, undefined, { key: other }), 404, 'not_found', 'call_id');
    expect((await a.call('GET', `/v1/calls/cl_${n}/recording`, undefined, { key: null })).statusCode).toBe(401);
    expect((await a.call('GET', `/v1/calls/cl_${n}`)).json()).toMatchObject({
      recording_url: `http://127.0.0.1:8787/v1/calls/cl_${n}/recording`,
    });
    // A call that carried no audio (prepared, never streamed) shows none in its view.
    const text = await placed(a);
    expect((await a.call('GET', `/v1/calls/cl_${text}`)).json()).toMatchObject({ recording_url: null });
  });
});

describe('bounds', () => {
  it('a purge removes the recordings of the sessions it deletes, and the export names them before', async () => {
    const a = (t = await makeTestApp({}, { nowS: () => clock }));
    const n = await placed(a);
    const file = fakeRecording(a, n);
    expect((await a.call('POST', `/v1/sessions/se_${n}/end`)).statusCode).toBe(200);
    const kept = await placed(a);
    const keptFile = fakeRecording(a, kept);
    const exported = [...exportSessions(a.runtime.services, { tenant: null, since: 0, before: Number.MAX_SAFE_INTEGER })];
    expect(exported.map((e) => e.recording)).toEqual([file, keptFile]);
    clock = START + 3600;
    const done = await a.runtime.services.retention.purge({ before: START + 60, tenant: null });
    expect(done).toMatchObject({ sessions: 1 });
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.existsSync(keptFile)).toBe(true); // its session is still open
  });

  it('a recording cut short by a crash (header still 0) gets its real sizes at start-up', async () => {
    const a = (t = await makeTestApp());
    const rec = a.runtime.services.recordings;
    const file = rec.pathOf(9);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.concat([Buffer.from(wavHeader(2, 0)), Buffer.alloc(4 * 1000 + 3)])); // a torn last frame
    const good = fakeRecording(a, 10);
    const before = fs.readFileSync(good);
    expect(rec.repairHeaders()).toBe(1);
    const wav = fs.readFileSync(file);
    expect(wav.readUInt32LE(40)).toBe(4000);
    expect(wav.readUInt32LE(4)).toBe(36 + 4000);
    expect(fs.readFileSync(good).equals(before)).toBe(true);
    expect(rec.repairHeaders()).toBe(0);
  });

  it('beyond recordings_max_mb the oldest go first when a new recording starts', async () => {
    const a = (t = await makeTestApp({ recordings_max_mb: 1 }));
    const rec = a.runtime.services.recordings;
    const files = [1, 2, 3].map((n) => fakeRecording(a, n, 400 * 1024));
    files.forEach((f, i) => fs.utimesSync(f, START + i, START + i));
    expect(rec.settingFor('default', 4, 'dual')).not.toBeNull();
    expect(files.map((f) => fs.existsSync(f))).toEqual([false, true, true]);
    expect(rec.list().reduce((s, f) => s + f.size, 0)).toBeLessThanOrEqual(1024 * 1024);
  });
});
