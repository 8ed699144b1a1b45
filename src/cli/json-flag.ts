/**
 * `--context` flags: a JSON object typed on the command line (`vagent chat`, `vagent call place`).
 */
import { UsageError } from './errors.js';

/**
 * The JSON object `text` holds.
 * @param example a usage hint shown with the error, e.g. `example: --context '{"emi_amount": "12500"}'`
 * @throws UsageError (exit 2) for invalid JSON, or JSON that is not an object.
 */
export function parseContextFlag(text: string, example: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--context is not valid JSON: ${(err as Error).message}`, example);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError('--context must be a JSON object', example);
  return parsed as Record<string, unknown>;
}
