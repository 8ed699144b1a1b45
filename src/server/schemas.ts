/**
 * Request and response schemas of `/v1` (spec: Resources and their fields; Endpoints).
 * The response schemas are also what keep write-only fields (trunk `auth`) out of replies.
 */
import { z } from 'zod';
import { E164_PATTERN, EXAMPLE_DID } from '../domain/e164.js';
import { ID_PATTERNS } from '../domain/ids.js';
import { isSipAddress } from '../domain/sip.js';

/** An E.164 number; `subject` starts its error message ("must be", "to must be"). */
const e164Of = (subject: string) => z.string({ error: `${subject} an E.164 number such as ${EXAMPLE_DID}` })
  .regex(E164_PATTERN, { error: `${subject} an E.164 number such as ${EXAMPLE_DID}` });
const e164 = e164Of('must be');
/** An unpaired UTF-16 surrogate (with the `u` flag, a valid pair is one code point and does not match). */
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** Free text of at most `max` characters whose errors name the field `what` (lone surrogates refused, as {@link text}). */
export const namedText = (max: number, what: string) => z.string({ error: `${what} must be a string` })
  .max(max, { error: `${what} must be at most ${max} characters` })
  .refine((s) => !LONE_SURROGATE.test(s), { error: `${what} must be valid Unicode text (it has an unpaired surrogate escape)` });

/** An E.164 number whose errors name the field `what`. */
export const namedE164 = (what: string) => e164Of(`${what} must be`);

/** The spec's `cost` object (INR). */
export const CostSchema = z.object({ llm_inr: z.number(), tts_inr: z.number(), stt_inr: z.number(), total_inr: z.number() }).meta({ id: 'Cost' });
/** Free text that SQLite (UTF-8) stores exactly: a lone surrogate would come back as U+FFFD. */
const text = (max: number) => z.string().max(max, { error: `must be at most ${max} characters` })
  .refine((s) => !LONE_SURROGATE.test(s), { error: 'must be valid Unicode text (it has an unpaired surrogate escape such as \\ud800)' });
const optionalText = (max: number) => text(max).nullish();

/** The error body of DESIGN.md §4. */
export const ErrorSchema = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    param: z.string().optional(),
  }),
}).meta({ id: 'Error' });

/** `{data, has_more, next_cursor}` around a list of items. */
export function listOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), has_more: z.boolean(), next_cursor: z.string().nullable() });
}

/** `POST /v1/trunks` body. */
export const CreateTrunkBody = z.object({
  address: z.string({ error: 'address is required: the carrier SIP host, for example sip.example-carrier.in' })
    .refine(isSipAddress, { error: 'address must be a SIP host name or IP with an optional :port, for example sip.example-carrier.in (no sip: prefix, no path)' }),
  name: optionalText(200),
  numbers: z.array(e164).max(1000, { error: 'at most 1000 caller-ID numbers per trunk' }).nullish(),
  provider_trunk_id: text(200).min(1).nullish(),
  auth: z.object({
    username: z.string({ error: 'auth.username is required and must be a string' }).min(1).max(256),
    password: z.string({ error: 'auth.password is required and must be a string' }).max(1024),
  }, { error: 'auth must be an object {username, password}' }).nullish(),
}, { error: 'request body must be a JSON object' });

/** The Trunk resource. */
export const TrunkSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  address: z.string(),
  numbers: z.array(z.string()),
  provider_trunk_id: z.string().nullable(),
  has_credentials: z.boolean(),
  created_at: z.number(),
}).meta({ id: 'Trunk' });

/** `{trunk_id}` path parameters. */
export const TrunkParams = z.object({ trunk_id: z.string() });

/** `POST /v1/numbers` body. */
export const CreateNumberBody = z.object({
  number: e164,
  trunk_id: z.string().regex(ID_PATTERNS.trunk, { error: 'must be a trunk id such as tk_… (see: GET /v1/trunks)' }).nullish(),
  agent_id: z.string().regex(ID_PATTERNS.agent, { error: 'must be an agent id: ag_ followed by 1–64 of a-z, 0-9, _' }).nullish(),
  label: optionalText(200),
}, { error: 'request body must be a JSON object' });

/** `POST /v1/numbers/{number}/bind` body. */
export const BindNumberBody = z.object({
  agent_id: z.string({ error: 'agent_id is required' })
    .regex(ID_PATTERNS.agent, { error: 'must be an agent id: ag_ followed by 1–64 of a-z, 0-9, _' }),
}, { error: 'request body must be a JSON object with agent_id' });

/** The Number record resource. */
export const NumberSchema = z.object({
  id: z.string(),
  tenant_id: z.string(),
  number: z.string(),
  trunk_id: z.string().nullable(),
  agent_id: z.string().nullable(),
  label: z.string().nullable(),
  created_at: z.number(),
}).meta({ id: 'NumberRecord' });

/** `{number}` path parameters (E.164 with `+` sent as `%2B`; checked by the service). */
export const NumberParams = z.object({ number: z.string() });

/** Error responses every `/v1` route may give. */
export const errorResponses = { '4xx': ErrorSchema, '5xx': ErrorSchema } as const;
