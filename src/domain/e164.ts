/**
 * E.164 phone numbers (ITU-T E.164: `^\+[1-9][0-9]{1,14}$`).
 */

/** The E.164 pattern used for every phone number on `/v1`. */
export const E164_PATTERN = /^\+[1-9][0-9]{1,14}$/;

/** True when `value` is an E.164 number: `+`, a non-zero digit, then 1–14 digits. */
export function isE164(value: unknown): value is string {
  return typeof value === 'string' && E164_PATTERN.test(value);
}

/** An example DID used in messages and help text (an Indian mobile-range number). */
export const EXAMPLE_DID = '+919876543210';

/**
 * Masks all but the last four digits (`+91******3210`), for places where a phone number
 * would otherwise land in a log line.
 */
export function maskNumber(value: string): string {
  if (value.length <= 5) return '*'.repeat(value.length);
  const keep = value.startsWith('+') ? 3 : 0;
  return value.slice(0, keep) + '*'.repeat(Math.max(0, value.length - keep - 4)) + value.slice(-4);
}
