/**
 * Migration 9 and start-up (docs/api-decisions.md "Idempotency"): expired idempotency records are
 * purged in small transactions between requests' writes, start-up touches only the claims,
 * databases use incremental auto-vacuum and give freed pages back, and stored bodies are deflated.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { statePaths } from '../../src/config/paths.js';
import { SettingsSchema } from '../../src/config/schema.js';
import { startBackgroundTasks } from '../../src/daemon/background.js';
import { openRuntime } from '../../src/daemon/runtime.js';
import { IdempotencyService } from '../../src/app/idempotency.js';
import { Store } from '../../src/store/database.js';
import { openRepos, type Repos } from '../../src/store/index.js';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { IdempotencyRepo } from '../../src/store/repos/idempotency.js';
import { autoVacuumMode, reclaimFreePages } from '../../src/store/space.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-idemspace-'));
  dirs.push(d);
  return d;
}
const dbFile = () => path.join(tempDir(), 'vagent.db');
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const NOW = 1_800_000_000;
const HOUR = 3600;
const count = (db: Database.Database, where = '1'): number =>
  db.prepare(`SELECT COUNT(*) FROM idempotency WHERE ${where}`).pluck().get() as number;
const totalChanges = (db: Database.Database): number => db.prepare('SELECT total_changes()').pluck().get() as number;
/** SQLite's plan for `sql`, one line per step. */
const plan = (db: Database.Database, sql: string): string =>
  (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...[...sql.matchAll(/\?/g)].map(() => null)) as Array<{ detail: string }>)
    .map((r) => r.detail)
    .join('\n');

/** Inserts `n` done rows created at `at` with `body` (plain text, as before migration 9). */
function insertRows(db: Database.Database, n: number, at: number, body: (i: number) => string, prefix = 'k'): void {
  const ins = db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, created_at)
    VALUES ('default', ?, 'f', 'done', 201, ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) ins.run(`${prefix}${i}`, body(i), at);
  })();
}

function service(repos: Repos, now = () => NOW): IdempotencyService {
  return new IdempotencyService(repos, crypto.randomBytes(32), 24 * HOUR, now);
}

describe('the purge of expired idempotency records', () => {
  it('runs in many small transactions, oldest first, and keyed writes commit between them', async () => {
    const repos = openRepos(dbFile());
    try {
      const { db } = repos.store;
      insertRows(db, 5000, NOW - 30 * HOUR, () => '{"ok":true}', 'old');
      insertRows(db, 100, NOW - HOUR, () => '{"ok":true}', 'fresh');
      const idem = service(repos);
      const batches = vi.spyOn(repos.idempotency, 'purgeBatch');
      const commitsBefore = repos.store.stats().commits;

      let done = false;
      const purge = idem.purgeExpired({ batchRows: 250 }).finally(() => {
        done = true;
      });
      // A client's keyed requests, one after the other, while the purge runs.
      let between = 0;
      for (let i = 0; !done; i++) {
        await repos.store.write(() => idem.claimTx('default', `live-${i}`, 'print'));
        if (!done && count(db, `created_at < ${NOW - 24 * HOUR}`) > 0) between += 1;
      }
      expect(await purge).toBe(5000);

      expect(batches.mock.calls.length).toBe(21); // 20 full batches, then one that finds none left
      expect(batches.mock.results.every((r) => (r.value as number) <= 250)).toBe(true);
      expect(repos.store.stats().commits - commitsBefore).toBeGreaterThanOrEqual(21);
      expect(between).toBeGreaterThanOrEqual(10);
      expect(count(db, "key LIKE 'old%'")).toBe(0);
      expect(count(db, "key LIKE 'fresh%'")).toBe(100);
      expect(count(db, "key LIKE 'live-%' AND state = 'in_progress'")).toBeGreaterThanOrEqual(between);

      // Each batch reads the created_at index from its start: no scan of the table.
      const sql = (repos.idempotency as unknown as { q: Record<string, { source: string }> }).q.purgeBatch!.source;
      expect(plan(db, sql)).toMatch(/SEARCH idempotency USING COVERING INDEX idempotency_created \(created_at<\?\)/);
      expect(plan(db, sql)).not.toMatch(/SCAN/);
    } finally {
      repos.store.close();
    }
  });

  it('keeps the retention setting: a record exactly at the cut-off stays, one a second older goes', async () => {
    const repos = openRepos(dbFile());
    try {
      insertRows(repos.store.db, 1, NOW - 24 * HOUR, () => '{}', 'edge');
      insertRows(repos.store.db, 1, NOW - 24 * HOUR - 1, () => '{}', 'older');
      expect(await service(repos).purgeExpired()).toBe(1);
      expect(repos.idempotency.get('default', 'edge0')).toBeDefined();
      expect(repos.idempotency.get('default', 'older0')).toBeUndefined();
      expect(() => service(repos).purgeExpired({ batchRows: 0 })).toThrow(/batchRows must be a whole number ≥ 1/);
    } finally {
      repos.store.close();
    }
  });
});

