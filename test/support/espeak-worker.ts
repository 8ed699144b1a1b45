/**
 * The embedded speech engine's worker for tests that run from the TypeScript sources: the worker
 * and the modules it imports, transpiled into `node_modules/.cache` (the engine forks it as a
 * plain Node.js module).
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The worker's source, relative to the repo root. */
const WORKER = 'src/adapters/speech/espeak-worker.ts';

/**
 * Transpiles {@link WORKER} and the modules it imports (followed through their relative
 * imports) into `node_modules/.cache/vagent-<tag>-<pid>/`, laid out as under src/, and returns
 * the worker's path; the caller removes it with {@link removeEspeakWorker} when done.
 * @param tag names the cache directory, so test files running at once do not share one
 */
export function buildEspeakWorker(tag: string): string {
  const out = path.join(ROOT, 'node_modules', '.cache', `vagent-${tag}-${process.pid}`);
  const src = path.join(ROOT, 'src');
  const todo = [path.join(ROOT, WORKER)];
  const done = new Set<string>();
  while (todo.length > 0) {
    const file = todo.pop()!;
    if (done.has(file)) continue;
    done.add(file);
    const source = fs.readFileSync(file, 'utf8');
    for (const { fileName } of ts.preProcessFile(source, true, true).importedFiles) {
      if (fileName.startsWith('.')) todo.push(path.resolve(path.dirname(file), fileName).replace(/\.js$/, '.ts'));
    }
    const js = ts.transpileModule(source, {
      compilerOptions: { module: ts.ModuleKind.ES2022, target: ts.ScriptTarget.ES2022 },
    }).outputText;
    const target = path.join(out, path.relative(src, file)).replace(/\.ts$/, '.js');
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, js);
  }
  fs.writeFileSync(path.join(out, 'package.json'), '{"type":"module"}');
  return path.join(out, path.relative(src, path.join(ROOT, WORKER))).replace(/\.ts$/, '.js');
}

/** Removes the directory {@link buildEspeakWorker} made for `workerPath` (`vagent-<tag>-<pid>`). */
export function removeEspeakWorker(workerPath: string): void {
  const cache = path.join(ROOT, 'node_modules', '.cache');
  const dir = path.join(cache, path.relative(cache, workerPath).split(path.sep)[0]!);
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Speaks each of `lines` in `language` with the embedded engine (a worker built by
 * {@link buildEspeakWorker}, removed afterwards) and returns their audio in order: 48 kHz mono
 * PCM16 samples with their rate.
 * @throws whatever the engine throws (the worker is removed either way)
 */
export async function synthesizeLines(
  tag: string,
  lines: readonly string[],
  language = 'en',
): Promise<Array<{ samples: Int16Array; sampleRate: number }>> {
  const { EspeakSynthesizer } = await import('../../src/adapters/speech/espeak.js');
  const workerPath = buildEspeakWorker(tag);
  const synth = new EspeakSynthesizer({ workerPath });
  try {
    const out: Array<{ samples: Int16Array; sampleRate: number }> = [];
    for (const line of lines) {
      const audio = await synth.synthesize(line, language);
      out.push({ samples: audio.samples, sampleRate: audio.sampleRate });
    }
    return out;
  } finally {
    await synth.close();
    removeEspeakWorker(workerPath);
  }
}
