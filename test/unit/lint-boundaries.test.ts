/**
 * The layers of docs/architecture.md "Layers", as eslint.layers.js encodes them: in every folder
 * of src/, an import the folder does not list fails lint with a message that says why and cites
 * docs/architecture.md, and an import it lists passes.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ESLint } from 'eslint';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** A layer of eslint.layers.js: its folder under src/, and the folders it may import besides its own. */
interface Layer {
  folder: string;
  may: string[];
}
/** The layers and known crossings, read from eslint.layers.js itself (a plain JS module, loaded by path). */
const { LAYERS, KNOWN_CROSSINGS } = (await import(pathToFileURL(path.join(ROOT, 'eslint.layers.js')).href)) as {
  LAYERS: Layer[];
  KNOWN_CROSSINGS: { files: string[]; may: string[] }[];
};
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

/** The `no-restricted-imports` errors of a file `file` (relative to the repo root) that imports `specifier`. */
async function boundaryErrors(file: string, specifier: string): Promise<string[]> {
  const code = `import * as m from '${specifier}';\nexport const x = m;\n`;
  const [result] = await eslint.lintText(code, { filePath: path.join(ROOT, file) });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-imports' && m.severity === 2).map((m) => m.message);
}

/**
 * Per folder: a file in it, an import it does not list (a folder above it, or a package it must
 * not use), and one it lists.
 */
const CASES: { file: string; refused: string; allowed: string }[] = [
  { file: 'src/x.ts', refused: './domain/errors.js', allowed: 'node:fs' },
  { file: 'src/domain/x.ts', refused: 'node:fs', allowed: 'zod' },
  { file: 'src/domain/x.ts', refused: '../engine/turn.js', allowed: './errors.js' },
  { file: 'src/contract/x.ts', refused: '../app/index.js', allowed: '../domain/errors.js' },
  { file: 'src/engine/x.ts', refused: '../media/audio.js', allowed: '../domain/agent.js' },
  { file: 'src/engine/slots/x.ts', refused: 'livekit-server-sdk', allowed: '../../domain/agent.js' },
  { file: 'src/engine/slots/x.ts', refused: '../../store/index.js', allowed: '../turn.js' },
  { file: 'src/config/x.ts', refused: '../media/audio.js', allowed: 'yaml' },
  { file: 'src/store/x.ts', refused: '../app/index.js', allowed: 'better-sqlite3' },
  { file: 'src/store/repos/x.ts', refused: 'fastify', allowed: '../../domain/calls.js' },
  { file: 'src/media/x.ts', refused: '../adapters/speech/espeak.js', allowed: '../domain/media.js' },
  { file: 'src/media/x.ts', refused: '@livekit/rtc-node', allowed: 'wavefile' },
  { file: 'src/media/carriers/x.ts', refused: 'node:child_process', allowed: '../audio.js' },
  { file: 'src/app/x.ts', refused: 'fastify', allowed: '../store/index.js' },
  { file: 'src/app/x.ts', refused: '../adapters/livekit/telephony.js', allowed: '../engine/turn.js' },
  { file: 'src/app/x.ts', refused: 'better-sqlite3', allowed: '../media/wav.js' },
  { file: 'src/adapters/speech/x.ts', refused: '../recognizers/deepgram.js', allowed: '../../media/wav.js' },
  { file: 'src/adapters/recognizers/x.ts', refused: '../../store/index.js', allowed: 'ws' },
  { file: 'src/adapters/livekit/x.ts', refused: '../../http/app.js', allowed: 'livekit-server-sdk' },
  { file: 'src/adapters/webhook/x.ts', refused: 'livekit-server-sdk', allowed: '../../app/index.js' },
  { file: 'src/adapters/llm/x.ts', refused: '../speech/cache.js', allowed: 'openai' },
  { file: 'src/http/x.ts', refused: '../store/index.js', allowed: 'fastify' },
  { file: 'src/http/routes/v1/x.ts', refused: '../../../adapters/speech/cache.js', allowed: '../../../contract/schemas.js' },
  { file: 'src/http/x.ts', refused: 'better-sqlite3', allowed: '../app/index.js' },
  { file: 'src/daemon/x.ts', refused: '../cli/main.js', allowed: '../http/app.js' },
  { file: 'src/daemon/x.ts', refused: 'commander', allowed: '../adapters/speech/espeak.js' },
  { file: 'src/client/x.ts', refused: '../app/index.js', allowed: '../contract/schemas.js' },
  { file: 'src/client/x.ts', refused: 'fastify', allowed: 'node:crypto' },
  { file: 'src/cli/x.ts', refused: '../store/index.js', allowed: '../client/index.js' },
  { file: 'src/cli/commands/x.ts', refused: '../../http/app.js', allowed: '../../daemon/daemon.js' },
  { file: 'src/cli/x.ts', refused: 'better-sqlite3', allowed: 'commander' },
  { file: 'src/devtools/x.ts', refused: '../cli/main.js', allowed: '../adapters/livekit/room-fake.js' },
  { file: 'src/devtools/x.ts', refused: '../daemon/daemon.js', allowed: 'ws' },
];

