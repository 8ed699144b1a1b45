/**
 * `--context` flags: a JSON object typed on the command line or in a file (`vagent chat`, `vagent call place`, `vagent call simulate`),
 * and what to type when the daemon says an agent needs more of it.
 */
import fs from 'node:fs';
import { ApiResponseError } from '../client/index.js';
import { HintedApiError, InvalidValueError, UsageError } from './errors.js';
import { printable } from './output.js';

/**
 * The JSON object a `--context` flag gives: inline (`'{"emi_amount": "12500"}'`), or read from
 * the file named after `@` (`@context.json`). Every command's `--context` is read here.
 * @param example a usage hint shown with the error, e.g. `example: --context '{"emi_amount": "12500"}'`
 * @throws UsageError (exit 2) for a file that cannot be read; InvalidValueError (exit 1,
 *   invalid_request as from the daemon; param `context`) for invalid JSON, or JSON that is not
 *   an object.
 */
export function parseContextFlag(value: string, example: string): Record<string, unknown> {
  let text = value;
  if (value.startsWith('@')) {
    const file = value.slice(1);
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(
        `cannot read --context file ${printable(file)}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
        example,
      );
    }
  }
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
