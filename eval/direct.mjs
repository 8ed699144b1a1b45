// Runs the evaluation cases straight through the built extractors (dist/engine/slots), without
// a daemon: the quick loop while working on the rules. The real measure is eval/run.mjs, which
// goes through sessions. Usage: npx tsc -p tsconfig.build.json && node eval/direct.mjs [--verbose] [--json]
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NOW_ISO, TIMEZONE, loadAllCases, report, sameValue } from './cases.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const modulePath = process.env.VAGENT_SLOTS_MODULE ?? path.join(ROOT, 'dist', 'engine', 'slots', 'index.js');

/** Runs every case through `extractSlot` in answer mode; returns [{case, got, ok}]. */
export async function runDirect(cases) {
  const { extractSlot } = await import(pathToFileURL(modulePath).href);
  const nowMs = Date.parse(NOW_ISO);
  return cases.map((c) => {
    try {
      const found = extractSlot(c.text, {
        capture: { slot: 'value', type: c.type, ...c.capture },
        language: 'en-IN',
        nowMs,
        timezone: TIMEZONE,
        mode: 'answer',
      });
      const got = found ? found.value : null;
      return { case: c, got, ok: sameValue(c.type, got, c.expected) };
    } catch (err) {
      return { case: c, got: null, ok: false, error: String(err?.stack ?? err) };
    }
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = new Set(process.argv.slice(2));
  const results = await runDirect(loadAllCases());
  process.exitCode = report(results, {
    verbose: args.has('--verbose'),
    json: args.has('--json'),
    title: args.has('--json') ? 'direct' : 'Slot extraction, direct (dist/engine/slots)',
  });
}
