import dns from 'node:dns';
import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { postSignedJson, type WebhookPolicy } from '../../src/adapters/webhook/routing-webhook.js';
import { SIGNATURE_HEADER, signWebhookBody, verifyWebhookSignature } from '../../src/adapters/webhook/webhook-signature.js';
import { checkWebhookUrl, isPublicUnicastAddress, WebhookTargetError } from '../../src/adapters/webhook/webhook-target.js';

const SECRET = 'whsec_9f8e7d6c5b4a';
/** Local test servers listen on loopback, so most calls need allowPrivate. */
const LOCAL: WebhookPolicy = { allowHttp: true, allowPrivate: true, timeoutMs: 200 };
const STRICT: WebhookPolicy = { allowHttp: true, allowPrivate: false, timeoutMs: 200 };

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const servers: http.Server[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((r) => {
          s.closeAllConnections();
          s.close(() => r());
        }),
    ),
  );
});

/** A server on 127.0.0.1 that records each request (with its full body) and then runs `respond`. */
async function serve(respond: (res: http.ServerResponse, req: Seen) => void) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(r);
      respond(res, r);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, port, seen };
}

function json(res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** The WebhookTargetError `p` rejects with. */
async function failure(p: Promise<unknown>): Promise<WebhookTargetError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(WebhookTargetError);
    return err as WebhookTargetError;
  }
  throw new Error('expected a WebhookTargetError');
}

/** Makes dns.lookup answer `addresses` for every name, and counts the lookups. */
function fakeDns(addresses: LookupAddress[], delayMs = 0) {
  return vi.spyOn(dns, 'lookup').mockImplementation(((_host: string, _opts: unknown, cb: (err: null, a: LookupAddress[]) => void) => {
    setTimeout(() => cb(null, addresses), delayMs);
  }) as any);
}

describe('webhook signatures', () => {
  const body = '{"event":"call.inbound","to":"+918069000000"}';
  const now = 1_750_000_000;

  it('signs as t=<seconds>,v1=<hex HMAC-SHA256> and verifies round-trip', () => {
    const header = signWebhookBody(SECRET, body, now);
    expect(header).toMatch(/^t=1750000000,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(SECRET, body, header, now)).toBe(true);
    expect(verifyWebhookSignature(SECRET, body, header, now + 299)).toBe(true);
  });

  it('refuses a tampered body, another secret, an old or far-future timestamp, and malformed headers', () => {
    const header = signWebhookBody(SECRET, body, now);
    expect(verifyWebhookSignature(SECRET, body.replace('+918069000000', '+918069000001'), header, now)).toBe(false);
    expect(verifyWebhookSignature('whsec_other', body, header, now)).toBe(false);
    expect(verifyWebhookSignature(SECRET, body, header, now + 301)).toBe(false);
    expect(verifyWebhookSignature(SECRET, body, header, now + 10, 5)).toBe(false);
    expect(verifyWebhookSignature(SECRET, body, header, now - 3600)).toBe(false);
    // The timestamp is signed: moving it forward breaks the MAC.
    expect(verifyWebhookSignature(SECRET, body, header.replace(`t=${now}`, `t=${now + 100}`), now + 100)).toBe(false);
    for (const bad of [
      '',
      't=1',
      `v1=${'0'.repeat(64)}`,
      `t=abc,v1=${'0'.repeat(64)}`,
      header.slice(0, -1),
      `${header},t=${now}`,
      'garbage',
    ]) {
      expect(verifyWebhookSignature(SECRET, body, bad, now)).toBe(false);
    }
  });

  it('accepts any matching v1 (secret rotation) and rejects a bad signing time', () => {
    const header = signWebhookBody(SECRET, body, now);
    const v1 = header.split(',v1=')[1]!;
    expect(verifyWebhookSignature(SECRET, body, `t=${now},v1=${'a'.repeat(64)},v1=${v1}`, now)).toBe(true);
    expect(() => signWebhookBody(SECRET, body, 1.5)).toThrow(RangeError);
  });
});

