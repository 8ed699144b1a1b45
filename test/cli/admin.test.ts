/**
 * `vagent admin …` on the state dir of a running daemon: tenants, keys (create, list,
 * revoke) and the audit log of cross-tenant access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fs from 'node:fs';
import path from 'node:path';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
/** `vagent admin …args --state-dir <the daemon's>`. */
const admin = (...args: string[]) => runCli(['admin', ...args, '--state-dir', daemon.stateDir]);

interface KeyView {
  id: string;
  tenant: string;
  hint: string;
  created_at: number;
  revoked_at: number | null;
}

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon();
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('vagent admin tenant', { timeout: 30_000 }, () => {
  it('creates and lists tenants beside the running daemon', async () => {
    const created = await admin('tenant', 'create', 'acme');
    expect(created.code, created.stderr).toBe(0);
    expect(created.stdout).toContain('tenant acme created');
    expect(created.stderr).toContain('vagent admin key create --tenant acme');

    const list = await admin('tenant', 'list');
    expect(list.code).toBe(0);
    const names = list.stdout
      .trimEnd()
      .split('\n')
      .slice(1)
      .map((l) => l.split(/\s+/)[0]);
    expect(names.sort()).toEqual(['acme', 'default']);
    const json = JSON.parse((await admin('tenant', 'list', '--json')).stdout) as { data: Array<{ name: string }> };
    expect(json.data.map((t) => t.name).sort()).toEqual(['acme', 'default']);
  });

  it('refuses a duplicate with already_exists and a bad name with invalid_request (exit 1)', async () => {
    const dup = await admin('tenant', 'create', 'acme');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^error: already_exists: tenant acme already exists/m);

    for (const bad of ['Acme Corp', '_acme', 'a'.repeat(64)]) {
      const res = await admin('tenant', 'create', bad);
      expect(res.code, bad).toBe(1);
      expect(res.stderr).toMatch(/^error: invalid_request: tenant name must be/m);
    }
    const json = JSON.parse((await admin('tenant', 'list', '--json')).stdout) as { data: unknown[] };
    expect(json.data).toHaveLength(2);
  });
});

describe('vagent admin on a missing state dir', { timeout: 30_000 }, () => {
  it('refuses instead of creating a fresh database (a mistyped --state-dir)', async () => {
    const missing = path.join(tempDir(), 'typo');
    for (const args of [['key', 'create', '--tenant', 'default'], ['tenant', 'list'], ['audit']]) {
      const res = await runCli(['admin', ...args, '--state-dir', missing]);
      expect(res.code, args.join(' ')).toBe(1);
      expect(res.stderr).toContain(`no vagent state dir at ${missing}`);
      expect(res.stderr).toContain(`vagent serve --state-dir ${missing}`);
      expect(res.stdout).toBe('');
    }
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('points the login hint at the address the daemon of the state dir listens on', async () => {
    const res = await runCli(['admin', 'key', 'create', '--tenant', 'default', '--state-dir', daemon.stateDir]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain(`vagent login --url ${daemon.url} `);
  });
});

describe('vagent admin key', { timeout: 30_000 }, () => {
  let key: string;
  let keyId: string;

  it('create --json prints {key, tenant}; the key works against the running daemon', async () => {
    const res = await admin('key', 'create', '--tenant', 'acme', '--json');
    expect(res.code, res.stderr).toBe(0);
    const body = JSON.parse(res.stdout) as { key: string; tenant: string };
    expect(Object.keys(body).sort()).toEqual(['key', 'tenant']);
    expect(body.tenant).toBe('acme');
    expect(body.key).toMatch(/^vk_[A-Za-z0-9]{43}$/);
    key = body.key;

    const trunks = await api(daemon, 'GET', '/v1/trunks', { key });
    expect(trunks.status).toBe(200);
    expect(trunks.body.data).toEqual([]);
    const cli = await runCli(['trunk', 'list', '--json'], { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key } });
    expect(cli.code, cli.stderr).toBe(0);
  });

  it('create without --json prints only the key on stdout, and the id on stderr', async () => {
    const res = await admin('key', 'create', '--tenant', 'default');
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^vk_[A-Za-z0-9]{43}\n$/);
    expect(res.stderr).toMatch(/API key key_\S+ for tenant default/);
  });

  it('list shows ids and hints, never a secret', async () => {
    const json = await admin('key', 'list', '--tenant', 'acme', '--json');
    expect(json.code).toBe(0);
    const keys = (JSON.parse(json.stdout) as { data: KeyView[] }).data;
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatchObject({ tenant: 'acme', hint: `${key.slice(0, 7)}…${key.slice(-4)}`, revoked_at: null });
    keyId = keys[0]!.id;

    const human = await admin('key', 'list');
    expect(human.code).toBe(0);
    const row = human.stdout.split('\n').find((l) => l.startsWith(keyId));
    expect(row).toMatch(new RegExp(`^${keyId}\\s+acme\\s+${keys[0]!.hint}\\s+\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d\\s+-$`));
    for (const out of [json, human]) {
      expect(out.stdout + out.stderr).not.toContain(key);
      expect(out.stdout + out.stderr).not.toContain(key.slice(7, -4));
    }
  });

  it('revoke makes the key get 401 from the running daemon', async () => {
    const res = await admin('key', 'revoke', keyId);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`key ${keyId}`);
    expect(res.stdout).toContain('revoked');
    expect(res.stdout + res.stderr).not.toContain(key);

    expect((await api(daemon, 'GET', '/v1/trunks', { key })).status).toBe(401);
    const cli = await runCli(['trunk', 'list'], { env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key } });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/^error: unauthorized: /m);

    const listed = (JSON.parse((await admin('key', 'list', '--tenant', 'acme', '--json')).stdout) as { data: KeyView[] }).data;
    expect(typeof listed[0]!.revoked_at).toBe('number');
  });

  it('refuses a key for a missing tenant, and an unknown key id, with not_found (exit 1)', async () => {
    const res = await admin('key', 'create', '--tenant', 'nosuch');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: not_found: no tenant named nosuch/m);
    expect(res.stdout).toBe('');
    const revoke = await admin('key', 'revoke', 'key_doesnotexist');
    expect(revoke.code).toBe(1);
    expect(revoke.stderr).toMatch(/^error: not_found: /m);
  });
});

