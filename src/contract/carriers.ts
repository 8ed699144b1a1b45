/**
 * `/v1/carriers`: the tenant's carrier credentials, which authenticate the carriers' own
 * WebSocket upgrades on `GET /v1/media/{dialect}`, and its stream token (docs/carrier-auth.md).
 * Credentials are write-only: no response schema here holds one.
 *
 * Each dialect's body names the carrier console field to copy: Twilio's auth token signs
 * `X-Twilio-Signature` (https://www.twilio.com/docs/usage/webhooks/webhooks-security), Plivo's
 * Auth ID and token sign `X-Plivo-Signature-V3`
 * (https://www.plivo.com/docs/voice/concepts/signature-validation), Exotel's API key and token
 * come as basic auth (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet).
 */
import { z } from 'zod';

/** The carrier dialects, as named in the routes (`/v1/carriers/<dialect>`, `/v1/media/<dialect>`). */
export const CARRIER_DIALECT_NAMES = ['twilio', 'exotel', 'plivo'] as const;
/** One of {@link CARRIER_DIALECT_NAMES}. */
export type CarrierDialectName = (typeof CARRIER_DIALECT_NAMES)[number];

/** A carrier dialect name, exactly (route segment, `dialect` field). */
export const CARRIER_DIALECT_PATTERN = /^(twilio|exotel|plivo)$/;
/** A stored carrier secret (auth token, API token): 8–256 printable ASCII characters, no space. */
export const CARRIER_SECRET_PATTERN = /^[\x21-\x7e]{8,256}$/;
/** A Twilio Account SID: `AC` and 32 hex digits (https://www.twilio.com/docs/glossary/what-is-a-sid). */
export const TWILIO_ACCOUNT_SID_PATTERN = /^AC[0-9a-fA-F]{32}$/;
/** A Plivo Auth ID: `MA` (account) or `SA` (subaccount) and 18 capitals or digits, 20 in all. */
export const PLIVO_AUTH_ID_PATTERN = /^[MS]A[A-Z0-9]{18}$/;
/** An Exotel API key (the basic-auth user name): 1–128 letters, digits, `_` or `-`. */
export const EXOTEL_API_KEY_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
/** A stream token: `vst_` and 43 base64url characters (258 random bits). */
export const STREAM_TOKEN_PATTERN = /^vst_[A-Za-z0-9_-]{43}$/;

const SECRET_MESSAGE = 'must be 8–256 printable ASCII characters without spaces, as the carrier console shows it';

/** A secret field named `what` (its errors say how to get it right, never echo it). */
const secretField = (what: string, where: string) =>
  z.string({ error: `${what} is required: ${where}` }).regex(CARRIER_SECRET_PATTERN, { error: `${what} ${SECRET_MESSAGE}` });

/**
 * A body of exactly `shape`: a field it does not know is refused by name (`param`), saying
 * which fields `dialect` takes (e.g. Plivo's auth_id sent to the Twilio path).
 */
const strictBody = <S extends z.ZodRawShape>(dialect: CarrierDialectName, shape: S) => {
  const fields = Object.keys(shape).join(', ');
  return (
    z
      .looseObject(shape, { error: `request body must be a JSON object {${fields}}` })
      .superRefine((body, ctx) => {
        for (const key of Object.keys(body)) {
          if (!Object.hasOwn(shape, key))
            ctx.addIssue({
              code: 'custom',
              path: [key.slice(0, 40)],
              message: `unknown field: ${dialect} credentials take only ${fields}`,
            });
        }
      })
      // Published as what it is: no other member is accepted.
      .meta({ additionalProperties: false })
  );
};

/** `PUT /v1/carriers/twilio` body: the account's auth token (primary or secondary), its SID optional. */
export const TwilioCredentialsBody = strictBody('twilio', {
  account_sid: z
    .string({ error: 'account_sid must be a string: AC and 32 hex digits (Twilio console, Account Info)' })
    .regex(TWILIO_ACCOUNT_SID_PATTERN, {
      error: 'account_sid must be AC followed by 32 hex digits (Twilio console, Account Info)',
    })
    .optional(),
  auth_token: secretField('auth_token', 'the Twilio auth token that signs requests (Twilio console, Account Info)'),
});