describe('start-up with a large idempotency table', () => {
  it('touches only the claims left by a crash: the expired records are left to the background purge', { timeout: 60_000 }, async () => {
    const stateDir = path.join(tempDir(), 'state');
    const settings = SettingsSchema.parse({ state_dir: stateDir, log_level: 'silent' });
    const first = openRuntime(settings);
    const { db } = first.services.repos.store;
    const body = '{"session_id":"se_1","state":{}}';
    insertRows(db, 190_000, Date.now() / 1000 - 48 * HOUR, () => body, 'expired');
    insertRows(db, 9_950, Date.now() / 1000 - HOUR, () => body, 'recent');
    const claim = db.prepare(
      `INSERT INTO idempotency (tenant_id, key, fingerprint, state, created_at) VALUES ('default', ?, 'f', 'in_progress', ?)`,
    );
    db.transaction(() => {
      for (let i = 0; i < 50; i++) claim.run(`claim${i}`, Date.now() / 1000 - (i % 2 ? 48 : 1) * HOUR);
    })();
    first.close();

    const rt = openRuntime(settings);
    try {
      const reopened = rt.services.repos.store.db;
      expect(rt.recovered.released).toBe(50);
      // Every row start-up changed (this connection's total since open) is a released claim.
      expect(totalChanges(reopened)).toBe(50);
      expect(count(reopened)).toBe(199_950);
      expect(count(reopened, "state = 'in_progress'")).toBe(0);
      // The release reads the partial index of claims only.
      expect(plan(reopened, "DELETE FROM idempotency WHERE state = 'in_progress'")).toMatch(/USING INDEX idempotency_in_progress/);

      // Once the daemon listens, the background purge removes the expired ones in batches.
      const logged: string[] = [];
      const log = {
        info: (_o: object, m: string) => logged.push(m),
        warn: () => {},
        error: (_o: object, m: string) => logged.push(m),
      };
      const tasks = startBackgroundTasks(rt, log, { purgeBatchRows: 5000 });
      await vi.waitFor(() => expect(logged).toContain('expired idempotency records purged'), { timeout: 30_000, interval: 50 });
      await tasks.stop();
      expect(count(reopened)).toBe(9_950);
    } finally {
      rt.close();
    }
  });
});

/** A database at version 7 created as older vagents did: auto_vacuum NONE, plain bodies. */
function version7(file: string, rows = 50): void {
  const raw = new Database(file);
  raw.pragma('journal_mode = WAL');
  raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL) STRICT');
  for (const m of MIGRATIONS.filter((x) => x.version <= 7)) {
    raw.exec(m.sql);
    m.apply?.(raw);
    raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(m.version, m.name);
  }
  insertRows(raw, rows, NOW, (i) => JSON.stringify({ n: i, text: 'x'.repeat(900) }), 'old');
  raw.close();
}

describe('incremental auto-vacuum (migration 9)', () => {
  it('a new database is created with it', () => {
    const store = Store.open(dbFile());
    try {
      expect(autoVacuumMode(store.db)).toBe('incremental');
      expect(store.convertedAtOpen).toBe(false);
    } finally {
      store.close();
    }
  });

  it('an older small database is converted once at open, keeping its rows and their plain bodies', () => {
    const file = dbFile();
    version7(file);
    const raw = new Database(file);
    expect(autoVacuumMode(raw)).toBe('none');
    raw.close();
    const store = Store.open(file);
    try {
      expect(autoVacuumMode(store.db)).toBe('incremental');
      expect(store.convertedAtOpen).toBe(true);
      expect(store.schemaVersion()).toBe(MIGRATIONS.at(-1)!.version);
      const row = new IdempotencyRepo(store.db).get('default', 'old7');
      expect(row?.body).toBe(JSON.stringify({ n: 7, text: 'x'.repeat(900) }));
    } finally {
      store.close();
    }
  });

  it('a database above the size limit is left as it is, and the migration does not try again', () => {
    const file = dbFile();
    version7(file);
    const big = Store.open(file, { autoConvertMaxBytes: 0 });
    expect([autoVacuumMode(big.db), big.convertedAtOpen, big.schemaVersion()]).toEqual(['none', false, MIGRATIONS.at(-1)!.version]);
    big.close();
    const again = Store.open(file); // the default limit would convert it: the migration is recorded
    expect([autoVacuumMode(again.db), again.convertedAtOpen]).toEqual(['none', false]);
    again.close();
  });
});

