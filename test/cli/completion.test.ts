/**
 * `vagent completion bash` sourced in a real bash, and `vagent --version`
 * through the built binary.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, requireBuild, ROOT, runCli, tempDir } from '../support/daemon.js';

let script: string;

beforeAll(async () => {
  requireBuild();
  const res = await runCli(['completion', 'bash']);
  expect(res.code, res.stderr).toBe(0);
  script = path.join(tempDir(), 'vagent.bash');
  fs.writeFileSync(script, res.stdout);
}, 30_000);
afterAll(cleanupAll);

/** COMPREPLY after sourcing the script and completing the last of `words` (as typed so far). */
function complete(...words: string[]): string[] {
  const out = execFileSync(
    'bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); _vagent; printf "%s\\n" "${COMPREPLY[@]}"',
      'bash',
      script,
      ...words,
    ],
    { encoding: 'utf8', cwd: path.dirname(script) },
  );
  return out.split('\n').filter(Boolean);
}

describe('vagent completion bash', { timeout: 30_000 }, () => {
  it('passes bash -n and registers _vagent for vagent', () => {
    execFileSync('bash', ['-n', script]);
    const registered = execFileSync('bash', ['--norc', '-c', 'source "$1"; complete -p vagent', 'bash', script], {
      encoding: 'utf8',
    });
    expect(registered.trim()).toBe('complete -o default -F _vagent vagent');
  });

  it('completes commands, subcommands (and aliases) and options', () => {
    expect(complete('vagent', 'tr')).toEqual(['trunk']);
    expect(complete('vagent', 'te')).toEqual(['telephony']);
    expect(complete('vagent', 'trunk', '')).toEqual(expect.arrayContaining(['add', 'list', 'ls', 'show', 'rm', 'remove', '--json']));
    expect(complete('vagent', 'admin', 'key', 'c')).toEqual(['create']);
    expect(complete('vagent', 'admin', 'key', 'create', '--t')).toEqual(['--tenant']);
    expect(complete('vagent', 'admin', 'cache', '')).toEqual(expect.arrayContaining(['stats', 'prune']));
    expect(complete('vagent', 'admin', 'cache', 'prune', '--d')).toEqual(['--dry-run']);
    expect(complete('vagent', 'admin', 'db', '')).toEqual(expect.arrayContaining(['stats', 'vacuum']));
    expect(complete('vagent', 'admin', 'db', 'vacuum', '--st')).toEqual(['--state-dir']);
    expect(complete('vagent', 'trunk', 'ls', '--j')).toEqual(['--json']);
    expect(complete('vagent', '--json', 'call', 'list', '--st')).toEqual(['--status']);
    expect(complete('vagent', 'completion', '')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
    expect(complete('vagent', 'carrier', '')).toEqual(expect.arrayContaining(['set', 'list', 'ls', 'rm', 'remove', 'token']));
    expect(complete('vagent', 'carrier', 'set', '')).toEqual(expect.arrayContaining(['twilio', 'plivo', 'exotel']));
    expect(complete('vagent', 'carrier', 'set', 'plivo', '--auth-')).toEqual(['--auth-id', '--auth-token-stdin']);
  });

  it('offers file names after an option that takes a value', () => {
    fs.writeFileSync(path.join(path.dirname(script), 'agents.yaml'), '');
    expect(complete('vagent', 'agent', 'apply', '-f', 'agen')).toEqual(['agents.yaml']);
    expect(complete('vagent', 'serve', '--config', 'agen')).toEqual(['agents.yaml']);
  });

  it('refuses an unknown shell with exit 2', async () => {
    const res = await runCli(['completion', 'tcsh']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('Allowed choices are bash, zsh, fish');
  });
});

describe('vagent --version', { timeout: 30_000 }, () => {
  it('prints vagent, Node.js and the commit of the checkout, exit 0', async () => {
    const head = execFileSync('git', ['-C', ROOT, 'rev-parse', '--short=7', 'HEAD'], { encoding: 'utf8' }).trim();
    for (const flag of ['--version', '-v']) {
      const res = await runCli([flag]);
      expect(res.code, res.stderr).toBe(0);
      expect(res.stdout).toBe(`vagent 0.1.0 (node ${process.version}, commit ${head})\n`);
    }
  });
});
