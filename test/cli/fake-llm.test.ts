/**
 * `npm run fake-llm` (dist/devtools/fake-llm-main.js) as a new user runs it: it prints the exports
 * vagent needs, answers the chat-completions adapter configured from them (scripted rules from a
 * YAML file, the default reply otherwise), and stops on SIGTERM; a bad rules file exits 2.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIChatModel } from '../../src/adapters/llm/openai-chat.js';
import { ROOT, requireBuild } from '../support/daemon.js';

const MAIN = path.join(ROOT, 'dist', 'devtools', 'fake-llm-main.js');
let child: ChildProcess | undefined;
let dir: string | undefined;
afterEach(() => {
  child?.kill('SIGTERM');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Reads stdout until both export lines arrived. */
function exportsOf(proc: ChildProcess): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const vars = Object.fromEntries([...out.matchAll(/^export (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
      if (vars.VAGENT_LLM_BASE_URL && vars.VAGENT_LLM_MODEL) resolve(vars);
    });
    proc.once('exit', (code) => reject(new Error(`fake-llm exited with ${code}: ${out}`)));
  });
}

describe('fake-llm CLI', () => {
  it('prints the exports and answers the adapter from its rules file, else from the prompt', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-llm-'));
    const rules = path.join(dir, 'rules.yaml');
    writeFileSync(rules, '- match: refund\n  reply: Refunds take five working days.\n');
    child = spawn(process.execPath, [MAIN, '--port', '0', '--rules', rules], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
    const vars = await exportsOf(child);
    expect(vars.VAGENT_LLM_BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(vars.VAGENT_LLM_MODEL).toBe('fake-llm');
    const lm = new OpenAIChatModel({ baseURL: vars.VAGENT_LLM_BASE_URL!, model: vars.VAGENT_LLM_MODEL! });
    const ask = (q: string) =>
      lm.complete({
        model: 'fake-llm',
        messages: [
          { role: 'system', content: 'We accept cash and UPI. We close at 6 pm.' },
          { role: 'user', content: q },
        ],
        timeoutMs: 5000,
      });
    expect((await ask('how long does a refund take?')).text).toBe('Refunds take five working days.');
    expect((await ask('do you take UPI?')).text).toBe('We accept cash and UPI.');
    // The request lines reach stderr just after the answers.
    for (let i = 0; i < 100 && !/rule=default/.test(err); i++) await new Promise((r) => setTimeout(r, 20));
    expect(err).toMatch(/VAGENT_LLM_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 VAGENT_LLM_MODEL=fake-llm vagent serve/);
    expect(err).toMatch(/\[fake-llm\] 200 plain rule=0 prompt=\d+ cached=0 completion=\d+/);
    expect(err).toMatch(/\[fake-llm\] 200 plain rule=default/);
    const exited = new Promise<number | null>((resolve) => child!.once('exit', resolve));
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    child = undefined;
  }, 30_000);

  it('exits 2 with the usage on a bad dialect or rules file', async () => {
    requireBuild();
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-llm-'));
    const rules = path.join(dir, 'rules.yaml');
    writeFileSync(rules, '- match: "("\n');
    for (const args of [
      ['--dialect', 'gpt'],
      ['--rules', rules],
    ]) {
      child = spawn(process.execPath, [MAIN, '--port', '0', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      child.stderr!.on('data', (b: Buffer) => (err += b.toString()));
      const code = await new Promise<number | null>((resolve) => child!.once('exit', resolve));
      expect(code, args.join(' ')).toBe(2);
      expect(err).toMatch(args[0] === '--dialect' ? /--dialect must be openai or llamacpp/ : /rule 0: match is not a regular expression/);
      expect(err).toMatch(/usage:/);
    }
    child = undefined;
  });
});
