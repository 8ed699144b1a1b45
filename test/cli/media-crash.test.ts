/**
 * A daemon killed (`kill -9`) while a carrier stream carries a call: at the next start the
 * call is ended and recorded — completed, its session ended with its summary — never left
 * `in_progress` for ever (the stream's socket died with the process), and it ended
 * when the daemon last saw it alive (its media heartbeat, every ACTIVITY_HEARTBEAT_MS), not at
 * the restart: its duration does not include the outage (docs/calls.md "Call status").
 */
import { afterAll, describe, expect, it } from 'vitest';
import { simulateCall } from '../../src/cli/simulator/sim-client.js';
import { ACTIVITY_HEARTBEAT_MS } from '../../src/app/media-calls.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';

afterAll(cleanupAll, 30_000);

/** A carrier-stream call (Twilio's dialect) of the clinic agent whose caller stays silent; resolves once its opening reaches the caller: the call is live. */
async function liveCall(daemon: Daemon, key: string): Promise<ReturnType<typeof simulateCall>> {
  const call = simulateCall({
    url: `${daemon.url.replace(/^http/, 'ws')}/v1/media/twilio`,
    dialect: 'twilio',
    headers: { authorization: `Bearer ${key}` },
    customParameters: { agent_id: 'ag_clinic_booking', from: '+919812345678' },
    steps: [{ kind: 'wait', ms: 60_000 }],
  });
  await new Promise<void>((resolve) =>
    call.on('event', (e) => {
      if (e.type === 'reply_start') resolve();
    }),
  );
  return call;
}

describe('a carrier stream call when the daemon dies', { timeout: 60_000 }, () => {
  it('is ended at the next start', async () => {
    requireBuild();
    let daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } });
    const key = await adminKey(daemon.stateDir);
    const call = await liveCall(daemon, key);
    const live = await api(daemon, 'GET', '/v1/calls?status=in_progress', { key });
    expect(live.body.data).toHaveLength(1);
    const callId = live.body.data[0].call_id as string;
    expect(live.body.data[0]).toMatchObject({ transport: 'twilio', dial_status: 'answered' });

    const answeredAt = live.body.data[0].answered_at as number;
    // The caller's media flows past at least one heartbeat before the daemon dies.
    await new Promise((r) => setTimeout(r, ACTIVITY_HEARTBEAT_MS * 1.5));

    daemon.proc.kill('SIGKILL');
    await daemon.exited;
    const killedAt = Date.now() / 1000;
    await call.done.catch(() => undefined);
    // An outage: the restart comes well after the kill.
    await new Promise((r) => setTimeout(r, 3000));

    daemon = await startDaemon({ stateDir: daemon.stateDir, env: { VAGENT_RECOGNIZER: 'fake' } });
    const after = await api(daemon, 'GET', `/v1/calls/${callId}`, { key });
    expect(after.body).toMatchObject({ status: 'completed', dial_status: 'completed', transport: 'twilio' });
    expect(after.body.ended_at).toEqual(expect.any(Number));
    // Ended when last seen alive: after its answer (the heartbeat saw its media), before the kill.
    expect(after.body.ended_at).toBeGreaterThan(answeredAt);
    expect(after.body.ended_at).toBeLessThanOrEqual(killedAt);
    expect(after.body.duration_s).toBeCloseTo(after.body.ended_at - after.body.started_at, 2);
    expect((await api(daemon, 'GET', '/v1/calls?status=in_progress', { key })).body.data).toHaveLength(0);
    expect(daemon.stdout()).toContain('calls on carrier streams when vagent last stopped were ended');
    // Its events (docs/events.md): exactly one end, saying the daemon restarted under it.
    const events = (await api(daemon, 'GET', `/v1/events?call_id=${callId}`, { key })).body.data as Array<{
      type: string;
      sequence: number;
      data: Record<string, unknown>;
    }>;
    const ends = events.filter((e) => e.type === 'call.ended');
    expect(ends.map((e) => e.data.end_reason)).toEqual(['daemon_restart']);
    expect(ends[0]!.data.ended_at).toBe(after.body.ended_at);
    expect(events.map((e) => e.sequence)).toEqual(events.map((_, i) => i + 1));
    // A second restart ends nothing again.
    await daemon.stop();
    daemon = await startDaemon({ stateDir: daemon.stateDir, env: { VAGENT_RECOGNIZER: 'fake' } });
    const again = (await api(daemon, 'GET', `/v1/events?call_id=${callId}&types=call.ended`, { key })).body.data;
    expect(again).toHaveLength(1);
  });

  it('a daemon stopped (SIGTERM) under a call ends it saying so: end_reason daemon_restart, not the caller', async () => {
    requireBuild();
    const daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } });
    const key = await adminKey(daemon.stateDir);
    const call = await liveCall(daemon, key);
    const callId = (await api(daemon, 'GET', '/v1/calls?status=in_progress', { key })).body.data[0].call_id as string;
    await daemon.stop('SIGTERM');
    await call.done.catch(() => undefined);
    const again = await startDaemon({ stateDir: daemon.stateDir, env: { VAGENT_RECOGNIZER: 'fake' } });
    const ends = (await api(again, 'GET', `/v1/events?call_id=${callId}&types=call.ended`, { key })).body.data as Array<{
      data: { end_reason: string };
    }>;
    expect(ends.map((e) => e.data.end_reason)).toEqual(['daemon_restart']);
  });
});
