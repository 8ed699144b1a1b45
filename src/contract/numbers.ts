/** `/v1/numbers`: number records, a DID with its trunk and agent (docs/api-decisions.md "Numbers"). */
import { z } from 'zod';
import { E164_PATTERN } from '../domain/e164.js';
import { ID_PATTERNS } from '../domain/ids.js';
import { answeredWith } from './answers.js';
import { deletedOf, e164, listOf, optionalText } from './common.js';

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
/** A `POST /v1/numbers` body as sent (what the client takes). */
export type CreateNumberRequest = z.input<typeof CreateNumberBody>;
/** A validated `POST /v1/numbers` body (what the number service takes). */
export type CreateNumberInput = z.infer<typeof CreateNumberBody>;

/** `POST /v1/numbers/{number}/bind` body. */
export const BindNumberBody = z.object(
  {
    agent_id: z
      .string({ error: 'agent_id is required' })
      .regex(ID_PATTERNS.agent, { error: 'must be an agent id: ag_ followed by 1–64 of a-z, 0-9, _' }),
  },
  { error: 'request body must be a JSON object with agent_id' },
);
/** A `POST /v1/numbers/{number}/bind` body. */
export type BindNumberRequest = z.input<typeof BindNumberBody>;

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
/** A number record: `id` is `num_<id>`, `number` E.164, unset fields null, `created_at` epoch seconds. */
export type NumberRecord = z.infer<typeof NumberSchema>;

/** `GET /v1/numbers` page. */
export const NumberListSchema = listOf(NumberSchema);

/** `{number}` path parameters: E.164, with the `+` sent as `%2B` (or as is). */
export const NumberParams = z.object({
  number: answeredWith(
    z.string().regex(E164_PATTERN, {
      error: 'the number in the path must be E.164, with the leading + encoded as %2B (for example /v1/numbers/%2B919876543210)',
    }),
    'invalid_request',
  ),
});

/** `DELETE /v1/numbers/{number}` response. */
export const NumberDeletedSchema = deletedOf('number', z.string());
/** `{number, deleted: true}`. */
export type NumberDeleted = z.infer<typeof NumberDeletedSchema>;
