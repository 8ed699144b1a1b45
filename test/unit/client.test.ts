import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiResponseError, DaemonUnreachableError, VagentClient } from '../../src/client/index.js';

let server: http.Server | undefined;
afterEach(
  () =>
    new Promise<void>((r) => {
      if (!server) return r();
      server.close(() => r());
      server.closeAllConnections(); // idle keep-alive sockets would hold close() for seconds
    }),
);

/** A server that drops the first `drops` connections mid-request, then answers 201. */
async function flakyServer(drops: number) {
  const seen: Array<{ method: string; key: string | undefined; body: string }> = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method!, key: req.headers['idempotency-key'] as string | undefined, body });
      if (seen.length <= drops) {
        req.socket.destroy();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'tk_aaaaaaaaaaaaaaaaaaaa' }));
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

describe('VagentClient retries', () => {
  it('retries a write that failed in transit with the same Idempotency-Key', async () => {
    const s = await flakyServer(2);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    const res = await client.request('POST', '/v1/trunks', { address: 'sip.a.in' }, { idempotencyKey: 'key-1' });
    expect(res.status).toBe(201);
    expect(s.seen).toHaveLength(3);
    expect(new Set(s.seen.map((r) => r.key))).toEqual(new Set(['key-1']));
    expect(new Set(s.seen.map((r) => r.body))).toEqual(new Set(['{"address":"sip.a.in"}']));
  });

  it('gives up after the configured retries with a message naming the daemon', async () => {
    const s = await flakyServer(10);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    await expect(client.request('GET', '/v1/trunks')).rejects.toThrow(DaemonUnreachableError);
    expect(s.seen).toHaveLength(3);
  });

  it('never retries a write without an Idempotency-Key (it could land twice)', async () => {
    const s = await flakyServer(1);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    await expect(client.request('POST', '/v1/trunks', { address: 'sip.a.in' })).rejects.toThrow(/cannot reach the vagent daemon/);
    expect(s.seen).toHaveLength(1);
  });

  it('does not retry a refused connection (nothing listens there)', async () => {
    const s = await flakyServer(0);
    const url = s.url;
    await new Promise<void>((r) => server!.close(() => r()));
    server = undefined;
    // A retry would wait 60 s and the test would fail on its timeout.
    const client = new VagentClient({ url, apiKey: 'vk_x', retryDelaysMs: [60_000] });
    await expect(client.request('GET', '/v1/trunks')).rejects.toThrow(/connection refused/);
  });

  it('turns an error body into ApiResponseError with code, param and request id', async () => {
    server = http.createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'application/json', 'x-request-id': 'req_abc' });
      res.end(JSON.stringify({ error: { code: 'trunk_not_found', message: 'no trunk tk_x', param: 'trunk_id' } }));
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const client = new VagentClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, apiKey: 'vk_x' });
    const err = await client.getTrunk('tk_x').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ status: 404, code: 'trunk_not_found', param: 'trunk_id', requestId: 'req_abc' });
  });
});

/**
 * A server answering each request in turn from `script`: `'drop'` destroys the connection,
 * a number answers with that status and a JSON body (an error body for 4xx/5xx).
 */
async function scriptedServer(script: Array<'drop' | number | { status: number; code: string }>) {
  const seen: Array<{ method: string; url: string; key: string | undefined; body: string }> = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, key: req.headers['idempotency-key'] as string | undefined, body });
      const step = script[Math.min(seen.length, script.length) - 1]!;
      if (step === 'drop') {
        req.socket.destroy();
        return;
      }
      const status = typeof step === 'number' ? step : step.status;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify(
          typeof step === 'number'
            ? {
                call_id: 'cl_7',
                session_id: 'se_7',
                agent_id: 'ag_emi_reminder',
                to: '+919876543210',
                from: null,
                idempotent: true,
                status: 'ringing',
                dial_required: false,
              }
            : { error: { code: step.code, message: `scripted ${step.code}` } },
        ),
      );
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, seen };
}

const CALL = { agent_id: 'ag_emi_reminder', to: '+919876543210', dial: true } as const;