/** `PUT /v1/carriers/plivo` body: the account's Auth ID and Auth Token. */
export const PlivoCredentialsBody = strictBody('plivo', {
  auth_id: z.string({ error: 'auth_id is required: the Plivo Auth ID (Plivo console, Overview)' }).regex(PLIVO_AUTH_ID_PATTERN, {
    error: 'auth_id must be a Plivo Auth ID: MA or SA and 18 capitals or digits (Plivo console, Overview)',
  }),
  auth_token: secretField('auth_token', 'the Plivo Auth Token (Plivo console, Overview)'),
});

/** `PUT /v1/carriers/exotel` body: the API key and token Exotel puts in the stream URL's user info. */
export const ExotelCredentialsBody = strictBody('exotel', {
  api_key: z
    .string({ error: 'api_key is required: the Exotel API key (Exotel dashboard, API Settings)' })
    .regex(EXOTEL_API_KEY_PATTERN, { error: 'api_key must be 1–128 letters, digits, _ or - (Exotel dashboard, API Settings)' }),
  api_token: secretField('api_token', 'the Exotel API token (Exotel dashboard, API Settings)'),
});

/** The body schema of each dialect. */
export const CARRIER_BODIES = {
  twilio: TwilioCredentialsBody,
  plivo: PlivoCredentialsBody,
  exotel: ExotelCredentialsBody,
} as const;
/** A `PUT /v1/carriers/{dialect}` body as sent, of any dialect. */
export type CarrierCredentialsRequest =
  z.input<typeof TwilioCredentialsBody> | z.input<typeof PlivoCredentialsBody> | z.input<typeof ExotelCredentialsBody>;

const DialectSchema = z.enum(CARRIER_DIALECT_NAMES);

/** One dialect of `GET /v1/carriers` (never a secret). */
export const CarrierSchema = z
  .object({
    dialect: DialectSchema,
    configured: z.boolean(),
    hint: z.string().nullable().describe('last 4 characters of the account SID, Auth ID or API key (never of a secret)'),
    updated_at: z.number().nullable(),
    stream_url_path: z.string().describe("path of the stream URL to give the carrier, after the daemon's public wss:// origin"),
  })
  .meta({ id: 'Carrier' });
/**
 * One dialect as `GET /v1/carriers` shows it: whether credentials are stored, a hint (the last
 * 4 characters of the account SID, Auth ID or API key, never of a secret), when they were set
 * (epoch seconds), and the stream URL path to give the carrier (after the daemon's public
 * origin; with `?tenant=NAME` for a tenant other than `default`, except Twilio, whose
 * `<Stream url>` takes no query string — docs/carrier-auth.md).
 */
export type CarrierView = z.infer<typeof CarrierSchema>;

/** `GET /v1/carriers`. */
export const CarrierListSchema = z
  .object({
    data: z.array(CarrierSchema),
    stream_token: z.object({ configured: z.boolean(), created_at: z.number().nullable() }),
  })
  .meta({ id: 'CarrierList' });
/** The response of `GET /v1/carriers`: every dialect, and whether a stream token exists and when it was made (never the token). */
export type CarrierList = z.infer<typeof CarrierListSchema>;

/** `POST /v1/carriers/stream_token`: the token, this once. */
export const StreamTokenSchema = z
  .object({
    stream_token: z.string().describe("vst_…: send it as the custom parameter stream_token of the stream's start event"),
    created_at: z.number(),
  })
  .meta({ id: 'StreamToken' });
/** The response of `POST /v1/carriers/stream_token`. */
export type StreamToken = z.infer<typeof StreamTokenSchema>;

/** `DELETE /v1/carriers/{dialect}` response. */
export const CarrierDeletedSchema = z.object({ dialect: DialectSchema, deleted: z.literal(true) });
/** `{dialect, deleted: true}`. */
export type CarrierDeleted = z.infer<typeof CarrierDeletedSchema>;
