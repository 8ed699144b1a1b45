import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigError, loadSettings } from '../../src/config/load.js';
import { defaultStateDir } from '../../src/config/paths.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-config-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}

describe('loadSettings', () => {
  it('has the documented defaults', () => {
    const s = loadSettings({}, { HOME: '/srv/op' });
    expect(s).toMatchObject({
      host: '127.0.0.1',
      port: 8787,
      auth_mode: 'audit',
      tenant_daily_budget_inr: 0,
      timezone: 'Asia/Kolkata',
      idempotency_retention_hours: 24,
      body_limit_bytes: 1048576,
      state_dir: defaultStateDir({ HOME: '/srv/op' }),
    });
  });

  it('applies defaults < file < env < flags', () => {
    const cfg = file('a.yaml', 'port: 9001\nhost: 0.0.0.0\nauth_mode: enforce\ntimezone: Asia/Kolkata\n');
    expect(loadSettings({ config: cfg }, {}).port).toBe(9001);
    expect(loadSettings({ config: cfg }, { VAGENT_PORT: '9002' }).port).toBe(9002);
    expect(loadSettings({ config: cfg, port: '9003' }, { VAGENT_PORT: '9002' }).port).toBe(9003);
    const s = loadSettings({}, { VAGENT_CONFIG: cfg, VAGENT_AUTH_MODE: 'audit' });
    expect(s.host).toBe('0.0.0.0');
    expect(s.auth_mode).toBe('audit');
  });

  it('resolves the state dir from flag > env > file > XDG default', () => {
    const cfg = file('b.yaml', `state_dir: ${path.join(dir, 'from-file')}\n`);
    expect(loadSettings({ config: cfg }, {}).state_dir).toBe(path.join(dir, 'from-file'));
    expect(loadSettings({ config: cfg }, { VAGENT_STATE_DIR: path.join(dir, 'env') }).state_dir).toBe(path.join(dir, 'env'));
    expect(loadSettings({ config: cfg, stateDir: path.join(dir, 'flag') }, { VAGENT_STATE_DIR: path.join(dir, 'env') }).state_dir).toBe(
      path.join(dir, 'flag'),
    );
    expect(loadSettings({}, { XDG_DATA_HOME: '/data' }).state_dir).toBe('/data/vagent');
  });

  it("takes LiveKit settings from LiveKit's own variable names", () => {
    const s = loadSettings({}, { LIVEKIT_URL: 'wss://lk.example.in', LIVEKIT_API_KEY: 'APIabc', LIVEKIT_API_SECRET: 's' });
    expect(s.livekit).toEqual({
      url: 'wss://lk.example.in',
      api_key: 'APIabc',
      api_secret: 's',
      agent_name: 'vagent-media',
      request_timeout_s: 10,
      wait_until_answered: true,
    });
  });

  it('refuses a partial LiveKit configuration, naming what is missing', () => {
    expect(() => loadSettings({}, { LIVEKIT_URL: 'wss://lk.example.in' })).toThrow(
      /livekit: set all of url, api_key and api_secret or none; missing api_key, api_secret .*\(from environment LIVEKIT_URL\)/,
    );
  });

  it('keeps records for ever by default (retention_days 0) and takes whole days from VAGENT_RETENTION_DAYS', () => {
    expect(loadSettings({}, { HOME: '/srv/op' }).retention_days).toBe(0);
    expect(loadSettings({}, { HOME: '/srv/op', VAGENT_RETENTION_DAYS: '90' }).retention_days).toBe(90);
    expect(() => loadSettings({}, { VAGENT_RETENTION_DAYS: '1.5' })).toThrow(
      /retention_days: must be a whole number of days, 0 to keep everything/,
    );
    expect(() => loadSettings({}, { VAGENT_RETENTION_DAYS: 'forever' })).toThrow(/retention_days: must be a whole number of days/);
    expect(() => loadSettings({}, { VAGENT_RETENTION_DAYS: '-1' })).toThrow(/retention_days: must be 0 \(keep everything\) or more days/);
  });

  it('reads yes/no settings from words, not truthiness', () => {
    expect(loadSettings({}, { VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'false' }).inbound_webhook_allow_http).toBe(false);
    expect(loadSettings({}, { VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'yes' }).inbound_webhook_allow_http).toBe(true);
    expect(loadSettings({}, { VAGENT_LIVEKIT_WAIT_UNTIL_ANSWERED: '0' }).livekit.wait_until_answered).toBe(false);
    expect(() => loadSettings({}, { VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE: 'maybe' })).toThrow(
      /inbound_webhook_allow_private: must be true or false/,
    );
  });

  it.each([
    [{ VAGENT_PORT: 'abc' }, /port: must be a whole number from 0 to 65535 \(from environment VAGENT_PORT\)/],
    [{ VAGENT_PORT: '70000' }, /port/],
    [{ VAGENT_AUTH_MODE: 'maybe' }, /auth_mode: must be audit or enforce/],
    [{ VAGENT_TENANT_DAILY_BUDGET_INR: '-5' }, /tenant_daily_budget_inr/],
    [{ VAGENT_TIMEZONE: 'Mars/Olympus' }, /timezone: must be an IANA time zone/],
    [{ VAGENT_LOG_LEVEL: 'loud' }, /log_level/],
  ])('rejects %j with a message naming the setting', (env, message) => {
    expect(() => loadSettings({}, env as NodeJS.ProcessEnv)).toThrow(ConfigError);
    expect(() => loadSettings({}, env as NodeJS.ProcessEnv)).toThrow(message);
  });

  it('names the config file in its errors', () => {
    expect(() => loadSettings({ config: path.join(dir, 'missing.yaml') }, {})).toThrow(/cannot read config file .*missing.yaml: ENOENT/);
    expect(() => loadSettings({ config: file('bad.yaml', 'port: [1, 2\n') }, {})).toThrow(/not valid YAML/);
    expect(() => loadSettings({ config: file('list.yaml', '- 1\n- 2\n') }, {})).toThrow(/must hold a mapping/);
    expect(() => loadSettings({ config: file('port.yaml', 'port: nope\n') }, {})).toThrow(/port: .* \(from config file .*port.yaml\)/);
  });
});
