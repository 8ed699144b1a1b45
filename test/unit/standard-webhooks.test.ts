/**
 * Standard Webhooks signing (src/adapters/webhook/standard-webhooks.ts), checked by the
 * `standardwebhooks` package as an independent verifier; the retry schedule (src/domain/webhooks.ts).
 */
import crypto from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { postStandardWebhook, signStandardWebhook, standardWebhookHeaders } from '../../src/adapters/webhook/standard-webhooks.js';
import { WebhookTargetError } from '../../src/adapters/webhook/webhook-target.js';
import { DEFAULT_RETRY_SCHEDULE, retryDelayS } from '../../src/domain/webhooks.js';

const newSecret = () => `whsec_${crypto.randomBytes(32).toString('base64')}`;
const BODY = JSON.stringify({ id: 'evt_000000000042', type: 'call.ended', data: { text: 'héllo ✓' } });

describe('signStandardWebhook', () => {
  it('verifies with the standardwebhooks package', () => {
    const secret = newSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = standardWebhookHeaders('evt_000000000042', now, BODY, [secret]);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+={0,2}$/);
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
  });

  it('matches the package signature byte for byte', () => {
    const secret = newSecret();
    expect(signStandardWebhook('msg_1', 1_700_000_000, BODY, [secret])).toBe(
      new Webhook(secret).sign('msg_1', new Date(1_700_000_000_000), BODY),
    );
  });

  it('signs with both secrets during a rotation: either verifies, a third does not', () => {
    const [oldS, newS] = [newSecret(), newSecret()];
    const headers = standardWebhookHeaders('evt_000000000007', Math.floor(Date.now() / 1000), BODY, [newS, oldS]);
    expect(headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(() => new Webhook(newS).verify(BODY, headers)).not.toThrow();
    expect(() => new Webhook(oldS).verify(BODY, headers)).not.toThrow();
    expect(() => new Webhook(newSecret()).verify(BODY, headers)).toThrow();
  });

  it('fails verification for an altered body or id', () => {
    const secret = newSecret();
    const headers = standardWebhookHeaders('evt_000000000001', Math.floor(Date.now() / 1000), BODY, [secret]);
    expect(() => new Webhook(secret).verify(BODY.replace('42', '43'), headers)).toThrow();
    expect(() => new Webhook(secret).verify(BODY, { ...headers, 'webhook-id': 'evt_000000000002' })).toThrow();
  });

  it('refuses a malformed secret or timestamp', () => {
    expect(() => signStandardWebhook('m', 1, BODY, ['whsec_not base64!'])).toThrow(RangeError);
    expect(() => signStandardWebhook('m', -1, BODY, [newSecret()])).toThrow(RangeError);
  });
});

describe('retryDelayS', () => {
  it('waits a full-jitter draw under a doubling ceiling, capped', () => {
    expect(retryDelayS(1, 0.999999)).toBeCloseTo(5, 3);
    expect(retryDelayS(2, 0.999999)).toBeCloseTo(10, 3);
    expect(retryDelayS(5, 0.5)).toBeCloseTo(40, 3);
    expect(retryDelayS(20, 0.999999)).toBeCloseTo(DEFAULT_RETRY_SCHEDULE.capS, 0);
    expect(retryDelayS(1000, 0.5)).toBeCloseTo(1800, 3);
    expect(retryDelayS(3, 0)).toBe(0.1);
  });

  it('retries for 3 days at the cap: about 72 + attempts on average', () => {
    let t = 0;
    let n = 0;
    while (t < 3 * 86_400) t += retryDelayS(++n, 0.5);
    expect(n).toBeGreaterThan(100);
    expect(n).toBeLessThan(200);
  });
});

describe('postStandardWebhook', () => {
  const servers: http.Server[] = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  });
  const serve = async (handler: http.RequestListener): Promise<string> => {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook?token=x`;
  };
  const LOCAL = { allowHttp: true, allowPrivate: true, timeoutMs: 500 };

  it('sends a delivery the receiver verifies, and takes any 2xx', async () => {
    const secret = newSecret();
    let verified: unknown;
    const url = await serve((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
        res.writeHead(204).end();
      });
    });
    const answer = await postStandardWebhook(url, 'evt_000000000042', BODY, [secret], LOCAL);
    expect(answer.status).toBe(204);
    expect(verified).toEqual(JSON.parse(BODY));
  });

  it('fails on a redirect (not followed), a 500, a timeout and a closed socket', async () => {
    const secret = newSecret();
    const redirect = await serve((_q, res) => res.writeHead(302, { location: 'http://127.0.0.1:1/' }).end());
    await expect(postStandardWebhook(redirect, 'e', BODY, [secret], LOCAL)).rejects.toMatchObject({ reason: 'redirect', status: 302 });
    const failing = await serve((_q, res) => res.writeHead(500).end('no'));
    await expect(postStandardWebhook(failing, 'e', BODY, [secret], LOCAL)).rejects.toMatchObject({ reason: 'http_status', status: 500 });
    const slow = await serve(() => {});
    await expect(postStandardWebhook(slow, 'e', BODY, [secret], { ...LOCAL, timeoutMs: 100 })).rejects.toMatchObject({ reason: 'timeout' });
    const closing = await serve((req) => req.socket.destroy());
    const err = await postStandardWebhook(closing, 'e', BODY, [secret], LOCAL).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WebhookTargetError);
    expect((err as WebhookTargetError).reason).toBe('network');
    expect((err as Error).message).not.toContain('token');
  });

  it('takes a 2xx with an endless body without reading it all', async () => {
    const url = await serve((_q, res) => {
      res.writeHead(200);
      const chunk = Buffer.alloc(16 * 1024, 0x61);
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await expect(postStandardWebhook(url, 'e', BODY, [newSecret()], LOCAL)).resolves.toMatchObject({ status: 200 });
  });

  it('refuses a private target without the allow setting, before connecting', async () => {
    await expect(
      postStandardWebhook('https://127.0.0.1/x', 'e', BODY, [newSecret()], { allowHttp: false, allowPrivate: false, timeoutMs: 100 }),
    ).rejects.toMatchObject({ reason: 'address_not_allowed' });
    await expect(
      postStandardWebhook('http://example.com/x', 'e', BODY, [newSecret()], { allowHttp: false, allowPrivate: false, timeoutMs: 100 }),
    ).rejects.toMatchObject({ reason: 'scheme_not_allowed' });
  });
});
