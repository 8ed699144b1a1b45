/**
 * `vagent admin cache stats|prune` (README.md "What grows on disk, and what bounds it") on the
 * state dir of a running daemon: a new user's stats, a dry run that changes nothing, a prune down
 * to the cap that spares clips within the keep window, and bad flags refused.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, requireBuild, runCli, startDaemon, tempDir, type Daemon } from '../support/daemon.js';

let daemon: Daemon;
const cache = (args: string[], env: Record<string, string> = {}) =>
  runCli(['admin', 'cache', ...args, '--state-dir', daemon.stateDir], { env });

interface Stats {
  dir: string;
  static: { clips: number; bytes: number };
  dynamic: { clips: number; bytes: number; oldest_use_at: string | null };
  cap: { bytes: number; source: 'setting' | 'disk'; disk_bytes: number | null };
  over_cap_bytes: number;
  keep_hours: number;
  legacy_layout: boolean;
}

beforeAll(async () => {
  requireBuild();
  daemon = await startDaemon();
}, 30_000);
afterAll(cleanupAll, 30_000);

/** Writes `n` dynamic clips of `size` bytes last used `ageHours` ago; returns their files. */
function plant(n: number, size: number, ageHours: number): string[] {
  const dir = path.join(daemon.stateDir, 'audio', 'dynamic');
  fs.mkdirSync(dir, { recursive: true });
  const when = (Date.now() - ageHours * 3_600_000) / 1000;
  return Array.from({ length: n }, () => {
    const file = path.join(dir, `${crypto.randomBytes(32).toString('hex')}.wav`);
    fs.writeFileSync(file, Buffer.alloc(size));
    fs.utimesSync(file, when, when);
    return file;
  });
}

describe('vagent admin cache stats', { timeout: 30_000 }, () => {
  it('works on a new state dir: classes, the disk-relative cap and the keep window', async () => {
    const text = await cache(['stats']);
    expect(text.code, text.stderr).toBe(0);
    for (const field of ['static clips:', 'dynamic clips:', 'cap:', 'over the cap:', 'keep window:', 'oldest last use:'])
      expect(text.stdout).toContain(field);
    expect(text.stdout).toContain('set audio_cache_max_mb to change');

    const res = await cache(['stats', '--json']);
    expect(res.code, res.stderr).toBe(0);
    const s = JSON.parse(res.stdout) as Stats;
    expect(s.dir).toBe(path.join(daemon.stateDir, 'audio'));
    expect(s.cap.source).toBe('disk');
    expect(s.cap.bytes).toBeGreaterThanOrEqual(256 * 1024 * 1024);
    expect(s.cap.bytes).toBeLessThanOrEqual(16 * 1024 * 1024 * 1024);
    expect(s.keep_hours).toBe(24);
    expect(s.over_cap_bytes).toBe(0);
    expect(s.legacy_layout).toBe(false);

    const set = JSON.parse(
      (await cache(['stats', '--json'], { VAGENT_AUDIO_CACHE_MAX_MB: '3', VAGENT_AUDIO_URL_KEEP_HOURS: '6' })).stdout,
    ) as Stats;
    expect(set.cap).toEqual({ bytes: 3 * 1024 * 1024, source: 'setting', disk_bytes: null });
    expect(set.keep_hours).toBe(6);
  });
});

describe('vagent admin cache prune', { timeout: 30_000 }, () => {
  it('--dry-run changes nothing; prune evicts expired dynamic clips down to the cap, sparing recent ones', async () => {
    const before = JSON.parse((await cache(['stats', '--json'])).stdout) as Stats;
    const old = plant(40, 64 * 1024, 48); // 2.5 MiB unused for two days
    const recent = plant(4, 64 * 1024, 1); // used an hour ago: inside the 24 h window
    const env = { VAGENT_AUDIO_CACHE_MAX_MB: '1' };
    const planted = JSON.parse((await cache(['stats', '--json'], env)).stdout) as Stats;
    expect(planted.dynamic.clips).toBe(before.dynamic.clips + 44);
    expect(planted.over_cap_bytes).toBeGreaterThan(0);
    // The daemon is pre-synthesising the example agents meanwhile: static clips only grow.
    const audio = path.join(daemon.stateDir, 'audio');
    const statics = () =>
      fs
        .readdirSync(audio)
        .filter((f) => f.endsWith('.wav'))
        .map((f) => path.join(audio, f));

    const dry = await cache(['prune', '--dry-run', '--json'], env);
    expect(dry.code, dry.stderr).toBe(0);
    const d = JSON.parse(dry.stdout) as { dry_run: boolean; removed: number; dynamic_bytes_after: number };
    expect(d.dry_run).toBe(true);
    expect(d.removed).toBeGreaterThan(0);
    expect([...old, ...recent].every((f) => fs.existsSync(f))).toBe(true);
    expect((JSON.parse((await cache(['stats', '--json'], env)).stdout) as Stats).dynamic).toEqual(planted.dynamic);
    const dryText = await cache(['prune', '--dry-run'], env);
    expect(dryText.stdout).toMatch(/would remove \d+ dynamic clips/);

    const staticBefore = statics();
    const run = await cache(['prune', '--json'], env);
    expect(run.code, run.stderr).toBe(0);
    const r = JSON.parse(run.stdout) as { removed: number; dynamic_bytes_after: number };
    expect(r.removed).toBe(d.removed);
    expect(r.dynamic_bytes_after).toBe(d.dynamic_bytes_after);
    expect(r.dynamic_bytes_after).toBeLessThanOrEqual(1024 * 1024);
    expect(recent.every((f) => fs.existsSync(f))).toBe(true);
    expect(old.filter((f) => !fs.existsSync(f))).toHaveLength(r.removed);
    expect(staticBefore.every((f) => fs.existsSync(f))).toBe(true); // static clips are never pruned
    const after = JSON.parse((await cache(['stats', '--json'], env)).stdout) as Stats;
    expect(after.dynamic.bytes).toBe(r.dynamic_bytes_after);
  });

  it('rejects unknown flags with exit 2, and a missing state dir with exit 1', async () => {
    for (const args of [
      ['prune', '--force'],
      ['stats', '--dry-run'],
      ['prune', '--cap', '5'],
    ]) {
      const res = await cache(args);
      expect(res.code, args.join(' ')).toBe(2);
      expect(res.stderr).toContain('unknown option');
    }
    const missing = path.join(tempDir(), 'typo');
    for (const sub of ['stats', 'prune']) {
      const res = await runCli(['admin', 'cache', sub, '--state-dir', missing]);
      expect(res.code).toBe(1);
      expect(res.stderr).toContain(`no vagent state dir at ${missing}`);
      expect(fs.existsSync(missing)).toBe(false);
    }
    const bad = await cache(['stats'], { VAGENT_AUDIO_CACHE_MAX_MB: '-5' });
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('audio_cache_max_mb');
  });
});
