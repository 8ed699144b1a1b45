/**
 * What the README and docs say about the daemon agrees with the code: every setting the daemon
 * reads from the environment is in the README's "Settings" list, and docs/agents.md lists no
 * LLM layer while the daemon has none (docs/api-decisions.md: `llm_used` is always false).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { settingsEnvNames } from '../../src/config/env-names.js';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

describe('the README and docs agree with the code', () => {
  it("every environment setting of vagent serve is in the README's Settings list", () => {
    const readme = read('README.md');
    const settings = /^- \*\*Settings\*\*:([\s\S]*?)^- \*\*/m.exec(readme)?.[1];
    expect(settings, 'README.md has a "- **Settings**:" item').toBeDefined();
    const listed = new Set([...settings!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]));
    const names = settingsEnvNames();
    expect(names).toContain('VAGENT_LIVEKIT_WAIT_UNTIL_ANSWERED');
    expect(names.filter((n) => !listed.has(n))).toEqual([]);
  });

  it('docs/agents.md lists the LLM layer where the engine runs it, and the daemon reports when it was used', () => {
    expect(read('src/app/turn-record.ts')).toContain('llm_used: llm !== null');
    expect(read('src/engine/turn.ts')).toContain('return llmTurn(t, step);');
    expect(read('docs/api-decisions.md')).toContain('`llm_used` is true on a turn that sent the model a request');
    const layers = /Each caller turn goes through these layers[^]*?re-prompt\./.exec(read('docs/agents.md'))?.[0];
    expect(layers).toBeDefined();
    expect(layers).toMatch(/step\s+capture[^]*the language model[^]*→ re-prompt\./);
  });

  it('every file and folder docs/*.md and README.md name under src/ exists', () => {
    const docs = ['README.md', ...fs.readdirSync(path.join(ROOT, 'docs')).map((f) => `docs/${f}`)].filter((f) => f.endsWith('.md'));
    const missing = docs.flatMap((doc) =>
      [...read(doc).matchAll(/\bsrc\/[\w./-]*[\w/]/g)]
        .map((m) => m[0])
        .filter((p) => !fs.existsSync(path.join(ROOT, p)))
        .map((p) => `${doc}: ${p}`),
    );
    expect(missing).toEqual([]);
  });
});
