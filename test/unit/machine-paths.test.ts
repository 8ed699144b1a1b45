/**
 * Nothing committed names a path of one machine: data beside the checkout
 * is found relative to the repository or through an environment variable, never
 * by an absolute path that only exists on the machine where the file was written.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/daemon.js';

/** Top-level directories whose absolute paths belong to one machine: home and work directories. */
const MACHINE_DIRS = ['work', 'root', 'home', 'Users'];

/**
 * An absolute path into one of {@link MACHINE_DIRS} at the start of a path (not inside a URL,
 * and not a relative path). Built from the names, so that this file holds no such path itself.
 */
const MACHINE_PATH = new RegExp(`(?<![\\w.:/~-])/(?:${MACHINE_DIRS.join('|')})/[\\w.-]`);

/** The machine paths in `text`, one `LINE: text` per line holding one. */
export function machinePaths(text: string): string[] {
  return text.split('\n').flatMap((line, i) => (MACHINE_PATH.test(line) ? [`${i + 1}: ${line.trim()}`] : []));
}

describe('machine paths', () => {
  it('recognises an absolute home or work path but not a URL path or a relative one', () => {
    // Built from parts, so that this file does not hold the paths it looks for.
    const abs = (p: string) => `/${p}`;
    expect(machinePaths(`const f = '${abs('work/shared/data/x.jsonl')}';`)).toHaveLength(1);
    expect(machinePaths(`see ${abs('home/op/notes')}`)).toHaveLength(1);
    expect(machinePaths(`(\`${abs('root/.cache')}\`)`)).toHaveLength(1);
    expect(machinePaths(`https://example.in${abs('home/x')} and ../data/x and ./cache/y`)).toEqual([]);
  });

  it('no file tracked by git names one', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
    expect(files.length).toBeGreaterThan(50);
    const found: string[] = [];
    for (const file of files) {
      const full = path.join(ROOT, file);
      if (!fs.existsSync(full) || !fs.statSync(full).isFile()) continue;
      const buf = fs.readFileSync(full);
      if (buf.includes(0)) continue; // binary
      for (const hit of machinePaths(buf.toString('utf8'))) found.push(`${file}:${hit}`);
    }
    expect(found).toEqual([]);
  });
});
