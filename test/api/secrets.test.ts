/**
 * Trunk credentials and API keys never leak (write-only fields, README.md
 * "Operating the daemon": never in a response, a stored replay, a log line or an error message;
 * sealed at rest).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { statePaths } from '../../src/config/paths.js';
import { buildApp, LOG_REDACT_PATHS, LOG_SERIALIZERS } from '../../src/http/app.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { enc, expectError, expectOk, type NumberBody, type TrunkBody } from '../support/expect.js';

const DID = '+919876543210';

let t: TestApp;
let logged: string[];
let app: FastifyInstance;
let keyB: string;
const password = `S3cr3t-Pa55-${crypto.randomBytes(12).toString('hex')}`;
const username = `trunk-user-${crypto.randomBytes(6).toString('hex')}`;

beforeEach(async () => {
  t = await makeTestApp();
  keyB = t.tenantKey('acme');
  logged = [];
  const logger = pino(
    {
      level: 'trace',
      redact: { paths: LOG_REDACT_PATHS, censor: '[redacted]' },
      serializers: LOG_SERIALIZERS,
    },
    {
      write: (line: string) => {
        logged.push(line);
      },
    },
  );
  app = await buildApp({ services: t.runtime.services, bodyLimitBytes: t.settings.body_limit_bytes, logger, version: 'test' });
  await app.ready();
});
afterEach(async () => {
  vi.restoreAllMocks();
  await app.close();
  await t.close();
});

/** Every response of the scenario, for the leak checks. */
const responses: LightMyRequestResponse[] = [];

async function send(method: string, url: string, options: { body?: unknown; raw?: string; key?: string; idem?: string } = {}) {
  const headers: Record<string, string> = { authorization: `Bearer ${options.key ?? t.key}` };
  if (options.idem) headers['idempotency-key'] = options.idem;
  if (options.raw !== undefined) headers['content-type'] = 'application/json';
  const payload = options.raw ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
  if (payload !== undefined) headers['content-type'] = 'application/json';
  const res = await app.inject({ method: method as 'POST', url, headers, ...(payload === undefined ? {} : { payload }) });
  responses.push(res);
  return res;
}

