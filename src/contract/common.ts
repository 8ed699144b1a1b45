/**
 * The building blocks of the `/v1` contract shared by every resource: free text, E.164
 * numbers, ids, the list page and its query, the `cost` object, the error body.
 *
 * Every schema of src/contract both validates requests (the daemon) and is published as the
 * OpenAPI document (`GET /v1/openapi.json`); the types the services, the client and the tests
 * use are inferred from the same schemas (`z.infer`), so the contract is written once.
 */
import { z } from 'zod';
import { CURSOR_MESSAGE, type ListCursor } from '../domain/cursor.js';
import { E164_PATTERN, EXAMPLE_DID } from '../domain/e164.js';
import type { ErrorCode } from '../domain/errors.js';
import { ID_PATTERNS, shortId } from '../domain/ids.js';
import { answeredWith } from './answers.js';

/** An E.164 number; `subject` starts its error message ("must be", "to must be"). */
const e164Of = (subject: string) =>
  z
    .string({ error: `${subject} an E.164 number such as ${EXAMPLE_DID}` })
    .regex(E164_PATTERN, { error: `${subject} an E.164 number such as ${EXAMPLE_DID}` });
/** An E.164 number whose errors name the field by its path ("must be …"). */
export const e164 = e164Of('must be');

/** An E.164 number whose errors name the field `what`. */
export const namedE164 = (what: string) => e164Of(`${what} must be`);

/**
 * Text that SQLite (UTF-8) stores exactly: no unpaired UTF-16 surrogate (one would come back
 * as U+FFFD). With the `u` flag a valid pair is one code point outside the class.
 */
export const UNICODE_TEXT = /^[^\uD800-\uDFFF]*$/u;
/** {@link UNICODE_TEXT} with at least one character that is not white space. */
export const NON_BLANK_TEXT = /^\s*[^\s\uD800-\uDFFF][^\uD800-\uDFFF]*$/u;
/** What a string with a lone surrogate escape is told. */
export const SURROGATE_MESSAGE = 'must be valid Unicode text (it has an unpaired surrogate escape such as \\ud800)';

/**
 * Free text of at most `max` characters (code points) whose errors name the field `what`; a
 * lone surrogate escape is refused ({@link UNICODE_TEXT}). Each failure says what is wrong.
 */
export const namedText = (max: number, what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .max(max, { error: `${what} must be at most ${max} characters` })
    .regex(UNICODE_TEXT, { error: `${what} ${SURROGATE_MESSAGE}` });

/** Free text of at most `max` characters (errors name the field by its path). */
export const text = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(UNICODE_TEXT, { error: SURROGATE_MESSAGE });
/** {@link text}, or null, or absent. */
export const optionalText = (max: number) => text(max).nullish();

const LIMIT_MESSAGE = 'limit must be a whole number from 1 to 100';

/**
 * The paging part of a list's query (docs/api-decisions.md "Lists"; `GET /v1/calls`,
 * `GET /v1/sessions`): `limit` 1–100 (default 20) and `cursor`, the previous page's
 * `next_cursor`, whose exact form (`codec.pattern`) the API document publishes.
 */
export const pageQuery = (codec: ListCursor) => ({
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(100, { error: LIMIT_MESSAGE })
    .default(20),
  cursor: z.string().regex(codec.pattern, { error: CURSOR_MESSAGE }).optional(),
});

/** Id kinds that requests carry (src/domain/ids.ts). */
type IdKind = 'trunk' | 'agent' | 'session' | 'call';

/** What a malformed id of each kind is told (`id` already shortened for the message). */
const MALFORMED_ID: Record<IdKind, (id: string) => string> = {
  trunk: (id) => `no trunk ${id} (see: GET /v1/trunks)`,
  agent: (id) => `agent id ${id} is malformed: ag_ followed by 1–64 of a-z, 0-9 and _`,
  session: (id) => `session id ${id} is malformed: se_ followed by a number`,
  call: (id) => `call id ${id} is malformed: cl_ followed by a number`,
};

/**
 * A string field holding an id of `kind`: validated, and published, with the id's pattern
 * (src/domain/ids.ts). A malformed one is answered with `code` (docs/api-decisions.md "Errors":
 * e.g. `session_not_found` for a malformed session id), `param` naming the field.
 * @param required the message when the field is missing or not a string
 */
export function idField(kind: IdKind, code: ErrorCode, required = `must be a string: the ${kind} id`) {
  return answeredWith(
    z.string({ error: required }).regex(ID_PATTERNS[kind], { error: (issue) => MALFORMED_ID[kind](shortId(String(issue.input))) }),
    code,
  );
}

/** The `cost` object: INR, rounded to 6 decimals. */
export const CostSchema = z
  .object({ llm_inr: z.number(), tts_inr: z.number(), stt_inr: z.number(), total_inr: z.number() })
  .meta({ id: 'Cost' });

/** The error body every failed `/v1` request is answered with (docs/api-decisions.md "Errors"). */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      param: z.string().optional(),
    }),
  })
  .meta({ id: 'Error' });
/** `{error: {code, message, param?}}`. */
export type ErrorBody = z.infer<typeof ErrorSchema>;

/** Error responses every `/v1` route may give. */
export const errorResponses = { '4xx': ErrorSchema, '5xx': ErrorSchema } as const;

/** `{data, has_more, next_cursor}` around a list of items (docs/api-decisions.md "Lists"). */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

/** A page of `T`: what {@link listOf} of `T`'s schema infers. */
export type ListResponse<T> = Omit<z.infer<ReturnType<typeof listOf<z.ZodType<T>>>>, 'data'> & { data: T[] };

/** The answer of a `DELETE` of a resource named by `key` (`{id, deleted: true}`, `{number, deleted: true}`). */
export const deletedOf = <K extends string, V extends z.ZodType>(key: K, value: V) =>
  z.object({ [key]: value, deleted: z.literal(true) } as { [P in K]: V } & { deleted: z.ZodLiteral<true> });
