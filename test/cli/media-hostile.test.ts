/**
 * Hostile clients of the carrier media endpoint `GET /v1/media/{twilio,exotel,plivo}`, against
 * one real daemon on loopback with the fake streaming recogniser (`VAGENT_RECOGNIZER=fake`):
 * - a binary frame after `start` (RFC 6455 §7.4.1 code 1003) ends the call at once, with the
 *   reason recorded on it (docs/media.md "How a call behaves");
 * - sockets that never prove who they are (no credentials, no `start`) hold a bounded amount
 *   of the daemon's memory however many there are, and are closed with a code and a reason
 *   that say why (docs/media.md "Before `start`"). The daemon's resident memory is read from
 *   /proc/<pid>/status (VmRSS, proc(5)); the bound asserted is on memory, not on time.
 */
import fs from 'node:fs';
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
    const runs = await Promise.all(
      DIALECTS.map(async (dialect) => {
        const w = writer(dialect);
        const close = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
          const ws = new WebSocket(wsUrl(dialect), { headers: auth });
          const timer = setTimeout(() => {
            ws.terminate();
            reject(new Error(`${dialect}: no close after a binary frame`));
          }, 20_000);
          let sent = false;
          ws.on('open', () => {
            for (const f of [w.connected(), w.start({ agent_id: AGENT }, { from: '+919800000001', to: '+918000000002' })])
              if (f !== null) ws.send(f);
          });
          ws.on('message', () => {
            // The opening is playing: the stream is attached; now the carrier sends a binary frame.
            if (sent) return;
            sent = true;
            ws.send(Buffer.from([0x00, 0xff, 0x10, 0x20]), { binary: true });
          });
          ws.on('close', (code, reason) => {
            clearTimeout(timer);
            resolve({ code, reason: reason.toString() });
          });
          ws.on('error', () => undefined);
        });
        return { dialect, close, ids: w.ids };
      }),
    );
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

/** The daemon's resident set size in bytes (VmRSS in /proc/<pid>/status, proc(5)). */
function rssBytes(): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(fs.readFileSync(`/proc/${daemon.pid}/status`, 'utf8'));
  if (!m) throw new Error('no VmRSS line in /proc/<pid>/status');
  return Number(m[1]) * 1024;
}

/**
 * An unauthenticated socket from `localAddress` (any of 127/8 reaches the daemon's 127.0.0.1)
 * that sends `frames` as soon as it opens and never `start`; resolves with the daemon's close
 * (or the refused upgrade's status).
 */
function hostileSocket(dialect: CarrierDialect, localAddress: string, frames: string[]): Promise<{ code: number; reason: string }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(wsUrl(dialect), { localAddress });
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${dialect} from ${localAddress}: the daemon never closed it`));
    }, 40_000);
    ws.on('open', () => {
      for (const f of frames) ws.send(f);
    });
    ws.on('unexpected-response', (_req, res) => {
      clearTimeout(timer);
      ws.terminate();
      resolve({ code: -(res.statusCode ?? 0), reason: 'upgrade refused' });
    });
    ws.on('close', (code, reason) => {
      clearTimeout(timer);
      resolve({ code, reason: reason.toString() });
    });
    ws.on('error', () => undefined);
  });
}

/** A `connected` event padded to `chars` characters: valid JSON the parser would accept. */
const padded = (chars: number): string => {
  const head = '{"event":"connected","protocol":"Call","version":"1.0.0","pad":"';
  return head + 'x'.repeat(chars - head.length - 2) + '"}';
};

describe('sockets that never send start', { timeout: 120_000 }, () => {
  it('refuse a 64 KiB frame (1009), and more than 16 KiB in all (1008), before start', async () => {
    const big = await hostileSocket('twilio', '127.0.0.1', [padded(64 * 1024)]);
    expect(big.code).toBe(1009);
    const many = await hostileSocket(
      'exotel',
      '127.0.0.1',
      Array.from({ length: 20 }, () => padded(1024)),
    );
    expect(many).toMatchObject({ code: 1008, reason: expect.stringContaining('16 KiB before start') });
  });

  it('200 of them sending 20 × 64 KiB frames each grow the daemon by less than 100 MiB; it stays healthy', async () => {
    const frames = Array.from({ length: 20 }, () => padded(64 * 1024));
    // Settle, then the baseline.
    await new Promise((r) => setTimeout(r, 500));
    const before = rssBytes();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssBytes());
    }, 20);
    let closes: Array<{ code: number; reason: string }>;
    try {
      // 25 sockets from each of 8 loopback addresses, over the three dialects.
      closes = await Promise.all(Array.from({ length: 200 }, (_, i) => hostileSocket(DIALECTS[i % 3]!, `127.0.0.${1 + (i % 8)}`, frames)));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, rssBytes());
    const grownMiB = (peak - before) / (1 << 20);
    expect(grownMiB, `RSS ${Math.round(before / (1 << 20))} → ${Math.round(peak / (1 << 20))} MiB`).toBeLessThan(100);
    for (const c of closes) {
      // 1006: a socket that did not answer the daemon's close within its grace was dropped.
      expect([1006, 1008, 1009, 1013], JSON.stringify(c)).toContain(c.code);
      // ws closes an over-size frame with 1009 and no reason (the code says it: "message too big").
      if (c.code === 1008 || c.code === 1013) expect(c.reason, JSON.stringify(c)).not.toBe('');
    }
    const health = await api(daemon, 'GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body.status).toBe('ok');
  });

  it('over the bound from one address, the next unauthenticated socket is closed at once with 1013 (try again later)', async () => {
    // 33 silent sockets from one address: one over the per-address bound. Each waits for start
    // (closed 1008 at the deadline) unless refused at once (1013).
    const closes = await Promise.all(Array.from({ length: 33 }, () => hostileSocket('plivo', '127.0.0.42', [])));
    const refused = closes.filter((c) => c.code === 1013);
    expect(refused.length).toBeGreaterThanOrEqual(1);
    expect(refused[0]!.reason).toMatch(/too many unauthenticated media sockets from this address/);
    for (const c of closes.filter((x) => x.code !== 1013))
      expect(c).toMatchObject({ code: 1008, reason: expect.stringContaining('no start event') });
  });
});