/** Runs every endpoint, a replay, a reuse, validation and parse errors and a 500, all near the secret. */
async function scenario(): Promise<{ kept: TrunkBody; gone: TrunkBody }> {
  responses.length = 0;
  const auth = { username, password };
  const body = { address: 'sip.example-carrier.in', name: 'secret-bearing', numbers: [DID], auth };
  const kept = expectOk<TrunkBody>(await send('POST', '/v1/trunks', { body, idem: 'create-kept' }), 201);
  expect(kept.has_credentials).toBe(true);
  const replay = await send('POST', '/v1/trunks', { body, idem: 'create-kept' });
  expect(replay.headers['idempotency-replayed']).toBe('true');
  expectError(await send('POST', '/v1/trunks', { body: { ...body, name: 'changed' }, idem: 'create-kept' }), 422, 'idempotency_key_reuse');
  // validation errors with the secret in the body, stored under a key and replayed
  const badAddress = { ...body, address: `sip:${username}:${password}@carrier.in` };
  expectError(await send('POST', '/v1/trunks', { body: badAddress, idem: 'bad-address' }), 400, 'invalid_request', 'address');
  expectError(await send('POST', '/v1/trunks', { body: badAddress, idem: 'bad-address' }), 400, 'invalid_request');
  expectError(
    await send('POST', '/v1/trunks', { body: { ...body, auth: { username, password: [password] } } }),
    400,
    'invalid_request',
    'auth.password',
  );
  expectError(
    await send('POST', '/v1/trunks', { body: { ...body, auth: { username: password.repeat(30), password } } }),
    400,
    'invalid_request',
    'auth.username',
  );
  expectError(await send('POST', '/v1/trunks', { body: { ...body, numbers: [password] } }), 400, 'invalid_request', 'numbers[0]');
  // unparseable JSON that carries the secret (V8's SyntaxError quotes the input)
  expectError(
    await send('POST', '/v1/trunks', { raw: `{"auth":{"username":"${username}","password":"${password}"` }),
    400,
    'invalid_request',
  );
  expectError(await send('POST', '/v1/trunks', { raw: `{"auth":{"password":'${password}'}}` }), 400, 'invalid_request');
  // a 5xx while handling a request carrying the secret
  const { trunks } = t.runtime.services;
  vi.spyOn(trunks, 'createTx').mockImplementationOnce(() => {
    throw new Error('simulated failure');
  });
  expectError(await send('POST', '/v1/trunks', { body, idem: 'fails' }), 500, 'internal_error');
  const gone = expectOk<TrunkBody>(await send('POST', '/v1/trunks', { body: { ...body, name: 'to delete' }, idem: 'fails' }), 201);
  // reads
  expectOk(await send('GET', '/v1/trunks'), 200);
  expectOk(await send('GET', `/v1/trunks/${kept.id}`), 200);
  expectOk(await send('GET', `/v1/trunks/${kept.id}`, { key: keyB }), 200); // audited cross-tenant read
  // numbers
  expectOk<NumberBody>(await send('POST', '/v1/numbers', { body: { number: DID, trunk_id: kept.id }, idem: 'num' }), 201);
  expectOk(await send('GET', '/v1/numbers'), 200);
  expectOk(await send('POST', `/v1/numbers/${enc(DID)}/bind`, { body: { agent_id: 'ag_clinic_booking' }, idem: 'bind' }), 200);
  expectOk(await send('DELETE', `/v1/numbers/${enc(DID)}`, { idem: 'del-num' }), 200);
  // deletes, with a replay
  expectOk(await send('DELETE', `/v1/trunks/${gone.id}`, { idem: 'del-trunk' }), 200);
  expect((await send('DELETE', `/v1/trunks/${gone.id}`, { idem: 'del-trunk' })).headers['idempotency-replayed']).toBe('true');
  // a URL the router itself refuses, and an unknown route
  expectError(await send('GET', `/v1/trunks/%ZZ${password}`), 400, 'invalid_request');
  expectError(await send('GET', '/v1/nothing'), 404, 'not_found');
  // unauthenticated attempts with a key-like secret
  expectError(await send('GET', '/v1/trunks', { key: `vk_${'Z'.repeat(43)}` }), 401, 'unauthorized');
  return { kept, gone };
}

function leaks(text: string): string[] {
  return [password, username, t.key, keyB].filter((s) => text.includes(s));
}

