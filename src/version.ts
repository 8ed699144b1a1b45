/**
 * vagent's version (package.json) and the build it runs from (`vagent --version`).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The package root: this module sits in `src/` or `dist/` right under it. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Written at build time (`npm run build`'s postbuild step) beside the compiled code. */
export const BUILD_INFO_FILE = path.join('dist', 'build-info.json');

let cached: string | undefined;

/** The `version` field of vagent's package.json. */
export function vagentVersion(): string {
  if (cached === undefined) {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string };
    cached = pkg.version;
  }
  return cached;
}

/**
 * The short commit (7+ hex digits) vagent runs from: from git when `root` is a checkout (a
 * `.git` directory or worktree file), else the one recorded at build time in
 * `dist/build-info.json`, else `unknown`. Never throws; git gets 2 s.
 */
export function buildCommit(root: string = ROOT): string {
  if (fs.existsSync(path.join(root, '.git'))) {
    try {
      const out = execFileSync('git', ['-C', root, 'rev-parse', '--short=7', 'HEAD'], {
        encoding: 'utf8',
        timeout: 2000,
        stdio: ['ignore', 'pipe', 'ignore'],
      }).trim();
      if (/^[0-9a-f]{7,40}$/.test(out)) return out;
    } catch {
      /* no git, or not a repository after all: try the recorded commit */
    }
  }
  try {
    const info = JSON.parse(fs.readFileSync(path.join(root, BUILD_INFO_FILE), 'utf8')) as { commit?: unknown };
    if (typeof info.commit === 'string' && /^[0-9a-f]{7,40}$/.test(info.commit)) return info.commit;
  } catch {
    /* not recorded */
  }
  return 'unknown';
}

/** `vagent 0.1.0 (node v20.19.0, commit abc1234)`: what `vagent --version` prints. */
export function versionLine(root: string = ROOT): string {
  return `vagent ${vagentVersion()} (node ${process.version}, commit ${buildCommit(root)})`;
}