/** The src/ folder of a layer as its message names it. */
const named = (folder: string) => (folder === '.' ? 'src/*.ts' : `src/${folder}`);

describe('the layers of src/ (eslint.layers.js)', { timeout: 60_000 }, () => {
  it('every layer has a case here, and every case is in a layer', () => {
    const folderOf = (file: string) =>
      LAYERS.map((l) => l.folder)
        .filter((f) => (f === '.' ? /^src\/[^/]+$/.test(file) : file.startsWith(`src/${f}/`)))
        .sort((a, b) => b.length - a.length)[0];
    expect(new Set(CASES.map((c) => folderOf(c.file)))).toEqual(new Set(LAYERS.map((l) => l.folder)));
  });

  it.each(CASES)('$file: $refused fails, $allowed passes', async ({ file, refused, allowed }) => {
    const folder = LAYERS.map((l) => l.folder)
      .filter((f) => (f === '.' ? /^src\/[^/]+$/.test(file) : file.startsWith(`src/${f}/`)))
      .sort((a, b) => b.length - a.length)[0]!;
    const errors = await boundaryErrors(file, refused);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain(`'${refused}'`);
    expect(errors[0]).toContain(`${named(folder)} may import only`);
    expect(errors[0]).toContain('(docs/architecture.md "Layers")');
    expect(await boundaryErrors(file, allowed)).toEqual([]);
  });

  it('the same import is judged by where it is: better-sqlite3 only in src/store', async () => {
    const files = [
      'src/store/x.ts',
      'src/app/x.ts',
      'src/http/x.ts',
      'src/daemon/x.ts',
      'src/cli/x.ts',
      'src/client/x.ts',
      'src/media/x.ts',
    ];
    const counts = await Promise.all(files.map(async (f) => (await boundaryErrors(f, 'better-sqlite3')).length));
    expect(counts).toEqual([0, 1, 1, 1, 1, 1, 1]);
  });

  it('a folder that is no layer yet may import nothing outside itself, and says where to declare it', async () => {
    const errors = await boundaryErrors('src/newthing/x.ts', '../domain/errors.js');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('not a layer of docs/architecture.md "Layers"');
    expect(await boundaryErrors('src/newthing/x.ts', './y.js')).toEqual([]);
  });

  it('a known crossing is allowed only in the files that make it, and nowhere else in the folder', async () => {
    for (const { files, may } of KNOWN_CROSSINGS) {
      const file = files[0]!;
      const up = '../'.repeat(file.split('/').length - 2);
      const specifier = `${up}${may[0]}/x.js`;
      expect(await boundaryErrors(file, specifier), `${file} may import ${specifier}`).toEqual([]);
      const sibling = path.posix.join(path.posix.dirname(file), 'not-a-crossing.ts');
      expect(await boundaryErrors(sibling, specifier), `${sibling} may not import ${specifier}`).toHaveLength(1);
    }
  });
});
