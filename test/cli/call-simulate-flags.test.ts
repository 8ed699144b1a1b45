/**
 * `vagent call simulate` through the built binary: its help, bad flags (exit 2 / exit 1, with
 * `--json` error lines), a bad WAV, an unreachable daemon (exit 3), and against a real daemon
 * an unknown agent and a refused API key, each before any call is prepared. The call itself,
 * streamed into the daemon's media endpoint, is in ./call-simulate.test.ts.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, freePort, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
let key: string;

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_SPEECH: 'off' } });
  key = await adminKey(daemon.stateDir);
}, 30_000);
afterAll(cleanupAll, 30_000);

const vagent = (args: string[], env: Record<string, string> = {}) =>
  runCli(['call', 'simulate', ...args], { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key, ...env } });

describe('vagent call simulate: help and bad flags', { timeout: 30_000 }, () => {
  it('--help teaches the flags, the flow and gives examples', async () => {
    const res = await vagent(['--help']);
    expect(res.code).toBe(0);
    for (const word of [
      '--say <text>',
      '--wav <file>',
      '--transport <carrier>',
      '--barge-in',
      '--dtmf <keys>',
      '--timeout-s',
      'call_id',
      'vagent_fake_transcripts',
      'Examples:',
    ]) {
      expect(res.stdout).toContain(word);
    }
  });

  it('nothing to say: exit 2 with an example', async () => {
    const res = await vagent(['ag_clinic_booking']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('--say');
    expect(res.stderr).toContain('example: vagent call simulate ag_clinic_booking');
  });

  it('an unknown transport: exit 2', async () => {
    const res = await vagent(['ag_clinic_booking', '--say', 'hi', '--transport', 'vonage']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('twilio, exotel, plivo');
  });

  it('bad keys and numbers: exit 1, one JSON error line with --json', async () => {
    const dtmf = await vagent(['ag_clinic_booking', '--say', 'hi', '--dtmf', '12x', '--json']);
    expect(dtmf.code).toBe(1);
    expect(JSON.parse(dtmf.stderr)).toMatchObject({ error: { code: 'invalid_request', param: 'dtmf' } });
    const to = await vagent(['ag_clinic_booking', '--say', 'hi', '--to', '98765']);
    expect(to.code).toBe(1);
    expect(to.stderr).toContain('--to must be an E.164 number');
  });

  it('a WAV that is missing (exit 2) or not a WAV (exit 1) is refused before the daemon is asked', async () => {
    const dir = tempDir();
    const missing = await vagent(['ag_clinic_booking', '--wav', path.join(dir, 'nope.wav')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read --wav file');
    const bad = path.join(dir, 'bad.wav');
    fs.writeFileSync(bad, 'this is text');
    const res = await vagent(['ag_clinic_booking', '--wav', bad], { VAGENT_URL: 'http://127.0.0.1:1' });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('not a WAV file');
    expect(res.stderr).toContain('PCM WAV');
  });

  it('no daemon: exit 3', async () => {
    const res = await vagent(['ag_clinic_booking', '--say', 'hi'], { VAGENT_URL: `http://127.0.0.1:${await freePort()}` });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('cannot reach the vagent daemon');
  });
});

describe('vagent call simulate: refused before any call', { timeout: 30_000 }, () => {
  it('an unknown agent: exit 1 with where to find agent ids; no call prepared', async () => {
    const res = await vagent(['ag_no_such_agent', '--say', 'hello']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/not_found/);
    expect(res.stderr).toContain('vagent agent list');
    const calls = await api(daemon, 'GET', '/v1/calls', { key });
    expect((calls.body as { data: unknown[] }).data).toEqual([]);
  });

  it('a wrong API key: exit 1 unauthorized', async () => {
    const res = await vagent(['ag_clinic_booking', '--say', 'hello', '--json'], { VAGENT_API_KEY: 'vk_wrong' });
    expect(res.code).toBe(1);
    expect(JSON.parse(res.stderr)).toMatchObject({ error: { code: 'unauthorized' } });
    expect(res.stderr).not.toContain('vk_wrong');
  });
});
