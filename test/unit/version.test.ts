/**
 * `vagent --version`: `vagent 0.1.0 (node vX, commit abc1234)`, the commit
 * from git in a checkout, else recorded at build time, else `unknown` — never a failure.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { buildCommit, vagentVersion, versionLine } from '../../src/version.js';
import { ROOT } from '../support/daemon.js';

const dirs: string[] = [];
const temp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-version-'));
  dirs.push(d);
  return d;
};
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

describe('buildCommit', () => {
  it("is the checkout's HEAD from git", () => {
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' }).trim();
    expect(buildCommit(ROOT)).toBe(head);
  });

  it('is the commit recorded at build time outside a checkout', () => {
    const root = temp();
    fs.mkdirSync(path.join(root, 'dist'));
    fs.writeFileSync(path.join(root, 'dist', 'build-info.json'), JSON.stringify({ commit: 'abc1234' }));
    expect(buildCommit(root)).toBe('abc1234');
  });

  it('is unknown without git or a record, or with a broken one, and never throws', () => {
    expect(buildCommit(temp())).toBe('unknown');
    const broken = temp();
    fs.mkdirSync(path.join(broken, 'dist'));
    fs.writeFileSync(path.join(broken, 'dist', 'build-info.json'), '{not json');
    fs.writeFileSync(path.join(broken, '.git'), 'gitdir: /nonexistent/elsewhere\n');
    expect(buildCommit(broken)).toBe('unknown');
  });
});

describe('versionLine', () => {
  it('names vagent, Node.js and the commit', () => {
    expect(vagentVersion()).toBe('0.1.0');
    const root = temp();
    expect(versionLine(root)).toBe(`vagent 0.1.0 (node ${process.version}, commit unknown)`);
  });
});