describe('vagent admin audit', { timeout: 30_000 }, () => {
  it('lists a cross-tenant access by acme to a default-tenant trunk (auth_mode audit)', async () => {
    const defaultKey = await adminKey(daemon.stateDir, 'default');
    const acmeKey = await adminKey(daemon.stateDir, 'acme');
    const before = JSON.parse((await admin('audit', '--json')).stdout) as { data: unknown[] };
    expect(before.data).toEqual([]);
    expect((await admin('audit')).stdout).toContain('No cross-tenant access recorded.');

    const created = await api(daemon, 'POST', '/v1/trunks', {
      key: defaultKey,
      body: { address: 'sip.example-carrier.in', name: 'Delhi PRI' },
    });
    expect(created.status).toBe(201);
    const trunkId = created.body.id as string;
    const seen = await api(daemon, 'GET', `/v1/trunks/${trunkId}`, { key: acmeKey });
    expect(seen.status).toBe(200);
    const requestId = seen.headers.get('x-request-id');

    const json = await admin('audit', '--json');
    expect(json.code, json.stderr).toBe(0);
    const events = (JSON.parse(json.stdout) as { data: Array<Record<string, unknown>> }).data;
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      actor_tenant_id: 'acme',
      owner_tenant_id: 'default',
      resource_id: trunkId,
      method: 'GET',
      route: '/v1/trunks/:trunk_id',
      request_id: requestId,
    });

    const human = await admin('audit', '--tenant', 'acme');
    expect(human.code).toBe(0);
    const row = human.stdout.split('\n').find((l) => l.includes(trunkId));
    expect(row).toMatch(/acme .*default\s+tk_\S+\s+GET \/v1\/trunks\/:trunk_id/);
    const other = JSON.parse((await admin('audit', '--tenant', 'nobody', '--json')).stdout) as { data: unknown[] };
    expect(other.data).toEqual([]);
  });

  it('rejects a bad --limit as the value it is (exit 1, invalid_request), as events list does', async () => {
    const res = await admin('audit', '--limit', '0');
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: invalid_request: --limit must be a whole number from 1 to 10000, not "0"/m);
  });
});
