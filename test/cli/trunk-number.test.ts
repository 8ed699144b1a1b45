/**
 * The README's operator flow through the built binary against a real daemon: login, trunks,
 * numbers, `--json`, error exit codes, help texts, env fallbacks and NO_COLOR.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  adminKey,
  cleanupAll,
  cliHome,
  freePort,
  hasAnsi,
  requireBuild,
  runCli,
  startDaemon,
  type CliHome,
  type Daemon,
} from '../support/daemon.js';

const SIP_PASSWORD = 'pw-Zq8!sip-SECRET-4471';
const TRUNK_KEYS = ['id', 'name', 'address', 'numbers', 'provider_trunk_id', 'has_credentials', 'created_at'];
const NUMBER_KEYS = ['id', 'tenant_id', 'number', 'trunk_id', 'agent_id', 'label', 'created_at'];
const DIDS = { mumbai: '+912240001234', bengaluru: '+918047001234', delhi: '+911140001234' };

let daemon: Daemon;
let key: string;
/** The logged-in operator's profile. */
let op: CliHome;
let trunkId: string;

/** Runs a command as the logged-in operator. */
const vagent = (args: string[], input?: string) => runCli(args, { home: op, ...(input === undefined ? {} : { input }) });

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon();
  key = await adminKey(daemon.stateDir, 'default');
  op = cliHome();
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('vagent login', { timeout: 30_000 }, () => {
  it('checks the key against the daemon and stores it in credentials.json with mode 0600', async () => {
    // NODE_ENV=test once made lowdb keep the profile in memory only: it must not matter.
    const res = await runCli(['login', '--url', daemon.url, '--api-key-stdin'], {
      home: op,
      input: `${key}\n`,
      env: { NODE_ENV: 'test' },
    });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(fs.readFileSync(path.join(op.config, 'vagent', 'config.json'), 'utf8'))).toMatchObject({ url: daemon.url });
    expect(res.stdout).toContain(`logged in to ${daemon.url}`);
    const creds = path.join(op.config, 'vagent', 'credentials.json');
    expect(res.stderr).toContain(creds);
    expect(fs.statSync(creds).mode & 0o777).toBe(0o600);
    expect(JSON.parse(fs.readFileSync(creds, 'utf8'))).toEqual({ keys: { [daemon.url]: key } });
    expect(res.stdout + res.stderr).not.toContain(key);
  });

  it('refuses a key the daemon does not know, and stores nothing', async () => {
    const other = cliHome();
    const res = await runCli(['login', '--url', daemon.url, '--api-key-stdin'], { home: other, input: `vk_${'A'.repeat(43)}` });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: unauthorized: /m);
    expect(fs.existsSync(path.join(other.config, 'vagent', 'credentials.json'))).toBe(false);
  });
});

describe('vagent trunk', { timeout: 30_000 }, () => {
  it('adds a trunk with the SIP password from stdin, never echoing it', async () => {
    const res = await vagent(
      [
        'trunk',
        'add',
        '--address',
        'sip.example-carrier.in',
        '--name',
        'Mumbai PRI',
        '--number',
        DIDS.mumbai,
        '--username',
        'acme',
        '--password-stdin',
        '--json',
      ],
      SIP_PASSWORD,
    );
    expect(res.code, res.stderr).toBe(0);
    const trunk = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(trunk).sort()).toEqual([...TRUNK_KEYS].sort());
    expect(trunk).toMatchObject({
      name: 'Mumbai PRI',
      address: 'sip.example-carrier.in',
      numbers: [DIDS.mumbai],
      provider_trunk_id: null,
      has_credentials: true,
    });
    expect(trunk.id).toMatch(/^tk_[a-z0-9]{20}$/);
    expect(typeof trunk.created_at).toBe('number');
    expect(res.stdout).not.toContain('"auth"');
    expect(res.stdout + res.stderr).not.toContain(SIP_PASSWORD);
    trunkId = trunk.id as string;
  });

  it('lists and shows it, in tables and as the API object', async () => {
    const list = await vagent(['trunk', 'list']);
    expect(list.code, list.stderr).toBe(0);
    const row = list.stdout.split('\n').find((l) => l.startsWith(trunkId));
    expect(row).toBeDefined();
    expect(row).toMatch(/Mumbai PRI\s+sip\.example-carrier\.in\s+\+912240001234\s+yes\s+\d{4}-\d\d-\d\d \d\d:\d\d$/);
    expect(list.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+ADDRESS\s+NUMBERS\s+AUTH\s+CREATED$/);

    const listJson = JSON.parse((await vagent(['trunk', 'list', '--json'])).stdout);
    expect(listJson).toMatchObject({ has_more: false, next_cursor: null });
    expect(listJson.data).toHaveLength(1);
    const showJson = JSON.parse((await vagent(['trunk', 'show', trunkId, '--json'])).stdout);
    expect(showJson).toEqual(listJson.data[0]);
    expect(Object.keys(showJson).sort()).toEqual([...TRUNK_KEYS].sort());

    const show = await vagent(['trunk', 'show', trunkId]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(new RegExp(`^id:\\s+${trunkId}$`, 'm'));
    expect(show.stdout).toMatch(/^credentials:\s+stored \(encrypted\)$/m);
    expect(show.stdout).toMatch(/^numbers:\s+\+912240001234$/m);
    for (const r of [list, show]) expect(r.stdout + r.stderr).not.toContain(SIP_PASSWORD);
  });
});

