// Runs the evaluation cases straight through the built rules (dist/engine/slots for slot values,
// dist/engine/intents.js for closings), without a daemon: the quick loop while working on the
// rules. The real measure is eval/run.mjs, which goes through sessions.
// Usage: npx tsc -p tsconfig.build.json && node eval/direct.mjs [--verbose] [--json]
//        VAGENT_EVAL_DIST=/path/to/other/dist node eval/direct.mjs   (another build of the rules)
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NOW_ISO, TIMEZONE, loadAllCases, report, sameValue } from './cases.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The build whose rules are run: `$VAGENT_EVAL_DIST`, else this checkout's dist/. */
export const DIST = process.env.VAGENT_EVAL_DIST ?? path.join(ROOT, 'dist');

/**
 * The two parts of the rules a turn goes through, from one build: `dist` is a directory holding
 * engine/slots/index.js and engine/intents.js. `slot(case)` → the slot value a session would
 * record (answer mode), or null; `intent(case)` → the control intent of the case's text
 * (normalised as a turn normalises it; at "anything else?" when its capture says `at: more`), or
 * null. A build older than the `at: more` rule ignores that argument.
 */
export async function loadRuleParts(dist = DIST) {
  const { extractSlot } = await import(pathToFileURL(path.join(dist, 'engine', 'slots', 'index.js')).href);
  const { detectControlIntent, normalizeUtterance } = await import(pathToFileURL(path.join(dist, 'engine', 'intents.js')).href);
  const nowMs = Date.parse(NOW_ISO);
  return {
    slot(c) {
      const found = extractSlot(c.text, {
        capture: { slot: 'value', type: c.type, ...c.capture },
        language: 'en-IN',
        nowMs,
        timezone: TIMEZONE,
        mode: 'answer',
      });
      return found ? found.value : null;
    },
    intent(c) {
      return detectControlIntent(normalizeUtterance(c.text), c.capture?.at === 'more')?.intent ?? null;
    },
  };
}

/**
 * Loads the rules of one build ({@link loadRuleParts}). Returns `run(case)` → the value a session
 * would record: the slot value (answer mode), or for a closing case whether the goodbye intent is
 * heard (at "anything else?" when its capture says `at: more`).
 */
export async function loadRules(dist = DIST) {
  const { slot, intent } = await loadRuleParts(dist);
  return (c) => (c.type === 'closing' ? intent(c) === 'goodbye' : slot(c));
}

/** Runs every case through the rules of `dist`; returns [{case, got, ok}]. */
export async function runDirect(cases, dist = DIST) {
  const run = await loadRules(dist);
  return cases.map((c) => {
    try {
      const got = run(c);
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
    title: args.has('--json') ? 'direct' : `Rules, direct (${DIST})`,
  });
}
