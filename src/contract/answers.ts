/**
 * Error codes the request schemas declare for themselves (docs/api-decisions.md; README.md "API").
 *
 * Most failures of a request schema are `invalid_request`, but some malformed values have a code
 * of their own: a malformed session id is `session_not_found`, a malformed `agent_id` on
 * `POST /v1/sessions` is `workflow_not_found`, a malformed trunk id `trunk_not_found`. Such a
 * field is marked with {@link answeredWith}; the HTTP layer's schema error formatter asks
 * {@link answerOf} which code a failed format check of a field gets.
 */
import type { z } from 'zod';
import type { ErrorCode } from '../domain/errors.js';

/** Marked field schemas and the code a value failing their format check gets. */
const answers = new WeakMap<z.ZodType, ErrorCode>();

/**
 * Marks a string field so that a value failing one of its format checks (a `.regex()`) is
 * answered with `code` and that check's message, `param` naming the field. Its other failures
 * (missing, not a string) stay `invalid_request`, as do all failures of unmarked fields; when a
 * request has both kinds, the `invalid_request` one is answered (as a body's shape is checked
 * before the ids in it are looked up).
 *
 * Mark the schema last: wrappers added afterwards (`.nullish()`, `.optional()`) are seen
 * through, but a further check or `.meta()` makes a new, unmarked schema.
 *
 * @returns `schema` itself.
 */
export function answeredWith<T extends z.ZodType>(schema: T, code: ErrorCode): T {
  answers.set(schema, code);
  return schema;
}

/** The code {@link answeredWith} gave `schema` (unwrapped of optional/nullable/default), or undefined. */
export function answerOf(schema: z.ZodType): ErrorCode | undefined {
  return answers.get(schema);
}