describe('vagent number', { timeout: 60_000 }, () => {
  it('registers three Indian DIDs, binds inbound agents (refusing an outbound one) and lists them sorted by number', async () => {
    const added = await vagent(['number', 'add', DIDS.mumbai, '--label', 'Mumbai sales', '--trunk', trunkId, '--json']);
    expect(added.code, added.stderr).toBe(0);
    const rec = JSON.parse(added.stdout) as Record<string, unknown>;
    expect(Object.keys(rec).sort()).toEqual([...NUMBER_KEYS].sort());
    expect(rec).toMatchObject({
      tenant_id: 'default',
      number: DIDS.mumbai,
      trunk_id: trunkId,
      agent_id: null,
      label: 'Mumbai sales',
    });
    expect(rec.id).toMatch(/^num_[a-z0-9]{20}$/);

    const blr = await vagent(['number', 'add', DIDS.bengaluru, '--label', 'Bengaluru support']);
    expect(blr.code, blr.stderr).toBe(0);
    expect(blr.stdout).toContain(`${DIDS.bengaluru} registered`);
    expect(blr.stdout).toMatch(/^label:\s+Bengaluru support$/m);
    expect((await vagent(['number', 'add', DIDS.delhi, '--label', 'Delhi clinic'])).code).toBe(0);

    // An outbound agent cannot answer a number: refused, with what to do instead.
    const outbound = await vagent(['number', 'bind', DIDS.mumbai, 'ag_emi_reminder']);
    expect(outbound.code).toBe(1);
    expect(outbound.stderr).toMatch(/invalid_request: agent ag_emi_reminder has direction outbound/);
    expect(outbound.stderr).toContain('bind an agent with direction inbound');
    expect(outbound.stderr).toContain('vagent call place');
    const addOutbound = await vagent(['number', 'add', '+918069001111', '--agent', 'ag_delivery_confirmation']);
    expect(addOutbound.code).toBe(1);
    expect(addOutbound.stderr).toMatch(/agent ag_delivery_confirmation has direction outbound/);

    const bind = await vagent(['number', 'bind', DIDS.delhi, 'ag_clinic_booking']);
    expect(bind.code, bind.stderr).toBe(0);
    expect(bind.stdout).toContain(`${DIDS.delhi} now answered by ag_clinic_booking`);
    const bindJson = await vagent(['number', 'bind', DIDS.bengaluru, 'ag_clinic_booking', '--json']);
    expect(JSON.parse(bindJson.stdout)).toMatchObject({
      number: DIDS.bengaluru,
      agent_id: 'ag_clinic_booking',
      label: 'Bengaluru support',
    });

    const list = await vagent(['number', 'list']);
    expect(list.code).toBe(0);
    const lines = list.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NUMBER\s+LABEL\s+TRUNK\s+AGENT\s+CREATED$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 4))).toEqual([
      [DIDS.delhi, 'Delhi clinic', '-', 'ag_clinic_booking'],
      [DIDS.mumbai, 'Mumbai sales', trunkId, '-'],
      [DIDS.bengaluru, 'Bengaluru support', '-', 'ag_clinic_booking'],
    ]);
    const listJson = JSON.parse((await vagent(['number', 'list', '--json'])).stdout);
    expect(listJson.data.map((n: { number: string }) => n.number)).toEqual([DIDS.delhi, DIDS.mumbai, DIDS.bengaluru]);
    expect(Object.keys(listJson.data[0]).sort()).toEqual([...NUMBER_KEYS].sort());
  });

  it('removes a number, then the trunk; the number on it keeps its record without a trunk', async () => {
    const rm = await vagent(['number', 'rm', DIDS.delhi, '--yes']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toContain(`${DIDS.delhi} removed`);
    const again = await vagent(['number', 'rm', DIDS.delhi, '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^error: not_found: /m);

    const trm = await vagent(['trunk', 'rm', trunkId, '--json', '--yes']);
    expect(trm.code, trm.stderr).toBe(0);
    expect(JSON.parse(trm.stdout)).toEqual({ id: trunkId, deleted: true });
    expect(JSON.parse((await vagent(['trunk', 'list', '--json'])).stdout).data).toEqual([]);
    expect((await vagent(['trunk', 'list'])).stdout).toContain('No trunks yet');

    const nums = JSON.parse((await vagent(['number', 'list', '--json'])).stdout).data as Array<Record<string, unknown>>;
    expect(nums.map((n) => [n.number, n.trunk_id])).toEqual([
      [DIDS.mumbai, null],
      [DIDS.bengaluru, null],
    ]);
  });
});

describe('errors and exit codes', { timeout: 30_000 }, () => {
  it('exit 1 naming the API error code for API errors', async () => {
    const bad = await vagent(['number', 'add', '12345']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: invalid_request: .+/m);
    expect(bad.stdout).toBe('');

    const missing = await vagent(['trunk', 'show', 'tk_nope']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^error: trunk_not_found\b/m);
  });

  it('exit 2 for bad arguments, before anything is sent or read', async () => {
    const noAddress = await vagent(['trunk', 'add', '--name', 'x']);
    expect(noAddress.code).toBe(2);
    expect(noAddress.stderr).toContain('--address');
    const unknownCmd = await vagent(['trunks']);
    expect(unknownCmd.code).toBe(2);
    expect(unknownCmd.stderr).toMatch(/unknown command 'trunks'/);
    const unknownOpt = await vagent(['trunk', 'list', '--colour']);
    expect(unknownOpt.code).toBe(2);
    expect(unknownOpt.stderr).toMatch(/unknown option '--colour'/);
    const noUser = await vagent(['trunk', 'add', '--address', 'sip.example-carrier.in', '--password-stdin'], SIP_PASSWORD);
    expect(noUser.code).toBe(2);
    expect(noUser.stderr).toContain('--username');
    expect(JSON.parse((await vagent(['trunk', 'list', '--json'])).stdout).data).toEqual([]);
  });

  it('exit 3 naming the URL when the daemon cannot be reached', async () => {
    const env = { VAGENT_API_KEY: key };
    const bad = await runCli(['--url', 'http://127.0.0.1:1', 'trunk', 'list'], { env });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('http://127.0.0.1:1');
    const closed = `http://127.0.0.1:${await freePort()}`;
    const refused = await runCli(['trunk', 'list'], { env: { ...env, VAGENT_URL: closed } });
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(closed);
    expect(refused.stderr).toContain('connection refused');
  });

  it('exit 1 with a `vagent login` hint when no API key is known', async () => {
    const res = await runCli(['--url', daemon.url, 'trunk', 'list']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`no API key for ${daemon.url}`);
    expect(res.stderr).toContain(`vagent login --url ${daemon.url}`);
  });

  it('an unknown key gets `error: unauthorized` (exit 1); --api-key beats VAGENT_API_KEY', async () => {
    const res = await runCli(['--api-key', `vk_${'B'.repeat(43)}`, 'trunk', 'list'], {
      env: { VAGENT_URL: daemon.url, VAGENT_API_KEY: key },
    });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^error: unauthorized: /m);
  });
});

