/**
 * Hostile clients of the carrier media endpoint `GET /v1/media/{twilio,exotel,plivo}`, against
 * one real daemon on loopback with the fake streaming recogniser (`VAGENT_RECOGNIZER=fake`):
 * - a binary frame after `start` (RFC 6455 §7.4.1 code 1003) ends the call at once, with the
 *   reason recorded on it (docs/media.md "How a call behaves").
 */
import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultSimFormat, SimFrameWriter, simStreamIds } from '../../src/media/carriers/sim-frames.js';
import type { CarrierDialect } from '../../src/media/carriers/types.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';

const DIALECTS: readonly CarrierDialect[] = ['twilio', 'exotel', 'plivo'];
const AGENT = 'ag_clinic_booking';

let daemon: Daemon;
let key: string;

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon({ env: { VAGENT_RECOGNIZER: 'fake' } });
  key = await adminKey(daemon.stateDir);
}, 60_000);
afterAll(cleanupAll, 30_000);

const wsUrl = (dialect: CarrierDialect): string => `${daemon.url.replace(/^http/, 'ws')}/v1/media/${dialect}`;
const writer = (dialect: CarrierDialect): SimFrameWriter => new SimFrameWriter(dialect, simStreamIds(dialect), defaultSimFormat(dialect));

/** The call record a stream opened, found by the carrier's call id (stored as `provider_call_id`). */
async function callOf(carrierCallId: string): Promise<Record<string, unknown> | undefined> {
  const res = await api(daemon, 'GET', '/v1/calls?limit=100', { key });
  expect(res.status).toBe(200);
  return (res.body.data as Array<Record<string, unknown>>).find((c) => c.provider_call_id === carrierCallId);
}

/** Polls the call of carrier call `carrierCallId` until it is completed, or `timeoutMs` passes; returns its last view. */
async function whenCompleted(carrierCallId: string, timeoutMs: number): Promise<Record<string, unknown> | undefined> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const found = await callOf(carrierCallId);
    if (found?.status === 'completed' || Date.now() > until) return found;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a binary frame after start', { timeout: 60_000 }, () => {
  it('closes the stream with 1003 and completes the call at once, the reason recorded', async () => {
    const auth = { authorization: `Bearer ${key}` };
    const runs = await Promise.all(DIALECTS.map(async (dialect) => {
      const w = writer(dialect);
      const close = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
        const ws = new WebSocket(wsUrl(dialect), { headers: auth });
        const timer = setTimeout(() => { ws.terminate(); reject(new Error(`${dialect}: no close after a binary frame`)); }, 20_000);
        let sent = false;
        ws.on('open', () => {
          for (const f of [w.connected(), w.start({ agent_id: AGENT }, { from: '+919800000001', to: '+918000000002' })]) if (f !== null) ws.send(f);
        });
        ws.on('message', () => {
          // The opening is playing: the stream is attached; now the carrier sends a binary frame.
          if (sent) return;
          sent = true;
          ws.send(Buffer.from([0x00, 0xff, 0x10, 0x20]), { binary: true });
        });
        ws.on('close', (code, reason) => { clearTimeout(timer); resolve({ code, reason: reason.toString() }); });
        ws.on('error', () => undefined);
      });
      return { dialect, close, ids: w.ids };
    }));
    for (const { dialect, close, ids } of runs) {
      expect(close, dialect).toMatchObject({ code: 1003, reason: expect.stringContaining('binary') });
      // "At once" is well under a second by hand; the bound here is generous (a loaded machine)
      // and far below the ~30 s the media worker's own timeouts would take to notice.
      const ended = await whenCompleted(ids.callId, 5_000);
      expect(ended, `${dialect}: the call was recorded`).toBeDefined();
      expect(ended!.status, dialect).toBe('completed');
      expect(ended!.ended_at, dialect).toEqual(expect.any(Number));
      expect(ended!.dial_error, dialect).toMatch(/1003.*binary/);
    }
    expect((await api(daemon, 'GET', '/v1/health')).status).toBe(200);
  });
});
