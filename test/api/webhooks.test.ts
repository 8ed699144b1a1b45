/**
 * `/v1/webhook_endpoints` (src/contract/webhooks.ts; docs/events.md "Webhooks"): CRUD, the
 * secret shown once, bad and hostile input, tenant isolation, SSRF targets refused, rotation,
 * the test delivery and replay.
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError, expectOk } from '../support/expect.js';
import type { WebhookEndpoint, WebhookEndpointCreated, WebhookSecretRotated, WebhookTestResult } from '../../src/contract/webhooks.js';

const ENDPOINT_ID = /^we_[a-z2-7]{20}$/;

let t: TestApp;
const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
  await t?.close();
});

/** A loopback receiver recording each request's headers and body, answering `status`. */
async function receiver(status = 200): Promise<{ url: string; seen: { headers: http.IncomingHttpHeaders; body: string }[] }> {
  const seen: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ headers: req.headers, body });
      res.writeHead(status).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, seen };
}

const local = () => makeTestApp({ inbound_webhook_allow_http: true, inbound_webhook_allow_private: true });

describe('POST /v1/webhook_endpoints', () => {
  it('creates an endpoint, shows the secret only in that answer', async () => {
    t = await local();
    const res = await t.call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9/hooks', events: ['call.*', 'session.ended'] });
    const created = expectOk<WebhookEndpointCreated>(res, 201);
    expect(created.id).toMatch(ENDPOINT_ID);
    expect(created).toMatchObject({
      url: 'http://127.0.0.1:9/hooks',
      events: ['call.*', 'session.ended'],
      status: 'active',
      failing_since: null,
    });
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(created.secret.slice(6), 'base64')).toHaveLength(32);
    const shown = expectOk<WebhookEndpoint>(await t.call('GET', `/v1/webhook_endpoints/${created.id}`), 200);
    const { secret: _secret, ...view } = created;
    expect(shown).toEqual(view);
    const list = await t.call('GET', '/v1/webhook_endpoints');
    expect(expectOk<{ data: WebhookEndpoint[] }>(list, 200).data).toEqual([view]);
    expect(list.body).not.toContain(created.secret);
    expect(list.body).not.toContain('secret');
  });

  it('a create sent again under its Idempotency-Key gets the same secret; the database holds it nowhere in the clear', async () => {
    t = await local();
    const body = { url: 'http://127.0.0.1:9/hooks' };
    const headers = { 'idempotency-key': 'we-create-1' };
    const first = await t.call('POST', '/v1/webhook_endpoints', body, { headers });
    const created = expectOk<WebhookEndpointCreated>(first, 201);
    const again = await t.call('POST', '/v1/webhook_endpoints', body, { headers });
    expect([again.statusCode, again.headers['idempotency-replayed'], again.body]).toEqual([201, 'true', first.body]);
    const rotated = await t.call('POST', `/v1/webhook_endpoints/${created.id}/rotate_secret`, undefined, {
      headers: { 'idempotency-key': 'we-rot-1' },
    });
    const secret2 = expectOk<WebhookSecretRotated>(rotated, 200).secret;
    const { db } = t.runtime.services.repos.store;
    db.pragma('wal_checkpoint(TRUNCATE)');
    const file = fs.readFileSync(db.name);
    for (const s of [created.secret, secret2]) {
      expect(file.includes(Buffer.from(s))).toBe(false);
      expect(file.includes(Buffer.from(s.slice(6)))).toBe(false);
    }
    const stored = db.prepare("SELECT body FROM idempotency WHERE key IN ('we-create-1', 'we-rot-1')").pluck().all() as string[];
    expect(stored.map((b) => b.slice(0, 10))).toEqual(['sealed:v1:', 'sealed:v1:']);
  });

  it('defaults events to ["*"]', async () => {
    t = await local();
    const created = expectOk<WebhookEndpointCreated>(await t.call('POST', '/v1/webhook_endpoints', { url: 'https://203.0.113.9/x' }), 201);
    expect(created.events).toEqual(['*']);
  });

  it('refuses bad input with invalid_request naming the param, and creates nothing', async () => {
    t = await local();
    const cases: [unknown, string][] = [
      [{}, 'url'],
      [{ url: 42 }, 'url'],
      [{ url: '' }, 'url'],
      [{ url: `https://example.com/${'a'.repeat(3000)}` }, 'url'],
      [{ url: 'not a url' }, 'url'],
      [{ url: 'ftp://203.0.113.9/x' }, 'url'],
      [{ url: 'https://user:pw@203.0.113.9/x' }, 'url'],
      [{ url: 'https://203.0.113.9/x', events: ['call.nope'] }, 'events[0]'],
      [{ url: 'https://203.0.113.9/x', events: ['call.*', 'bogus.*'] }, 'events[1]'],
      [{ url: 'https://203.0.113.9/x', events: ['CALL.ENDED; drop table'] }, 'events[0]'],
      [{ url: 'https://203.0.113.9/x', events: [42] }, 'events[0]'],
      [{ url: 'https://203.0.113.9/x', events: [] }, 'events'],
      [{ url: 'https://203.0.113.9/x', events: 'call.*' }, 'events'],
      [{ url: 'https://203.0.113.9/x', events: Array.from({ length: 51 }, () => '*') }, 'events'],
    ];
    for (const [body, param] of cases) {
      expectError(await t.call('POST', '/v1/webhook_endpoints', body), 400, 'invalid_request', param);
    }
    const err = expectError(
      await t.call('POST', '/v1/webhook_endpoints', { url: 'https://203.0.113.9/x', events: ['call.nope'] }),
      400,
      'invalid_request',
      'events[0]',
    );
    expect(err.message).toContain('call.nope');
    expect(expectOk<{ data: unknown[] }>(await t.call('GET', '/v1/webhook_endpoints'), 200).data).toEqual([]);
  });

  it('refuses http and private targets without the allow settings (SSRF), echoing no path or token', async () => {
    t = await makeTestApp();
    for (const url of [
      'http://203.0.113.9/hooks',
      'https://127.0.0.1/hooks?token=s3cret',
      'https://10.0.0.8/x',
      'https://[::1]/x',
      'https://[::ffff:192.168.1.1]/x',
      'https://169.254.169.254/latest/meta-data',
      'https://0x7f.1/x',
      'https://localhost/x?token=s3cret',
    ]) {
      const res = await t.call('POST', '/v1/webhook_endpoints', { url });
      expectError(res, 400, 'invalid_request', 'url');
      expect(res.body).not.toContain('s3cret');
    }
    expect(expectOk<{ data: unknown[] }>(await t.call('GET', '/v1/webhook_endpoints'), 200).data).toEqual([]);
    // Each refusal a setting decides names that setting.
    const http = await t.call('POST', '/v1/webhook_endpoints', { url: 'http://203.0.113.9/hooks' });
    expect(JSON.parse(http.body).error.message).toContain('VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true');
    const loopback = await t.call('POST', '/v1/webhook_endpoints', { url: 'https://127.0.0.1/hooks' });
    expect(JSON.parse(loopback.body).error.message).toContain('VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true');
    expectOk(await t.call('POST', '/v1/webhook_endpoints', { url: 'https://93.184.215.14/x' }), 201);
  });

  it('refuses a host that does not resolve under the allow settings too: they allow http and private addresses only', async () => {
    for (const settings of [{}, { inbound_webhook_allow_http: true, inbound_webhook_allow_private: true }]) {
      t = await makeTestApp(settings);
      const res = await t.call('POST', '/v1/webhook_endpoints', { url: 'https://nonexistent.invalid/x?token=s3cret' });
      const err = expectError(res, 400, 'invalid_request', 'url');
      expect(err.message).toMatch(/^url is refused: webhook host of https:\/\/nonexistent\.invalid did not resolve \(\w+\)$/);
      expect(res.body).not.toContain('s3cret');
      expect(expectOk<{ data: unknown[] }>(await t.call('GET', '/v1/webhook_endpoints'), 200).data).toEqual([]);
      await t.close();
    }
  });

  it('names every daemon setting a refused URL needs in one error; another scheme is refused as such', async () => {
    const message = async (url: string) =>
      expectError(await t.call('POST', '/v1/webhook_endpoints', { url }), 400, 'invalid_request', 'url').message;
    t = await makeTestApp();
    const both = await message('http://127.0.0.1:9911/hook');
    expect(both).toContain('http://127.0.0.1:9911 is plain http (https only) and is 127.0.0.1, which is not a public address');
    expect(both).toContain(
      'needs the daemon settings inbound_webhook_allow_http and inbound_webhook_allow_private: restart vagent serve with VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true',
    );
    expect(await message('http://localhost:9911/hook')).toMatch(
      /resolves to (127\.0\.0\.1|::1).*ALLOW_HTTP=true VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true/,
    );
    const httpOnly = await message('http://93.184.215.14/hook');
    expect(httpOnly).toContain(
      'needs the daemon setting inbound_webhook_allow_http: restart vagent serve with VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true',
    );
    expect(httpOnly).not.toContain('PRIVATE');
    await t.close();

    t = await makeTestApp({ inbound_webhook_allow_http: true });
    const privateOnly = await message('http://127.0.0.1:9911/hook');
    expect(privateOnly).toContain('restart vagent serve with VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true');
    expect(privateOnly).not.toContain('ALLOW_HTTP');
    await t.close();

    t = await local();
    for (const url of ['ftp://127.0.0.1/x', 'file:///etc/passwd', 'javascript:alert(1)', 'gopher://127.0.0.1:70/x']) {
      const m = await message(url);
      expect(m).toMatch(/scheme \w+: is not allowed \(https: or http: only\)$/);
      expect(m).not.toMatch(/inbound_webhook_allow|restart/);
    }
    expectOk(await t.call('POST', '/v1/webhook_endpoints', { url: 'http://127.0.0.1:9911/hook' }), 201);
  });
});

