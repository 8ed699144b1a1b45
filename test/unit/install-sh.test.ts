/**
 * install.sh in a temp copy of the checkout with a fake `npm` first on the
 * PATH: a second run skips the build when src/, tsconfig*.json and the lock are unchanged, a
 * `vagent` link of another checkout is not repointed without --force (and is named either way; the
 * install itself succeeds),
 * and npm is never handed a nodedir config it warns about ("Unknown env config"); pocketsphinx is
 * installed with apt-get as root, else the note says how (a fake apt-get and id on the PATH).
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/daemon.js';

let base: string;
let copy: string;
let globalPrefix: string;
let log: string;
let link: string;

/** A fake npm: logs its arguments and npm_* environment, answers the questions install.sh asks. */
const FAKE_NPM = `#!/usr/bin/env bash
printf 'npm %s\\n' "$*" >> "$FAKE_NPM_LOG"
env | grep -i '^npm_' | sed 's/^/env /' >> "$FAKE_NPM_LOG" || true
case "$1" in
  config) echo undefined ;;
  prefix) echo "$FAKE_NPM_PREFIX" ;;
  run) mkdir -p dist/cli && echo 'export {};' > dist/cli/main.js ;;
esac
`;

/** A fake apt-get: logs its arguments; `install` "installs" the model into VAGENT_POCKETSPHINX_MODEL unless FAKE_APT_FAIL is set. */
const FAKE_APT = `#!/usr/bin/env bash
printf 'apt-get %s\\n' "$*" >> "$FAKE_NPM_LOG"
[ -n "$FAKE_APT_FAIL" ] && exit 100
if [ "$1" = install ]; then mkdir -p "$VAGENT_POCKETSPHINX_MODEL/en-us" && touch "$VAGENT_POCKETSPHINX_MODEL/en-us/mdef" "$VAGENT_POCKETSPHINX_MODEL/cmudict-en-us.dict"; fi
`;

function run(...args: string[]) {
  return runWith({}, ...args);
}

function runWith(extraEnv: Record<string, string>, ...args: string[]) {
  fs.writeFileSync(log, '');
  const res = spawnSync('bash', [path.join(copy, 'install.sh'), ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    // Nothing of the test's own npm environment (npx sets npm_config_* variables).
    env: {
      PATH: `${path.join(base, 'fakebin')}:${path.dirname(process.execPath)}:/usr/bin:/bin`,
      HOME: path.join(base, 'home'),
      FAKE_NPM_LOG: log,
      FAKE_NPM_PREFIX: globalPrefix,
      ...extraEnv,
    },
  });
  const calls = fs.readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { code: res.status, stdout: res.stdout, stderr: res.stderr, calls };
}

beforeAll(() => {
  base = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-install-'));
  copy = path.join(base, 'checkout');
  globalPrefix = path.join(base, 'global');
  log = path.join(base, 'npm.log');
  link = path.join(globalPrefix, 'bin', 'vagent');
  fs.mkdirSync(path.join(base, 'home'));
  fs.mkdirSync(path.join(base, 'fakebin'));
  fs.writeFileSync(path.join(base, 'fakebin', 'npm'), FAKE_NPM, { mode: 0o755 });
  fs.writeFileSync(path.join(base, 'fakebin', 'apt-get'), FAKE_APT, { mode: 0o755 });
  fs.writeFileSync(path.join(base, 'fakebin', 'id'), '#!/bin/sh\necho "${FAKE_UID:-1000}"\n', { mode: 0o755 });
  fs.writeFileSync(path.join(base, 'fakebin', 'pocketsphinx_continuous'), '#!/bin/sh\nexit 1\n', { mode: 0o755 });

  fs.mkdirSync(copy);
  for (const f of ['install.sh', 'package.json', 'package-lock.json', 'tsconfig.json', 'tsconfig.build.json']) {
    fs.copyFileSync(path.join(ROOT, f), path.join(copy, f));
  }
  fs.cpSync(path.join(ROOT, 'src'), path.join(copy, 'src'), { recursive: true });
  fs.cpSync(path.join(ROOT, 'tools'), path.join(copy, 'tools'), { recursive: true });
  fs.mkdirSync(path.join(copy, 'bin'));
  fs.writeFileSync(path.join(copy, 'bin', 'vagent'), '#!/bin/sh\necho "vagent 0.1.0 (test copy)"\n', { mode: 0o755 });
  // Dependencies already installed for this lock and this node (install.sh's own stamp), with
  // the real better-sqlite3 so that its load check passes.
  fs.mkdirSync(path.join(copy, 'node_modules'));
  fs.symlinkSync(path.join(ROOT, 'node_modules', 'better-sqlite3'), path.join(copy, 'node_modules', 'better-sqlite3'));
  const want = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(copy, 'package-lock.json')))
    .update(process.version + process.arch)
    .digest('hex');
  fs.writeFileSync(path.join(copy, 'node_modules', '.vagent-install-stamp'), want);
});
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

