/**
 * A first-time operator's mistakes, through the built binary against a real daemon: a daemon
 * address without a scheme or where nothing listens is said before any missing key; Ctrl-C at
 * the login prompt and an agent file that cannot be read get the README's exit codes; numbers
 * written the national way get the E.164 form to use; `trunk rm` names the numbers it detaches.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, cliHome, freePort, ROOT, runCli, startDaemonWithKey, tempDir, type Daemon } from '../support/daemon.js';
import { runCliOnTty } from '../support/tty.js';

let daemon: Daemon;
let env: Record<string, string>;

const vagent = (args: string[], input?: string) => runCli(args, { env, ...(input === undefined ? {} : { input }) });
const jsonError = (stderr: string) => (JSON.parse(stderr.trim()) as { error: { code: string; message: string; param?: string } }).error;

beforeAll(async () => {
  ({ daemon, env } = await startDaemonWithKey({ env: { VAGENT_SPEECH: 'off' } }));
}, 60_000);
afterAll(cleanupAll, 30_000);

describe('the daemon address is checked before the key', { timeout: 60_000 }, () => {
  it('a --url without a scheme: exit 2 naming the URL and the form it needs, not "no API key"', async () => {
    for (const args of [
      ['--url', '127.0.0.1:8787', 'trunk', 'list'],
      ['--url', 'localhost:8787', 'number', 'list'],
      ['login', '--url', '127.0.0.1:8787'],
    ]) {
      const res = await runCli(args, { input: 'vk_x\n' });
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(2);
      expect(res.stderr).toContain('--url "');
      expect(res.stderr).toMatch(/is not a daemon URL: it has no http:\/\/ or https:\/\/ in front/);
      expect(res.stderr).toMatch(/--url http:\/\/(127\.0\.0\.1|localhost):8787/);
      expect(res.stderr).not.toContain('no API key');
    }
    const fromEnv = await runCli(['trunk', 'list', '--json'], { env: { VAGENT_URL: 'ftp://127.0.0.1:8787' } });
    expect(fromEnv.code).toBe(2);
    expect(jsonError(fromEnv.stderr)).toMatchObject({
      code: 'bad_arguments',
      message: expect.stringContaining('from VAGENT_URL "ftp://127.0.0.1:8787"'),
    });
  });

  it('no daemon at the address and no key: exit 3 "cannot reach", not the login hint', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const res = await runCli(['--url', url, 'trunk', 'list']);
    expect(res.code, res.stderr).toBe(3);
    expect(res.stderr).toContain(`cannot reach the vagent daemon at ${url}`);
    expect(res.stderr).not.toContain('no API key');
    const json = await runCli(['--url', url, 'agent', 'list', '--json']);
    expect(json.code).toBe(3);
    expect(jsonError(json.stderr).code).toBe('daemon_unreachable');
    // A daemon that answers, without a key: still the login hint (exit 1).
    const noKey = await runCli(['--url', daemon.url, 'trunk', 'list']);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain(`no API key for ${daemon.url}`);
  });
});

describe('exit codes of the README table', { timeout: 60_000 }, () => {
  it('Ctrl-C at the hidden login prompt: exit 130, "cancelled", nothing saved', async () => {
    const home = cliHome();
    const res = await runCliOnTty(['login', '--url', daemon.url], { home, prompt: /API key: /, keys: '\u0003' });
    expect(res.code, res.stdout).toBe(130);
    expect(res.stdout).toMatch(/error: cancelled/);
    expect(fs.existsSync(path.join(home.config, 'vagent', 'config.json'))).toBe(false);
    const json = await runCliOnTty(['login', '--url', daemon.url, '--json'], { prompt: /API key: /, keys: '\u0003' });
    expect(json.code).toBe(130);
    expect(json.stdout).toContain('{"error":{"code":"cancelled","message":"cancelled"}}');
  });

  it('agent apply of a file that does not exist: exit 2; a file read and refused stays exit 1', async () => {
    const dir = tempDir();
    const missing = await vagent(['agent', 'apply', '-f', path.join(dir, 'missing.yaml')]);
    expect(missing.code, missing.stderr).toBe(2);
    expect(missing.stderr).toContain('missing.yaml: cannot read: no such file or directory');
    const missingJson = await vagent(['agent', 'apply', '-f', path.join(dir, 'missing.yaml'), '--json']);
    expect(missingJson.code).toBe(2);
    expect(missingJson.stderr).toContain('"code":"bad_arguments"');
    fs.writeFileSync(path.join(dir, 'bad.yaml'), 'id: ag_bad\nname: Bad\n');
    const refused = await vagent(['agent', 'apply', '-f', path.join(dir, 'bad.yaml')]);
    expect(refused.code, refused.stderr).toBe(1);
  });
});

describe('numbers written the national way', { timeout: 90_000 }, () => {
  it('every number-taking command says "use E.164: +91…", exit 1 invalid_request, and sends nothing', async () => {
    const cases: Array<[string[], string]> = [
      [['number', 'bind', '8047001234', 'ag_clinic_booking'], '+918047001234'],
      [['number', 'add', '08047001234', '--label', 'Bengaluru support'], '+918047001234'],
      [['number', 'rm', '918047001234', '--yes'], '+918047001234'],
      [['trunk', 'add', '--address', 'sip.example-carrier.in', '--number', '022 4000 1234'], '+912240001234'],
      [['call', 'place', '--agent', 'ag_emi_reminder', '--to', '9876543210'], '+919876543210'],
      [['call', 'place', '--agent', 'ag_emi_reminder', '--to', '+919876543210', '--from', '02240001234'], '+912240001234'],
      [['call', 'simulate', 'ag_clinic_booking', '--say', 'hi', '--to', '9876543210'], '+919876543210'],
      [['chat', 'ag_clinic_booking', '--customer-phone', '9876543210'], '+919876543210'],
    ];
    for (const [args, e164] of cases) {
      const res = await vagent(args);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(1);
      expect(res.stderr).toMatch(/^error: invalid_request: .* must be an E\.164 number/m);
      expect(res.stderr).toContain(`use E.164: ${e164}`);
      expect(res.stderr).not.toContain('%2B');
    }
    const json = await vagent(['number', 'bind', '8047001234', 'ag_clinic_booking', '--json']);
    expect(jsonError(json.stderr)).toMatchObject({ code: 'invalid_request', param: 'number' });
    // Not a national Indian number: an example, no guess.
    const short = await vagent(['number', 'add', '98765']);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('use E.164, e.g. +919876543210');
    expect(short.stderr).not.toMatch(/use E\.164: \+/);
    const state = JSON.parse((await vagent(['number', 'list', '--json'])).stdout) as { data: unknown[] };
    expect(state.data).toEqual([]);
    expect(JSON.parse((await vagent(['trunk', 'list', '--json'])).stdout).data).toEqual([]);
  });
});

describe('trunk rm names the numbers it detaches', { timeout: 90_000 }, () => {
  it('asks naming them, says they are detached, and prints the commands that attach them again', async () => {
    const trunk = JSON.parse((await vagent(['trunk', 'add', '--address', 'sip.example-carrier.in', '--json'])).stdout) as {
      id: string;
    };
    expect((await vagent(['number', 'add', '+912240001234', '--trunk', trunk.id, '--label', "Mumbai's sales"])).code).toBe(0);
    expect((await vagent(['number', 'add', '+911140001234', '--trunk', trunk.id, '--agent', 'ag_clinic_booking'])).code).toBe(0);
    expect((await vagent(['number', 'add', '+918047001234'])).code).toBe(0);

    // On a terminal the question names both numbers; "n" deletes nothing.
    const asked = await runCliOnTty(['trunk', 'rm', trunk.id], { env, prompt: /\[y\/N\] /, keys: 'n\r' });
    expect(asked.code, asked.stdout).toBe(1);
    expect(asked.stdout).toContain(`Delete trunk ${trunk.id} (+911140001234, +912240001234 use it and will be detached`);
    expect(asked.stdout).toContain('adding a trunk again does not re-attach them');
    expect((await vagent(['trunk', 'show', trunk.id])).code).toBe(0);

    const rm = await vagent(['trunk', 'rm', trunk.id, '--yes']);
    expect(rm.code, rm.stderr).toBe(0);
    expect(rm.stdout).toContain('detached (no trunk now): +911140001234, +912240001234');
    const list = await vagent(['number', 'list']);
    expect(list.stdout).toMatch(/^\+912240001234\s+Mumbai's sales\s+-\s+-/m);

    // A new trunk does not take them back; the printed commands do, keeping label and agent.
    const again = JSON.parse((await vagent(['trunk', 'add', '--address', 'sip.example-carrier.in', '--json'])).stdout) as {
      id: string;
    };
    const nums = JSON.parse((await vagent(['number', 'list', '--json'])).stdout).data as Array<{
      number: string;
      trunk_id: string | null;
    }>;
    expect(nums.every((n) => n.trunk_id === null)).toBe(true);
    const commands = rm.stdout
      .split('\n')
      .filter((l) => l.trim().startsWith('vagent number rm'))
      .map((l) => l.trim().replace('tk_NEW', again.id));
    expect(commands).toHaveLength(2);
    const bin = tempDir();
    fs.writeFileSync(path.join(bin, 'vagent'), `#!/bin/sh\nexec "${process.execPath}" "${path.join(ROOT, 'bin', 'vagent')}" "$@"\n`, {
      mode: 0o755,
    });
    for (const c of commands) {
      execFileSync('bash', ['-c', c], {
        env: { ...process.env, ...env, HOME: cliHome().home, PATH: `${bin}:${process.env.PATH}` },
        stdio: 'pipe',
      });
    }
    const after = JSON.parse((await vagent(['number', 'list', '--json'])).stdout).data as Array<Record<string, unknown>>;
    expect(after.map((n) => [n.number, n.trunk_id, n.label, n.agent_id])).toEqual([
      ['+911140001234', again.id, null, 'ag_clinic_booking'],
      ['+912240001234', again.id, "Mumbai's sales", null],
      ['+918047001234', null, null, null],
    ]);
  });
});