describe('endpoint by id', () => {
  it('deletes an endpoint; a missing or malformed one is not_found', async () => {
    t = await local();
    const { id } = expectOk<WebhookEndpointCreated>(await t.call('POST', '/v1/webhook_endpoints', { url: 'https://203.0.113.9/x' }), 201);
    expect(expectOk(await t.call('DELETE', `/v1/webhook_endpoints/${id}`), 200)).toEqual({ id, deleted: true });
    expectError(await t.call('GET', `/v1/webhook_endpoints/${id}`), 404, 'not_found', 'webhook_endpoint_id');
    expectError(await t.call('DELETE', `/v1/webhook_endpoints/${id}`), 404, 'not_found', 'webhook_endpoint_id');
    expectError(await t.call('POST', `/v1/webhook_endpoints/${id}/rotate_secret`), 404, 'not_found', 'webhook_endpoint_id');
    expectError(await t.call('GET', `/v1/webhook_endpoints/we_${'x'.repeat(500)}`), 404, 'not_found', 'webhook_endpoint_id');
  });

  it('keeps tenants apart (enforce): another tenant sees no endpoint of this one', async () => {
    t = await makeTestApp({ auth_mode: 'enforce', inbound_webhook_allow_http: true, inbound_webhook_allow_private: true });
    const other = t.tenantKey('acme');
    const { id } = expectOk<WebhookEndpointCreated>(await t.call('POST', '/v1/webhook_endpoints', { url: 'https://203.0.113.9/x' }), 201);
    expect(expectOk<{ data: unknown[] }>(await t.call('GET', '/v1/webhook_endpoints', undefined, { key: other }), 200).data).toEqual([]);
    expectError(await t.call('GET', `/v1/webhook_endpoints/${id}`, undefined, { key: other }), 404, 'not_found');
    expectError(await t.call('DELETE', `/v1/webhook_endpoints/${id}`, undefined, { key: other }), 404, 'not_found');
    expectError(await t.call('POST', `/v1/webhook_endpoints/${id}/rotate_secret`, undefined, { key: other }), 404, 'not_found');
    expectError(await t.call('POST', `/v1/webhook_endpoints/${id}/test`, undefined, { key: other }), 404, 'not_found');
    expectOk(await t.call('GET', `/v1/webhook_endpoints/${id}`), 200);
  });

  it('rotates the secret: a test delivery carries two signatures, each verifying', async () => {
    t = await local();
    const rx = await receiver(204);
    const created = expectOk<WebhookEndpointCreated>(await t.call('POST', '/v1/webhook_endpoints', { url: rx.url }), 201);
    const rotated = expectOk<WebhookSecretRotated>(await t.call('POST', `/v1/webhook_endpoints/${created.id}/rotate_secret`), 200);
    expect(rotated.secret).not.toBe(created.secret);
    expect(rotated.previous_secret_expires_at).toBeGreaterThan(Date.now() / 1000 + 86_000);
    const result = expectOk<WebhookTestResult>(await t.call('POST', `/v1/webhook_endpoints/${created.id}/test`), 200);
    expect(result).toMatchObject({ id: created.id, delivered: true, status: 204, error: null });
    const [got] = rx.seen;
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const s of [created.secret, rotated.secret]) {
      const body = new Webhook(s).verify(got!.body, got!.headers as Record<string, string>) as { type: string; id: string };
      expect(body.type).toBe('webhook.test');
      expect(got!.headers['webhook-id']).toBe(body.id);
    }
  });

  it('reports a failed test delivery with the receiver status', async () => {
    t = await local();
    const rx = await receiver(500);
    const { id } = expectOk<WebhookEndpointCreated>(await t.call('POST', '/v1/webhook_endpoints', { url: rx.url }), 201);
    const result = expectOk<WebhookTestResult>(await t.call('POST', `/v1/webhook_endpoints/${id}/test`), 200);
    expect(result).toMatchObject({ delivered: false, status: 500 });
    expect(result.error).toContain('500');
  });
});

