/**
 * `vagent session list|show`, money and counts in human output, and the caller's number in
 * `vagent call list`, through the built binary against a real daemon
 * whose LiveKit is the fake (src/devtools), so that an inbound call can arrive.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLiveKit, type FakeLiveKit } from '../../src/devtools/fake-livekit.js';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, type Daemon } from '../support/daemon.js';

const DID = '+911140001234';
const CALLER = '+919812345678';

let fake: FakeLiveKit;
let daemon: Daemon;
let key: string;
const vagent = (args: string[], input?: string) =>
  runCli(args, { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key }, ...(input === undefined ? {} : { input }) });

beforeAll(async () => {
  requireBuild();
  fake = await startFakeLiveKit();
  daemon = await startDaemon({
    env: {
      LIVEKIT_URL: fake.url,
      LIVEKIT_API_KEY: fake.apiKey,
      LIVEKIT_API_SECRET: fake.apiSecret,
      VAGENT_DEV_FAKE_ROOMS: '1',
      VAGENT_SPEECH: 'off',
    },
  });
  key = await adminKey(daemon.stateDir);
  fake.webhookUrl = `${daemon.url}/v1/telephony/livekit/webhook`;
}, 30_000);
afterAll(async () => {
  await cleanupAll();
  await fake?.close();
}, 30_000);

describe('vagent session list and show', { timeout: 90_000 }, () => {
  let sessionId: string;

  it('a one-turn chat says "1 turn", and money is rupees with paise', async () => {
    const res = await vagent(['chat', 'ag_clinic_booking', '--customer-name', 'Priya'], 'Priya Sharma\n');
    expect(res.code, res.stderr).toBe(0);
    sessionId = /^session (se_\d+) /m.exec(res.stdout)![1]!;
    expect(res.stdout).toMatch(/^outcome:\s+abandoned \(1 turn\)$/m);
    expect(res.stdout).toMatch(/^cost:\s+₹0\.00 \(llm ₹0\.00, tts ₹0\.00, stt ₹0\.00\)$/m);
    expect(res.stdout).not.toMatch(/₹\d+\.\d{3}/);
  });

  it('session list shows it newest first; --json keeps the exact numbers', async () => {
    const older = await vagent(['chat', 'ag_clinic_booking'], '');
    expect(older.code, older.stderr).toBe(0);
    const newest = /^session (se_\d+) /m.exec(older.stdout)![1]!;
    const res = await vagent(['session', 'list']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^SESSION\s+AGENT\s+STATUS\s+TURNS\s+CUSTOMER\s+STARTED\s+COST$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/)[0])).toEqual([newest, sessionId]);
    expect(lines[2]).toMatch(/^se_\d+\s+ag_clinic_booking\s+ended \(abandoned\)\s+1\s+Priya\s+\S+ \S+\s+₹0\.00$/);
    const json = JSON.parse((await vagent(['session', 'list', '--json', '--limit', '1'])).stdout);
    expect(json).toMatchObject({ has_more: true, data: [{ session_id: newest, cost: { total_inr: 0 } }] });
    const bad = await vagent(['session', 'list', '--limit', '0']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid_request: --limit/m);
  });

  it('session show has agent, status and outcome, captured values per step, and the turns', async () => {
    const res = await vagent(['session', 'show', sessionId]);
    expect(res.code, res.stderr).toBe(0);
    const out = res.stdout;
    expect(out).toMatch(new RegExp(`^session:\\s+${sessionId}$`, 'm'));
    expect(out).toMatch(/^agent:\s+ag_clinic_booking$/m);
    expect(out).toMatch(/^status:\s+ended \(abandoned\)$/m);
    expect(out).toMatch(/^customer:\s+Priya$/m);
    expect(out).toMatch(/^turns:\s+1$/m);
    expect(out).toMatch(/^STEP\s+STATUS\s+ATTEMPTS\s+SLOT\s+CAPTURED$/m);
    expect(out).toMatch(/^name\s+pending\s+\d+\s+patient_name\s+-$/m);
    expect(out).toMatch(/^#\s+CALLER\s+AGENT\s+LAYER\s+COST$/m);
    expect(out).toMatch(/^1\s+Priya Sharma\s+.+\s+\S+\s+₹0\.00$/m);
  });
});

describe('vagent call list', { timeout: 60_000 }, () => {
  it("shows the caller's number for an inbound call", async () => {
    expect((await api(daemon, 'POST', '/v1/numbers', { key, body: { number: DID, agent_id: 'ag_clinic_booking' } })).status).toBe(201);
    const inbound = await fake.simulateInbound({ from: CALLER, to: DID });
    expect(inbound.status).toBe(200);
    let calls: Array<{ direction: string }> = [];
    for (let i = 0; i < 100 && calls.length === 0; i++) {
      calls = (await api(daemon, 'GET', '/v1/calls', { key })).body.data;
      if (calls.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    expect(calls[0]).toMatchObject({ direction: 'inbound', from: CALLER, to: DID });
    const res = await vagent(['call', 'list']);
    expect(res.code, res.stderr).toBe(0);
    const lines = res.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^CALL\s+STATUS\s+DIAL\s+DIR\s+FROM\s+TO\s+/);
    expect(lines[1]).toMatch(new RegExp(`^cl_\\d+\\s+in progress\\s+answered\\s+in\\s+\\${CALLER}\\s+\\${DID}\\s+ag_clinic_booking\\s`));
  });
});
