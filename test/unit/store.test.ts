import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BatchAbortedError, EXTERNAL_CHECK_MS, Store } from '../../src/store/database.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { openRepos } from '../../src/store/index.js';
import { CallRepo } from '../../src/store/repos/calls.js';

const dirs: string[] = [];
function dbFile(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-store-'));
  dirs.push(d);
  return path.join(d, 'vagent.db');
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

describe('Store', () => {
  it('applies every migration once and records its version', () => {
    const file = dbFile();
    const s1 = Store.open(file);
    expect(s1.schemaVersion()).toBe(MIGRATIONS[MIGRATIONS.length - 1]!.version);
    s1.close();
    const s2 = Store.open(file);
    expect((s2.db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n).toBe(MIGRATIONS.length);
    expect(s2.db.pragma('journal_mode', { simple: true })).toBe('wal');
    // NORMAL, with the store's own WAL fsync after each commit (see the next test)
    expect(s2.db.pragma('synchronous', { simple: true })).toBe(1);
    s2.close();
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
  });

  it('resolves a write only after the WAL fsync that follows its commit', async () => {
    const store = Store.open(dbFile());
    store.db.exec('CREATE TABLE t (v INTEGER)');
    const pending: Array<() => void> = [];
    const real = fs.fdatasync;
    const spy = vi.spyOn(fs, 'fdatasync').mockImplementation(((fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      pending.push(() => real(fd, cb));
    }) as typeof fs.fdatasync);
    try {
      let done = false;
      const w = store
        .write(() => store.db.prepare('INSERT INTO t VALUES (1)').run())
        .then(() => {
          done = true;
        });
      await new Promise((r) => setTimeout(r, 20));
      // Committed (visible) but not acknowledged until the fsync completes.
      expect((store.db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n).toBe(1);
      expect(done).toBe(false);
      // A batch committed while that fsync runs gets a sync of its own at once (two may run)…
      const flags = { second: false, third: false };
      const w2 = store
        .write(() => store.db.prepare('INSERT INTO t VALUES (2)').run())
        .then(() => {
          flags.second = true;
        });
      await new Promise((r) => setTimeout(r, 20));
      expect(pending).toHaveLength(2);
      // …and one committed while two run waits for the next.
      const w3 = store
        .write(() => store.db.prepare('INSERT INTO t VALUES (3)').run())
        .then(() => {
          flags.third = true;
        });
      await new Promise((r) => setTimeout(r, 20));
      expect(pending).toHaveLength(2);
      // Each batch waits for the sync begun after its commit, not for an earlier one.
      pending.splice(1, 1)[0]!();
      await w2;
      expect(done).toBe(false);
      // A read does not wait for the sync; whenDurable waits for what covers every commit so far.
      let durable = false;
      const d = store.whenDurable().then(() => {
        durable = true;
      });
      expect(await store.read(() => (store.db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n)).toBe(3);
      pending.shift()!();
      await w;
      await new Promise((r) => setTimeout(r, 20));
      expect(flags.third).toBe(false);
      expect(durable).toBe(false);
      // The first sync's end started the one the third batch waits for.
      expect(pending).toHaveLength(1);
      pending.shift()!();
      await w3;
      await d;
      expect(flags.third).toBe(true);
      expect(durable).toBe(true);
      await store.whenDurable(); // nothing waiting: resolves at once
    } finally {
      spy.mockRestore();
      store.close();
    }
  });

  it('rejects the writes of a batch whose WAL fsync fails', async () => {
    const store = Store.open(dbFile());
    store.db.exec('CREATE TABLE t (v INTEGER)');
    const spy = vi.spyOn(fs, 'fdatasync').mockImplementation(((_fd: number, cb: (err: NodeJS.ErrnoException | null) => void) => {
      cb(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
    }) as typeof fs.fdatasync);
    try {
      await expect(store.write(() => store.db.prepare('INSERT INTO t VALUES (1)').run())).rejects.toThrow(/EIO/);
      // A batch that changes nothing has nothing to sync and resolves.
      await expect(store.write(() => 1)).resolves.toBe(1);
    } finally {
      spy.mockRestore();
      store.close();
    }
  });

  it("checkpoints the WAL from a worker thread, so the daemon's connection does not", async () => {
    const store = Store.open(dbFile());
    store.db.exec('CREATE TABLE t (v TEXT)');
    const fill = () =>
      store.write(() => {
        const ins = store.db.prepare('INSERT INTO t VALUES (?)');
        for (let i = 0; i < 2000; i++) ins.run('x'.repeat(1000));
      });
    const framesAfterSmallWrite = async () => {
      await store.write(() => store.db.prepare('INSERT INTO t VALUES (?)').run('y'));
      return (store.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number }>)[0]!.log;
    };
    try {
      await fill();
      // Without the worker nothing checkpoints below 10 000 pages: the WAL keeps every frame.
      expect(await framesAfterSmallWrite()).toBeGreaterThan(400);
      store.db.pragma('wal_checkpoint(TRUNCATE)');
      store.startBackgroundCheckpoints();
      await fill();
      // Small writes only meanwhile: nothing on this connection checkpoints (the threshold is
      // far off); once the worker has checkpointed everything, the next write restarts the WAL.
      for (let i = 0; i < 15; i++) {
        await new Promise((r) => setTimeout(r, 100));
        await store.write(() => store.db.prepare('INSERT INTO t VALUES (?)').run('z'));
      }
      const frames = await framesAfterSmallWrite();
      // The worker checkpointed it all, so the next write started the WAL over.
      expect(frames).toBeLessThanOrEqual(20);
    } finally {
      await store.stopBackgroundCheckpoints();
      store.close();
    }
  });

  it('stopping the checkpoint worker keeps the process alive until its last pass is done', () => {
    // A process whose only work left is the stop (its server closed): it must not exit before.
    const file = dbFile();
    const script = `
      import { Store } from ${JSON.stringify(new URL('../../dist/store/database.js', import.meta.url).href)};
      const store = Store.open(${JSON.stringify(file)});
      store.startBackgroundCheckpoints();
      await store.write(() => store.db.exec('CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1)'));
      store.stopBackgroundCheckpoints().then(() => { store.close(); process.stdout.write('stopped and closed'); });
    `;
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('stopped and closed');
    expect(fs.existsSync(`${file}-wal`)).toBe(false); // closed cleanly: the WAL was checkpointed and removed
  });

  it('holds commits when asked: writes wait, reads run, and the writes commit on release', async () => {
    const store = Store.open(dbFile());
    store.db.exec('CREATE TABLE t (v INTEGER)');
    try {
      store.holdCommits();
      let committed = false;
      const write = store
        .write(() => store.db.prepare('INSERT INTO t VALUES (1)').run())
        .then(() => {
          committed = true;
        });
      const count = () => (store.db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
      // Several turns of the event loop: the read batch runs, the write does not.
      for (let i = 0; i < 5; i++) expect(await store.read(count)).toBe(0);
      await new Promise((r) => setTimeout(r, 20));
      expect(committed).toBe(false);
      store.releaseCommits();
      await write;
      expect(count()).toBe(1);
    } finally {
      store.close();
    }
  });

  it('commits writes queued while held when it closes', async () => {
    const file = dbFile();
    const store = Store.open(file);
    store.db.exec('CREATE TABLE t (v INTEGER)');
    store.holdCommits();
    const write = store.write(() => store.db.prepare('INSERT INTO t VALUES (7)').run().changes);
    store.close();
    await expect(write).resolves.toBe(1);
    const raw = new Database(file, { readonly: true });
    expect(raw.prepare('SELECT v FROM t').pluck().all()).toEqual([7]);
    raw.close();
  });

  it('has the WAL start over under writes that never pause, holding commits only briefly', async () => {
    // Writes keep coming (20 writers, each issuing its next write at once), so a passive
    // checkpoint never finds the WAL all copied at the start of a write: without the hold the
    // WAL would only grow. Each write adds a page (a 3000-byte row). Both runs make the same
    // number of writes (not run for the same time), so a busy machine changes neither's WAL. How
    // far the WAL outgrows its restart size is set by the longest time the worker thread waits
    // for a core (writes go on meanwhile), not by the number of writes: enough writes that a
    // worker kept waiting by other test files on the host still shows the WAL reused.
    const TOTAL_WRITES = 36_000;
    const run = async (restartFrames: number) => {
      const file = dbFile();
      const store = Store.open(file);
      store.db.exec('CREATE TABLE t (v TEXT)');
      const hold = vi.spyOn(store, 'holdCommits');
      const release = vi.spyOn(store, 'releaseCommits');
      store.startBackgroundCheckpoints({ intervalMs: 5, restartFrames, maxHoldMs: 1000 });
      let maxWal = 0;
      let writes = 0;
      let started = 0;
      try {
        await Promise.all(
          Array.from({ length: 20 }, async () => {
            while (started < TOTAL_WRITES) {
              started += 1;
              await store.write(() => store.db.prepare('INSERT INTO t VALUES (?)').run('x'.repeat(3000)));
              writes += 1;
              maxWal = Math.max(maxWal, fs.statSync(`${file}-wal`).size);
            }
          }),
        );
      } finally {
        await store.stopBackgroundCheckpoints();
      }
      const rows = (store.db.prepare('SELECT COUNT(*) AS n FROM t').get() as { n: number }).n;
      store.close();
      return { holds: hold.mock.calls.length, releases: release.mock.calls.length, maxWalPages: maxWal / 4120, writes, rows };
    };
    const restarting = await run(300);
    expect(restarting.rows).toBe(restarting.writes);
    expect(restarting.holds).toBeGreaterThan(0);
    expect(restarting.releases).toBe(restarting.holds);
    // What was written is far more than the WAL ever held: it started over, and was reused.
    expect(restarting.writes).toBeGreaterThan(5 * restarting.maxWalPages);
    const growing = await run(1_000_000_000);
    expect(growing.holds).toBe(0);
    expect(growing.maxWalPages).toBeGreaterThan(3 * restarting.maxWalPages);
  }, 60_000);

  it.each([
    ['as released', []],
    ['from before dial keys were fingerprinted', ['idempotency_print', 'reserve_until']],
  ])('moves calls of a version 3 database (%s) to version 4 and on, keeping them', (_name, dropped: string[]) => {
    const file = dbFile();
    const raw = new Database(file);
    raw.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT`);
    for (const m of MIGRATIONS.filter((x) => x.version <= 3)) {
      raw.exec(m.sql);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
    }
    for (const column of dropped) raw.exec(`ALTER TABLE calls DROP COLUMN ${column}`);
    raw.pragma('foreign_keys = OFF'); // no agent revision row: only the call's own references matter here
    raw.exec(`INSERT INTO tenants (id, created_at) VALUES ('default', 0)`);
    raw.exec(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
      VALUES (7, 4242, 'default', 'ag_x', 'd', '{}', 0, '{}', '{}', 'open', 1700000000)`);
    raw.exec(`INSERT INTO calls (id, session_seq, tenant_id, agent_id, direction, to_number, dial_status, idempotency_key, created_at)
      VALUES (4242, 7, 'default', 'ag_x', 'outbound', '+919876543210', 'not_dialled', 'k1', 1700000000)`);
    raw.close();

    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const columns = store.db.prepare("SELECT name FROM pragma_table_info('calls')").pluck().all();
      expect(columns).not.toContain('session_seq');
      expect(columns).not.toContain('created_at');
      expect(columns).toContain('reserve_until');
      const calls = new CallRepo(store.db);
      const call = calls.get(4242)!;
      expect(call).toMatchObject({
        id: 4242,
        to_number: '+919876543210',
        idempotency_key: 'k1',
        reserve_until: 0,
        created_at: 1700000000,
        answered_at: null,
      });
      expect(calls.byIdempotencyKey('default', 'k1')?.id).toBe(4242);
      // A call of a session that does not exist is refused, as the new table says.
      expect(() =>
        store.db.exec(`INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, dial_status)
        VALUES (1, 'default', 'ag_x', 'outbound', '+919876543210', 'not_dialled')`),
      ).toThrow(/FOREIGN KEY/);
    } finally {
      store.close();
    }
  });

  it('moves calls of a version 4 database to the line state machine (version 5): completed, answered_at', () => {
    const file = dbFile();
    const raw = new Database(file);
    raw.exec(`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT`);
    raw.pragma('foreign_keys = OFF'); // no agent revision row: only the call's own references matter here
    for (const m of MIGRATIONS.filter((x) => x.version <= 4)) {
      raw.exec(m.sql);
      m.apply?.(raw);
      raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
    }
    raw.exec(`INSERT INTO tenants (id, created_at) VALUES ('default', 0)`);
    const session =
      raw.prepare(`INSERT INTO sessions (seq, id, tenant_id, agent_id, agent_digest, context, ref_ms, engine, metrics, status, created_at)
      VALUES (?, ?, 'default', 'ag_x', 'd', '{}', 0, '{}', '{}', ?, ?)`);
    const call = raw.prepare(
      `INSERT INTO calls (id, tenant_id, agent_id, direction, to_number, dial_status) VALUES (?, 'default', 'ag_x', ?, '+919876543210', ?)`,
    );
    session.run(1, 11, 'open', 1700000001);
    call.run(11, 'inbound', 'answered');
    session.run(2, 12, 'ended', 1700000002);
    call.run(12, 'inbound', 'answered');
    session.run(3, 13, 'open', 1700000003);
    call.run(13, 'outbound', 'ringing');
    // Version 4 refuses the new status.
    expect(() => raw.prepare("UPDATE calls SET dial_status = 'completed' WHERE id = 13").run()).toThrow(/CHECK/);
    raw.close();

    const store = Store.open(file);
    try {
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const calls = new CallRepo(store.db);
      expect(calls.get(11)).toMatchObject({ dial_status: 'answered', answered_at: 1700000001 });
      expect(calls.get(12)).toMatchObject({ dial_status: 'completed', answered_at: 1700000002 });
      expect(calls.get(13)).toMatchObject({ dial_status: 'ringing', answered_at: null });
      // Every move goes through the transition table: ringing → answered → completed, never back.
      expect(calls.moveDial(13, 'answered', { answered_at: 1700000100 })).toBe(true);
      expect(calls.moveDial(13, 'ringing')).toBe(false);
      expect(calls.moveDial(13, 'answered', { answered_at: 1700000200 })).toBe(false);
      expect(calls.moveDial(13, 'completed')).toBe(true);
      expect(calls.moveDial(13, 'failed', { dial_error: 'late' })).toBe(false);
      expect(calls.get(13)).toMatchObject({ dial_status: 'completed', answered_at: 1700000100, dial_error: null });
    } finally {
      store.close();
    }
  });

  it('refuses a database from a newer vagent', () => {
    const file = dbFile();
    Store.open(file).close();
    const raw = new Database(file);
    raw.prepare('INSERT INTO schema_migrations VALUES (999, ?, 0)').run('future');
    raw.close();
    expect(() => Store.open(file)).toThrow(/schema version 999 is newer than this vagent/);
  });

  it('group-commits writes queued in one tick into one transaction', async () => {
    const repos = openRepos(dbFile());
    const { store } = repos;
    const before = store.stats();
    const writes = Array.from({ length: 25 }, (_, i) =>
      store.write(() => {
        repos.tenants.insertTenant(`t${i}`, i);
        return i;
      }),
    );
    expect(await Promise.all(writes)).toEqual(Array.from({ length: 25 }, (_, i) => i));
    expect(store.stats()).toEqual({ commits: before.commits + 1, writes: before.writes + 25 });
    expect(repos.tenants.listTenants()).toHaveLength(25);
    store.close();
  });

  it('rolls back only the failing callback of a batch', async () => {
    const repos = openRepos(dbFile());
    const { store } = repos;
    const a = store.write(() => repos.tenants.insertTenant('a', 1));
    const b = store.write(() => {
      repos.tenants.insertTenant('b', 2);
      throw new Error('boom');
    });
    const c = store.write(() => repos.tenants.insertTenant('c', 3));
    await expect(a).resolves.toBeUndefined();
    await expect(b).rejects.toThrow('boom');
    await expect(c).resolves.toBeUndefined();
    expect(repos.tenants.listTenants().map((t) => t.id)).toEqual(['a', 'c']);
    store.close();
  });

  it('a callback without a savepoint that fails before changing anything fails alone', async () => {
    const repos = openRepos(dbFile());
    const { store } = repos;
    const a = store.write(() => repos.tenants.insertTenant('a', 1), { savepoint: false });
    const b = store.write(
      () => {
        if (repos.tenants.getTenant('a')) throw new Error('refused before writing');
      },
      { savepoint: false },
    );
    const c = store.write(() => repos.tenants.insertTenant('c', 3), { savepoint: false });
    await expect(a).resolves.toBeUndefined();
    await expect(b).rejects.toThrow('refused before writing');
    await expect(c).resolves.toBeUndefined();
    expect(repos.tenants.listTenants().map((t) => t.id)).toEqual(['a', 'c']);
    expect(store.stats()).toEqual({ commits: 1, writes: 3 });
    store.close();
  });

  it('a callback without a savepoint that fails after a change rolls back its whole batch', async () => {
    const repos = openRepos(dbFile());
    const { store } = repos;
    const before = store.generation();
    const a = store.write(() => repos.tenants.insertTenant('a', 1));
    const b = store.write(
      () => {
        repos.tenants.insertTenant('b', 2);
        throw new Error('boom after a write');
      },
      { savepoint: false },
    );
    const c = store.write(() => repos.tenants.insertTenant('c', 3));
    await expect(a).rejects.toBeInstanceOf(BatchAbortedError);
    await expect(b).rejects.toThrow('boom after a write');
    await expect(c).rejects.toBeInstanceOf(BatchAbortedError);
    expect(repos.tenants.listTenants()).toEqual([]);
    expect(store.db.inTransaction).toBe(false);
    expect(store.stats().commits).toBe(0);
    expect(store.generation()).toBe(before);
    // The store goes on: the next batch commits.
    await store.write(() => repos.tenants.insertTenant('d', 4), { savepoint: false });
    expect(repos.tenants.listTenants().map((t) => t.id)).toEqual(['d']);
    store.close();
  });

  it('sees earlier callbacks of the same batch (a claim is visible to its twin)', async () => {
    const repos = openRepos(dbFile());
    const { store } = repos;
    const seen = await Promise.all(
      [0, 1, 2].map(() =>
        store.write(() => {
          const exists = repos.tenants.getTenant('x') !== undefined;
          if (!exists) repos.tenants.insertTenant('x', 0);
          return exists;
        }),
      ),
    );
    expect(seen).toEqual([false, true, true]);
    store.close();
  });

  it('flushes queued writes on close and rejects writes after it', async () => {
    const file = dbFile();
    const repos = openRepos(file);
    const pending = repos.store.write(() => repos.tenants.insertTenant('late', 1));
    repos.store.close();
    await expect(pending).resolves.toBeUndefined();
    await expect(repos.store.write(() => 1)).rejects.toThrow(/closed/);
    const again = openRepos(file);
    expect(again.tenants.getTenant('late')).toBeDefined();
    again.store.close();
  });
});

describe('Store.generation', () => {
  it('moves on its own commits and on commits by another connection, not on reads', async () => {
    const file = dbFile();
    const repos = openRepos(file);
    const { store } = repos;
    const g0 = store.generation();
    expect(store.generation()).toBe(g0);
    repos.tenants.listTenants();
    expect(store.generation()).toBe(g0);
    await store.write(() => repos.tenants.insertTenant('a', 1));
    const g1 = store.generation();
    expect(g1).not.toBe(g0);
    const other = new Database(file);
    other.prepare('INSERT INTO tenants (id, created_at) VALUES (?, ?)').run('from-admin', 2);
    other.close();
    await new Promise((r) => setTimeout(r, EXTERNAL_CHECK_MS + 20));
    const g2 = store.generation();
    expect(g2).not.toBe(g1);
    expect(store.generation()).toBe(g2);
    store.close();
  });
});
