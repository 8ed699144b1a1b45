/**
 * `vagent webhook …` against a real daemon, and deliveries surviving `kill -9` mid-retry
 * (docs/events.md "Webhooks"): a receiver failing while the daemon dies gets, after the restart,
 * every event, verified with the `standardwebhooks` package, in per-call order.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanupAll, runCli, startDaemon, startDaemonWithKey } from '../support/daemon.js';

const ALLOW = { VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP: 'true', VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE: 'true' };

const servers: http.Server[] = [];
afterAll(async () => {
  for (const s of servers) s.closeAllConnections();
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  await cleanupAll();
});

interface Got {
  id: string;
  call_id: string | null;
  sequence: number;
  verified: boolean;
}

async function receiver(status: () => number) {
  const accepted: Got[] = [];
  let requests = 0;
  let secret = '';
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      requests += 1;
      const s = status();
      if (s === 200) {
        const e = JSON.parse(body) as Got;
        let verified = false;
        try {
          new Webhook(secret).verify(body, req.headers as Record<string, string>);
          verified = true;
        } catch {
          verified = false;
        }
        accepted.push({ id: e.id, call_id: e.call_id, sequence: e.sequence, verified });
      }
      res.writeHead(s).end();
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    accepted,
    requests: () => requests,
    setSecret: (s: string) => (secret = s),
  };
}

async function until(what: string, check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Appends events to the log as another process would (the daemon polls the log for them). */
function appendEvents(stateDir: string, items: [number, string][]): void {
  const db = new Database(path.join(stateDir, 'vagent.db'), { fileMustExist: true });
  db.pragma('busy_timeout = 5000');
  const insert = db.prepare(`INSERT INTO events (tenant_id, type, subject, call_id, session_id, sequence, created_at, data)
    VALUES ('default', @type, @n, @n, NULL, (SELECT COALESCE(MAX(sequence), 0) + 1 FROM events WHERE subject = @n), @at, '{}')`);
  db.transaction(() => {
    for (const [n, type] of items) insert.run({ n, type, at: Date.now() / 1000 });
  })();
  db.close();
}

