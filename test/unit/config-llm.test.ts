/**
 * The language model's settings (`llm` in src/config/schema.ts, docs/llm.md "Settings"): their
 * defaults, the environment variables, bad values refused with the setting and its source named,
 * the API key taken from the environment only (refused in a file, never in a message), and the
 * start-up line.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { settingsEnvNames } from '../../src/config/env-names.js';
import { ConfigError, loadSettings } from '../../src/config/load.js';
import { llmNotice } from '../../src/config/notices.js';
import { NoLanguageModel } from '../../src/app/language-model.js';
import { OpenAIChatModel } from '../../src/adapters/llm/openai-chat.js';
import { openLanguageModel } from '../../src/daemon/language-model.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-config-llm-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const KEY = 'sk-live-DO-NOT-PRINT-1234567890';

function file(name: string, text: string): string {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text);
  return p;
}

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

describe('llm settings', () => {
  it('are off by default, with an 8 s deadline and 2 retries', async () => {
    const s = loadSettings({}, { HOME: '/srv/op' });
    expect(s.llm).toEqual({ timeout_ms: 5000, max_retries: 2 });
    expect(llmNotice(s.llm)).toMatch(/^llm: off/);
    expect(await openLanguageModel(s.llm)).toBeInstanceOf(NoLanguageModel);
  });

  it('come from the config file and from VAGENT_LLM_* (the environment wins)', async () => {
    const cfg = file('a.yaml', 'llm:\n  base_url: http://127.0.0.1:8080/v1\n  model: qwen2.5-7b\n  timeout_ms: 3000\n');
    expect(loadSettings({ config: cfg }, {}).llm).toEqual({
      base_url: 'http://127.0.0.1:8080/v1',
      model: 'qwen2.5-7b',
      timeout_ms: 3000,
      max_retries: 2,
    });
    const s = loadSettings(
      { config: cfg },
      {
        VAGENT_LLM_BASE_URL: 'https://api.groq.com/openai/v1',
        VAGENT_LLM_MODEL: 'llama-3.1-8b-instant',
        VAGENT_LLM_TIMEOUT_MS: '2500',
        VAGENT_LLM_MAX_RETRIES: '0',
        VAGENT_LLM_API_KEY: KEY,
      },
    );
    expect(s.llm).toEqual({
      base_url: 'https://api.groq.com/openai/v1',
      model: 'llama-3.1-8b-instant',
      timeout_ms: 2500,
      max_retries: 0,
      api_key: KEY,
    });
    expect(llmNotice(s.llm)).toBe('llm: llama-3.1-8b-instant at api.groq.com, requests time out after 2500 ms');
    expect(llmNotice(s.llm)).not.toContain(KEY);
    const lm = await openLanguageModel(s.llm);
    expect(lm).toBeInstanceOf(OpenAIChatModel);
    expect(lm.defaultModel).toBe('llama-3.1-8b-instant');
    for (const name of [
      'VAGENT_LLM_BASE_URL',
      'VAGENT_LLM_MODEL',
      'VAGENT_LLM_TIMEOUT_MS',
      'VAGENT_LLM_MAX_RETRIES',
      'VAGENT_LLM_API_KEY',
    ]) {
      expect(settingsEnvNames()).toContain(name);
    }
  });

  it('refuse bad values, naming the setting and where it came from', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [{ VAGENT_LLM_BASE_URL: 'not a url' }, /llm\.base_url: must be a URL .* \(from environment VAGENT_LLM_BASE_URL\)/],
      [{ VAGENT_LLM_BASE_URL: 'ftp://models.example.in/v1' }, /llm\.base_url: must start with https:\/\/ or http:\/\//],
      [{ VAGENT_LLM_BASE_URL: 'https://user:pw@api.example.in/v1' }, /llm\.base_url: must not hold a user or password/],
      [
        { VAGENT_LLM_TIMEOUT_MS: '50' },
        /llm\.timeout_ms: must be a whole number of ms from 100 to 120000 \(from environment VAGENT_LLM_TIMEOUT_MS\)/,
      ],
      [{ VAGENT_LLM_TIMEOUT_MS: 'soon' }, /llm\.timeout_ms: must be a whole number of ms/],
      [{ VAGENT_LLM_MAX_RETRIES: '11' }, /llm\.max_retries: must be a whole number from 0 to 10/],
      [{ VAGENT_LLM_MAX_RETRIES: '1.5' }, /llm\.max_retries: must be a whole number from 0 to 10/],
      [{ VAGENT_LLM_MODEL: 'x'.repeat(201) }, /llm\.model: must be at most 200 characters/],
    ];
    for (const [env, message] of cases)
      expect(
        refusal(() => loadSettings({}, env)),
        JSON.stringify(env),
      ).toMatch(message);
    const cfg = file('b.yaml', 'llm:\n  model: "   "\n');
    expect(refusal(() => loadSettings({ config: cfg }, {}))).toMatch(/llm\.model: must not be empty \(from config file/);
  });

  it('take the API key from VAGENT_LLM_API_KEY only: a key in the config file is refused without being shown', () => {
    const cfg = file('c.yaml', `llm:\n  base_url: https://api.openai.com/v1\n  api_key: ${KEY}\n`);
    const message = refusal(() => loadSettings({ config: cfg }, {}));
    expect(message).toMatch(/llm\.api_key: is read from the environment only/);
    expect(message).toContain('VAGENT_LLM_API_KEY');
    expect(message).not.toContain(KEY);
    const bad = refusal(() => loadSettings({}, { VAGENT_LLM_API_KEY: KEY, VAGENT_LLM_BASE_URL: 'nope' }));
    expect(bad).not.toContain(KEY);
  });
});
