/**
 * `/v1/carriers` (docs/carrier-auth.md): each tenant's carrier credentials and stream
 * token — set, list, remove, rotate — validation that changes nothing, no secret in any
 * response or stored replay, and the checks the media upgrade relies on: `verifyNative`
 * (ok / bad / absent for Twilio, Plivo and Exotel, with signatures computed as the carriers
 * compute them) and `tenantOfStreamToken`.
 */
import { createHmac } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { plivoSignatureV3, twilioSignature } from '../../src/media/carriers/auth.js';
import type { CarrierService } from '../../src/app/carriers.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { expectError, expectOk } from '../support/expect.js';

const TWILIO = { account_sid: 'AC0123456789abcdef0123456789abcd12', auth_token: '9f86d081884c7d659a2feaa0c55ad015' };
const PLIVO = { auth_id: 'MAZDQ1ZDFHNZCYMDY4ZT', auth_token: 'ZWY5ODQ1YzE0ZTA0OTYzNTQ0OGJiYjY1NGEwN2Q3' };
const EXOTEL = { api_key: 'c6d8a1e2f3b4a5c6d7e8f9a0b1c2d3e4', api_token: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4' };
const SECRETS = [TWILIO.auth_token, PLIVO.auth_token, EXOTEL.api_token];

interface CarrierBody {
  dialect: string;
  configured: boolean;
  hint: string | null;
  updated_at: number | null;
  stream_url_path: string;
}
interface ListBody {
  data: CarrierBody[];
  stream_token: { configured: boolean; created_at: number | null };
}

let t: TestApp;
let carriers: CarrierService;
let clock: number;
const responses: LightMyRequestResponse[] = [];

beforeEach(async () => {
  clock = 1_800_000_000;
  t = await makeTestApp({}, { nowS: () => clock });
  carriers = t.runtime.services.carriers;
  responses.length = 0;
});
afterEach(async () => t.close());

async function send(method: string, url: string, body?: unknown, opts: { key?: string; idem?: string } = {}) {
  const res = await t.call(method, url, body, {
    ...(opts.key ? { key: opts.key } : {}),
    headers: opts.idem ? { 'idempotency-key': opts.idem } : {},
  });
  responses.push(res);
  return res;
}

const list = async (key?: string) => expectOk<ListBody>(await send('GET', '/v1/carriers', undefined, key ? { key } : {}), 200);

describe('PUT, GET and DELETE /v1/carriers', () => {
  it('lists every dialect, unconfigured at first, with the stream URL path to give the carrier', async () => {
    expect(await list()).toEqual({
      data: [
        { dialect: 'twilio', configured: false, hint: null, updated_at: null, stream_url_path: '/v1/media/twilio' },
        { dialect: 'exotel', configured: false, hint: null, updated_at: null, stream_url_path: '/v1/media/exotel' },
        { dialect: 'plivo', configured: false, hint: null, updated_at: null, stream_url_path: '/v1/media/plivo' },
      ],
      stream_token: { configured: false, created_at: null },
    });
    // Another tenant's paths name it (but Twilio's, whose <Stream url> takes no query string).
    const acme = await list(t.tenantKey('acme'));
    expect(acme.data.map((d) => d.stream_url_path)).toEqual([
      '/v1/media/twilio',
      '/v1/media/exotel?tenant=acme',
      '/v1/media/plivo?tenant=acme',
    ]);
  });

  it('stores each dialect, shows a hint of the account id only, replaces, and removes', async () => {
    expect(expectOk<CarrierBody>(await send('PUT', '/v1/carriers/twilio', TWILIO), 200)).toEqual({
      dialect: 'twilio',
      configured: true,
      hint: 'cd12',
      updated_at: clock,
      stream_url_path: '/v1/media/twilio',
    });
    expect(expectOk<CarrierBody>(await send('PUT', '/v1/carriers/plivo', PLIVO), 200)).toMatchObject({
      configured: true,
      hint: 'Y4ZT',
    });
    expect(expectOk<CarrierBody>(await send('PUT', '/v1/carriers/exotel', EXOTEL), 200)).toMatchObject({
      configured: true,
      hint: 'd3e4',
    });
    // The SID is optional for Twilio: no hint then. A second PUT replaces the first.
    clock += 60;
    expect(expectOk<CarrierBody>(await send('PUT', '/v1/carriers/twilio', { auth_token: TWILIO.auth_token }), 200)).toMatchObject({
      configured: true,
      hint: null,
      updated_at: clock,
    });
    const all = await list();
    expect(all.data.map((d) => [d.dialect, d.configured, d.hint])).toEqual([
      ['twilio', true, null],
      ['exotel', true, 'd3e4'],
      ['plivo', true, 'Y4ZT'],
    ]);
    // Another tenant sees none of them.
    expect((await list(t.tenantKey('acme'))).data.every((d) => !d.configured)).toBe(true);

    expect(expectOk(await send('DELETE', '/v1/carriers/plivo'), 200)).toEqual({ dialect: 'plivo', deleted: true });
    expect((await list()).data.find((d) => d.dialect === 'plivo')).toMatchObject({
      configured: false,
      hint: null,
      updated_at: null,
    });
    const again = expectError(await send('DELETE', '/v1/carriers/plivo'), 404, 'not_found', 'dialect');
    expect(again.message).toBe('no plivo credentials are stored for this tenant (see: GET /v1/carriers)');
  });

  it('answers an unknown dialect 404 not_found naming the three, and leaves stream_token POST-only', async () => {
    for (const [method, url] of [
      ['PUT', '/v1/carriers/vonage'],
      ['DELETE', '/v1/carriers/vonage'],
      ['PUT', '/v1/carriers/Twilio'],
    ] as const) {
      const err = expectError(await send(method, url, method === 'PUT' ? TWILIO : undefined), 404, 'not_found', 'dialect');
      expect(err.message).toMatch(/^no carrier dialect "(vonage|Twilio)": vagent speaks twilio, exotel and plivo$/);
    }
    const res = await send('PUT', '/v1/carriers/stream_token', TWILIO);
    expect(res.statusCode).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });

  it('refuses a bad body with the field named and a clear message, and changes nothing', async () => {
    expectOk(await send('PUT', '/v1/carriers/plivo', PLIVO), 200);
    const before = await list();
    const cases: Array<[string, unknown, string | undefined, RegExp]> = [
      ['twilio', {}, 'auth_token', /^auth_token is required: the Twilio auth token/],
      ['twilio', { auth_token: 'short' }, 'auth_token', /8–256 printable ASCII/],
      ['twilio', { auth_token: 'has a space in it' }, 'auth_token', /without spaces/],
      ['twilio', { auth_token: 'x'.repeat(257) }, 'auth_token', /8–256/],
      ['twilio', { auth_token: 42 }, 'auth_token', /auth_token/],
      ['twilio', { ...TWILIO, account_sid: 'AC123' }, 'account_sid', /AC followed by 32 hex digits/],
      ['twilio', { ...TWILIO, auth_id: PLIVO.auth_id }, 'auth_id', /unknown field: twilio credentials take only account_sid, auth_token/],
      ['twilio', [TWILIO], undefined, /JSON object/],
      ['plivo', { auth_token: PLIVO.auth_token }, 'auth_id', /auth_id is required/],
      ['plivo', { ...PLIVO, auth_id: 'XX1234' }, 'auth_id', /MA or SA and 18 capitals or digits/],
      ['plivo', { ...PLIVO, auth_token: null }, 'auth_token', /auth_token/],
      ['exotel', { api_key: EXOTEL.api_key }, 'api_token', /api_token is required/],
      ['exotel', { ...EXOTEL, api_key: 'has:colon' }, 'api_key', /letters, digits, _ or -/],
      ['exotel', { ...EXOTEL, api_key: '' }, 'api_key', /1–128/],
    ];
    for (const [dialect, body, param, message] of cases) {
      const err = expectError(await send('PUT', `/v1/carriers/${dialect}`, body), 400, 'invalid_request', param);
      expect(err.message, `${dialect} ${JSON.stringify(body).slice(0, 60)}`).toMatch(message);
    }
    expect(await list()).toEqual(before);
    // The stored Plivo credentials still verify (nothing was overwritten).
    const url = 'wss://vagent.example.in/v1/media/plivo';
    const sig = plivoSignatureV3(PLIVO.auth_token, 'GET', url, '123456');
    expect(
      carriers.verifyNative('plivo', 'default', {
        headers: { 'x-plivo-signature-v3': sig, 'x-plivo-signature-v3-nonce': '123456' },
        urls: [url],
      }),
    ).toBe('ok');
  });

  it('replays a PUT under its Idempotency-Key, and no response or stored record holds a secret', async () => {
    const first = await send('PUT', '/v1/carriers/exotel', EXOTEL, { idem: 'exo-1' });
    expectOk(first, 200);
    clock += 5;
    const replay = await send('PUT', '/v1/carriers/exotel', EXOTEL, { idem: 'exo-1' });
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.body).toBe(first.body);
    expectError(
      await send('PUT', '/v1/carriers/exotel', { ...EXOTEL, api_token: `${EXOTEL.api_token}x` }, { idem: 'exo-1' }),
      422,
      'idempotency_key_reuse',
    );
    expectError(
      await send('PUT', '/v1/carriers/twilio', { auth_token: `${TWILIO.auth_token} x` }, { idem: 'bad-1' }),
      400,
      'invalid_request',
    );
    expectOk(await send('PUT', '/v1/carriers/twilio', TWILIO, { idem: 'tw-1' }), 200);
    expectOk(await send('PUT', '/v1/carriers/plivo', PLIVO, { idem: 'pl-1' }), 200);
    expectOk(await send('DELETE', '/v1/carriers/plivo', undefined, { idem: 'pl-del' }), 200);
    expectOk(await send('POST', '/v1/carriers/stream_token'), 201);
    await list();
    expect(responses.length).toBeGreaterThan(8);
    for (const res of responses) {
      for (const secret of SECRETS) {
        expect(res.body.includes(secret), `${res.statusCode} ${res.body.slice(0, 120)}`).toBe(false);
        expect(JSON.stringify(res.headers).includes(secret)).toBe(false);
      }
    }
    const rows = JSON.stringify(t.runtime.services.repos.store.db.prepare('SELECT * FROM idempotency').all());
    expect(rows).toContain('exo-1');
    for (const secret of SECRETS) expect(rows.includes(secret)).toBe(false);
    // At rest, the credentials are sealed: the table holds no secret in clear.
    const stored = t.runtime.services.repos.store.db.prepare('SELECT * FROM carrier_credentials').all() as Array<{
      sealed: Buffer;
    }>;
    expect(stored).toHaveLength(2);
    for (const row of stored) for (const secret of SECRETS) expect(row.sealed.includes(Buffer.from(secret))).toBe(false);
  });
});

