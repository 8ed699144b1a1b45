/**
 * `vagent events list|tail` against a stand-in of `GET /v1/events` (test/support/fake-events.ts):
 * the lines they print, `--json`, bad flags refused before anything is sent, and tail following
 * the stream across a daemon restart without printing an event twice.
 */
import { spawn } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '../../src/domain/events.js';
import { ev, sse, SseServer } from '../support/fake-events.js';
import { BIN, childEnv, cliHome, requireBuild, ROOT, runCli } from '../support/daemon.js';

beforeAll(() => requireBuild());

let servers: SseServer[] = [];
afterEach(async () => {
  for (const s of servers) if (s.server?.listening) await s.kill();
  servers = [];
});
afterAll(async () => {
  for (const s of servers) if (s.server?.listening) await s.kill();
});
async function serve(
  log = [ev(1), ev(2, 'call.answered'), ev(3, 'call.ended', { data: { end_reason: 'caller_hung_up', duration_s: 42 } })],
) {
  const s = new SseServer(log);
  servers.push(s);
  await s.start();
  return s;
}
const auth = (s: SseServer) => ['--url', s.url, '--api-key', 'vk_test'];

describe('vagent events list', { timeout: 30_000 }, () => {
  it('prints one line per event like stripe listen, and --json one object per line', async () => {
    const s = await serve();
    const r = await runCli(['events', 'list', ...auth(s), '--type', 'call.*', '--call', 'cl_1', '--limit', '3']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines[1]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d {2}--> call\.answered +evt_000000000002 {2}cl_1$/);
    expect(lines[2]).toMatch(/--> call\.ended +evt_000000000003 {2}cl_1 {2}caller_hung_up 42 s$/);
    expect(Object.fromEntries(new URL(s.seen[0]!.url, s.url).searchParams)).toEqual({ types: 'call.*', call_id: 'cl_1', limit: '3' });

    const j = await runCli(['events', 'list', ...auth(s), '--json']);
    expect(j.code).toBe(0);
    const objs = j.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { id: string });
    // The events, then the page's cursor (as the other lists' --json carry it), nothing on stderr.
    expect(objs.slice(0, -1).map((o) => o.id)).toEqual([1, 2, 3].map(eventId));
    expect(objs.at(-1)).toEqual({ has_more: false, next_cursor: null });
    expect(j.stderr).toBe('');
  });

  it('--json ends with the next page cursor when more follow', async () => {
    const s = await serve();
    s.page = (log) => ({ data: log.slice(0, 2), has_more: true, next_cursor: log[1]!.id });
    const j = await runCli(['events', 'list', ...auth(s), '--limit', '2', '--json']);
    expect(j.code, j.stderr).toBe(0);
    const lines = j.stdout.trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(JSON.parse(lines[2]!)).toEqual({ has_more: true, next_cursor: eventId(2) });
    expect(j.stderr).toBe('');
    const text = await runCli(['events', 'list', ...auth(s), '--limit', '2']);
    expect(text.stderr).toContain(`more events: add --after ${eventId(2)}`);
  });

  it('--call with no events: says so for a call that exists, and passes on not_found for none', async () => {
    const s = await serve([]);
    s.refuse = (n) => (n === 2 ? { status: 404, error: { code: 'not_found', message: 'no call cl_999', param: 'call_id' } } : undefined);
    const missing = await runCli(['events', 'list', ...auth(s), '--call', 'cl_999']);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('not_found: no call cl_999');
    expect(missing.stderr).not.toContain('No events');
    expect(new URL(s.seen[1]!.url, s.url).pathname).toBe('/v1/calls/cl_999');

    const quiet = await serve([]);
    quiet.call = { call_id: 'cl_5', status: 'completed' };
    const none = await runCli(['events', 'list', ...auth(quiet), '--call', 'cl_5']);
    expect(none.code, none.stderr).toBe(0);
    expect(none.stderr).toContain('No events of call cl_5');
  });

  it.each([
    [['--type', 'call.nope'], 'types', /no such event type/],
    [['--type', 'CALL;drop'], 'types', /--type must be an event type/],
    [['--call', '../etc/passwd'], 'call_id', /--call must be a call id/],
    [['--after', 'evt_1'], 'after', /--after must be an event id/],
    [['--limit', '0'], 'limit', /--limit must be a whole number from 1 to 100/],
    [['--limit', '1e9'], 'limit', /--limit/],
  ])('refuses %j before sending (invalid_request naming %s)', async (flags, param, message) => {
    const s = await serve();
    const r = await runCli(['events', 'list', ...auth(s), ...flags, '--json']);
    expect(r.code).toBe(1);
    const err = (JSON.parse(r.stderr.trim()) as { error: { code: string; param: string; message: string } }).error;
    expect(err).toMatchObject({ code: 'invalid_request', param });
    expect(err.message).toMatch(message);
    expect(s.seen).toHaveLength(0);
  });

  it('passes the API error of a refusing daemon on, and exits 3 when none answers', async () => {
    const s = await serve();
    s.refuse = () => ({ status: 400, error: { code: 'invalid_request', message: 'after: no such event', param: 'after' } });
    const r = await runCli(['events', 'list', ...auth(s), '--after', 'evt_000000000009']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid_request: after: no such event');
    const url = s.url;
    await s.kill();
    const gone = await runCli(['events', 'list', '--url', url, '--api-key', 'vk_test']);
    expect(gone.code).toBe(3);
  });
});

describe('vagent events tail', { timeout: 30_000 }, () => {
  it('follows the stream across a daemon restart, printing each event once; Ctrl-C exits 130', async () => {
    const s = await serve([]);
    const port = s.port;
    const child = spawn(process.execPath, [BIN, 'events', 'tail', ...auth(s), '--json'], {
      cwd: ROOT,
      env: childEnv(cliHome()),
      stdio: 'pipe',
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    const until = async (cond: () => boolean, what: string) => {
      const end = Date.now() + 15_000;
      while (!cond()) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}; stdout: ${stdout}; stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      await until(() => s.sockets.size === 1, 'the stream');
      s.emit(ev(1));
      s.emit(ev(2));
      await until(() => stdout.split('\n').length > 2, 'two events');
      await s.kill();
      const again = new SseServer([...s.log, ev(3)]);
      servers.push(again);
      again.onConnect = (res) => res.write(sse(ev(2))); // a replay: not printed again
      await until(() => /reconnecting/.test(stderr), 'the reconnecting line');
      await again.start(port);
      await until(() => stdout.split('\n').length > 3, 'the third event');
      expect(again.seen[0]!.lastEventId).toBe(eventId(2));
      child.kill('SIGINT');
      expect(await exited).toBe(130);
    } finally {
      child.kill('SIGKILL');
    }
    const ids = stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { id: string }).id);
    expect(ids).toEqual([1, 2, 3].map(eventId));
    expect(stderr).toMatch(/Connection lost \(.*\); reconnecting in/);
  }, 30_000);
});
