/**
 * `/v1/trunks`: SIP trunks (docs/api-decisions.md "Trunks"). The response schema is also what
 * keeps the write-only `auth` out of every reply (`has_credentials` reports it).
 */
import { z } from 'zod';
import { EXAMPLE_DID } from '../domain/e164.js';
import { MAX_SIP_ADDRESS_LENGTH, SIP_ADDRESS_PATTERN } from '../domain/sip.js';
import { deletedOf, e164, idField, listOf, optionalText, text } from './common.js';

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
/** A `POST /v1/trunks` body as sent (what the client takes). */
export type CreateTrunkRequest = z.input<typeof CreateTrunkBody>;
/** A validated `POST /v1/trunks` body (what the trunk service takes). */
export type CreateTrunkInput = z.infer<typeof CreateTrunkBody>;

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
/**
 * A SIP trunk: `id` is `tk_<id>`, `address` the carrier SIP host (optionally `:port`),
 * `numbers` the caller-ID numbers (E.164) it may present, `created_at` epoch seconds.
 */
export type Trunk = z.infer<typeof TrunkSchema>;

/** `GET /v1/trunks` page. */
export const TrunkListSchema = listOf(TrunkSchema);

/** `{trunk_id}` path parameters: a malformed id is `trunk_not_found` (docs/api-decisions.md "Errors"). */
export const TrunkParams = z.object({ trunk_id: idField('trunk', 'trunk_not_found') });

/** `DELETE /v1/trunks/{trunk_id}` response. */
export const TrunkDeletedSchema = deletedOf('id', z.string());
/** `{id, deleted: true}`. */
export type TrunkDeleted = z.infer<typeof TrunkDeletedSchema>;