describe('VagentClient.placeCall', () => {
  it('always sends an Idempotency-Key, and retries a dropped connection with the same key and body', async () => {
    const s = await scriptedServer(['drop', 201]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    const placed = await client.placeCall(CALL);
    expect(placed).toMatchObject({ call_id: 'cl_7', status: 'ringing' });
    expect(s.seen).toHaveLength(2);
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/calls', 'POST /v1/calls']);
    const key = s.seen[0]!.key;
    expect(key).toMatch(/^[\x20-\x7e]{1,255}$/);
    expect(s.seen[1]!.key).toBe(key);
    expect(s.seen[1]!.body).toBe(s.seen[0]!.body);
    expect(JSON.parse(s.seen[0]!.body)).toEqual(CALL);
  });

  it("uses the caller's key on every attempt, and a fresh key per call otherwise", async () => {
    const s = await scriptedServer(['drop', 'drop', 201]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    await client.placeCall(CALL, { idempotencyKey: 'emi-2025-11-ravi' });
    expect(s.seen.map((r) => r.key)).toEqual(['emi-2025-11-ravi', 'emi-2025-11-ravi', 'emi-2025-11-ravi']);
    await client.placeCall(CALL);
    await client.placeCall(CALL);
    expect(new Set(s.seen.slice(3).map((r) => r.key)).size).toBe(2);
  });

  it('retries a refused connection (a daemon restarting), unlike other requests', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => resolve(p));
      });
    });
    const client = new VagentClient({ url: `http://127.0.0.1:${port}`, apiKey: 'vk_x', retryDelaysMs: [300, 300] });
    const keys: Array<string | undefined> = [];
    const placing = client.placeCall(CALL);
    // The first attempt is refused; the daemon comes up before the retry.
    await new Promise((r) => setTimeout(r, 50));
    server = http.createServer((req, res) => {
      keys.push(req.headers['idempotency-key'] as string | undefined);
      req.resume().on('end', () => {
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ call_id: 'cl_9', status: 'prepared' }));
      });
    });
    await new Promise<void>((r) => server!.listen(port, '127.0.0.1', () => r()));
    await expect(placing).resolves.toMatchObject({ call_id: 'cl_9' });
    expect(keys).toHaveLength(1);
    expect(keys[0]).toBeTruthy();
  });

  it('after a retry, waits out idempotency_key_in_progress (its own first attempt) until the outcome is replayed', async () => {
    const inProgress = { status: 409, code: 'idempotency_key_in_progress' };
    const s = await scriptedServer(['drop', inProgress, inProgress, 201]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5], inProgressWaitMs: 5000 });
    await expect(client.placeCall(CALL)).resolves.toMatchObject({ call_id: 'cl_7' });
    expect(s.seen).toHaveLength(4);
    expect(new Set(s.seen.map((r) => r.key)).size).toBe(1);
  });

  it("after waiting out its own in-progress attempt, reports that attempt's failure (the daemon answers it from the key) and stops", async () => {
    const s = await scriptedServer([
      'drop',
      { status: 409, code: 'idempotency_key_in_progress' },
      { status: 502, code: 'dial_failed' },
      201,
    ]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5], inProgressWaitMs: 5000 });
    await expect(client.placeCall(CALL)).rejects.toMatchObject({ status: 502, code: 'dial_failed' });
    expect(s.seen).toHaveLength(3);
    expect(new Set(s.seen.map((r) => r.key)).size).toBe(1);
  });

  it("gives up waiting after inProgressWaitMs with the daemon's error", async () => {
    const s = await scriptedServer(['drop', { status: 409, code: 'idempotency_key_in_progress' }]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5], inProgressWaitMs: 300 });
    // Prepare-only: a dial would stretch the wait to cover its ringing time.
    const err = await client.placeCall({ agent_id: 'ag_emi_reminder', to: '+919876543210' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ status: 409, code: 'idempotency_key_in_progress' });
    expect(s.seen.length).toBeGreaterThan(2);
  });

  it('does not retry HTTP error answers, nor an in-progress key on the first attempt (another client holds it)', async () => {
    for (const step of [
      { status: 502, code: 'dial_failed' },
      { status: 504, code: 'dial_outcome_unknown' },
      { status: 409, code: 'idempotency_key_in_progress' },
    ]) {
      const s = await scriptedServer([step, 201]);
      const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
      await expect(client.placeCall(CALL)).rejects.toMatchObject({ status: step.status, code: step.code });
      expect(s.seen, step.code).toHaveLength(1);
      await new Promise<void>((r) => server!.close(() => r()));
      server = undefined;
    }
  });

  it('gives a dial as long as it may ring, where a prepare-only call times out and is retried', async () => {
    const seen: Array<string | undefined> = [];
    server = http.createServer((req, res) => {
      seen.push(req.headers['idempotency-key'] as string | undefined);
      req.resume().on('end', () =>
        setTimeout(() => {
          res.writeHead(201, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ call_id: 'cl_5', status: 'ringing' }));
        }, 300),
      );
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', () => r()));
    const client = new VagentClient({
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      apiKey: 'vk_x',
      timeoutMs: 100,
      retryDelaysMs: [5, 5],
    });
    await expect(client.placeCall({ ...CALL, ringing_timeout_s: 5 })).resolves.toMatchObject({ call_id: 'cl_5' });
    expect(seen).toHaveLength(1);
    await expect(client.placeCall({ agent_id: 'ag_emi_reminder', to: '+919876543210' })).rejects.toThrow(/timed out/);
    expect(seen).toHaveLength(4);
    expect(new Set(seen.slice(1)).size).toBe(1);
  });

  it('fails with DaemonUnreachableError after the configured retries', async () => {
    const s = await scriptedServer(['drop']);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x', retryDelaysMs: [5, 5] });
    await expect(client.placeCall(CALL)).rejects.toThrow(DaemonUnreachableError);
    expect(s.seen).toHaveLength(3);
    expect(new Set(s.seen.map((r) => r.key)).size).toBe(1);
  });
});

describe('VagentClient calls and telephony reads', () => {
  it('listCalls sends status, limit and cursor as a query; getCall and telephonyCheck hit their paths', async () => {
    const s = await scriptedServer([200]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_x' });
    await client.listCalls({ status: 'completed', limit: 5, cursor: 'Y2FsbHM6NQ' });
    await client.listCalls();
    await client.getCall('cl_42');
    await client.telephonyCheck();
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/calls?status=completed&limit=5&cursor=Y2FsbHM6NQ',
      'GET /v1/calls',
      'GET /v1/calls/cl_42',
      'GET /v1/telephony/check',
    ]);
    expect(s.seen.every((r) => r.key === undefined)).toBe(true);
  });
});
