/**
 * `vagent carrier set|list|rm|token` through the built binary against a real daemon: secrets
 * only from stdin (never argv, never echoed), usage errors before anything is sent, `--json`
 * as the API object, the stream token printed once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, cleanupAll, runCli, startDaemonWithKey, type Daemon } from '../support/daemon.js';

const TWILIO_TOKEN = 'b6d767d2f8ed5d21a44b0e5886680cb9';
const PLIVO_TOKEN = 'NzA4YjU3ZDk4MjVlYjBmNGE2ODYyZGY3MTc4YzNh';
const EXOTEL_TOKEN = 'f1e2d3c4b5a6978877665544332211aabbccddee';
const SECRETS = [TWILIO_TOKEN, PLIVO_TOKEN, EXOTEL_TOKEN];
const VIEW_KEYS = ['dialect', 'configured', 'hint', 'updated_at', 'stream_url_path'].sort();

let daemon: Daemon;
let env: Record<string, string>;
const outputs: string[] = [];

/** Runs a command against the daemon, keeping its output for the leak check. */
async function vagent(args: string[], input?: string) {
  const res = await runCli(args, { env, ...(input === undefined ? {} : { input }) });
  outputs.push(res.stdout, res.stderr);
  return res;
}

beforeAll(async () => {
  ({ daemon, env } = await startDaemonWithKey());
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('vagent carrier', { timeout: 30_000 }, () => {
  it('set twilio reads the auth token from stdin and prints the API object with --json', async () => {
    const res = await vagent(
      ['carrier', 'set', 'twilio', '--account-sid', 'AC0123456789abcdef0123456789abcdef', '--auth-token-stdin', '--json'],
      `${TWILIO_TOKEN}\n`,
    );
    expect(res.code, res.stderr).toBe(0);
    const view = JSON.parse(res.stdout) as Record<string, unknown>;
    expect(Object.keys(view).sort()).toEqual(VIEW_KEYS);
    expect(view).toMatchObject({ dialect: 'twilio', configured: true, hint: 'cdef', stream_url_path: '/v1/media/twilio' });
  });

  it('set plivo and exotel print what was stored and how to point the carrier at vagent', async () => {
    const plivo = await vagent(['carrier', 'set', 'plivo', '--auth-id', 'MAXXXXXXXXXXXXXX1234', '--auth-token-stdin'], PLIVO_TOKEN);
    expect(plivo.code, plivo.stderr).toBe(0);
    expect(plivo.stdout).toContain('plivo credentials stored (encrypted; never shown again)');
    expect(plivo.stdout).toMatch(/hint:\s+1234/);
    expect(plivo.stdout).toMatch(/stream URL:\s+wss:\/\/YOUR-HOST\/v1\/media\/plivo/);
    expect(plivo.stderr).toContain('<Stream bidirectional="true">wss://YOUR-HOST/v1/media/plivo</Stream>');
    const exotel = await vagent(['carrier', 'set', 'exotel', '--exotel-api-key', 'exo_key_77', '--api-token-stdin'], EXOTEL_TOKEN);
    expect(exotel.code, exotel.stderr).toBe(0);
    expect(exotel.stderr).toContain('wss://API_KEY:API_TOKEN@YOUR-HOST/v1/media/exotel');
  });

  it('refuses flags of another carrier, a missing id and a secret without stdin, sending nothing (exit 2)', async () => {
    const before = await api(daemon, 'GET', '/v1/carriers', { key: env.VAGENT_API_KEY });
    const cases: Array<[string[], RegExp]> = [
      [['carrier', 'set', 'plivo', '--auth-token-stdin'], /plivo needs --auth-id/],
      [['carrier', 'set', 'exotel', '--api-token-stdin'], /exotel needs --exotel-api-key/],
      [
        ['carrier', 'set', 'twilio', '--exotel-api-key', 'k', '--auth-token-stdin'],
        /--exotel-api-key is not for twilio; it takes --account-sid/,
      ],
      [
        ['carrier', 'set', 'exotel', '--exotel-api-key', 'k', '--auth-token-stdin'],
        /--auth-token-stdin is not for exotel; use --api-token-stdin/,
      ],
      [['carrier', 'set', 'twilio'], /stdin is not a terminal; pipe the secret in with --auth-token-stdin/],
      [['carrier', 'set', 'vonage', '--auth-token-stdin'], /Allowed choices are twilio, plivo, exotel/],
    ];
    for (const [args, message] of cases) {
      const res = await vagent(args, TWILIO_TOKEN);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    expect((await api(daemon, 'GET', '/v1/carriers', { key: env.VAGENT_API_KEY })).body).toEqual(before.body);
  });

  it("passes on the daemon's refusal of a bad secret without echoing it (exit 1, --json error)", async () => {
    const res = await vagent(['carrier', 'set', 'twilio', '--auth-token-stdin', '--json'], 'short 1');
    expect(res.code).toBe(1);
    const err = JSON.parse(res.stderr) as { error: { code: string; message: string; param: string } };
    expect(err.error).toMatchObject({ code: 'invalid_request', param: 'auth_token' });
    expect(err.error.message).toMatch(/8–256 printable ASCII characters without spaces/);
    expect(res.stderr).not.toContain('short 1');
  });

  it('list shows each carrier and the stream token state, as a table and as JSON', async () => {
    const table = await vagent(['carrier', 'list']);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/^CARRIER\s+CREDENTIALS\s+HINT\s+STREAM URL PATH\s+UPDATED/m);
    expect(table.stdout).toMatch(/^twilio\s+stored\s+cdef\s+\/v1\/media\/twilio\s+\d{4}-\d\d-\d\d/m);
    expect(table.stdout).toMatch(/^plivo\s+stored\s+1234\s+\/v1\/media\/plivo/m);
    expect(table.stdout).toContain('stream token: none (make one: vagent carrier token)');
    const json = await vagent(['carrier', 'ls', '--json']);
    const body = JSON.parse(json.stdout) as { data: Array<Record<string, unknown>>; stream_token: unknown };
    expect(body.data.map((d) => [d.dialect, d.configured])).toEqual([
      ['twilio', true],
      ['exotel', true],
      ['plivo', true],
    ]);
    expect(body.stream_token).toEqual({ configured: false, created_at: null });
  });

  it('token prints a new stream token alone on stdout, once, with how to use it on stderr', async () => {
    const first = await vagent(['carrier', 'token']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^vst_[A-Za-z0-9_-]{43}\n$/);
    expect(first.stderr).toContain('shown only this once');
    expect(first.stderr).toContain('<Parameter name="stream_token"');
    const second = await vagent(['carrier', 'token', '--json']);
    const body = JSON.parse(second.stdout) as { stream_token: string; created_at: number };
    expect(Object.keys(body).sort()).toEqual(['created_at', 'stream_token']);
    expect(body.stream_token).not.toBe(first.stdout.trim());
    const list = await vagent(['carrier', 'list', '--json']);
    expect((JSON.parse(list.stdout) as { stream_token: unknown }).stream_token).toEqual({
      configured: true,
      created_at: body.created_at,
    });
    // Neither token is shown again anywhere.
    expect(list.stdout).not.toContain(body.stream_token);
  });

  it('rm asks for --yes without a terminal, removes with it, and a second rm is not_found', async () => {
    const refused = await vagent(['carrier', 'rm', 'plivo']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/not deleting the plivo credentials: stdin is not a terminal.*--yes/);
    const removed = await vagent(['carrier', 'rm', 'plivo', '--yes', '--json']);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ dialect: 'plivo', deleted: true });
    const again = await vagent(['carrier', 'remove', 'plivo', '--yes']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/not_found: no plivo credentials are stored for this tenant/);
  });

  it('never printed a carrier secret', () => {
    expect(outputs.length).toBeGreaterThan(20);
    for (const out of outputs) for (const secret of SECRETS) expect(out.includes(secret)).toBe(false);
  });
});