describe('vagent webhook', () => {
  it('adds (secret shown once), lists, tests, replays and removes an endpoint', async () => {
    const { daemon, env } = await startDaemonWithKey({ env: ALLOW });
    // The allowances are said at start-up.
    await daemon.waitForOutput(/A new state dir/);
    expect(daemon.stderr()).toContain(
      'webhooks: receivers on plain http (inbound_webhook_allow_http) and private and loopback addresses (inbound_webhook_allow_private) are allowed',
    );
    const rx = await receiver(() => 200);
    const added = await runCli(['webhook', 'add', rx.url, '--events', 'call.*,session.ended'], { env });
    expect(added.code, added.stderr).toBe(0);
    const secret = /signing secret: (whsec_\S+)/.exec(added.stdout)?.[1];
    expect(secret).toBeDefined();
    expect(added.stdout + added.stderr).toMatch(/only time the secret is shown/);
    const id = /we_[a-z2-7]{20}/.exec(added.stdout)![0];
    rx.setSecret(secret!);

    const listed = await runCli(['webhook', 'list', '--json'], { env });
    expect(JSON.parse(listed.stdout).data).toEqual([
      expect.objectContaining({ id, events: ['call.*', 'session.ended'], status: 'active' }),
    ]);
    expect(listed.stdout).not.toContain(secret);
    expect(JSON.parse(listed.stdout).data[0]).toMatchObject({
      pending_deliveries: 0,
      last_attempt_at: null,
      last_status: null,
      last_error: null,
    });
    const table = await runCli(['webhook', 'list'], { env });
    expect(table.stdout).toContain(id);
    expect(table.stdout).toContain('active');
    expect(table.stdout).toMatch(/PENDING +LAST ATTEMPT/);

    const tested = await runCli(['webhook', 'test', id], { env });
    expect(tested.code, tested.stderr).toBe(0);
    expect(tested.stdout).toMatch(/--> webhook\.test\s+<-- \[200\]/);

    const badEvents = await runCli(['webhook', 'add', rx.url, '--events', 'call.nope', '--json'], { env });
    expect(badEvents.code).toBe(1);
    expect(JSON.parse(badEvents.stderr).error).toMatchObject({ code: 'invalid_request', param: 'events[0]' });
    const badSince = await runCli(['webhook', 'replay', '--since', 'yesterday'], { env });
    expect(badSince.code).toBe(1);
    expect(badSince.stderr).toMatch(/^error: invalid_request: --since must be a duration such as 15m, 1h30m or 2d, not "yesterday"/m);

    const unresolved = await runCli(['webhook', 'add', 'https://nonexistent.invalid/x'], { env });
    expect(unresolved.code).toBe(1);
    expect(unresolved.stderr).toMatch(/webhook host of https:\/\/nonexistent\.invalid did not resolve/);
    expect(unresolved.stdout).not.toContain('added');

    const replayed = await runCli(['webhook', 'replay', '--since', '1h', '--json'], { env });
    expect(replayed.code, replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toEqual({ queued: 0 });

    const removed = await runCli(['webhook', 'rm', id, '--yes'], { env });
    expect(removed.code, removed.stderr).toBe(0);
    expect((await runCli(['webhook', 'show', id], { env })).code).toBe(1);
    await daemon.stop();
  }, 60_000);

  it('says nothing of the allowances when they are off, and names both a loopback http receiver needs in one error', async () => {
    const { daemon, env } = await startDaemonWithKey();
    await daemon.waitForOutput(/A new state dir/);
    expect(daemon.stderr()).not.toContain('webhooks: receivers on');
    const r = await runCli(['webhook', 'add', 'http://127.0.0.1:9911/hook'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(
      'restart vagent serve with VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true',
    );
    await daemon.stop();
  }, 60_000);

  it('delivers every event after kill -9 mid-retry and a restart, in per-call order', async () => {
    let up = false;
    const rx = await receiver(() => (up ? 200 : 503));
    const first = await startDaemonWithKey({ env: ALLOW });
    const added = await runCli(['webhook', 'add', rx.url, '--json'], { env: first.env });
    expect(added.code, added.stderr).toBe(0);
    rx.setSecret((JSON.parse(added.stdout) as { secret: string }).secret);
    const types = ['call.created', 'call.ringing', 'call.answered', 'session.turn', 'call.ended'];
    appendEvents(
      first.daemon.stateDir,
      types.flatMap((type) => [[11, type] as [number, string], [12, type] as [number, string]]),
    );
    await until('retries under way', () => rx.requests() >= 4, 30_000);
    // The backlog and the latest error, as show prints them.
    const { id } = JSON.parse(added.stdout) as { id: string };
    const shown = await runCli(['webhook', 'show', id], { env: first.env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/pending: +\d+/);
    expect(shown.stdout).toMatch(/last attempt: +\[503\] \d{4}-/);
    expect(shown.stdout).toMatch(/last error: +webhook http:\/\/127\.0\.0\.1:\d+ answered 503/);
    expect((await first.daemon.stop('SIGKILL')).signal).toBe('SIGKILL');
    up = true;
    const second = await startDaemon({ stateDir: first.daemon.stateDir, env: ALLOW });
    await until('every event', () => new Set(rx.accepted.map((g) => g.id)).size === 10, 45_000);
    expect(rx.accepted.every((g) => g.verified)).toBe(true);
    // At least once: a repeat is possible, but each call's events arrive in order.
    for (const call of ['cl_11', 'cl_12']) {
      const firsts = [...new Map(rx.accepted.filter((g) => g.call_id === call).map((g) => [g.id, g.sequence])).values()];
      expect(firsts).toEqual([1, 2, 3, 4, 5]);
    }
    await second.stop();
  }, 120_000);
});
