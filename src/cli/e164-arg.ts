/**
 * Phone numbers on the command line: every number-taking argument and flag (`number add|bind|rm`
 * NUMBER, `trunk add --number`, `call place --to/--from`, `call simulate --to/--from`, `chat
 * --customer-phone`) is checked here before anything is sent, so a number that is not E.164 is
 * answered in the operator's terms ("use E.164: +918047001234"), not the API's (a path's
 * leading + encoded as %2B).
 */
import { EXAMPLE_DID, isE164 } from '../domain/e164.js';
import { InvalidValueError } from './errors.js';
import { quoted } from './output.js';

/**
 * The E.164 form an Indian number written the national way most likely stands for, or
 * undefined when it does not look like one. Only ever shown as a suggestion, never used:
 * the number an operator meant is theirs to say. India's numbering plan (TRAI, National
 * Numbering Plan 2003): a 10-digit national number, dialled at home with the trunk prefix 0,
 * country code 91.
 */
export function suggestIndianE164(value: string): string | undefined {
  const digits = value.replace(/[\s().-]/g, '');
  if (!/^\+?\d+$/.test(digits)) return undefined;
  const national = /^(?:\+?91|0)?([1-9]\d{9})$/.exec(digits)?.[1];
  return national === undefined ? undefined : `+91${national}`;
}

/**
 * Checks one number-taking argument or flag.
 * @param what how the operator wrote it, for the message: `--to`, `NUMBER`
 * @param param the API field it fills (`to`, `number`, `numbers`), as the error's `param`
 * @returns `value`, unchanged
 * @throws InvalidValueError (exit 1, `invalid_request`, as the daemon would answer) when `value`
 *   is not E.164, with a hint: the +91 form of a national Indian number, else an example
 */
export function requireE164(value: string, what: string, param: string): string {
  if (isE164(value)) return value;
  const suggestion = suggestIndianE164(value);
  throw new InvalidValueError(
    `${what} must be an E.164 number (+, country code, number; no spaces), not ${quoted(value)}`,
    param,
    suggestion === undefined ? `use E.164, e.g. ${EXAMPLE_DID}` : `use E.164: ${suggestion}`,
  );
}
