/**
 * `--context` flags: a JSON object typed on the command line (`vagent chat`, `vagent call place`).
 */
import { InvalidValueError } from './errors.js';

/**
 * The JSON object `text` holds.
 * @param example a usage hint shown with the error, e.g. `example: --context '{"emi_amount": "12500"}'`
 * @throws InvalidValueError (exit 1, invalid_request as from the daemon; param `context`) for
 *   invalid JSON, or JSON that is not an object.
 */
export function parseContextFlag(text: string, example: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new InvalidValueError(`--context is not valid JSON: ${(err as Error).message}`, 'context', example);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw new InvalidValueError('--context must be a JSON object', 'context', example);
  return parsed as Record<string, unknown>;
}
