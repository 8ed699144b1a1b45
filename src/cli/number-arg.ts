/**
 * Whole-number flags on the command line (`--limit`, `--timeout-s`, `--max-attempts`, …): each is
 * checked here against its range before anything is sent, so every such flag answers a bad value
 * in the same words.
 */
import { InvalidValueError } from './errors.js';
import { quoted } from './output.js';

/**
 * A whole number flag within `[min, max]`.
 * @param param the API field the flag fills
 * @throws InvalidValueError (exit 1, invalid_request) naming the flag and the range.
 */
export function wholeNumber(flag: string, param: string, value: string, min: number, max: number): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new InvalidValueError(`${flag} must be a whole number from ${min} to ${max}, not ${quoted(value)}`, param);
  return n;
}
