/**
 * `vagent agent test` with the operator's language model (docs/agent-tests.md "The language
 * model"): the `llm` settings `vagent serve` reads (here VAGENT_LLM_* pointing at the fake
 * OpenAI-compatible server) are used by agents with an `llm` block, the run names the model,
 * and `--no-llm` turns it off.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeLlm, type FakeLlm } from '../../src/devtools/fake-llm.js';
import { cleanupAll, requireBuild, ROOT, runCli, tempDir } from '../support/daemon.js';

const TIMEOUT = { timeoutMs: 60_000 };
let fake: FakeLlm;

/** A scenario file beside a copy of the clinic agent: an off-script question at the day step. */
function scenarioFile(): string {
  const dir = tempDir('vagent-agent-test-llm-');
  fs.copyFileSync(path.join(ROOT, 'config', 'agents', 'ag_clinic_booking.yaml'), path.join(dir, 'clinic.yaml'));
  const file = path.join(dir, 'clinic.test.yaml');
  fs.writeFileSync(
    file,
    `agent: clinic.yaml
now: "2026-11-20T10:00:00+05:30"
scenarios:
  - name: asks about UPI at the day step
    turns:
      - caller: "Priya Sharma"
        expect: { step: name }
      - caller: "yes"
        expect: { step: day }
      - caller: "do you take UPI?"
        expect: { layer: llm, llm_used: true, step: day, reply_contains: "Which day" }
`,
  );
  return file;
}

beforeAll(async () => {
  requireBuild();
  fake = await startFakeLlm({ rules: [{ match: 'UPI', reply: 'Yes, we take UPI at the front desk.' }] });
});
afterAll(async () => {
  await fake?.close();
  cleanupAll();
});

describe('vagent agent test and the language model', { timeout: 120_000 }, () => {
  it("uses the operator's llm settings (VAGENT_LLM_*), names the model, and the llm layer answers", async () => {
    const file = scenarioFile();
    const env = { VAGENT_LLM_BASE_URL: fake.url, VAGENT_LLM_MODEL: 'gpt-4o-mini' };
    const r = await runCli(['agent', 'test', file], { ...TIMEOUT, env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`language model: gpt-4o-mini at ${new URL(fake.url).host}`);
    expect(r.stdout).toContain('✓ asks about UPI at the day step');

    const json = await runCli(['agent', 'test', file, '--json'], { ...TIMEOUT, env });
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout) as {
      llm: { model: string; host: string };
      files: Array<{ scenarios: Array<{ turns: Array<{ reply: string; layer: string; llm_used: boolean; cost_inr: number }> }> }>;
    };
    expect(report.llm).toEqual({ model: 'gpt-4o-mini', host: new URL(fake.url).host });
    const turn = report.files[0]!.scenarios[0]!.turns[2]!;
    expect(turn).toMatchObject({ layer: 'llm', llm_used: true });
    expect(turn.reply).toContain('Yes, we take UPI at the front desk.');
    expect(turn.cost_inr).toBeGreaterThan(0);
  });

  it('--no-llm calls no model: the same scenario fails at the question, re-prompted by the rules', async () => {
    const file = scenarioFile();
    const seen = fake.requests.length;
    const r = await runCli(['agent', 'test', file, '--no-llm'], { ...TIMEOUT, env: { VAGENT_LLM_BASE_URL: fake.url } });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('language model: off (--no-llm)');
    expect(r.stdout).toMatch(/turn 3: layer: expected "llm", got "reprompt"/);
    expect(fake.requests.length).toBe(seen);
  });

  it('without llm settings the run says no model is configured, and bad llm settings are bad input (exit 2)', async () => {
    const file = scenarioFile();
    const none = await runCli(['agent', 'test', file], TIMEOUT);
    expect(none.code).toBe(1);
    expect(none.stdout).toContain('language model: none configured');
    const bad = await runCli(['agent', 'test', file], { ...TIMEOUT, env: { VAGENT_LLM_BASE_URL: 'ftp://user:secret@example.com' } });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('llm.base_url');
    expect(bad.stderr).not.toContain('secret');
    expect(bad.stdout).toBe('');
  });
});