describe('POST /v1/carriers/stream_token and tenantOfStreamToken', () => {
  const rotate = async (key?: string) =>
    expectOk<{ stream_token: string; created_at: number }>(
      await send('POST', '/v1/carriers/stream_token', undefined, key ? { key } : {}),
      201,
    );

  it('shows a new token once; the tenant is found by it; rotating invalidates the old one', async () => {
    const first = await rotate();
    expect(first.stream_token).toMatch(/^vst_[A-Za-z0-9_-]{43}$/);
    expect(first.created_at).toBe(clock);
    expect(carriers.tenantOfStreamToken(first.stream_token)).toBe('default');
    expect((await list()).stream_token).toEqual({ configured: true, created_at: clock });
    // Only its SHA-256 is stored.
    const stored = JSON.stringify(t.runtime.services.repos.store.db.prepare('SELECT * FROM media_stream_tokens').all());
    expect(stored).not.toContain(first.stream_token);

    clock += 10;
    const second = await rotate();
    expect(second.stream_token).not.toBe(first.stream_token);
    expect(carriers.tenantOfStreamToken(first.stream_token)).toBeNull();
    expect(carriers.tenantOfStreamToken(second.stream_token)).toBe('default');
    expect((await list()).stream_token).toEqual({ configured: true, created_at: clock });

    // Each tenant has its own; one tenant's rotation leaves the other's alone.
    const acme = await rotate(t.tenantKey('acme'));
    expect(carriers.tenantOfStreamToken(acme.stream_token)).toBe('acme');
    expect(carriers.tenantOfStreamToken(second.stream_token)).toBe('default');
  });

  it('finds no tenant for anything but a current token, without throwing', async () => {
    const { stream_token: token } = await rotate();
    for (const bad of [
      undefined,
      null,
      42,
      {},
      [token],
      '',
      'vst_',
      token.slice(0, -1),
      `${token}x`,
      ` ${token}`,
      token.toUpperCase(),
      'x'.repeat(100_000),
    ]) {
      expect(carriers.tenantOfStreamToken(bad), String(bad).slice(0, 20)).toBeNull();
    }
  });

  it('refuses an Idempotency-Key (a replay would have to store the token), creating nothing', async () => {
    const err = expectError(
      await send('POST', '/v1/carriers/stream_token', undefined, { idem: 'tok-1' }),
      400,
      'invalid_request',
      'Idempotency-Key',
    );
    expect(err.message).toMatch(/shown once and never stored/);
    expect((await list()).stream_token.configured).toBe(false);
    expect(t.runtime.services.repos.store.db.prepare("SELECT COUNT(*) AS n FROM idempotency WHERE key = 'tok-1'").get()).toEqual({
      n: 0,
    });
  });
});