describe('checkWebhookUrl', () => {
  const policy = { allowHttp: true, allowPrivate: false };

  it.each([
    ['http://10.0.0.1/', 'address_not_allowed'],
    ['http://[::1]/', 'address_not_allowed'],
    ['http://169.254.169.254/latest', 'address_not_allowed'],
    ['http://[::ffff:127.0.0.1]/', 'address_not_allowed'],
    ['http://2130706433/', 'address_not_allowed'],
    ['http://0x7f.1/', 'address_not_allowed'],
    ['https://[fd00::1]/', 'address_not_allowed'],
    ['https://[fe80::1]/', 'address_not_allowed'],
    ['https://224.0.0.1/', 'address_not_allowed'],
    ['https://0.0.0.0/', 'address_not_allowed'],
    ['https://100.64.0.1/', 'address_not_allowed'],
    ['https://[::7f00:1]/', 'address_not_allowed'],
    ['ftp://x', 'scheme_not_allowed'],
    ['file:///etc/passwd', 'scheme_not_allowed'],
    ['https://user:pass@example.com/', 'invalid_url'],
    ['https://example.com:0/', 'invalid_url'],
    ['https://example.com:65536/', 'invalid_url'],
    ['https://hook:wh_cred_77@example.com/', 'invalid_url'],
    ['not a url', 'invalid_url'],
  ])('refuses %s (%s)', (url, reason) => {
    let caught: unknown;
    try {
      checkWebhookUrl(url, policy);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(WebhookTargetError);
    expect((caught as WebhookTargetError).reason).toBe(reason);
    for (const leak of [':pass@', 'wh_cred_77', 'latest', 'passwd']) expect((caught as Error).message).not.toContain(leak);
  });

  it('refuses a URL longer than 2048 characters (invalid_url)', () => {
    expect(() => checkWebhookUrl(`https://example.com/${'a'.repeat(3000)}`, policy)).toThrow(
      expect.objectContaining({ reason: 'invalid_url' }),
    );
  });

  it('accepts public https URLs, and host names without resolving them', () => {
    expect(checkWebhookUrl('https://hooks.example.in/route', { allowHttp: false, allowPrivate: false }).href).toBe(
      'https://hooks.example.in/route',
    );
    expect(checkWebhookUrl('https://203.0.114.7:8443/r?k=v', { allowHttp: false, allowPrivate: false }).port).toBe('8443');
    expect(checkWebhookUrl('https://[2606:4700::1111]/', { allowHttp: false, allowPrivate: false }).hostname).toBe('[2606:4700::1111]');
    expect(checkWebhookUrl('https://localhost/', { allowHttp: false, allowPrivate: false }).hostname).toBe('localhost');
  });

  it('refuses http unless allowed, and private literals unless allowed', () => {
    expect(() => checkWebhookUrl('http://hooks.example.in/route', { allowHttp: false, allowPrivate: false })).toThrow(
      expect.objectContaining({ reason: 'scheme_not_allowed' }),
    );
    expect(checkWebhookUrl('http://10.0.0.1/', { allowHttp: true, allowPrivate: true }).hostname).toBe('10.0.0.1');
  });

  it('judges IPv4-mapped IPv6 by its IPv4 address', () => {
    expect(isPublicUnicastAddress('::ffff:127.0.0.1')).toBe(false);
    expect(isPublicUnicastAddress('::ffff:10.1.2.3')).toBe(false);
    expect(isPublicUnicastAddress('::ffff:8.8.8.8')).toBe(true);
    expect(isPublicUnicastAddress('8.8.8.8')).toBe(true);
    expect(isPublicUnicastAddress('2606:4700::1111')).toBe(true);
    expect(isPublicUnicastAddress('64:ff9b::7f00:1')).toBe(false);
    expect(isPublicUnicastAddress('not-an-ip')).toBe(false);
  });
});

describe('postSignedJson', () => {
  it('POSTs the exact JSON body with a valid signature and the documented headers', async () => {
    const s = await serve((res) => json(res, 200, { agent_id: 'ag_sales' }));
    const payload = { event: 'call.inbound', to: '+918069000000', from: '+919812345678', note: 'नमस्ते' };
    const out = await postSignedJson(`${s.url}/route?x=1`, payload, SECRET, LOCAL, { eventId: 'evt_123' });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ agent_id: 'ag_sales' });
    expect(out.ms).toBeGreaterThanOrEqual(0);
    expect(s.seen).toHaveLength(1);
    const got = s.seen[0]!;
    expect(got.method).toBe('POST');
    expect(got.url).toBe('/route?x=1');
    expect(got.body).toBe(JSON.stringify(payload));
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['user-agent']).toBe('vagent-webhook/1');
    expect(got.headers['vagent-event-id']).toBe('evt_123');
    const sig = got.headers[SIGNATURE_HEADER] as string;
    expect(sig).toBe(`t=${got.headers['vagent-timestamp'] as string},v1=${sig.split(',v1=')[1]!}`);
    expect(verifyWebhookSignature(SECRET, got.body, sig, Math.floor(Date.now() / 1000))).toBe(true);
    expect(got.headers.connection).toBe('close');
  });

  it('refuses a loopback target without allowPrivate, before connecting; calls it with allowPrivate', async () => {
    const s = await serve((res) => json(res, 200, {}));
    const err = await failure(postSignedJson(s.url, {}, SECRET, STRICT));
    expect(err.reason).toBe('address_not_allowed');
    expect(s.seen).toHaveLength(0);
    await expect(postSignedJson(s.url, {}, SECRET, LOCAL)).resolves.toMatchObject({ status: 200 });
    expect(s.seen).toHaveLength(1);
  });

  it('refuses a host name resolving to loopback (localhost) without allowPrivate', async () => {
    const s = await serve((res) => json(res, 200, {}));
    const err = await failure(postSignedJson(`http://localhost:${s.port}/`, {}, SECRET, STRICT));
    expect(err.reason).toBe('address_not_allowed');
    expect(err.message).toMatch(/resolves to/);
    expect(s.seen).toHaveLength(0);
  });

  it('refuses a host name if any of its addresses is not public', async () => {
    const s = await serve((res) => json(res, 200, {}));
    const lookup = fakeDns([
      { address: '8.8.8.8', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const err = await failure(postSignedJson(`http://hooks.example.in:${s.port}/`, {}, SECRET, STRICT));
    expect(err.reason).toBe('address_not_allowed');
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(s.seen).toHaveLength(0);
  });

  it('connects to the address it resolved and checked, resolving once, with the name as Host', async () => {
    const s = await serve((res) => json(res, 200, { ok: true }));
    const lookup = fakeDns([{ address: '127.0.0.1', family: 4 }]);
    await expect(postSignedJson(`http://hooks.example.in:${s.port}/r`, {}, SECRET, LOCAL)).resolves.toMatchObject({
      body: { ok: true },
    });
    expect(lookup).toHaveBeenCalledTimes(1);
    expect(s.seen[0]!.headers.host).toBe(`hooks.example.in:${s.port}`);
  });

  it('reports a name that does not resolve as dns_failed', async () => {
    vi.spyOn(dns, 'lookup').mockImplementation(((_h: string, _o: unknown, cb: (err: NodeJS.ErrnoException) => void) => {
      setImmediate(() => cb(Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' })));
    }) as any);
    const err = await failure(postSignedJson('https://nowhere.example.in/r', {}, SECRET, STRICT));
    expect(err.reason).toBe('dns_failed');
  });

  it('refuses http when allowHttp is false', async () => {
    const s = await serve((res) => json(res, 200, {}));
    const err = await failure(postSignedJson(s.url, {}, SECRET, { ...LOCAL, allowHttp: false }));
    expect(err.reason).toBe('scheme_not_allowed');
    expect(s.seen).toHaveLength(0);
  });

  it('never follows a redirect', async () => {
    const target = await serve((res) => json(res, 200, { agent_id: 'ag_evil' }));
    const s = await serve((res) => {
      res.writeHead(302, { location: `${target.url}/steal` });
      res.end();
    });
    const err = await failure(postSignedJson(s.url, {}, SECRET, LOCAL));
    expect(err.reason).toBe('redirect');
    expect(err.status).toBe(302);
    expect(s.seen).toHaveLength(1);
    expect(target.seen).toHaveLength(0);
  });

  it('reports a non-2xx status as http_status with .status', async () => {
    const s = await serve((res) => json(res, 500, { error: 'boom' }));
    const err = await failure(postSignedJson(s.url, {}, SECRET, LOCAL));
    expect(err.reason).toBe('http_status');
    expect(err.status).toBe(500);
  });

  it('times out a slow server within about timeoutMs', async () => {
    const s = await serve(() => {
      /* never answers */
    });
    const t0 = Date.now();
    const err = await failure(postSignedJson(s.url, {}, SECRET, LOCAL));
    const elapsed = Date.now() - t0;
    expect(err.reason).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(600);
  });

  it('times out a slow DNS answer, and does not connect when it arrives late', async () => {
    const s = await serve((res) => json(res, 200, {}));
    fakeDns([{ address: '127.0.0.1', family: 4 }], 350);
    const err = await failure(postSignedJson(`http://hooks.example.in:${s.port}/`, {}, SECRET, LOCAL));
    expect(err.reason).toBe('timeout');
    await new Promise((r) => setTimeout(r, 250));
    expect(s.seen).toHaveLength(0);
  });

  it('times out a server that trickles its body (the deadline covers the whole exchange)', async () => {
    const s = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"agent_id":');
      /* never finishes */
    });
    const err = await failure(postSignedJson(s.url, {}, SECRET, LOCAL));
    expect(err.reason).toBe('timeout');
  });

  it('stops reading a response larger than maxResponseBytes', async () => {
    const big = Buffer.alloc(1024 * 1024, 0x20);
    const chunked = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"pad":"');
      res.end(big);
    });
    expect((await failure(postSignedJson(chunked.url, {}, SECRET, LOCAL))).reason).toBe('response_too_large');
    const declared = await serve((res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': big.length });
      res.end(big);
    });
    expect((await failure(postSignedJson(declared.url, {}, SECRET, LOCAL))).reason).toBe('response_too_large');
    const small = await serve((res) => json(res, 200, { pad: 'x'.repeat(200) }));
    expect((await failure(postSignedJson(small.url, {}, SECRET, { ...LOCAL, maxResponseBytes: 100 }))).reason).toBe('response_too_large');
  });

  it('reports a body that is not a JSON object as bad_response', async () => {
    const html = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html>hello</html>');
    });
    expect((await failure(postSignedJson(html.url, {}, SECRET, LOCAL))).reason).toBe('bad_response');
    const array = await serve((res) => json(res, 200, ['ag_sales']));
    expect((await failure(postSignedJson(array.url, {}, SECRET, LOCAL))).reason).toBe('bad_response');
    const empty = await serve((res) => {
      res.writeHead(204);
      res.end();
    });
    expect((await failure(postSignedJson(empty.url, {}, SECRET, LOCAL))).reason).toBe('bad_response');
  });

  it('reports a refused connection as network', async () => {
    const s = await serve(() => undefined);
    await new Promise<void>((r) => servers.pop()!.close(() => r()));
    const err = await failure(postSignedJson(s.url, {}, SECRET, LOCAL));
    expect(err.reason).toBe('network');
  });

  it('keeps the secret, the body and the path/query out of error messages', async () => {
    const payload = { from: '+919812345678' };
    const check = (err: WebhookTargetError) => {
      for (const leak of [SECRET, '+919812345678', '/route', 'tok_abcdef']) expect(err.message).not.toContain(leak);
    };
    const failing = await serve((res) => json(res, 500, {}));
    const e500 = await failure(postSignedJson(`${failing.url}/route?token=tok_abcdef`, payload, SECRET, LOCAL));
    expect(e500.message).toContain(failing.url);
    check(e500);
    const slow = await serve(() => undefined);
    check(await failure(postSignedJson(`${slow.url}/route?token=tok_abcdef`, payload, SECRET, LOCAL)));
    check(await failure(postSignedJson(`${slow.url}/route?token=tok_abcdef`, payload, SECRET, STRICT)));
    check(await failure(postSignedJson('https://u:tok_abcdef@hooks.example.in/route', payload, SECRET, STRICT)));
  });
});
