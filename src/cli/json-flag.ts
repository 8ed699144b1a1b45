/**
 * `--context` flags: a JSON object typed on the command line (`vagent chat`, `vagent call place`),
 * and what to type when the daemon says an agent needs more of it.
 */
import { ApiResponseError } from '../client/index.js';
import { HintedApiError, InvalidValueError } from './errors.js';

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
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidValueError('--context must be a JSON object', 'context', example);
  return parsed as Record<string, unknown>;
}

/**
 * The daemon's refusal to open a session of an agent without the values its prompts speak
 * (`invalid_request`, param `context.<key>` or `customer_name`; app/sessions.ts
 * `requireSessionValues`) as a {@link HintedApiError} (exit 1; `--json` prints the API's error) whose hint is the flags to add, e.g.
 * `--customer-name "NAME" --context '{"emi_amount": "…", "due_date": "…"}'`.
 * Any other error is returned unchanged.
 */
export function explainMissingContext(err: unknown): unknown {
  if (!(err instanceof ApiResponseError) || err.code !== 'invalid_request' || !err.param) return err;
  if (!(err.param === 'customer_name' || err.param.startsWith('context.')) || !/^agent \S+ needs /.test(err.message)) return err;
  const listed = err.message.slice(0, err.message.indexOf(':'));
  const example: Record<string, unknown> = {};
  for (const m of listed.matchAll(/\bcontext\.([A-Za-z0-9_.]+)/g)) {
    const parts = m[1]!.split('.');
    let cur = example;
    for (const part of parts.slice(0, -1)) cur = (cur[part] ??= {}) as Record<string, unknown>;
    cur[parts[parts.length - 1]!] = '…';
  }
  const flags: string[] = [];
  if (/\bcustomer_name\b/.test(listed)) flags.push('--customer-name "NAME"');
  if (Object.keys(example).length > 0) flags.push(`--context '${JSON.stringify(example)}'`);
  return new HintedApiError(
    err,
    `add ${flags.join(' ')} (see the agent's required_context: vagent agent show ${listed.split(' ')[1]} --yaml)`,
  );
}
