/**
 * What the bench scripts share besides HTTP: numeric settings (and lists of them) from the environment, the body of
 * a prepare-only `POST /v1/calls`, loud warnings, kept for the results file, about figures
 * that are not valid, and the smoke mode every script honours.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `BENCH_SMOKE=1`: the smoke mode of every bench script (`npm run bench:smoke`, bench/smoke.mjs,
 * run by CI): tiny durations and counts, so that each script runs end to end in seconds. Its
 * figures mean nothing and no target is judged; a figure that is not valid (a failed request,
 * an incomplete call) fails the run instead of warning (see {@link invalid}), so a broken bench
 * exits non-zero.
 */
export const SMOKE = process.env.BENCH_SMOKE === '1';

/** `fallback`, or `smoke` in the smoke mode ({@link SMOKE}): a script's defaults in one place. */
export const smokeOr = (smoke, fallback) => (SMOKE ? smoke : fallback);

/**
 * Where a script writes its results file `name`: bench/results/, or bench/results/smoke/ in the
 * smoke mode, so that a smoke run never overwrites measured figures.
 */
export function resultsFile(name) {
  return path.join(ROOT, 'bench', 'results', ...(SMOKE ? ['smoke'] : []), name);
}

/**
 * A target's verdict for the report: `pass` ? 'PASS' : `failText`, or "(smoke: not judged)" in
 * the smoke mode.
 */
export function judged(pass, failText = 'BELOW TARGET') {
  if (SMOKE) return '(smoke: not judged)';
  return pass ? 'PASS' : failText;
}

/** A prepare-only call of the shipped EMI reminder agent, as both benches place it. */
export const CALL_BODY = JSON.stringify({
  agent_id: 'ag_emi_reminder',
  to: '+919876543210',
  customer_name: 'Ravi Kumar',
  context: { emi_amount: '12,500', loan_last4: '4321', due_date: '25 November' },
});

/** Every warning given so far by {@link loud}, in order (written into the results). */
export const warnings = [];

/**
 * A figure that is not valid because the bench did not do what it meant to (requests failed, a
 * call did not complete): a loud warning ({@link loud}), or, in the smoke mode, an error — the
 * smoke is there to catch a bench that no longer runs.
 * @throws Error with `message` in the smoke mode
 */
export function invalid(message) {
  if (SMOKE) throw new Error(`${message} (a smoke run fails on a figure that is not valid)`);
  loud(message);
}

/** Prints `message` framed on stderr, where it cannot be missed, and records it in {@link warnings}. */
export function loud(message) {
  warnings.push(message);
  const bar = '!'.repeat(78);
  process.stderr.write(`\n${bar}\n!!! WARNING: ${message}\n${bar}\n\n`);
}

/**
 * The comma-separated numbers in environment variable `name` (e.g. "1,20,50"), or `fallback`
 * when it is unset or empty.
 * @throws Error for an item that is not a finite non-negative number
 */
export function numListEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw.split(',').map((item) => {
    const n = Number(item);
    if (item.trim() === '' || !Number.isFinite(n) || n < 0)
      throw new Error(`${name} must be comma-separated non-negative numbers, got ${JSON.stringify(raw)}`);
    return n;
  });
}

/**
 * The number in environment variable `name`, or `fallback` when it is unset or empty.
 * @throws Error for a value that is not a finite non-negative number
 */
export function numEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number, got ${JSON.stringify(raw)}`);
  return n;
}
