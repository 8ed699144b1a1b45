/**
 * `npm run fake-llm` (dist/devtools/fake-llm-main.js) as a new user runs it: it prints the exports
 * vagent needs, answers the chat-completions adapter configured from them (scripted rules from a
 * YAML file, the default reply otherwise), and stops on SIGTERM; a bad rules file exits 2.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAIChatModel } from '../../src/adapters/llm/openai-chat.js';
import { startFakeCli, stopFakeClis } from '../support/fake-cli.js';

let dir: string | undefined;
afterEach(() => {
  stopFakeClis();
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('fake-llm CLI', () => {
  it('prints the exports and answers the adapter from its rules file, else from the prompt', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-llm-'));
    const rules = path.join(dir, 'rules.yaml');
    writeFileSync(rules, '- match: refund\n  reply: Refunds take five working days.\n');
    const fake = startFakeCli('fake-llm', ['--port', '0', '--rules', rules]);
    const vars = await fake.exports(['VAGENT_LLM_BASE_URL', 'VAGENT_LLM_MODEL']);
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
    for (let i = 0; i < 100 && !/rule=default/.test(fake.stderr()); i++) await new Promise((r) => setTimeout(r, 20));
    const err = fake.stderr();
    expect(err).toMatch(/VAGENT_LLM_BASE_URL=http:\/\/127\.0\.0\.1:\d+\/v1 VAGENT_LLM_MODEL=fake-llm vagent serve/);
    expect(err).toMatch(/\[fake-llm\] 200 plain rule=0 prompt=\d+ cached=0 completion=\d+/);
    expect(err).toMatch(/\[fake-llm\] 200 plain rule=default/);
    expect(await fake.stop()).toBe(0);
  }, 30_000);

  it('exits 2 with the usage on a bad dialect or rules file', async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'fake-llm-'));
    const rules = path.join(dir, 'rules.yaml');
    writeFileSync(rules, '- match: "("\n');
    for (const args of [
      ['--dialect', 'gpt'],
      ['--rules', rules],
    ]) {
      const fake = startFakeCli('fake-llm', ['--port', '0', ...args]);
      expect(await fake.exited, args.join(' ')).toBe(2);
      const err = fake.stderr();
      expect(err).toMatch(args[0] === '--dialect' ? /--dialect must be openai or llamacpp/ : /rule 0: match is not a regular expression/);
      expect(err).toMatch(/usage:/);
    }
  });
});
