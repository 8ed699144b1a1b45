/**
 * `GET /v1/telephony/check` checks each configured cloud speech recogniser (docs/media.md) with one
 * authenticated handshake, against the local fakes of Deepgram and Sarvam (src/devtools), and
 * reports per provider ok / problem in `recognizers`, never a key; the LiveKit part (`ok`,
 * `problem`) keeps its shape.
 */
import crypto from 'node:crypto';
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeDeepgram, type FakeDeepgram } from '../../src/devtools/fake-deepgram.js';
import { startFakeSarvam, type FakeSarvam } from '../../src/devtools/fake-sarvam.js';
import { makeTestApp, type TestApp } from '../support/app.js';

const DG_KEY = `dg${crypto.randomBytes(12).toString('hex')}`;
const SV_KEY = `sv${crypto.randomBytes(12).toString('hex')}`;
let dg: FakeDeepgram;
let sv: FakeSarvam;
const apps: TestApp[] = [];

beforeAll(async () => {
  dg = await startFakeDeepgram({ apiKey: DG_KEY });
  sv = await startFakeSarvam({ apiKey: SV_KEY });
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await dg.close();
  await sv.close();
});

async function appWith(deepgramKey: string, sarvamKey: string, urls: { dg?: string; sv?: string } = {}): Promise<TestApp> {
  const t = await makeTestApp({
    recognizer: 'deepgram',
    recognizers: { hi: 'sarvam' },
    deepgram: { api_key: deepgramKey, url: urls.dg ?? dg.url },
    sarvam: { api_key: sarvamKey, url: urls.sv ?? sv.url },
  });
  apps.push(t);
  return t;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('GET /v1/telephony/check: recognisers', () => {
  it('reports each provider ok, with the languages it hears; LiveKit’s part unchanged', async () => {
    const t = await appWith(DG_KEY, SV_KEY);
    const res = await t.call('GET', '/v1/telephony/check');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ ok: false, url: null, problem: 'not_configured', agent_name: null });
    expect(body.recognizers).toEqual([
      { provider: 'deepgram', used_for: ['*'], ok: true, detail: expect.any(String), ms: expect.any(Number) },
      { provider: 'sarvam', used_for: ['hi'], ok: true, detail: expect.any(String), ms: expect.any(Number) },
    ]);
    // One authenticated handshake each, and no audio.
    expect(dg.connections.length).toBeGreaterThanOrEqual(1);
    expect(sv.connections.length).toBeGreaterThanOrEqual(1);
  });

  it('explains a rejected key, rate limiting and an unreachable provider, and never shows a key', async () => {
    const wrongDg = `dgwrong${crypto.randomBytes(10).toString('hex')}`;
    const wrongSv = `svwrong${crypto.randomBytes(10).toString('hex')}`;
    const bad = await appWith(wrongDg, wrongSv);
    const r1 = await bad.call('GET', '/v1/telephony/check');
    expect(r1.json().recognizers.map((x: { provider: string; ok: boolean; problem: string }) => [x.provider, x.ok, x.problem])).toEqual([
      ['deepgram', false, 'unauthenticated'],
      ['sarvam', false, 'unauthenticated'],
    ]);
    for (const x of r1.json().recognizers) expect(x.message).toMatch(/key/i);

    const good = await appWith(DG_KEY, SV_KEY);
    dg.faults.push({ reject: 429 }, { reject: 429 });
    sv.rejectNext(429, 2);
    const r2 = await good.call('GET', '/v1/telephony/check');
    expect(r2.json().recognizers.map((x: { problem: string }) => x.problem)).toEqual(['rate_limited', 'rate_limited']);

    const port = await closedPort();
    const away = await appWith(DG_KEY, SV_KEY, {
      dg: `ws://127.0.0.1:${port}/v1/listen`,
      sv: `ws://127.0.0.1:${port}/speech-to-text/ws`,
    });
    const r3 = await away.call('GET', '/v1/telephony/check');
    expect(r3.json().recognizers.map((x: { problem: string }) => x.problem)).toEqual(['unreachable', 'unreachable']);

    for (const res of [r1, r2, r3]) {
      for (const secret of [DG_KEY, SV_KEY, wrongDg, wrongSv]) {
        expect(res.body.includes(secret)).toBe(false);
        expect(JSON.stringify(res.headers).includes(secret)).toBe(false);
      }
    }
  });

  it('is an empty list when no cloud recogniser is configured', async () => {
    const t = await makeTestApp();
    apps.push(t);
    const res = await t.call('GET', '/v1/telephony/check');
    expect(res.json().recognizers).toEqual([]);
  });
});
