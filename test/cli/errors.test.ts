/**
 * Errors of the CLI through the built binary (README.md "Exit codes"): one mistake has one exit
 * code whether vagent or the daemon catches it, and with `--json` every error is one JSON line
 * on stderr in the shape of docs/api-decisions.md "Errors", the exit codes unchanged.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, type Daemon, freePort, runCli, startDaemonWithKey } from '../support/daemon.js';

let daemon: Daemon;
let env: Record<string, string>;

const vagent = (args: string[], input?: string) => runCli(args, { env, ...(input === undefined ? {} : { input }) });

/** The `{"error": …}` object of a `--json` run's stderr (its only line). */
function jsonError(stderr: string): { code: string; message: string; param?: string } {
  const lines = stderr.trimEnd().split('\n');
  expect(lines, stderr).toHaveLength(1);
  const parsed = JSON.parse(lines[0]!) as { error: { code: string; message: string; param?: string } };
  expect(Object.keys(parsed)).toEqual(['error']);
  return parsed.error;
}

beforeAll(async () => {
  ({ daemon, env } = await startDaemonWithKey({ env: { VAGENT_SPEECH: 'off' } }));
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('one mistake, one exit code', { timeout: 30_000 }, () => {
  it('a number that is not E.164 is invalid_request, exit 1, caught locally or by the daemon', async () => {
    // Caught by vagent before sending (call place checks --to), and by the daemon (number add sends it).
    const local = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', '--to', '98765']);
    const remote = await vagent(['number', 'add', '98765']);
    for (const res of [local, remote]) {
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr).toMatch(/^error: invalid_request: /m);
      expect(res.stdout).toBe('');
    }
    const localJson = await vagent(['call', 'place', '--agent', 'ag_emi_reminder', '--to', '98765', '--json']);
    const remoteJson = await vagent(['number', 'add', '98765', '--json']);
    expect(localJson.code).toBe(1);
    expect(remoteJson.code).toBe(1);
    expect(jsonError(localJson.stderr)).toMatchObject({
      code: 'invalid_request',
      param: 'to',
      message: expect.stringContaining('E.164'),
    });
    expect(jsonError(remoteJson.stderr)).toMatchObject({ code: 'invalid_request', message: expect.any(String) });
    expect(localJson.stdout).toBe('');
    expect(remoteJson.stdout).toBe('');
  });
});

describe('--json errors', { timeout: 30_000 }, () => {
  it('an API error is the API error object on stderr, exit 1', async () => {
    const res = await vagent(['trunk', 'show', 'tk_nope', '--json']);
    expect(res.code).toBe(1);
    expect(jsonError(res.stderr)).toMatchObject({ code: 'trunk_not_found', message: expect.any(String) });
    const chat = await vagent(['chat', 'ag_nope', '--json'], 'hello\n');
    expect(chat.code).toBe(1);
    expect(jsonError(chat.stderr).code).toBe('not_found');
  });

  it('a command line commander refuses is bad_arguments, exit 2, without the human text', async () => {
    for (const args of [
      ['trunks', '--json'],
      ['trunk', 'add', '--json'],
      ['--json', 'trunk', 'list', '--colour'],
    ]) {
      const res = await vagent(args);
      expect(res.code, args.join(' ')).toBe(2);
      const err = jsonError(res.stderr);
      expect(err.code).toBe('bad_arguments');
      expect(err.message).not.toMatch(/^error:/);
    }
    const noUser = await vagent(['trunk', 'add', '--address', 'sip.example-carrier.in', '--password-stdin', '--json'], 'x');
    expect(noUser.code).toBe(2);
    expect(jsonError(noUser.stderr)).toEqual({ code: 'bad_arguments', message: '--password-stdin needs --username' });
  });

  it('no key is unauthorized (exit 1) and a daemon that is down is daemon_unreachable (exit 3)', async () => {
    const noKey = await runCli(['trunk', 'list', '--json'], { env: { VAGENT_URL: daemon.url } });
    expect(noKey.code).toBe(1);
    expect(jsonError(noKey.stderr).code).toBe('unauthorized');
    const down = await runCli(['trunk', 'list', '--json'], {
      env: { ...env, VAGENT_URL: `http://127.0.0.1:${await freePort()}` },
    });
    expect(down.code).toBe(3);
    expect(jsonError(down.stderr)).toMatchObject({ code: 'daemon_unreachable', message: expect.stringContaining('127.0.0.1') });
  });

  it('without --json the same errors stay human', async () => {
    const res = await vagent(['trunk', 'show', 'tk_nope']);
    expect(res.stderr).toMatch(/^error: trunk_not_found: /m);
    expect(res.stderr).not.toContain('{"error"');
  });

  it('an id that is not an id gets the code the daemon gives it, exit 1, and a message that says so', async () => {
    const cases: Array<[string[], string, string, RegExp]> = [
      [['call', 'show', 'foo'], 'session_not_found', 'call_id', /^"foo" is not a call id: call ids look like cl_/],
      [['call', 'recording', 'foo', '-o', '-'], 'session_not_found', 'call_id', /is not a call id/],
      [['session', 'show', 'cl_1'], 'session_not_found', 'session_id', /^"cl_1" is not a session id/],
      [['chat', 'ag_ü🙂'], 'workflow_not_found', 'agent_id', /^"ag_ü🙂" is not an agent id/],
      [['webhook', 'rm', 'foo'], 'not_found', 'webhook_endpoint_id', /^"foo" is not a webhook endpoint id/],
      [
        ['events', 'replay', '--since', '1m', '--endpoint', 'we_nope'],
        'invalid_request',
        'endpoint_id',
        /^--endpoint "we_nope" is not a webhook/,
      ],
      [['events', 'replay', 'evt_foo'], 'invalid_request', 'event_id', /^"evt_foo" is not an event id/],
    ];
    for (const [args, code, param, message] of cases) {
      const res = await vagent([...args, '--json'], '');
      expect(res.code, args.join(' ')).toBe(1);
      const err = jsonError(res.stderr);
      expect(err, args.join(' ')).toMatchObject({ code, param });
      expect(err.message, args.join(' ')).toMatch(message);
    }
    const human = await vagent(['call', 'show', 'foo']);
    expect(human.stderr).toMatch(/^error: session_not_found: "foo" is not a call id/m);
    expect(human.stderr).not.toMatch(/malformed/);
    // The daemon answers the same code for the same id (the API's contract).
    const api = await fetch(`${daemon.url}/v1/calls/foo`, { headers: { authorization: `Bearer ${env.VAGENT_API_KEY}` } });
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('session_not_found');
  });

  it('a value the daemon would refuse is exit 1 in every command: --since, --limit, --budget-inr', async () => {
    for (const args of [
      ['events', 'replay', '--since', '8d'],
      ['events', 'replay', '--since', '0s'],
      ['events', 'replay', '--since', '-5m'],
      ['events', 'list', '--limit', '-1'],
      ['admin', 'tenant', 'set', 'default', '--budget-inr', '-5', '--state-dir', daemon.stateDir],
      ['admin', 'audit', '--limit', '0', '--state-dir', daemon.stateDir],
    ]) {
      const res = await vagent([...args, '--json']);
      expect(res.code, args.join(' ')).toBe(1);
      expect(jsonError(res.stderr).code, args.join(' ')).toBe('invalid_request');
    }
    const far = await vagent(['events', 'replay', '--since', '8d']);
    expect(far.stderr).toMatch(/^error: invalid_request: --since must be from 1s to at most 7d/m);
    expect(far.stderr).not.toMatch(/604800|seconds from 1/);
    const mixed = await vagent(['events', 'replay', '--since', '1h30m', '--json']);
    expect(mixed.code, mixed.stderr).toBe(0);
    expect(JSON.parse(mixed.stdout)).toEqual({ queued: expect.any(Number) });
  });

  it('"Did you mean" only for a near miss', async () => {
    const far = await vagent(['bogus']);
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/^error: unknown command 'bogus'$/m);
    expect(far.stderr).not.toMatch(/Did you mean/);
    const near = await vagent(['sesion']);
    expect(near.code).toBe(2);
    expect(near.stderr).toContain('(Did you mean session?)');
    const sub = await vagent(['call', 'shw']);
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain('(Did you mean show?)');
  });
});