describe('trunk credentials', () => {
  it('appear in no response body or header', async () => {
    await scenario();
    expect(responses.length).toBeGreaterThan(20);
    for (const res of responses) {
      expect(leaks(res.body), `${res.statusCode} ${res.body.slice(0, 200)}`).toEqual([]);
      expect(leaks(JSON.stringify(res.headers))).toEqual([]);
    }
  });

  it('appear in no log line, and neither do API keys', async () => {
    await scenario();
    // the capture works: requests, routes and the 500 were logged
    expect(logged.length).toBeGreaterThan(20);
    expect(logged.some((l) => l.includes('/v1/trunks/:trunk_id'))).toBe(true);
    expect(logged.some((l) => JSON.parse(l).level === 50)).toBe(true);
    const leaking = logged.filter((l) => leaks(l).length > 0);
    expect(leaking).toEqual([]);
    // nor the raw URL with a phone number (the route pattern is logged instead)
    expect(logged.filter((l) => l.includes('%2B919876543210') || l.includes(DID))).toEqual([]);
  });

  it('are not in any stored idempotency record', async () => {
    await scenario();
    const rows = t.runtime.services.repos.store.db.prepare('SELECT * FROM idempotency').all() as Array<Record<string, unknown>>;
    expect(rows.map((r) => r.key).sort()).toEqual(['bad-address', 'bind', 'create-kept', 'del-num', 'del-trunk', 'fails', 'num']);
    expect(leaks(JSON.stringify(rows))).toEqual([]);
  });

  it('are sealed at rest: absent from the database and WAL bytes, yet recoverable with the master key', async () => {
    const { kept } = await scenario();
    const files = [statePaths(t.settings.state_dir).database, `${statePaths(t.settings.state_dir).database}-wal`];
    const existing = files.filter((f) => fs.existsSync(f));
    expect(existing.length).toBeGreaterThanOrEqual(1);
    let bytes = 0;
    for (const file of existing) {
      const data = fs.readFileSync(file);
      bytes += data.length;
      for (const secret of [password, username, t.key, keyB]) {
        expect(data.includes(Buffer.from(secret, 'utf8')), `${secret.slice(0, 6)}… in ${file}`).toBe(false);
        expect(data.includes(Buffer.from(secret, 'utf16le'))).toBe(false);
      }
    }
    expect(bytes).toBeGreaterThan(0);
    // the ciphertext is in the store, and it is the credentials
    const sealed = t.runtime.services.repos.trunks.sealedAuth(kept.id);
    expect(sealed).toBeInstanceOf(Buffer);
    const all = Buffer.concat(existing.map((f) => fs.readFileSync(f)));
    expect(all.includes(sealed!)).toBe(true);
    expect(t.runtime.services.credentials.open(sealed!, 'default', kept.id)).toEqual({ username, password });
    const row = t.runtime.services.repos.trunks.get(kept.id)!;
    expect(t.runtime.services.trunks.credentialsOf(row)).toEqual({ username, password });
    // bound to its tenant and trunk: opening it as another trunk fails
    expect(() => t.runtime.services.credentials.open(sealed!, 'default', 'tk_aaaaaaaaaaaaaaaaaaaa')).toThrow(/cannot be decrypted/);
    expect(() => t.runtime.services.credentials.open(sealed!, 'acme', kept.id)).toThrow(/cannot be decrypted/);
  });

  it('seal with a fresh IV every time (two trunks with equal credentials differ at rest)', async () => {
    const body = { address: 'sip.a.in', auth: { username, password } };
    const a = expectOk<TrunkBody>(await send('POST', '/v1/trunks', { body }), 201);
    const b = expectOk<TrunkBody>(await send('POST', '/v1/trunks', { body }), 201);
    const sealedA = t.runtime.services.repos.trunks.sealedAuth(a.id)!;
    const sealedB = t.runtime.services.repos.trunks.sealedAuth(b.id)!;
    expect(sealedA.equals(sealedB)).toBe(false);
    expect(sealedA.subarray(1, 13).equals(sealedB.subarray(1, 13))).toBe(false);
  });
});

