/**
 * What the bench scripts share besides HTTP: numeric settings (and lists of them) from the environment, the body of
 * a prepare-only `POST /v1/calls`, and loud warnings, kept for the results file, about figures
 * that are not valid.
 */

/** A prepare-only call of the shipped EMI reminder agent, as both benches place it. */
export const CALL_BODY = JSON.stringify({
  agent_id: 'ag_emi_reminder',
  to: '+919876543210',
  customer_name: 'Ravi Kumar',
  context: { emi_amount: '12,500', loan_last4: '4321', due_date: '25 November' },
});

/** Every warning given so far by {@link loud}, in order (written into the results). */
export const warnings = [];

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
    if (item.trim() === '' || !Number.isFinite(n) || n < 0) throw new Error(`${name} must be comma-separated non-negative numbers, got ${JSON.stringify(raw)}`);
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
