/**
 * Webhook delivery (src/app/webhook-delivery.ts; docs/events.md "Webhooks") against receivers on
 * loopback: every event, signed, in order per call; a receiver down for a while gets everything
 * afterwards, in order; a failing or slow receiver holds up no other endpoint; a delivery past its
 * retry window is dead and its endpoint failing. Events are appended straight to the log.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import type { EventType } from '../../src/domain/events.js';
import type { EventView } from '../../src/contract/events.js';
import type { WebhookEndpoint, WebhookEndpointCreated } from '../../src/contract/webhooks.js';
import type { DeliveryOptions } from '../../src/app/webhook-delivery.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectOk } from '../support/expect.js';

interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  event: EventView;
}

let t: TestApp;
const servers: http.Server[] = [];
afterEach(async () => {
  await t?.runtime.services.webhookDelivery.stop();
  for (const s of servers.splice(0)) s.closeAllConnections();
  await t?.close();
});

/** A loopback receiver; `answer` decides each status (or null: never answer). */
async function receiver(answer: (e: EventView) => number | null = () => 200) {
  const accepted: Received[] = [];
  let requests = 0;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests += 1;
      const event = JSON.parse(body) as EventView;
      const status = answer(event);
      if (status === null) return;
      if (status >= 200 && status < 300) accepted.push({ headers: req.headers, body, event });
      res.writeHead(status).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`, accepted, requests: () => requests };
}

async function start(delivery: DeliveryOptions = {}): Promise<TestApp> {
  t = await makeTestApp(
    { inbound_webhook_allow_http: true, inbound_webhook_allow_private: true },
    { webhookDelivery: { schedule: { baseS: 0.05, capS: 0.2 }, ...delivery } },
  );
  return t;
}

async function endpoint(url: string, events?: string[], key?: string): Promise<WebhookEndpointCreated> {
  const res = await t.call('POST', '/v1/webhook_endpoints', { url, ...(events ? { events } : {}) }, key ? { key } : {});
  return expectOk<WebhookEndpointCreated>(res, 201);
}

/** Appends events through the unit of work, as the use cases do: `[call number, type]` each. */
async function append(items: [number | null, EventType][], tenantId = 'default'): Promise<EventView[]> {
  const { uow, events } = t.runtime.services;
  return uow.write((tx) => items.map(([n, type]) => events.appendTx(tx, { tenantId, type, callId: n, data: { n } })));
}

async function until(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The `sequence`s each call's accepted events came in. */
function perCall(received: Received[]): Map<string | null, number[]> {
  const out = new Map<string | null, number[]>();
  for (const r of received) out.set(r.event.call_id, [...(out.get(r.event.call_id) ?? []), r.event.sequence!]);
  return out;
}

const CALL_TYPES: EventType[] = ['call.created', 'call.ringing', 'call.answered', 'session.turn', 'call.ended'];

describe('webhook delivery', () => {
  it('delivers each event once, signed, the body being the event, in order per call', async () => {
    await start();
    const rx = await receiver();
    const ep = await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    const sent: EventView[] = [];
    for (const type of CALL_TYPES)
      sent.push(
        ...(await append([
          [101, type],
          [202, type],
        ])),
      );
    await until('10 deliveries', () => rx.accepted.length === 10);
    for (const r of rx.accepted) {
      expect(new Webhook(ep.secret).verify(r.body, r.headers as Record<string, string>)).toEqual(r.event);
      expect(r.headers['webhook-id']).toBe(r.event.id);
    }
    expect(rx.accepted.map((r) => r.event).sort((a, b) => a.id.localeCompare(b.id))).toEqual(sent);
    expect(perCall(rx.accepted)).toEqual(
      new Map([
        ['cl_101', [1, 2, 3, 4, 5]],
        ['cl_202', [1, 2, 3, 4, 5]],
      ]),
    );
  });

  it('sends only the types an endpoint asked for, and only its tenant’s events', async () => {
    await start();
    const rx = await receiver();
    await endpoint(rx.url, ['call.ended']);
    t.runtime.services.webhookDelivery.start();
    const other = t.tenantKey('acme');
    const rxOther = await receiver();
    await endpoint(rxOther.url, undefined, other);
    await append([
      [5, 'call.created'],
      [5, 'call.ended'],
    ]);
    await append([[6, 'call.created']], 'acme');
    await until('the deliveries', () => rx.accepted.length === 1 && rxOther.accepted.length === 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(rx.accepted.map((r) => r.event.type)).toEqual(['call.ended']);
    expect(rxOther.accepted.map((r) => [r.event.call_id, r.event.tenant_id])).toEqual([['cl_6', 'acme']]);
  });

  it('a receiver down for a while gets every event afterwards, in per-call order', async () => {
    await start();
    let down = true;
    const rx = await receiver(() => (down ? 503 : 200));
    await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    for (const type of CALL_TYPES)
      await append([
        [1, type],
        [2, type],
        [3, type],
      ]);
    await until('retries while down', () => rx.requests() >= 9);
    down = false;
    await until('every event', () => rx.accepted.length === 15);
    const got = perCall(rx.accepted);
    for (const call of ['cl_1', 'cl_2', 'cl_3']) expect(got.get(call)).toEqual([1, 2, 3, 4, 5]);
    // The receiver holds a delivery as it answers; the sender marks it delivered in its own write after.
    const rowsNow = () => t.runtime.services.repos.webhooks.deliveriesOf(t.runtime.services.repos.webhooks.all()[0]!.id);
    await until('every delivery marked delivered', () => rowsNow().every((r) => r.state === 'delivered'));
    const rows = rowsNow();
    expect(rows).toHaveLength(15);
    expect(rows.some((r) => r.attempts > 1)).toBe(true);
  });

  it('a failing (500) and a silent receiver hold up neither another endpoint nor other calls', async () => {
    await start({ concurrency: 4 });
    const failing = await receiver(() => 500);
    const silent = await receiver(() => null);
    const partly = await receiver((e) => (e.call_id === 'cl_7' ? 500 : 200));
    const healthy = await receiver();
    for (const rx of [failing, silent, partly, healthy]) await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    const started = Date.now();
    for (const type of CALL_TYPES)
      await append([
        [7, type],
        [8, type],
      ]);
    await until('the healthy endpoint', () => healthy.accepted.length === 10, 5_000);
    await until('the other call of the partly failing endpoint', () => partly.accepted.length === 5, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(perCall(healthy.accepted).get('cl_7')).toEqual([1, 2, 3, 4, 5]);
    expect(perCall(partly.accepted)).toEqual(new Map([['cl_8', [1, 2, 3, 4, 5]]]));
    // The failing receiver saw only the head of each call's queue, again and again.
    expect(failing.accepted).toEqual([]);
  });

  it('a receiver that never answers, with many calls queued, holds only its share of the slots', async () => {
    await start({ concurrency: 4, perEndpoint: 2 });
    const silent = await receiver(() => null);
    const healthy = await receiver();
    await endpoint(silent.url);
    t.runtime.services.webhookDelivery.start();
    await append(Array.from({ length: 20 }, (_, i) => [100 + i, 'call.created'] as [number, EventType]));
    await until('the silent receiver holding its slots', () => silent.requests() >= 2, 5_000);
    await endpoint(healthy.url);
    const started = Date.now();
    await append(Array.from({ length: 20 }, (_, i) => [200 + i, 'call.created'] as [number, EventType]));
    await until('the healthy endpoint', () => healthy.accepted.length === 20, 5_000);
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(silent.requests()).toBe(2);
  });

  it('gives a delivery up after its retry window: dead, and the endpoint failing', async () => {
    await start({ windowS: 0.3 });
    let failing = true;
    const rx = await receiver(() => (failing ? 500 : 200));
    const ep = await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    await append([
      [9, 'call.created'],
      [9, 'call.ended'],
    ]);
    const { webhooks } = t.runtime.services.repos;
    await until('both dead', () => webhooks.deliveriesOf(ep.id).filter((r) => r.state === 'dead').length === 2);
    const shown = expectOk<WebhookEndpoint>(await t.call('GET', `/v1/webhook_endpoints/${ep.id}`), 200);
    expect(shown.status).toBe('failing');
    expect(shown.failing_since).toBeGreaterThan(0);
    // A replay sends them again; success makes the endpoint active again.
    failing = false;
    expect(expectOk(await t.call('POST', '/v1/webhook_replays', { since: 60 }), 200)).toEqual({ queued: 2 });
    await until('the replay', () => rx.accepted.length === 2);
    await until('active again', () => webhooks.get(ep.id)!.state === 'active');
    expect(rx.accepted.map((r) => r.event.sequence)).toEqual([1, 2]);
  });
});

describe('catching up a receiver that comes back', () => {
  /** A backoff that never ends within a test: 60 s for the first retry (random draws 1). */
  const LONG = { schedule: { baseS: 60, capS: 3600 }, random: () => 1 } satisfies DeliveryOptions;

  /** A receiver answering 503 while `down()`, tracking the most requests open at once; each answer takes 30 ms. */
  async function slowReceiver(down: () => boolean, refuse: (e: EventView) => boolean = () => false) {
    const accepted: EventView[] = [];
    let open = 0;
    let maxOpen = 0;
    let requests = 0;
    const server = http.createServer((req, res) => {
      open += 1;
      maxOpen = Math.max(maxOpen, open);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        requests += 1;
        const event = JSON.parse(body) as EventView;
        const status = down() ? 503 : refuse(event) ? 400 : 200;
        setTimeout(() => {
          open -= 1;
          if (status === 200) accepted.push(event);
          res.writeHead(status).end();
        }, 30);
      });
    });
    servers.push(server);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    return { url: `http://127.0.0.1:${port}/hooks?token=s3cret`, accepted, maxOpen: () => maxOpen, requests: () => requests };
  }

  const shown = async (id: string) => expectOk<WebhookEndpoint>(await t.call('GET', `/v1/webhook_endpoints/${id}`), 200);

  it('a success makes the deliveries waiting out the outage due at once, in per-call order, within the in-flight limits', async () => {
    await start({ ...LONG, concurrency: 4, perEndpoint: 2 });
    let down = true;
    const rx = await slowReceiver(() => down);
    const ep = await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    for (const type of CALL_TYPES) await append([1, 2, 3, 4].map((n) => [n, type] as [number, EventType]));
    await until('each call tried once', () => rx.requests() >= 4);
    await until('the failures recorded', () => t.runtime.services.repos.webhooks.backlog(ep.id).last?.status === 503);
    // While it is down: the backlog and the latest error, which names the origin only.
    const during = await shown(ep.id);
    expect(during).toMatchObject({ status: 'active', pending_deliveries: 20, last_status: 503 });
    expect(during.last_attempt_at).toBeGreaterThan(0);
    expect(during.last_error).toMatch(/^webhook http:\/\/127\.0\.0\.1:\d+ answered 503$/);
    expect(during.last_error).not.toContain('s3cret');
    const list = await t.call('GET', '/v1/webhook_endpoints');
    expect(list.body).not.toContain(ep.secret);
    // The token is in the endpoint's own url, and nowhere else.
    expect(list.body.split('s3cret')).toHaveLength(2);

    down = false;
    const back = Date.now();
    // A new call's first event is due now; its success brings the rest forward (not 60 s later).
    await append([[5, 'call.created']]);
    await until('every event', () => rx.accepted.length === 21, 10_000);
    expect(Date.now() - back).toBeLessThan(10_000);
    const got = new Map<string, number[]>();
    for (const e of rx.accepted) got.set(e.call_id!, [...(got.get(e.call_id!) ?? []), e.sequence!]);
    for (const call of ['cl_1', 'cl_2', 'cl_3', 'cl_4']) expect(got.get(call)).toEqual([1, 2, 3, 4, 5]);
    expect(rx.maxOpen()).toBeLessThanOrEqual(2);
    await until('the backlog empty', () => t.runtime.services.repos.webhooks.backlog(ep.id).pending === 0);
    expect(await shown(ep.id)).toMatchObject({ pending_deliveries: 0, last_status: 200, last_error: null });
  });

  it('a test answered 2xx catches up too; a delivery the receiver refused with a 4xx keeps its wait', async () => {
    await start(LONG);
    let down = true;
    const rx = await slowReceiver(
      () => down,
      (e) => e.call_id === 'cl_2',
    );
    const ep = await endpoint(rx.url);
    t.runtime.services.webhookDelivery.start();
    await append([
      [1, 'call.created'],
      [1, 'call.ended'],
    ]);
    await until('the first try', () => rx.requests() >= 1);
    down = false;
    // cl_2 is refused (400) while the receiver is up: that says nothing of the outage.
    await append([[2, 'call.created']]);
    await until('the refusal recorded', () => t.runtime.services.repos.webhooks.backlog(ep.id).last?.status === 400);
    expect(rx.accepted).toEqual([]);
    expect((await shown(ep.id)).last_error).toMatch(/answered 400$/);
    const tested = expectOk<{ delivered: boolean }>(await t.call('POST', `/v1/webhook_endpoints/${ep.id}/test`), 200);
    expect(tested.delivered).toBe(true);
    const events = () => rx.accepted.filter((e) => e.type !== ('webhook.test' as EventType));
    await until('cl_1 caught up', () => events().length === 2, 10_000);
    expect(events().map((e) => [e.call_id, e.sequence])).toEqual([
      ['cl_1', 1],
      ['cl_1', 2],
    ]);
    await new Promise((r) => setTimeout(r, 300));
    // Once cl_1 is caught up, cl_2 waits out its backoff: tried once, as the 400 left it.
    const cl2 = t.runtime.services.repos.webhooks.deliveriesOf(ep.id).filter((d) => d.subject === 2);
    expect(cl2.map((d) => [d.state, d.attempts, d.last_status])).toEqual([['pending', 1, 400]]);
    expect((await shown(ep.id)).pending_deliveries).toBe(1);
  });
});