describe('carrier credentials and stream tokens', () => {
  const twilioToken = `tw${crypto.randomBytes(15).toString('hex')}`;
  const plivoToken = `Pl${crypto.randomBytes(19).toString('hex')}`;
  const exotelToken = `ex${crypto.randomBytes(19).toString('hex')}`;
  const carrierSecrets = [twilioToken, plivoToken, exotelToken];

  /** Every carrier route: sets, a replay, a reuse, refusals near the secrets, a 500, reads, deletes, token rotations. */
  async function carrierScenario(): Promise<string[]> {
    responses.length = 0;
    const twilio = { account_sid: `AC${'ab'.repeat(16)}`, auth_token: twilioToken };
    expectOk(await send('PUT', '/v1/carriers/twilio', { body: twilio, idem: 'tw' }), 200);
    expect((await send('PUT', '/v1/carriers/twilio', { body: twilio, idem: 'tw' })).headers['idempotency-replayed']).toBe('true');
    expectError(
      await send('PUT', '/v1/carriers/twilio', { body: { ...twilio, auth_token: `${twilioToken}x` }, idem: 'tw' }),
      422,
      'idempotency_key_reuse',
    );
    expectOk(
      await send('PUT', '/v1/carriers/plivo', { body: { auth_id: 'MA0123456789ABCDEFGH', auth_token: plivoToken }, idem: 'pl' }),
      200,
    );
    expectOk(await send('PUT', '/v1/carriers/exotel', { body: { api_key: 'exokey', api_token: exotelToken } }), 200);
    // Refusals with the secrets in the body, one stored and replayed under its key.
    expectError(
      await send('PUT', '/v1/carriers/twilio', { body: { auth_token: `${twilioToken} ` }, idem: 'bad-tw' }),
      400,
      'invalid_request',
      'auth_token',
    );
    expectError(
      await send('PUT', '/v1/carriers/twilio', { body: { auth_token: `${twilioToken} ` }, idem: 'bad-tw' }),
      400,
      'invalid_request',
    );
    expectError(
      await send('PUT', '/v1/carriers/plivo', { body: { auth_id: plivoToken, auth_token: plivoToken } }),
      400,
      'invalid_request',
      'auth_id',
    );
    expectError(
      await send('PUT', '/v1/carriers/exotel', { body: { api_key: `${exotelToken}:`, api_token: exotelToken } }),
      400,
      'invalid_request',
      'api_key',
    );
    expectError(
      await send('PUT', '/v1/carriers/twilio', { body: { auth_token: twilioToken, api_token: exotelToken } }),
      400,
      'invalid_request',
      'api_token',
    );
    expectError(await send('PUT', '/v1/carriers/vonage', { body: { auth_token: twilioToken } }), 404, 'not_found');
    expectError(await send('PUT', '/v1/carriers/twilio', { raw: `{"auth_token":"${twilioToken}"` }), 400, 'invalid_request');
    vi.spyOn(t.runtime.services.carriers, 'setTx').mockImplementationOnce(() => {
      throw new Error('simulated failure');
    });
    expectError(
      await send('PUT', '/v1/carriers/exotel', { body: { api_key: 'exokey', api_token: exotelToken }, idem: 'fails' }),
      500,
      'internal_error',
    );
    expectOk(await send('GET', '/v1/carriers'), 200);
    expectOk(await send('GET', '/v1/carriers', { key: keyB }), 200);
    expectOk(await send('DELETE', '/v1/carriers/exotel', { idem: 'del' }), 200);
    // Stream tokens: each is in its own creation response only.
    const tokens: string[] = [];
    for (let i = 0; i < 2; i++)
      tokens.push(expectOk<{ stream_token: string }>(await send('POST', '/v1/carriers/stream_token'), 201).stream_token);
    expectError(await send('POST', '/v1/carriers/stream_token', { idem: 'tok' }), 400, 'invalid_request');
    expect(t.runtime.services.carriers.tenantOfStreamToken(tokens[1])).toBe('default');
    return tokens;
  }

  it('appear in no response (a stream token in its creation response only), log line or stored replay', async () => {
    const tokens = await carrierScenario();
    expect(responses.length).toBeGreaterThan(15);
    for (const res of responses) {
      const text = res.body + JSON.stringify(res.headers);
      expect(
        carrierSecrets.filter((s) => text.includes(s)),
        `${res.statusCode} ${res.body.slice(0, 200)}`,
      ).toEqual([]);
      expect(tokens.filter((s) => text.includes(s)).length).toBeLessThanOrEqual(1);
    }
    expect(responses.filter((r) => tokens.some((s) => r.body.includes(s)))).toHaveLength(2);
    expect(logged.some((l) => l.includes('/v1/carriers/twilio'))).toBe(true);
    expect(logged.some((l) => JSON.parse(l).level === 50)).toBe(true);
    expect(logged.filter((l) => [...carrierSecrets, ...tokens].some((s) => l.includes(s)))).toEqual([]);
    const rows = JSON.stringify(t.runtime.services.repos.store.db.prepare('SELECT * FROM idempotency').all());
    expect(rows).toContain('bad-tw');
    expect([...carrierSecrets, ...tokens].filter((s) => rows.includes(s))).toEqual([]);
  });

  it('are sealed at rest (the token: its SHA-256 only), absent from the database and WAL bytes', async () => {
    const tokens = await carrierScenario();
    const db = statePaths(t.settings.state_dir).database;
    const all = Buffer.concat([db, `${db}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)));
    expect(all.length).toBeGreaterThan(0);
    for (const secret of [...carrierSecrets, ...tokens]) {
      expect(all.includes(Buffer.from(secret, 'utf8')), `${secret.slice(0, 6)}…`).toBe(false);
    }
    // Sealed, bound to tenant and purpose: it opens as what was stored, and not as another tenant's.
    const { credentials, repos } = t.runtime.services;
    const sealed = repos.carriers.sealed('default', 'plivo')!;
    expect(all.includes(sealed)).toBe(true);
    expect(JSON.parse(credentials.openText(sealed, 'default', 'carrier:plivo'))).toEqual({
      auth_id: 'MA0123456789ABCDEFGH',
      auth_token: plivoToken,
    });
    expect(() => credentials.openText(sealed, 'acme', 'carrier:plivo')).toThrow(/cannot be decrypted/);
    expect(() => credentials.openText(sealed, 'default', 'carrier:twilio')).toThrow(/cannot be decrypted/);
  });
});
