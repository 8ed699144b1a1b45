/**
 * install.sh's end, run for real with a temp HOME and npm's global prefix moved to a temp dir
 * (`npm_config_prefix`), so the real `vagent` on this machine's PATH is never touched: its last
 * line on stdout is the command that starts this checkout's daemon, right whether `vagent` on
 * the PATH is this checkout's or another's, and the README's quick start runs this checkout's.
 *
 * Everything before the link (dependencies, build, pocketsphinx) must already be done here, as
 * `.ci/run` and `npm test` leave it: the test checks that first and refuses to run an `npm ci`
 * or a rebuild under the other tests' feet.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, ROOT, tempDir } from '../support/daemon.js';

const INSTALL = path.join(ROOT, 'install.sh');
const OURS = path.join(ROOT, 'bin', 'vagent');

beforeAll(() => {
  const lock = fs.readFileSync(path.join(ROOT, 'package-lock.json'));
  const want = crypto
    .createHash('sha256')
    .update(lock)
    .update(process.version + process.arch)
    .digest('hex');
  const stamp = path.join(ROOT, 'node_modules', '.vagent-install-stamp');
  if (!fs.existsSync(stamp) || fs.readFileSync(stamp, 'utf8') !== want) {
    throw new Error("node_modules is not install.sh's for this package-lock.json: run ./install.sh first (as .ci/run does)");
  }
  const built = spawnSync(process.execPath, [path.join(ROOT, 'tools', 'build-stamp.mjs'), '--check']);
  if (built.status !== 0) throw new Error('dist/ is older than the sources: run npm run build first');
});
afterAll(cleanupAll);

/** A machine: a temp HOME, npm's global bin in it, and optionally another checkout's `vagent` linked there. */
function machine(opts: { other?: boolean } = {}) {
  const home = tempDir('vagent-install-home-');
  const prefix = path.join(home, 'npm-global');
  const bindir = path.join(prefix, 'bin');
  fs.mkdirSync(bindir, { recursive: true });
  const other = path.join(home, 'other-checkout', 'bin', 'vagent');
  fs.mkdirSync(path.dirname(other), { recursive: true });
  fs.writeFileSync(other, '#!/bin/sh\necho "vagent 9.9.9 (the other checkout)"\n', { mode: 0o755 });
  if (opts.other) fs.symlinkSync(other, path.join(bindir, 'vagent'));
  const env: NodeJS.ProcessEnv = {
    HOME: home,
    PATH: `${bindir}:${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
    npm_config_prefix: prefix,
    NO_COLOR: '1',
  };
  return { home, bindir, other, env, link: path.join(bindir, 'vagent') };
}

/** Runs install.sh from `cwd`; returns exit code, stdout, stderr and stdout's last line. */
function install(env: NodeJS.ProcessEnv, args: string[] = [], cwd = ROOT) {
  const res = spawnSync('bash', [INSTALL, ...args], { cwd, env, encoding: 'utf8', timeout: 120_000 });
  const lines = res.stdout.trimEnd().split('\n');
  return { code: res.status, stdout: res.stdout, stderr: res.stderr, last: lines[lines.length - 1] ?? '' };
}

/** Runs a shell line the way an operator would after install.sh, in `cwd`. */
const sh = (line: string, env: NodeJS.ProcessEnv, cwd = ROOT) => execFileSync('bash', ['-c', line], { cwd, env, encoding: 'utf8' }).trim();

/** The command of install.sh's last line ("… Start it with: CMD serve"). */
function startCommand(last: string): string {
  const m = /Start it with: (.+) serve$/.exec(last);
  expect(m, last).not.toBeNull();
  return m![1]!;
}

describe('install.sh ends with the command to run', { timeout: 180_000 }, () => {
  it("another checkout's vagent linked on the PATH: left alone, and the last line is bin/vagent serve, which runs this checkout", () => {
    const m = machine({ other: true });
    const res = install(m.env);
    expect(res.code, res.stderr).toBe(0);
    expect(fs.readlinkSync(m.link)).toBe(m.other);
    expect(res.stderr).toContain(`${m.link} is a link to ${m.other}, not this checkout's`);
    expect(res.last).toMatch(/^vagent \S+ \(node .*\) is ready\. Start it with: bin\/vagent serve$/);
    const cmd = startCommand(res.last);
    expect(sh(`${cmd} --version`, m.env)).toMatch(/^vagent 0\./);
    // What `vagent` runs there is still the other checkout's; the README's quick start puts this one first.
    expect(sh('vagent --version', m.env)).toContain('the other checkout');
    expect(sh('export PATH="$PWD/bin:$PATH"; command -v vagent; vagent --version', m.env).split('\n')).toEqual([
      OURS,
      expect.stringMatching(/^vagent 0\./),
    ]);
  });

  it("run from another directory, the command printed is this checkout's full path", () => {
    const m = machine({ other: true });
    const res = install(m.env, [], m.home);
    expect(res.code, res.stderr).toBe(0);
    expect(startCommand(res.last)).toBe(OURS);
    expect(sh(`${startCommand(res.last)} --version`, m.env, m.home)).toMatch(/^vagent 0\./);
  });

  it('--force repoints the link, says what it was, and the last line is vagent serve', () => {
    const m = machine({ other: true });
    const res = install(m.env, ['--force']);
    expect(res.code, res.stderr).toBe(0);
    expect(fs.readlinkSync(m.link)).toBe(OURS);
    expect(res.stdout).toContain(`repointed: ${m.link} was a link to ${m.other}; now -> ${OURS}`);
    expect(startCommand(res.last)).toBe('vagent');
    expect(sh('vagent --version', m.env)).toMatch(/^vagent 0\./);
    // Again: already this checkout's.
    const again = install(m.env);
    expect(again.stdout).toContain('(already)');
    expect(startCommand(again.last)).toBe('vagent');
  });

  it('no vagent yet: links it, and the last line is vagent serve', () => {
    const m = machine();
    const res = install(m.env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`installed: ${m.link} -> ${OURS}`);
    expect(startCommand(res.last)).toBe('vagent');
    expect(sh('vagent --version', m.env)).toMatch(/^vagent 0\./);
  });

  it("the README's quick start runs this checkout's vagent whatever is on the PATH", () => {
    const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const block = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toBeDefined();
    for (const other of [true, false]) {
      const m = machine({ other });
      // The block as written, with `vagent serve` asked only which vagent it is.
      const script = block!
        .replaceAll('./install.sh', `bash ${INSTALL}`)
        .replace(/vagent serve\b.*$/m, 'command -v vagent; vagent --version');
      const out = sh(script, m.env).split('\n');
      expect(out.slice(-2), `other vagent on the PATH: ${other}`).toEqual([OURS, expect.stringMatching(/^vagent 0\./)]);
    }
  });
});
