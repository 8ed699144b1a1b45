/**
 * The development commands an operator runs while trying vagent out: `npm run fake-livekit`
 * (and the other fakes) build only when dist/ is older than the sources, through the same
 * stamp as install.sh (tools/build-stamp.mjs), and the fake says that `vagent serve` must be
 * started again with the settings it prints.
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-dev-commands-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A project with this repository's tools/build-stamp.mjs and a build that counts its runs in builds.log. */
function tinyProject(): string {
  const root = fs.mkdtempSync(path.join(dir, 'project-'));
  fs.mkdirSync(path.join(root, 'tools'));
  fs.copyFileSync(path.join(ROOT, 'tools', 'build-stamp.mjs'), path.join(root, 'tools', 'build-stamp.mjs'));
  fs.mkdirSync(path.join(root, 'src'));
  fs.writeFileSync(path.join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  fs.writeFileSync(path.join(root, 'tsconfig.json'), '{}\n');
  fs.writeFileSync(path.join(root, 'package-lock.json'), '{}\n');
  fs.writeFileSync(
    path.join(root, 'build.mjs'),
    [
      "import fs from 'node:fs';",
      "fs.appendFileSync('builds.log', 'built\\n');",
      "fs.mkdirSync('dist/cli', { recursive: true });",
      "fs.writeFileSync('dist/cli/main.js', '');",
    ].join('\n'),
  );
  fs.writeFileSync(
    path.join(root, 'package.json'),
    JSON.stringify({
      name: 'tiny',
      private: true,
      type: 'module',
      scripts: { build: 'node build.mjs', postbuild: 'node tools/build-stamp.mjs --write' },
    }),
  );
  return root;
}

/** Runs tools/build-stamp.mjs in `root`; returns its exit code. */
function stamp(root: string, mode: string): number {
  try {
    execFileSync(process.execPath, [path.join(root, 'tools', 'build-stamp.mjs'), mode], { cwd: root, stdio: 'pipe' });
    return 0;
  } catch (err) {
    return (err as { status: number }).status;
  }
}
const builds = (root: string) =>
  fs.existsSync(path.join(root, 'builds.log'))
    ? fs.readFileSync(path.join(root, 'builds.log'), 'utf8').split('\n').filter(Boolean).length
    : 0;

describe('build once: tools/build-stamp.mjs', { timeout: 60_000 }, () => {
  it('--ensure builds when dist/ is missing or older than the sources, and only then', () => {
    const root = tinyProject();
    expect(stamp(root, '--check')).toBe(1);
    expect(stamp(root, '--ensure')).toBe(0);
    expect(builds(root)).toBe(1);
    expect(stamp(root, '--check')).toBe(0);
    expect(stamp(root, '--ensure')).toBe(0);
    expect(builds(root)).toBe(1);
    fs.writeFileSync(path.join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    expect(stamp(root, '--check')).toBe(1);
    expect(stamp(root, '--ensure')).toBe(0);
    expect(builds(root)).toBe(2);
    fs.writeFileSync(path.join(root, 'package-lock.json'), '{"lockfileVersion": 3}\n');
    expect(stamp(root, '--ensure')).toBe(0);
    expect(builds(root)).toBe(3);
  });

  it('the fakes and install.sh build through it; every npm build records the stamp', () => {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    for (const fake of ['fake-livekit', 'fake-deepgram', 'fake-sarvam', 'fake-llm', 'fake-elevenlabs']) {
      expect(pkg.scripts[fake], fake).toMatch(/^node tools\/build-stamp\.mjs --ensure && node dist\/devtools\/fake-[a-z]+-main\.js$/);
    }
    expect(pkg.scripts.postbuild).toContain('node tools/build-stamp.mjs --write');
    expect(fs.readFileSync(path.join(ROOT, 'install.sh'), 'utf8')).toContain('node tools/build-stamp.mjs --check');
  });
});

describe('npm run fake-livekit', () => {
  it('says to start vagent serve again with the settings it prints', { timeout: 20_000 }, async () => {
    const main = path.join(ROOT, 'dist', 'devtools', 'fake-livekit-main.js');
    expect(fs.existsSync(main), 'build dist/ first (npm run build)').toBe(true);
    const child = spawn(process.execPath, [main, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      const deadline = Date.now() + 10_000;
      while (!/stop it and start it again/.test(err)) {
        if (Date.now() > deadline) throw new Error(`no restart note; stderr: ${err}`);
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(
        out
          .trim()
          .split('\n')
          .filter((l) => l.startsWith('export ')),
      ).toHaveLength(4);
      expect(err).toMatch(/start vagent serve in a shell with the 4 export lines above/);
      expect(err).toMatch(/a vagent serve already running reads its settings only at start: stop it and start it again/);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