describe('help, environment and colour', { timeout: 30_000 }, () => {
  it('--help shows examples with a carrier SIP address and an Indian DID', async () => {
    for (const args of [['--help'], ['trunk', 'add', '--help']]) {
      const res = await runCli(args);
      expect(res.code, args.join(' ')).toBe(0);
      expect(res.stdout).toMatch(/\$ vagent trunk add --address sip\.example-carrier\.in .*\+91\d{10}/);
    }
    const numberHelp = await runCli(['number', 'add', '--help']);
    expect(numberHelp.code).toBe(0);
    expect(numberHelp.stdout).toMatch(/\$ vagent number add \+91\d{10}/);
  });

  it('VAGENT_URL and VAGENT_API_KEY work without a login', async () => {
    const fresh = cliHome();
    const env = { VAGENT_URL: daemon.url, VAGENT_API_KEY: key };
    const res = await runCli(['number', 'list', '--json'], { home: fresh, env });
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).data.map((n: { number: string }) => n.number)).toEqual([DIDS.mumbai, DIDS.bengaluru]);
    expect(fs.existsSync(path.join(fresh.config, 'vagent', 'credentials.json'))).toBe(false);
  });

  it('NO_COLOR=1 turns colours off even where FORCE_COLOR would turn them on', async () => {
    const plain = await vagent(['number', 'list']);
    expect(hasAnsi(plain.stdout)).toBe(false);
    const colour = await runCli(['number', 'list'], { home: op, env: { FORCE_COLOR: '1' } });
    expect(colour.code).toBe(0);
    expect(hasAnsi(colour.stdout)).toBe(true);
    const colourErr = await runCli(['trunk', 'show', 'tk_nope'], { home: op, env: { FORCE_COLOR: '1' } });
    expect(hasAnsi(colourErr.stderr)).toBe(true);

    for (const args of [
      ['number', 'list'],
      ['trunk', 'show', 'tk_nope'],
      ['admin', 'tenant', 'list', '--state-dir', daemon.stateDir],
    ]) {
      const res = await runCli(args, { home: op, env: { FORCE_COLOR: '1', NO_COLOR: '1' } });
      expect(res.stdout.length + res.stderr.length).toBeGreaterThan(0);
      expect(hasAnsi(res.stdout), args.join(' ')).toBe(false);
      expect(hasAnsi(res.stderr), args.join(' ')).toBe(false);
    }
  });
});