describe('verifyNative', () => {
  const BASE = 'wss://vagent.example.in/v1/media';
  beforeEach(async () => {
    expectOk(await send('PUT', '/v1/carriers/twilio', TWILIO), 200);
    expectOk(await send('PUT', '/v1/carriers/plivo', PLIVO), 200);
    expectOk(await send('PUT', '/v1/carriers/exotel', EXOTEL), 200);
  });

  it('Twilio: X-Twilio-Signature, HMAC-SHA1 of the stream URL with the auth token', () => {
    const url = `${BASE}/twilio`;
    const sig = twilioSignature(TWILIO.auth_token, url);
    // The same as computing it by hand (https://www.twilio.com/docs/usage/webhooks/webhooks-security).
    expect(sig).toBe(createHmac('sha1', TWILIO.auth_token).update(url).digest('base64'));
    const check = (headers: Record<string, string | string[] | undefined>, urls = [url], tenant = 'default') =>
      carriers.verifyNative('twilio', tenant, { headers, urls });
    expect(check({ 'x-twilio-signature': sig })).toBe('ok');
    // Any of the candidate URLs; Twilio's form with the default port written out too.
    expect(check({ 'x-twilio-signature': sig }, ['wss://10.0.0.5:8787/v1/media/twilio', url])).toBe('ok');
    expect(check({ 'x-twilio-signature': twilioSignature(TWILIO.auth_token, 'wss://vagent.example.in:443/v1/media/twilio') })).toBe('ok');
    // The same URL signed as https:// (its scheme twin) passes; another URL or token does not.
    expect(check({ 'x-twilio-signature': twilioSignature(TWILIO.auth_token, 'https://vagent.example.in/v1/media/twilio') })).toBe('ok');
    expect(check({ 'x-twilio-signature': sig }, [`${BASE}/twilio?agent_id=ag_x`])).toBe('bad');
    expect(check({ 'x-twilio-signature': twilioSignature('0'.repeat(32), url) })).toBe('bad');
    expect(check({ 'x-twilio-signature': `${sig}x` })).toBe('bad');
    expect(check({ 'x-twilio-signature': [sig, sig] })).toBe('bad');
    expect(check({ 'x-twilio-signature': sig }, [])).toBe('bad');
    // Absent: no signature header (an API key or stream token may still authenticate).
    expect(check({})).toBe('absent');
    expect(check({ authorization: 'Bearer vk_x', 'x-twilio-signature': '' })).toBe('absent');
    // Another tenant (no Twilio credentials) or an unknown one: bad.
    expect(check({ 'x-twilio-signature': sig }, [url], 'acme')).toBe('bad');
    expect(check({ 'x-twilio-signature': sig }, [url], 'nobody')).toBe('bad');
  });

  it('Plivo: X-Plivo-Signature-V3 and its nonce, HMAC-SHA256 of the URL and nonce with the auth token', () => {
    const url = `${BASE}/plivo?tenant=default&agent_id=ag_clinic_booking`;
    const nonce = '05429567804466091622';
    const sig = plivoSignatureV3(PLIVO.auth_token, 'GET', url, nonce);
    // By hand: query sorted, then "." and the nonce (https://www.plivo.com/docs/voice/concepts/signature-validation).
    expect(sig).toBe(
      createHmac('sha256', PLIVO.auth_token).update(`${BASE}/plivo?agent_id=ag_clinic_booking&tenant=default.${nonce}`).digest('base64'),
    );
    const check = (headers: Record<string, string | undefined>, urls = [url], tenant = 'default') =>
      carriers.verifyNative('plivo', tenant, { headers, urls });
    expect(check({ 'x-plivo-signature-v3': sig, 'x-plivo-signature-v3-nonce': nonce })).toBe('ok');
    // Several active auth tokens: a comma-separated list, any of which may match.
    expect(check({ 'x-plivo-signature-v3': `AAAA,${sig}`, 'x-plivo-signature-v3-nonce': nonce })).toBe('ok');
    // Signed as http:// (reported for Plivo's upgrade): the scheme twin of the wss:// candidate.
    const http = url.replace('wss://', 'http://');
    expect(
      check({
        'x-plivo-signature-v3': plivoSignatureV3(PLIVO.auth_token, 'GET', http, nonce),
        'x-plivo-signature-v3-nonce': nonce,
      }),
    ).toBe('ok');
    expect(check({ 'x-plivo-signature-v3': sig, 'x-plivo-signature-v3-nonce': `${nonce}1` })).toBe('bad');
    expect(check({ 'x-plivo-signature-v3': sig })).toBe('bad');
    expect(check({ 'x-plivo-signature-v3-nonce': nonce })).toBe('bad');
    expect(check({ 'x-plivo-signature-v3': sig, 'x-plivo-signature-v3-nonce': nonce }, [url.replace('default', 'acme')])).toBe('bad');
    expect(
      check({
        'x-plivo-signature-v3': plivoSignatureV3('wrong-token-123', 'GET', url, nonce),
        'x-plivo-signature-v3-nonce': nonce,
      }),
    ).toBe('bad');
    expect(check({})).toBe('absent');
    expect(check({ 'x-plivo-signature-v3': sig, 'x-plivo-signature-v3-nonce': nonce }, [url], 'acme')).toBe('bad');
  });

  it('Exotel: Authorization: Basic base64(API_KEY:API_TOKEN), as sent for wss://KEY:TOKEN@host/…', () => {
    const basic = (user: string, pass: string) => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;
    const check = (authorization: string | undefined, tenant = 'default') =>
      carriers.verifyNative('exotel', tenant, { headers: { authorization }, urls: [`${BASE}/exotel`] });
    expect(check(basic(EXOTEL.api_key, EXOTEL.api_token))).toBe('ok');
    expect(check(basic(EXOTEL.api_key, EXOTEL.api_token).replace('Basic', 'basic'))).toBe('ok');
    expect(check(basic(EXOTEL.api_key, `${EXOTEL.api_token}0`))).toBe('bad');
    expect(check(basic(`${EXOTEL.api_key}0`, EXOTEL.api_token))).toBe('bad');
    expect(check('Basic !!!not-base64')).toBe('bad');
    expect(check(basic(EXOTEL.api_key, EXOTEL.api_token), 'acme')).toBe('bad');
    // No header, or a Bearer API key (the route checks that one itself): absent.
    expect(check(undefined)).toBe('absent');
    expect(check('Bearer vk_abc')).toBe('absent');
  });

  it('is bad for an unknown dialect or credentials that cannot be opened, and never throws', () => {
    const url = `${BASE}/twilio`;
    const sig = twilioSignature(TWILIO.auth_token, url);
    expect(carriers.verifyNative('vonage', 'default', { headers: { 'x-twilio-signature': sig }, urls: [url] })).toBe('bad');
    // A sealed blob moved to another tenant does not open there (bound to its tenant).
    const db = t.runtime.services.repos.store.db;
    t.tenantKey('acme');
    db.prepare(
      "INSERT INTO carrier_credentials SELECT 'acme', dialect, sealed, hint, updated_at FROM carrier_credentials WHERE tenant_id = 'default' AND dialect = 'twilio'",
    ).run();
    expect(carriers.verifyNative('twilio', 'acme', { headers: { 'x-twilio-signature': sig }, urls: [url] })).toBe('bad');
    for (const req of [
      { headers: null, urls: null },
      { headers: { 'x-twilio-signature': sig }, urls: 'x' },
      { headers: { 'x-twilio-signature': sig }, urls: [42, null] },
    ]) {
      expect(carriers.verifyNative('twilio', 'default', req as never)).toBe(req.headers === null ? 'absent' : 'bad');
    }
    expect(carriers.verifyNative('twilio', 42 as never, { headers: { 'x-twilio-signature': sig }, urls: [url] })).toBe('bad');
  });
});
