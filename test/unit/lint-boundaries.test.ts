/**
 * The import boundaries of DESIGN.md §3, as encoded in eslint.config.js, fire on code that
 * crosses them and explain why; code that respects them passes.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** Lints `code` as if it were the file `file` (relative to the repo root). */
async function lint(file: string, code: string) {
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages;
}

/** The `no-restricted-imports` messages for `code` in `file`. */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  return (await lint(file, code)).filter((m) => m.ruleId === 'no-restricted-imports' && m.severity === 2).map((m) => m.message);
}

describe('import boundaries (eslint.config.js)', { timeout: 30_000 }, () => {
  it('src/domain may not touch the filesystem', async () => {
    const errors = await boundaryErrors('src/domain/x.ts', "import fs from 'node:fs';\nexport const read = fs.readFileSync;\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'node:fs'");
    expect(errors[0]).toContain('src/domain is the pure core (DESIGN.md §3)');
    expect(errors[0]).toContain('Take what you need as an injected dependency.');
  });

  it('src/domain may not import upward', async () => {
    const errors = await boundaryErrors(
      'src/domain/x.ts',
      "import { createServices } from '../services/index.js';\nexport const c = createServices;\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('must not import upward');
  });

  it('src/services reach SQLite only through src/store', async () => {
    const errors = await boundaryErrors(
      'src/services/x.ts',
      "import Database from 'better-sqlite3';\nexport const open = () => new Database(':memory:');\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'better-sqlite3'");
    expect(errors[0]).toContain('src/services reach SQLite only through src/store repositories');
  });

  it('src/cli may not open SQLite', async () => {
    const errors = await boundaryErrors(
      'src/cli/x.ts',
      "import Database from 'better-sqlite3';\nexport const open = () => new Database(':memory:');\n",
    );
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("The CLI reaches state only through the daemon's HTTP API (src/client)");
  });

  it('src/cli may not import the HTTP app', async () => {
    const errors = await boundaryErrors('src/cli/x.ts', "import { buildApp } from '../server/app.js';\nexport const b = buildApp;\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain("'../server/app.js'");
    expect(errors[0]).toContain('The CLI talks to the daemon over HTTP (src/client), not to its routes');
  });

  it('src/cli may not import src/store', async () => {
    const errors = await boundaryErrors('src/cli/x.ts', "import { openRepos } from '../store/index.js';\nexport const o = openRepos;\n");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('The CLI reaches state only');
  });

  it('src/media may use domain and speech utilities, never services, store or the server', async () => {
    expect(
      await lint(
        'src/media/x.ts',
        "import { clipSamples } from '../speech/wav.js';\nimport { ApiError } from '../domain/errors.js';\nexport const x = [clipSamples, ApiError];\n",
      ),
    ).toEqual([]);
    for (const code of [
      "import { createServices } from '../services/index.js';\nexport const c = createServices;\n",
      "import { openRepos } from '../store/index.js';\nexport const o = openRepos;\n",
      "import Database from 'better-sqlite3';\nexport const D = Database;\n",
    ]) {
      const errors = await boundaryErrors('src/media/x.ts', code);
      expect(errors).toHaveLength(1);
      expect(errors[0]).toContain('src/media');
    }
  });

  it('allowed imports pass: domain errors in services, the client in the CLI, fs in the store', async () => {
    const services = await lint(
      'src/services/x.ts',
      "import { ApiError } from '../domain/errors.js';\nexport const e = new ApiError('not_found', 'x');\n",
    );
    expect(services).toEqual([]);
    const cli = await lint('src/cli/x.ts', "import { VagentClient } from '../client/index.js';\nexport const c = VagentClient;\n");
    expect(cli).toEqual([]);
    const store = await boundaryErrors(
      'src/store/x.ts',
      "import fs from 'node:fs';\nimport Database from 'better-sqlite3';\nexport const x = [fs, Database];\n",
    );
    expect(store).toEqual([]);
  });

  it('the same import is judged by where it is: better-sqlite3 is fine in src/store only', async () => {
    const code = "import Database from 'better-sqlite3';\nexport const D = Database;\n";
    const counts = await Promise.all(
      ['src/store/x.ts', 'src/services/x.ts', 'src/server/x.ts', 'src/cli/x.ts', 'src/client/x.ts'].map(
        async (f) => (await boundaryErrors(f, code)).length,
      ),
    );
    expect(counts).toEqual([0, 1, 1, 1, 1]);
  });
});
