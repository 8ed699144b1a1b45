#!/usr/bin/env node
/**
 * The build stamp: one SHA-256 over the Node.js version and every file the TypeScript build
 * reads or depends on (src/, tsconfig*.json, package.json, package-lock.json), kept in
 * dist/.vagent-build-stamp, so that install.sh and the development fakes (`npm run
 * fake-livekit`, `fake-deepgram`, `fake-sarvam`) build only when dist/ is not already built
 * from exactly these sources.
 *
 *   node tools/build-stamp.mjs --check    exit 0 when dist/ is up to date, 1 when it is not
 *   node tools/build-stamp.mjs --write    record the sources' stamp as dist/'s (npm's postbuild)
 *   node tools/build-stamp.mjs --ensure   run `npm run build` unless dist/ is up to date
 *
 * The root is the directory above this file's. Plain JavaScript: it runs before anything is built.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = path.join(ROOT, 'dist', '.vagent-build-stamp');
/** A file every build makes: no stamp counts without it. */
const BUILT = path.join(ROOT, 'dist', 'cli', 'main.js');

/** The sources' stamp: hex SHA-256 over the Node.js version, then each file's path and bytes in path order. */
export function sourcesStamp(root = ROOT) {
  const files = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(path.relative(root, p));
    }
  };
  walk(path.join(root, 'src'));
  for (const f of fs.readdirSync(root)) if (/^tsconfig.*\.json$/.test(f)) files.push(f);
  files.push('package.json', 'package-lock.json');
  const h = crypto.createHash('sha256').update(process.version);
  for (const f of files.sort())
    h.update(`${f}\0`)
      .update(fs.readFileSync(path.join(root, f)))
      .update('\0');
  return h.digest('hex');
}

/** True when dist/ was built from the sources as they are now. */
export function upToDate() {
  if (!fs.existsSync(BUILT) || !fs.existsSync(STAMP)) return false;
  return fs.readFileSync(STAMP, 'utf8').trim() === sourcesStamp();
}

function main(mode) {
  if (mode === '--check') return upToDate() ? 0 : 1;
  if (mode === '--write') {
    fs.mkdirSync(path.dirname(STAMP), { recursive: true });
    fs.writeFileSync(STAMP, sourcesStamp());
    return 0;
  }
  if (mode === '--ensure') {
    if (upToDate()) return 0;
    process.stderr.write('build: dist/ is older than the sources; npm run build\n');
    // The build's own output goes to stderr: a fake's stdout carries only its export lines.
    const run = spawnSync('npm', ['run', '--silent', 'build'], { cwd: ROOT, stdio: ['ignore', process.stderr, process.stderr] });
    return run.status ?? 1;
  }
  process.stderr.write('usage: node tools/build-stamp.mjs --check | --write | --ensure\n');
  return 2;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) process.exitCode = main(process.argv[2]);