describe('install.sh', { timeout: 120_000 }, () => {
  it('builds and links on the first run, without handing npm a nodedir config', () => {
    const res = run();
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain('dependencies: up to date');
    expect(res.calls).toContain('npm run --silent build');
    expect(fs.readlinkSync(link)).toBe(path.join(copy, 'bin', 'vagent'));
    expect(res.stdout).toContain(`installed: ${link} -> ${path.join(copy, 'bin', 'vagent')}`);
    // npm 11 warns "Unknown env config" / "Unknown cli config" for nodedir.
    expect(res.calls.filter((l) => /^env npm_config_nodedir=/i.test(l))).toEqual([]);
    expect(res.calls.filter((l) => l.startsWith('npm ') && l.includes('--nodedir'))).toEqual([]);
    // The headers beside this node still reach node-gyp, through a variable npm does not parse.
    const prefix = path.resolve(path.dirname(process.execPath), '..');
    if (
      fs.existsSync(path.join(prefix, 'include', 'node', 'node_api.h')) &&
      fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi'))
    ) {
      expect(res.calls).toContain(`env npm_package_config_node_gyp_nodedir=${prefix}`);
    }
  });

  it('skips the build on a second run with unchanged sources, and builds again after a change', () => {
    const again = run();
    expect(again.code, again.stderr).toBe(0);
    expect(again.calls).not.toContain('npm run --silent build');
    expect(again.stdout).toContain('build: up to date');
    expect(again.stdout).toContain(`installed: ${link} -> ${path.join(copy, 'bin', 'vagent')} (already)`);

    fs.appendFileSync(path.join(copy, 'src', 'version.ts'), '\n// changed\n');
    const changed = run();
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.calls).toContain('npm run --silent build');

    fs.appendFileSync(path.join(copy, 'tsconfig.json'), '\n');
    expect(run().calls).toContain('npm run --silent build');
    fs.rmSync(path.join(copy, 'dist'), { recursive: true });
    expect(run().calls).toContain('npm run --silent build');
    expect(run().calls).not.toContain('npm run --silent build');
  });

  it("leaves another checkout's vagent link alone without --force, naming it (exit 0); repoints it with --force", () => {
    const other = path.join(base, 'other-checkout', 'bin', 'vagent');
    fs.mkdirSync(path.dirname(other), { recursive: true });
    fs.writeFileSync(other, '#!/bin/sh\n', { mode: 0o755 });
    fs.rmSync(link);
    fs.symlinkSync(other, link);

    const refused = run();
    // This checkout is installed (exit 0); only the link stays, with a note naming it.
    expect(refused.code, refused.stderr).toBe(0);
    expect(refused.stderr).toContain(`${link} is a link to ${other}, not this checkout's ${path.join(copy, 'bin', 'vagent')}`);
    expect(refused.stderr).toContain('./install.sh --force');
    expect(fs.readlinkSync(link)).toBe(other);

    const forced = run('--force');
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`repointed: ${link} was a link to ${other}; now -> ${path.join(copy, 'bin', 'vagent')}`);
    expect(fs.readlinkSync(link)).toBe(path.join(copy, 'bin', 'vagent'));
  });

  it('repoints a link whose checkout is gone without --force, saying what it was', () => {
    const gone = path.join(base, 'removed-checkout', 'bin', 'vagent');
    fs.rmSync(link, { force: true });
    fs.symlinkSync(gone, link);
    const res = run();
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toContain(`repointed: ${link} was a link to ${gone} (missing); now -> ${path.join(copy, 'bin', 'vagent')}`);
    expect(fs.readlinkSync(link)).toBe(path.join(copy, 'bin', 'vagent'));
  });

  it('says how to install pocketsphinx when it is missing and it cannot install it (not root), and installs anyway', () => {
    const model = path.join(base, 'no-model-1');
    const res = runWith({ VAGENT_POCKETSPHINX_MODEL: model });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toContain('pocketsphinx is not installed, so speech recognition is off');
    expect(res.stderr).toContain('sudo apt-get install pocketsphinx pocketsphinx-en-us');
    expect(res.calls.filter((l) => l.startsWith('apt-get'))).toEqual([]);
    expect(fs.existsSync(model)).toBe(false);
  });

  it('installs pocketsphinx with apt-get as root, and only those two packages', () => {
    const model = path.join(base, 'no-model-2');
    const res = runWith({ VAGENT_POCKETSPHINX_MODEL: model, FAKE_UID: '0' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.calls.filter((l) => l.startsWith('apt-get'))).toEqual([
      'apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us',
    ]);
    expect(res.stdout).toContain('speech recognition: pocketsphinx installed');
    const again = runWith({ VAGENT_POCKETSPHINX_MODEL: model, FAKE_UID: '0' });
    expect(again.calls.filter((l) => l.startsWith('apt-get'))).toEqual([]);
    expect(again.stdout).toContain('speech recognition: pocketsphinx is installed');
  });

  it('when apt-get fails, updates the lists once, retries, then notes that recognition is off (exit 0)', () => {
    const res = runWith({ VAGENT_POCKETSPHINX_MODEL: path.join(base, 'no-model-3'), FAKE_UID: '0', FAKE_APT_FAIL: '1' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.calls.filter((l) => l.startsWith('apt-get'))).toEqual([
      'apt-get install -y --no-install-recommends pocketsphinx pocketsphinx-en-us',
      'apt-get update',
    ]);
    expect(res.stderr).toContain('pocketsphinx could not be installed; speech recognition is off');
  });

  it('refuses an unknown option', () => {
    const res = run('--frce');
    expect(res.code).toBe(1);
    expect(res.stderr).toContain('unknown option --frce');
  });
});