describe('POST /v1/webhook_replays, /v1/webhook_replays/event', () => {
  it('refuses bad input naming the param; an unknown event is not_found', async () => {
    t = await local();
    const cases: [string, unknown, string | undefined][] = [
      ['webhook_replays', {}, 'since'],
      ['webhook_replays', { since: -5 }, 'since'],
      ['webhook_replays', { since: 1.5 }, 'since'],
      ['webhook_replays', { since: 'x' }, 'since'],
      ['webhook_replays', { since: 60, endpoint_id: 'we_nope' }, 'endpoint_id'],
      ['webhook_replays', [], undefined],
      ['webhook_replays/event', {}, 'event_id'],
      ['webhook_replays/event', { event_id: 'evt_1' }, 'event_id'],
      ['webhook_replays/event', { event_id: 'evt_000000000001', since: 60 }, undefined],
    ];
    for (const [route, body, param] of cases) {
      expectError(await t.call('POST', `/v1/${route}`, body), 400, 'invalid_request', param);
    }
    expectError(await t.call('POST', '/v1/webhook_replays/event', { event_id: 'evt_000000000999' }), 404, 'not_found', 'event_id');
    expect(expectOk(await t.call('POST', '/v1/webhook_replays', { since: 3600 }), 200)).toEqual({ queued: 0 });
    expectError(
      await t.call('POST', '/v1/webhook_replays', { since: 60, endpoint_id: `we_${'a'.repeat(20)}` }),
      404,
      'not_found',
      'endpoint_id',
    );
  });
});
