/**
 * `vagent admin db stats|vacuum` (README.md "What grows on disk, and what bounds it") on a real
 * state dir: stats beside a running daemon, vacuum refused while it runs and converting the
 * database once it is stopped, and the start-up notice of `vagent serve` on a database without
 * incremental auto-vacuum.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, api, cleanupAll, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

interface Stats {
  file: string;
  file_bytes: number;
  wal_bytes: number;
  page_size: number;
  page_count: number;
  free_pages: number;
  free_bytes: number;
  auto_vacuum: string;
  schema_version: number;
  rows: Record<string, number>;
  notice: string | null;
}

let daemon: Daemon;
let stateDir: string;
const db = (...args: string[]) => runCli(['admin', 'db', ...args, '--state-dir', stateDir]);

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon();
  stateDir = daemon.stateDir;
}, 30_000);
afterAll(cleanupAll, 30_000);

describe('vagent admin db', { timeout: 60_000 }, () => {
  it('stats reports sizes, mode and rows beside the running daemon', async () => {
    const key = await adminKey(stateDir);
    for (let i = 0; i < 3; i++) {
      const res = await api(daemon, 'POST', '/v1/trunks', {
        key,
        body: { address: 'sip.example-carrier.in' },
        headers: { 'idempotency-key': `t-${i}` },
      });
      expect(res.status).toBe(201);
    }
    const res = await db('stats', '--json');
    expect(res.code, res.stderr).toBe(0);
    const stats = JSON.parse(res.stdout) as Stats;
    expect(stats.file).toBe(path.join(stateDir, 'vagent.db'));
    expect(stats.auto_vacuum).toBe('incremental');
    expect(stats.notice).toBeNull();
    expect(stats.page_size).toBe(4096);
    expect(stats.file_bytes).toBeGreaterThan(0);
    expect(stats.free_bytes).toBe(stats.free_pages * stats.page_size);
    expect(stats.rows).toEqual({ sessions: 0, session_turns: 0, calls: 0, idempotency: 3, audit_events: 0, telephony_events: 0 });

    const text = await db('stats');
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/auto-vacuum:\s+incremental/);
    expect(text.stdout).toMatch(/rows: idempotency:\s+3/);
  });

  it('vacuum is refused while the daemon runs, and changes nothing', async () => {
    const res = await db('vacuum');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`pid ${daemon.pid}`);
    expect(res.stderr).toContain('runs only with the daemon stopped');
    expect(res.stderr).toMatch(/stop vagent serve .*, run this again/);
    const json = await db('vacuum', '--json');
    expect(json.code).toBe(1);
    expect((JSON.parse(json.stderr) as { error: { message: string } }).error.message).toContain('daemon stopped');
    expect(json.stdout).toBe('');
    // The daemon still serves, and still holds its lock.
    expect((await api(daemon, 'GET', '/v1/health')).status).toBe(200);
    expect((await db('vacuum')).code).toBe(1);
  });

  it('on a database without auto-vacuum: serve says so at start, vacuum converts it once the daemon is stopped', async () => {
    await daemon.stop();
    // As an older vagent left it: auto_vacuum NONE.
    const raw = new Database(path.join(stateDir, 'vagent.db'));
    raw.pragma('auto_vacuum = NONE');
    raw.exec('VACUUM');
    raw.close();

    const before = JSON.parse((await db('stats', '--json')).stdout) as Stats;
    expect(before.auto_vacuum).toBe('none');
    expect(before.notice).toContain(`vagent admin db vacuum --state-dir ${stateDir}`);
    const text = await db('stats');
    expect(text.stdout).toMatch(/auto-vacuum:\s+none/);
    expect(text.stderr).toContain('vagent admin db vacuum');

    const again = await startDaemon({ stateDir });
    await again.waitForOutput(/vagent admin db vacuum --state-dir/, 'stderr');
    await again.waitForOutput(/"auto_vacuum":"none".*vagent admin db vacuum/, 'stdout'); // and the same in its log
    await again.stop();

    const res = await db('vacuum', '--json');
    expect(res.code, res.stderr).toBe(0);
    const result = JSON.parse(res.stdout) as {
      file: string;
      before_bytes: number;
      after_bytes: number;
      auto_vacuum_before: string;
      auto_vacuum: string;
    };
    expect(result).toMatchObject({
      file: path.join(stateDir, 'vagent.db'),
      auto_vacuum_before: 'none',
      auto_vacuum: 'incremental',
    });
    expect(result.after_bytes).toBeGreaterThan(0);
    const after = JSON.parse((await db('stats', '--json')).stdout) as Stats;
    expect([after.auto_vacuum, after.notice, after.rows.idempotency]).toEqual(['incremental', null, 3]);

    const human = await db('vacuum');
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/database compacted: .* → .*; auto-vacuum incremental/);

    const restarted = await startDaemon({ stateDir });
    expect(restarted.stderr()).not.toContain('vagent admin db vacuum');
    await restarted.stop();
  });

  it('refuses a state dir that holds no database', async () => {
    const missing = path.join(tempDir(), 'typo');
    for (const sub of ['stats', 'vacuum']) {
      const res = await runCli(['admin', 'db', sub, '--state-dir', missing]);
      expect(res.code, sub).toBe(1);
      expect(res.stderr).toContain(`no vagent state dir at ${missing}`);
    }
  });
});
