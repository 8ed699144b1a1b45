/**
 * Request and response schemas of `/v1` (spec: Resources and their fields; Endpoints).
 * The response schemas are also what keep write-only fields (trunk `auth`) out of replies.
 */
import { z } from 'zod';
import { CURSOR_MESSAGE, type ListCursor } from '../domain/cursor.js';
import { E164_PATTERN, EXAMPLE_DID } from '../domain/e164.js';
import type { ErrorCode } from '../domain/errors.js';
import { ID_PATTERNS, shortId } from '../domain/ids.js';
import { MAX_SIP_ADDRESS_LENGTH, SIP_ADDRESS_PATTERN } from '../domain/sip.js';
import { answeredWith } from './schema-errors.js';

/** An E.164 number; `subject` starts its error message ("must be", "to must be"). */
const e164Of = (subject: string) =>
  z
    .string({ error: `${subject} an E.164 number such as ${EXAMPLE_DID}` })
    .regex(E164_PATTERN, { error: `${subject} an E.164 number such as ${EXAMPLE_DID}` });
const e164 = e164Of('must be');

/**
 * Text that SQLite (UTF-8) stores exactly: no unpaired UTF-16 surrogate (one would come back
 * as U+FFFD). With the `u` flag a valid pair is one code point outside the class.
 */
export const UNICODE_TEXT = /^[^\uD800-\uDFFF]*$/u;
/** {@link UNICODE_TEXT} with at least one character that is not white space. */
export const NON_BLANK_TEXT = /^\s*[^\s\uD800-\uDFFF][^\uD800-\uDFFF]*$/u;
const SURROGATE_MESSAGE = 'must be valid Unicode text (it has an unpaired surrogate escape such as \\ud800)';

/**
 * Free text of at most `max` characters (code points) whose errors name the field `what`; a
 * lone surrogate escape is refused ({@link UNICODE_TEXT}). Each failure says what is wrong.
 */
export const namedText = (max: number, what: string) =>
  z
    .string({ error: `${what} must be a string` })
    .max(max, { error: `${what} must be at most ${max} characters` })
    .regex(UNICODE_TEXT, { error: `${what} ${SURROGATE_MESSAGE}` });

const LIMIT_MESSAGE = 'limit must be a whole number from 1 to 100';

/**
 * The paging part of a list's query (DESIGN.md §4 "Lists"; `GET /v1/calls`, `GET /v1/sessions`):
 * `limit` 1–100 (default 20) and `cursor`, the previous page's `next_cursor`, whose exact form
 * (`codec.pattern`) the API document publishes.
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

/** An E.164 number whose errors name the field `what`. */
export const namedE164 = (what: string) => e164Of(`${what} must be`);

/** Id kinds of DESIGN.md §4 "Ids" that requests carry. */
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
 * (DESIGN.md §4 "Ids"). A malformed one is answered with `code` (spec: Errors — e.g.
 * `session_not_found` for a malformed session id), `param` naming the field.
 * @param required the message when the field is missing or not a string
 */
export function idField(kind: IdKind, code: ErrorCode, required = `must be a string: the ${kind} id`) {
  return answeredWith(
    z.string({ error: required }).regex(ID_PATTERNS[kind], { error: (issue) => MALFORMED_ID[kind](shortId(String(issue.input))) }),
    code,
  );
}

/** The spec's `cost` object (INR). */
export const CostSchema = z
  .object({ llm_inr: z.number(), tts_inr: z.number(), stt_inr: z.number(), total_inr: z.number() })
  .meta({ id: 'Cost' });
/** Free text (errors name the field by its path). */
const text = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(UNICODE_TEXT, { error: SURROGATE_MESSAGE });
const optionalText = (max: number) => text(max).nullish();