describe('the reclaim of free pages', () => {
  it('gives the pages of purged records back: the file shrinks', async () => {
    const file = dbFile();
    const repos = openRepos(file);
    try {
      const { db } = repos.store;
      insertRows(db, 1500, NOW - 30 * HOUR, () => crypto.randomBytes(4000).toString('base64'));
      db.pragma('wal_checkpoint(TRUNCATE)');
      const full = fs.statSync(file).size;
      expect(await service(repos).purgeExpired()).toBe(1500);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const free = db.pragma('freelist_count', { simple: true }) as number;
      expect(free).toBeGreaterThan(1500);
      expect(fs.statSync(file).size).toBe(full); // deleting alone gives nothing back

      const r = await reclaimFreePages(repos.store, { thresholdPages: 64, stepPages: 256 });
      expect(r.mode).toBe('incremental');
      expect(r.freeBefore).toBe(free);
      expect(r.freeAfter).toBeLessThanOrEqual(64);
      expect(r.steps).toBe(Math.ceil((free - 64) / 256));
      db.pragma('wal_checkpoint(TRUNCATE)');
      expect(fs.statSync(file).size).toBeLessThanOrEqual(full - (free - 64) * 4096);
      expect(await reclaimFreePages(repos.store, { thresholdPages: 64 })).toMatchObject({ steps: 0 });
    } finally {
      repos.store.close();
    }
  });

  it('does nothing on a database without incremental auto-vacuum, and the daemon says why once', async () => {
    const file = dbFile();
    version7(file, 600);
    const store = Store.open(file, { autoConvertMaxBytes: 0 });
    try {
      store.db.exec('DELETE FROM idempotency');
      const free = store.db.pragma('freelist_count', { simple: true }) as number;
      expect(free).toBeGreaterThan(100);
      expect(await reclaimFreePages(store, { thresholdPages: 0 })).toEqual({
        mode: 'none',
        freeBefore: free,
        freeAfter: free,
        steps: 0,
      });
    } finally {
      store.close();
    }

    // The daemon's task, over a state dir holding this database.
    const stateDir = path.join(tempDir(), 'state');
    fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    fs.copyFileSync(file, statePaths(stateDir).database);
    const rt = openRuntime(SettingsSchema.parse({ state_dir: stateDir, log_level: 'silent' }));
    try {
      const info = vi.fn();
      const tasks = startBackgroundTasks(
        rt,
        { info, warn: vi.fn(), error: vi.fn() },
        { reclaimIntervalMs: 5, reclaim: { thresholdPages: 0 } },
      );
      await new Promise((r) => setTimeout(r, 100));
      await tasks.stop();
      const told = info.mock.calls.filter(([, msg]) => /not given back/.test(msg as string));
      expect(told).toHaveLength(1);
      expect(told[0]![1]).toContain('vagent admin db vacuum');
    } finally {
      rt.close();
    }
  });
});

describe('stored bodies', () => {
  const raw = (db: Database.Database, key: string) =>
    db.prepare('SELECT body, body_z FROM idempotency WHERE key = ?').get(key) as { body: string | null; body_z: Buffer | null };

  it('a body over 512 bytes is stored deflated, at most half its size, and read back byte for byte', () => {
    const repos = openRepos(dbFile());
    try {
      const { db } = repos.store;
      const idem = repos.idempotency;
      const session = JSON.stringify({
        session_id: 'se_4503599627370497',
        opening: {
          text: 'Namaste, this is Suvidha Finance.',
          clips: Array.from({ length: 6 }, (_, i) => ({
            display_order: i,
            text: `line ${i} नमस्ते ₹12,500`,
            audio_url: `https://vagent.example.in/v1/audio/${crypto.randomBytes(32).toString('hex')}.wav`,
          })),
        },
      });
      expect(Buffer.byteLength(session)).toBeGreaterThan(1000);
      idem.put('default', 'big', 'f', 201, session, NOW);
      const stored = raw(db, 'big');
      expect(stored.body).toBeNull();
      expect(stored.body_z!.length).toBeLessThanOrEqual(Buffer.byteLength(session) / 2);
      expect(idem.get('default', 'big')!.body).toBe(session);

      // A claim completed by store() is deflated too; taking the key over clears both columns.
      idem.claim('default', 'claimed', 'f', NOW);
      idem.store('default', 'claimed', 'f', 200, session, NOW);
      expect(raw(db, 'claimed').body).toBeNull();
      expect(idem.get('default', 'claimed')!.body).toBe(session);
      idem.claim('default', 'claimed', 'g', NOW);
      expect(raw(db, 'claimed')).toEqual({ body: null, body_z: null });

      // A small body stays plain: 512 bytes of UTF-8 at most.
      idem.put('default', 'small', 'f', 201, '{"id":"tk_1"}', NOW);
      expect(raw(db, 'small')).toEqual({ body: '{"id":"tk_1"}', body_z: null });
      const hindi = `"${'न'.repeat(170)}"`; // 172 characters, 512 bytes
      idem.put('default', 'hindi', 'f', 201, hindi, NOW);
      expect(raw(db, 'hindi')).toEqual({ body: hindi, body_z: null });
      idem.put('default', 'hindi2', 'f', 201, `${hindi} `, NOW); // 513 bytes
      expect(raw(db, 'hindi2').body).toBeNull();
      expect(idem.get('default', 'hindi2')!.body).toBe(`${hindi} `);
    } finally {
      repos.store.close();
    }
  });
});
