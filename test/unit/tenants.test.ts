import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/domain/errors.js';
import crypto from 'node:crypto';
import { fingerprint as fp, fingerprintKey, checkIdempotencyKey, hmacSha256Hex, isStorableStatus } from '../../src/app/idempotency.js';
import { hashApiKey, TenantService } from '../../src/app/tenants.js';
import { openRepos } from '../../src/store/index.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-tenants-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('TenantService', () => {
  const repos = openRepos(path.join(dir, 'vagent.db'));
  const svc = new TenantService(repos);

  it('creates tenant default once', () => {
    expect(svc.ensureDefaultTenant()).toBe(true);
    expect(svc.ensureDefaultTenant()).toBe(false);
    expect(svc.listTenants().map((t) => t.name)).toEqual(['default']);
  });

  it('validates tenant names and refuses duplicates', () => {
    expect(svc.createTenant('acme-collections').name).toBe('acme-collections');
    const codeOf = (fn: () => unknown) => {
      try {
        fn();
        return 'none';
      } catch (e) {
        return (e as ApiError).code;
      }
    };
    expect(codeOf(() => svc.createTenant('acme-collections'))).toBe('already_exists');
    for (const bad of ['', 'Acme', '-x', 'a b', 'x'.repeat(64), 'टेनेंट', '../etc']) {
      expect(codeOf(() => svc.createTenant(bad))).toBe('invalid_request');
    }
  });

  it('issues vk_ keys, stores only their SHA-256, and authenticates them', () => {
    const { key, id, tenant } = svc.createKey('acme-collections');
    expect(key).toMatch(/^vk_[A-Za-z0-9]{43}$/);
    expect(tenant).toBe('acme-collections');
    const row = repos.tenants.keyById(id)!;
    expect(row.key_hash.equals(hashApiKey(key))).toBe(true);
    const raw = fs.readFileSync(path.join(dir, 'vagent.db'));
    const wal = fs.existsSync(path.join(dir, 'vagent.db-wal')) ? fs.readFileSync(path.join(dir, 'vagent.db-wal')) : Buffer.alloc(0);
    expect(raw.includes(Buffer.from(key)) || wal.includes(Buffer.from(key))).toBe(false);
    expect(svc.authenticate(key)).toEqual({ tenantId: 'acme-collections', keyId: id });
    expect(svc.authenticate(key.slice(0, -1) + (key.endsWith('A') ? 'B' : 'A'))).toBeUndefined();
    expect(svc.authenticate('vk_short')).toBeUndefined();
    expect(svc.listKeys('acme-collections')[0]!.hint).toBe(`${key.slice(0, 7)}…${key.slice(-4)}`);
  });

  it('revokes keys', () => {
    const { key, id } = svc.createKey('default');
    svc.revokeKey(id);
    expect(svc.authenticate(key)).toBeUndefined();
    expect(() => svc.revokeKey('key_nonexistent000')).toThrow(ApiError);
    expect(() => svc.createKey('nobody')).toThrow(/no tenant named nobody/);
  });
});

describe('idempotency helpers', () => {
  const hmacKey = fingerprintKey(crypto.randomBytes(32));
  const fingerprint = (m: string, p: string, b: unknown) => fp(hmacKey, m, p, b);

  it('keys the fingerprint: another master key gives another fingerprint, and no plain hash is stored', () => {
    const body = { address: 'a.in', auth: { username: 'u', password: 'hunter2' } };
    expect(fp(fingerprintKey(crypto.randomBytes(32)), 'POST', '/v1/trunks', body)).not.toBe(fingerprint('POST', '/v1/trunks', body));
    const plain = crypto.createHash('sha256').update('POST /v1/trunks\n').update(JSON.stringify(body)).digest('hex');
    expect(fingerprint('POST', '/v1/trunks', body)).not.toBe(plain);
  });

  it('computes the HMAC of RFC 2104 (the same as createHmac): fingerprints stored before stay valid', () => {
    const body = { text: 'नमस्ते, what are your fees? €', n: [1, 2.5, null] };
    const expected = crypto
      .createHmac('sha256', hmacKey)
      .update('POST /v1/sessions/se_1/turn\n')
      .update(JSON.stringify({ n: [1, 2.5, null], text: body.text }))
      .digest('hex');
    expect(fingerprint('POST', '/v1/sessions/se_1/turn', body)).toBe(expected);
    expect(fingerprint('POST', '/v1/sessions/se_1/turn', body)).toBe(expected); // the padded keys, kept
    for (const key of [Buffer.alloc(0), crypto.randomBytes(64), crypto.randomBytes(65), crypto.randomBytes(200)]) {
      expect(hmacSha256Hex(key, 'a message ✓')).toBe(crypto.createHmac('sha256', key).update('a message ✓').digest('hex'));
    }
  });

  it('treats %2B, %2b and + in a path as the same request', () => {
    const body = { agent_id: 'ag_x' };
    const a = fingerprint('POST', '/v1/numbers/%2B919876543210/bind', body);
    expect(fingerprint('POST', '/v1/numbers/%2b919876543210/bind', body)).toBe(a);
    expect(fingerprint('POST', '/v1/numbers/+919876543210/bind', body)).toBe(a);
    expect(fingerprint('POST', '/v1/numbers/%ZZ/bind', body)).not.toBe(a);
  });

  it('fingerprints canonical JSON: key order does not matter, values do', () => {
    const a = fingerprint('POST', '/v1/trunks', { address: 'a.in', numbers: ['+911'], auth: { username: 'u', password: 'p' } });
    const b = fingerprint('post', '/v1/trunks', { auth: { password: 'p', username: 'u' }, numbers: ['+911'], address: 'a.in' });
    expect(a).toBe(b);
    expect(fingerprint('POST', '/v1/trunks', { address: 'b.in' })).not.toBe(fingerprint('POST', '/v1/trunks', { address: 'a.in' }));
    expect(fingerprint('POST', '/v1/numbers', { address: 'a.in' })).not.toBe(fingerprint('POST', '/v1/trunks', { address: 'a.in' }));
    expect(fingerprint('DELETE', '/v1/trunks/x', undefined)).toBe(fingerprint('DELETE', '/v1/trunks/x', null));
  });

  it('accepts 1–255 printable ASCII keys only', () => {
    expect(() => checkIdempotencyKey('a')).not.toThrow();
    expect(() => checkIdempotencyKey('k'.repeat(255))).not.toThrow();
    for (const bad of ['', 'k'.repeat(256), 'naïve', 'tab\there', 'nl\n'])
      expect(() => checkIdempotencyKey(bad)).toThrow(/Idempotency-Key/);
  });

  it('stores every response but 5xx, 429, 401 and its own errors', () => {
    expect(isStorableStatus(201)).toBe(true);
    expect(isStorableStatus(404, 'trunk_not_found')).toBe(true);
    expect(isStorableStatus(400, 'invalid_request')).toBe(true);
    expect(isStorableStatus(500)).toBe(false);
    expect(isStorableStatus(503)).toBe(false);
    expect(isStorableStatus(429)).toBe(false);
    expect(isStorableStatus(401)).toBe(false);
    expect(isStorableStatus(422, 'idempotency_key_reuse')).toBe(false);
    expect(isStorableStatus(409, 'idempotency_key_in_progress')).toBe(false);
    expect(isStorableStatus(409, 'already_exists')).toBe(true);
  });
});
