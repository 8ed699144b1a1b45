/**
 * `vagent call simulate` of an agent whose language no recogniser of the daemon hears (the
 * Hindi EMI reminder on a daemon with the embedded English recogniser and no cloud key) is
 * refused before any call is made, naming the settings that would serve it, instead of
 * re-prompting until its timeout. The daemon says what hears a language at
 * `GET /v1/health?language=` (recognition.for_language).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
let key: string;

beforeAll(async () => {
  requireBuild();
  // The default recogniser (auto: the embedded one, English only), no Deepgram or Sarvam key.
  daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'auto', SARVAM_API_KEY: undefined, DEEPGRAM_API_KEY: undefined } });
  key = await adminKey(daemon.stateDir);
}, 30_000);
afterAll(cleanupAll, 30_000);

const EMI_HI = [
  'ag_emi_reminder_hi',
  '--customer-name',
  'Ravi Kumar',
  '--context',
  '{"emi_amount": "12,500", "due_date": "25 November", "loan_last4": "4321"}',
];

describe('a language no recogniser hears', { timeout: 60_000 }, () => {
  it('GET /v1/health?language= says what hears it, or why nothing does and what would', async () => {
    const hi = await api(daemon, 'GET', '/v1/health?language=hi-IN');
    expect(hi.status).toBe(200);
    expect(hi.body.recognition.for_language).toMatchObject({
      language: 'hi-IN',
      provider: null,
      fallback: null,
      reason: expect.stringContaining('hi-IN'),
    });
    expect(hi.body.recognition.for_language.fix).toContain('recognizers.hi-IN: sarvam');
    expect(hi.body.recognition.for_language.fix).toContain('SARVAM_API_KEY');
    expect(hi.body.recognition.for_language.fix).toContain('DEEPGRAM_API_KEY');
    const bad = await api(daemon, 'GET', '/v1/health?language=not%20a%20tag');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'invalid_request', param: 'language' });
    const plain = await api(daemon, 'GET', '/v1/health');
    expect(plain.body.recognition.for_language).toBeUndefined();
  });

  it('vagent call simulate refuses at start: exit 1 naming SARVAM_API_KEY and recognizers.hi-IN, no call made', async () => {
    const res = await runCli(['call', 'simulate', ...EMI_HI, '--say', 'haan ji', '--timeout-s', '10'], {
      env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key },
      timeoutMs: 40_000,
    });
    expect(res.code, res.stdout + res.stderr).toBe(1);
    expect(res.stderr).toContain('no recogniser hears hi-IN');
    expect(res.stderr).toContain('SARVAM_API_KEY');
    expect(res.stderr).toContain('recognizers.hi-IN');
    const calls = await api(daemon, 'GET', '/v1/calls', { key });
    expect(calls.body.data).toEqual([]);

    const json = await runCli(['call', 'simulate', ...EMI_HI, '--say', 'haan ji', '--json'], {
      env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key },
      timeoutMs: 40_000,
    });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr.trim().split('\n').at(-1)!)).toMatchObject({ error: { code: 'recognition_off' } });
  });
});