/** The error body of DESIGN.md §4. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      param: z.string().optional(),
    }),
  })
  .meta({ id: 'Error' });

/** `{data, has_more, next_cursor}` around a list of items. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

const ADDRESS_MESSAGE =
  'address must be a SIP host name or IP with an optional :port, for example sip.example-carrier.in (no sip: prefix, no path)';

/** `POST /v1/trunks` body. */
export const CreateTrunkBody = z.object(
  {
    address: z
      .string({ error: 'address is required: the carrier SIP host, for example sip.example-carrier.in' })
      .min(1, { error: ADDRESS_MESSAGE })
      .max(MAX_SIP_ADDRESS_LENGTH, { error: `address must be at most ${MAX_SIP_ADDRESS_LENGTH} characters` })
      .regex(SIP_ADDRESS_PATTERN, { error: ADDRESS_MESSAGE }),
    name: optionalText(200),
    numbers: z
      .array(e164, { error: `numbers must be an array of E.164 numbers such as ${EXAMPLE_DID}` })
      .max(1000, { error: 'at most 1000 caller-ID numbers per trunk' })
      .nullish(),
    provider_trunk_id: text(200).min(1, { error: 'must not be empty (leave it out, or null, for none)' }).nullish(),
    auth: z
      .object(
        {
          // Credentials are sealed as JSON, which keeps even a lone surrogate exactly.
          username: z
            .string({ error: 'auth.username is required and must be a string' })
            .min(1, { error: 'at least 1 character' })
            .max(256, { error: 'at most 256 characters' }),
          password: z.string({ error: 'auth.password is required and must be a string' }).max(1024, { error: 'at most 1024 characters' }),
        },
        { error: 'auth must be an object {username, password}' },
      )
      .nullish(),
  },
  { error: 'request body must be a JSON object' },
);

/** The Trunk resource. */
export const TrunkSchema = z
  .object({
    id: z.string(),
    name: z.string().nullable(),
    address: z.string(),
    numbers: z.array(z.string()),
    provider_trunk_id: z.string().nullable(),
    has_credentials: z.boolean(),
    created_at: z.number(),
  })
  .meta({ id: 'Trunk' });

/** `{trunk_id}` path parameters: a malformed id is `trunk_not_found` (spec: Errors). */
export const TrunkParams = z.object({ trunk_id: idField('trunk', 'trunk_not_found') });

/** `POST /v1/numbers` body. */
export const CreateNumberBody = z.object(
  {
    number: e164,
    trunk_id: z.string().regex(ID_PATTERNS.trunk, { error: 'must be a trunk id such as tk_… (see: GET /v1/trunks)' }).nullish(),
    agent_id: z.string().regex(ID_PATTERNS.agent, { error: 'must be an agent id: ag_ followed by 1–64 of a-z, 0-9, _' }).nullish(),
    label: optionalText(200),
  },
  { error: 'request body must be a JSON object' },
);

/** `POST /v1/numbers/{number}/bind` body. */
export const BindNumberBody = z.object(
  {
    agent_id: z
      .string({ error: 'agent_id is required' })
      .regex(ID_PATTERNS.agent, { error: 'must be an agent id: ag_ followed by 1–64 of a-z, 0-9, _' }),
  },
  { error: 'request body must be a JSON object with agent_id' },
);

/** The Number record resource. */
export const NumberSchema = z
  .object({
    id: z.string(),
    tenant_id: z.string(),
    number: z.string(),
    trunk_id: z.string().nullable(),
    agent_id: z.string().nullable(),
    label: z.string().nullable(),
    created_at: z.number(),
  })
  .meta({ id: 'NumberRecord' });

/** `{number}` path parameters: E.164, with the `+` sent as `%2B` (or as is). */
export const NumberParams = z.object({
  number: answeredWith(
    z.string().regex(E164_PATTERN, {
      error: 'the number in the path must be E.164, with the leading + encoded as %2B (for example /v1/numbers/%2B919876543210)',
    }),
    'invalid_request',
  ),
});

/** Error responses every `/v1` route may give. */
export const errorResponses = { '4xx': ErrorSchema, '5xx': ErrorSchema } as const;
