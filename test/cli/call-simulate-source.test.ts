/**
 * Simulated calls are marked (docs/api-decisions.md "Simulated calls"), through the built
 * binary against a real daemon with the fake recogniser: `vagent call simulate` labels its
 * stream, the call's `source` is `simulator`, `vagent call list` marks it `sim` (and `--json`
 * keeps the field, `--source` filters); a stream authenticated by the stream token cannot
 * claim the label, whatever its parameters say.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { simulateCall } from '../../src/cli/simulator/sim-client.js';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
let key: string;
const cli = (args: string[]) => runCli(args, { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key }, timeoutMs: 60_000 });

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } });
  key = await adminKey(daemon.stateDir);
}, 30_000);
afterAll(cleanupAll, 30_000);

type Call = { call_id: string; session_id: string; source: string; provider_call_id: string | null };
const calls = async (): Promise<Call[]> => (await api(daemon, 'GET', '/v1/calls?limit=100', { key })).body.data as Call[];

/** The call of carrier call id `providerCallId`, once the daemon has recorded it (its stream may close first). */
async function callOf(providerCallId: string): Promise<Call | undefined> {
  for (let i = 0; i < 100; i++) {
    const found = (await calls()).find((c) => c.provider_call_id === providerCallId);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
  return undefined;
}

/** A short stream of `agent_id` with `params`, authenticated by `headers`; resolves when it has closed. */
async function stream(params: Record<string, string>, headers: Record<string, string>): Promise<string> {
  const call = simulateCall({
    url: `${daemon.url.replace(/^http/, 'ws')}/v1/media/exotel`,
    dialect: 'exotel',
    headers,
    customParameters: { agent_id: 'ag_clinic_booking', ...params },
    steps: [{ kind: 'wait', ms: 500 }, { kind: 'hangup' }],
  });
  return (await call.done).ids.callId;
}

describe('simulated calls are marked', { timeout: 90_000 }, () => {
  it('vagent call simulate: source simulator, marked sim in vagent call list, kept by --json, filtered by --source', async () => {
    const sim = await cli(['call', 'simulate', 'ag_clinic_booking', '--say', 'Priya Sharma', '--timeout-s', '8', '--json']);
    expect(sim.code, sim.stderr).toBe(0);
    const sessionId = (JSON.parse(sim.stdout.trim().split('\n').at(-1)!) as { session_id: string }).session_id;
    const callId = sessionId.replace(/^se_/, 'cl_');
    const shown = await api(daemon, 'GET', `/v1/calls/${callId}`, { key });
    expect(shown.body).toMatchObject({ call_id: callId, source: 'simulator', transport: 'exotel' });

    const phoneCallId = await stream({}, { authorization: `Bearer ${key}` });
    const phone = (await callOf(phoneCallId))!;
    expect(phone.source).toBe('phone');

    const table = await cli(['call', 'list']);
    expect(table.code, table.stderr).toBe(0);
    const row = (id: string) => table.stdout.split('\n').find((l) => l.includes(id)) ?? '';
    expect(row(callId)).toMatch(/\bin sim\b/);
    expect(row(phone.call_id)).toMatch(/\bin\b/);
    expect(row(phone.call_id)).not.toContain('sim');

    const json = await cli(['call', 'list', '--json']);
    expect((JSON.parse(json.stdout) as { data: Call[] }).data.find((c) => c.call_id === callId)?.source).toBe('simulator');
    const onlySim = await cli(['call', 'list', '--source', 'simulator', '--json']);
    const simIds = (JSON.parse(onlySim.stdout) as { data: Call[] }).data.map((c) => c.call_id);
    expect(simIds).toContain(callId);
    expect(simIds).not.toContain(phone.call_id);
    const bad = await cli(['call', 'list', '--source', 'carrier']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--source must be phone or simulator');
  });

  it('only a stream authenticated with an API key may claim the label: a stream token cannot', async () => {
    const token = (await api(daemon, 'POST', '/v1/carriers/stream_token', { key })).body.stream_token as string;
    const byToken = await stream({ stream_token: token, vagent_source: 'simulator' }, {});
    const byKey = await stream({ vagent_source: 'simulator' }, { authorization: `Bearer ${key}` });
    expect((await callOf(byToken))?.source).toBe('phone');
    expect((await callOf(byKey))?.source).toBe('simulator');
  });
});
