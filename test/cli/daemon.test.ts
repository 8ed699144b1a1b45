/**
 * `vagent serve` lifecycle through the built binary: fresh state dir, health, JSON logs, the
 * one-daemon-per-state-dir lock, SIGTERM and kill -9, bad settings, precedence of settings,
 * and the master key checks.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, freePort, requireBuild, runCli, startDaemon, stopAllDaemons, tempDir } from '../support/daemon.js';

beforeAll(requireBuild);
afterEach(stopAllDaemons, 30_000);
afterAll(cleanupAll, 30_000);

const lockOf = (stateDir: string) => path.join(stateDir, 'daemon.lock');

describe('a running daemon', { timeout: 30_000 }, () => {
  it('creates a fresh state dir 0700 and says how to get the first key', async () => {
    const stateDir = path.join(tempDir(), 'nested', 'state');
    const d = await startDaemon({ stateDir });
    expect(fs.statSync(stateDir).mode & 0o777).toBe(0o700);
    expect(fs.statSync(path.join(stateDir, 'master.key')).mode & 0o777).toBe(0o600);
    await d.waitForOutput(/vagent login --url .*$/m);
    expect(d.stderr()).toContain(
      `vagent admin key create --tenant default --state-dir ${stateDir} | vagent login --url ${d.url} --api-key-stdin`,
    );
    expect(fs.readFileSync(lockOf(stateDir), 'utf8').trim()).toBe(String(d.pid));

    // A restart on the same dir is not fresh: no first-key hint.
    expect((await d.stop()).code).toBe(0);
    const again = await startDaemon({ stateDir });
    expect((await again.stop()).code).toBe(0);
    expect(again.stderr()).toContain(`listening on ${again.url}`);
    expect(again.stderr()).not.toContain('vagent admin key create');
  });

  it('answers /v1/health without auth; logs JSON lines with the request id, no key', async () => {
    const d = await startDaemon();
    const health = await api(d, 'GET', '/v1/health');
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({ status: 'ok' });
    expect(typeof health.body.version).toBe('string');

    const key = await adminKey(d.stateDir);
    const res = await api(d, 'GET', '/v1/trunks', { key });
    expect(res.status).toBe(200);
    const requestId = res.headers.get('x-request-id');
    expect(requestId).toMatch(/^req_[A-Za-z0-9_-]{12}$/);
    const unauth = await api(d, 'GET', '/v1/trunks');
    expect(unauth.status).toBe(401);

    await d.waitForOutput(new RegExp(`"reqId":"${requestId}".*"request completed"`), 'stdout');
    const lines = d.stdout().trimEnd().split('\n');
    const entries = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(entries.length).toBeGreaterThan(3);
    for (const e of entries) expect(typeof e.level).toBe('number');
    const mine = entries.filter((e) => e.reqId === requestId);
    expect(mine.length).toBeGreaterThanOrEqual(1);
    expect(mine.some((e) => (e.res as { statusCode?: number } | undefined)?.statusCode === 200)).toBe(true);
    expect(d.stdout()).not.toContain(key);
  });

  it('refuses a second daemon on the same state dir; the first keeps serving', async () => {
    const first = await startDaemon();
    const second = await runCli(['serve', '--port', '0', '--state-dir', first.stateDir], { timeoutMs: 15_000 });
    expect(second.code).not.toBe(0);
    expect(second.code).not.toBeNull();
    expect(second.stderr).toContain(`pid ${first.pid}`);
    expect(second.stderr).toContain(first.stateDir);
    expect(second.stderr).not.toContain('listening on');
    expect(fs.readFileSync(lockOf(first.stateDir), 'utf8').trim()).toBe(String(first.pid));
    expect((await api(first, 'GET', '/v1/health')).status).toBe(200);
  });

  it('SIGTERM, even right after the listening line, exits 0 and removes daemon.lock', async () => {
    // Signalled as soon as the line is read: a daemon that installed its handlers only
    // after announcing itself died of the default action here, leaving the lock behind.
    for (let i = 0; i < 3; i++) {
      const d = await startDaemon();
      const exit = await d.stop('SIGTERM');
      expect(exit).toEqual({ code: 0, signal: null });
      expect(d.stderr()).toContain('SIGTERM: finishing in-flight requests');
      expect(fs.existsSync(lockOf(d.stateDir))).toBe(false);
      expect(fs.existsSync(d.stateDir)).toBe(true);
      expect(d.stdout()).toContain('"msg":"vagent stopped"');
    }
  });

  it('keeps serving when the reader of its output goes away, and still stops on SIGTERM', async () => {
    // `vagent serve | head -c 1`: the daemon's next log line meets a closed pipe (EPIPE). It
    // used to hang at once for good, in the log's exit flush, deaf to SIGTERM, the lock held.
    const d = await startDaemon();
    d.proc.stdout!.destroy();
    d.proc.stderr!.destroy();
    const key = await adminKey(d.stateDir);
    for (let i = 0; i < 3; i++) {
      // each request writes a log line into the broken pipe
      const created = await api(d, 'POST', '/v1/trunks', {
        key,
        body: { address: 'sip.example-carrier.in', name: `after the pipe ${i}` },
      });
      expect(created.status).toBe(201);
    }
    expect((await api(d, 'GET', '/v1/health')).status).toBe(200);
    // stop() sends SIGKILL after 10 s: a clean exit 0 means SIGTERM was heard and handled
    expect(await d.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    expect(fs.existsSync(lockOf(d.stateDir))).toBe(false);
  });

  it('after kill -9 the stale lock is taken over by the next start', async () => {
    const d = await startDaemon();
    const key = await adminKey(d.stateDir);
    const created = await api(d, 'POST', '/v1/trunks', {
      key,
      body: { address: 'sip.example-carrier.in', name: 'before crash' },
    });
    expect(created.status).toBe(201);
    const exit = await d.stop('SIGKILL');
    expect(exit.signal).toBe('SIGKILL');
    expect(fs.readFileSync(lockOf(d.stateDir), 'utf8').trim()).toBe(String(d.pid));

    const next = await startDaemon({ stateDir: d.stateDir });
    expect(fs.readFileSync(lockOf(d.stateDir), 'utf8').trim()).toBe(String(next.pid));
    const list = await api(next, 'GET', '/v1/trunks', { key });
    expect(list.body.data.map((t: { id: string }) => t.id)).toEqual([created.body.id]);
  });
});

describe('settings', { timeout: 30_000 }, () => {
  const serve = (args: string[], env: Record<string, string> = {}) =>
    runCli(['serve', '--state-dir', path.join(tempDir(), 'state'), ...args], { env, timeoutMs: 15_000 });

  it('bad settings exit 2 with a message naming the setting and its source', async () => {
    const port = await serve([], { VAGENT_PORT: 'abc' });
    expect(port.code).toBe(2);
    expect(port.stderr).toMatch(/^\s+port: must be a whole number from 0 to 65535 \(from environment VAGENT_PORT\)$/m);

    const mode = await serve(['--port', '0'], { VAGENT_AUTH_MODE: 'maybe' });
    expect(mode.code).toBe(2);
    expect(mode.stderr).toMatch(/auth_mode: must be audit or enforce \(from environment VAGENT_AUTH_MODE\)/);

    const flagPort = await serve(['--port', '70000']);
    expect(flagPort.code).toBe(2);
    expect(flagPort.stderr).toMatch(/port: .* \(from flag\)/);

    const dir = tempDir();
    const badYaml = path.join(dir, 'bad.yaml');
    fs.writeFileSync(badYaml, 'port: [8787\nauth_mode: : audit\n');
    const yaml = await serve(['--config', badYaml]);
    expect(yaml.code).toBe(2);
    expect(yaml.stderr).toContain(`config file ${badYaml} is not valid YAML`);

    const badValue = path.join(dir, 'bad-value.yaml');
    fs.writeFileSync(badValue, 'timezone: Mars/Olympus\n');
    const tz = await serve(['--port', '0', '--config', badValue]);
    expect(tz.code).toBe(2);
    expect(tz.stderr).toContain(`timezone: must be an IANA time zone such as Asia/Kolkata (from config file ${badValue})`);

    const missing = path.join(dir, 'missing.yaml');
    const none = await serve(['--config', missing]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`cannot read config file ${missing}`);
    for (const r of [port, mode, yaml, none]) expect(r.stderr).not.toContain('listening on');
  });

  it('precedence: --port > VAGENT_PORT > config file > default', async () => {
    const [filePort, envPort, flagPort] = [await freePort(), await freePort(), await freePort()];
    const config = path.join(tempDir(), 'vagent.yaml');
    fs.writeFileSync(config, `port: ${filePort}\nauth_mode: enforce\n`);

    const a = await startDaemon({ port: null, args: ['--config', config] });
    expect(a.url).toBe(`http://127.0.0.1:${filePort}`);
    expect(a.stderr()).toContain('auth_mode enforce');
    await a.stop();
    const b = await startDaemon({
      port: null,
      args: ['--config', config],
      env: { VAGENT_PORT: String(envPort), VAGENT_AUTH_MODE: 'audit' },
    });
    expect(b.url).toBe(`http://127.0.0.1:${envPort}`);
    expect(b.stderr()).toContain('auth_mode audit');
    await b.stop();
    const c = await startDaemon({ port: flagPort, env: { VAGENT_PORT: String(envPort), VAGENT_CONFIG: config } });
    expect(c.url).toBe(`http://127.0.0.1:${flagPort}`);
    expect(c.stderr()).toContain('auth_mode enforce');
    expect((await api(c, 'GET', '/v1/health')).status).toBe(200);
  });
});

describe('master key', { timeout: 30_000 }, () => {
  it('refuses a master.key readable by group or others, with a chmod hint', async () => {
    const stateDir = path.join(tempDir(), 'state');
    fs.mkdirSync(stateDir, { mode: 0o700 });
    const file = path.join(stateDir, 'master.key');
    fs.writeFileSync(file, `${crypto.randomBytes(32).toString('base64')}\n`);
    fs.chmodSync(file, 0o644);
    const res = await runCli(['serve', '--port', '0', '--state-dir', stateDir], { timeoutMs: 15_000 });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${file} has mode 644`);
    expect(res.stderr).toContain(`chmod 600 ${file}`);
    expect(res.stderr).not.toContain('listening on');
    expect(fs.existsSync(lockOf(stateDir))).toBe(false);

    fs.chmodSync(file, 0o600);
    const d = await startDaemon({ stateDir });
    expect((await api(d, 'GET', '/v1/health')).status).toBe(200);
  });

  it('refuses a VAGENT_MASTER_KEY that is not 32 bytes', async () => {
    for (const bad of [crypto.randomBytes(16).toString('hex'), crypto.randomBytes(31).toString('base64'), 'not a key']) {
      const stateDir = path.join(tempDir(), 'state');
      const res = await runCli(['serve', '--port', '0', '--state-dir', stateDir], {
        env: { VAGENT_MASTER_KEY: bad },
        timeoutMs: 15_000,
      });
      expect(res.code, bad).toBe(1);
      expect(res.stderr).toContain('VAGENT_MASTER_KEY must be 32 bytes');
      expect(res.stderr).not.toContain(bad);
      expect(fs.existsSync(path.join(stateDir, 'master.key'))).toBe(false);
    }
    const good = crypto.randomBytes(32).toString('hex');
    const d = await startDaemon({ env: { VAGENT_MASTER_KEY: good } });
    expect(fs.existsSync(path.join(d.stateDir, 'master.key'))).toBe(false);
  });
});
