import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ApiResponseError, DaemonUnreachableError, VagentClient } from '../../src/client/index.js';

let server: http.Server | undefined;
afterEach(() => new Promise<void>((r) => (server ? server.close(() => r()) : r())));

/** A server that drops the first `drops` connections mid-request, then answers 201. */
async function flakyServer(drops: number) {
  const seen: Array<{ method: string; key: string | undefined; body: string }> = [];
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => { body += c.toString(); });
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
