/**
 * `/v1/webhook_endpoints` (docs/events.md "Webhooks"): a tenant's receivers of signed event
 * deliveries. The signing secret is in the answer of the create and of a rotation only.
 */
import { z } from 'zod';
import { EVENT_ID_PATTERN, EVENT_TYPES } from '../domain/events.js';
import { WEBHOOK_ENDPOINT_ID_PATTERN, WEBHOOK_ENDPOINT_STATES } from '../domain/webhooks.js';
import { answeredWith } from './answers.js';
import { deletedOf, listOf } from './common.js';
import { shortId } from '../domain/ids.js';

const EVENTS_MESSAGE = 'events must be a list of event types or patterns, such as ["call.*", "session.ended"] (["*"]: all)';

/** Every type pattern that selects something: `*`, each prefix's `prefix.*`, and each type (src/domain/events.ts). */
export const EVENT_PATTERNS: readonly string[] = [
  '*',
  ...new Set(EVENT_TYPES.map((t) => `${t.slice(0, t.indexOf('.'))}.*`)),
  ...EVENT_TYPES,
];

/** `events`: 1–50 type patterns, each one of {@link EVENT_PATTERNS}; default `["*"]`. */
const EventPatterns = z
  .array(
    z.enum(EVENT_PATTERNS as [string, ...string[]], {
      error: (issue) =>
        `unknown event type ${JSON.stringify(shortId(String(issue.input)))}: use a type such as call.ended, a prefix such as call.*, or * (docs/events.md)`,
    }),
    { error: EVENTS_MESSAGE },
  )
  .min(1, { error: EVENTS_MESSAGE })
  .max(50, { error: 'events takes at most 50 patterns' });

/** `POST /v1/webhook_endpoints` body. */
export const CreateWebhookEndpointBody = z.object(
  {
    url: z
      .string({ error: 'url is required: the https URL that receives the events' })
      .min(1, { error: 'url must not be empty' })
      .max(2048, { error: 'url must be at most 2048 characters' }),
    events: EventPatterns.optional(),
  },
  { error: 'request body must be a JSON object {url, events?}' },
);
/** A `POST /v1/webhook_endpoints` body as sent. */
export type CreateWebhookEndpointRequest = z.input<typeof CreateWebhookEndpointBody>;
/** A validated `POST /v1/webhook_endpoints` body. */
export type CreateWebhookEndpointInput = z.infer<typeof CreateWebhookEndpointBody>;

/**
 * A webhook endpoint, without its secret. `status` is `failing` once a delivery to it was given
 * up (since `failing_since`); `pending_deliveries` counts the events queued for it and not yet
 * delivered; `last_attempt_at` (epoch s), `last_status` (the HTTP status, null when none came)
 * and `last_error` (null after a success) tell its latest delivery attempt, all null before the
 * first. An error names the URL's origin at most, never its path or query, nor the secret.
 */
export const WebhookEndpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    status: z.enum(WEBHOOK_ENDPOINT_STATES),
    failing_since: z.number().nullable(),
    pending_deliveries: z.number().int().min(0),
    last_attempt_at: z.number().nullable(),
    last_status: z.number().int().nullable(),
    last_error: z.string().nullable(),
    created_at: z.number(),
  })
  .meta({ id: 'WebhookEndpoint' });
/** A webhook endpoint: `id` `we_…`, the URL, its type patterns, its status and backlog, `created_at` epoch seconds. */
export type WebhookEndpoint = z.infer<typeof WebhookEndpointSchema>;

/** The answer of `POST /v1/webhook_endpoints`: the endpoint and its signing secret (`whsec_…`), shown this once. */
export const WebhookEndpointCreatedSchema = WebhookEndpointSchema.extend({ secret: z.string() }).meta({
  id: 'WebhookEndpointCreated',
});
/** The endpoint with its secret. */
export type WebhookEndpointCreated = z.infer<typeof WebhookEndpointCreatedSchema>;

/** `GET /v1/webhook_endpoints`. */
export const WebhookEndpointListSchema = listOf(WebhookEndpointSchema);

/** `{webhook_endpoint_id}` path parameters: a malformed id is `not_found`. */
export const WebhookEndpointParams = z.object({
  webhook_endpoint_id: answeredWith(
    z.string({ error: 'must be a string: the webhook endpoint id' }).regex(WEBHOOK_ENDPOINT_ID_PATTERN, {
      error: (issue) => `no webhook endpoint ${shortId(String(issue.input))} (see: GET /v1/webhook_endpoints)`,
    }),
    'not_found',
  ),
});

/** `DELETE /v1/webhook_endpoints/{id}`. */
export const WebhookEndpointDeletedSchema = deletedOf('id', z.string());
/** `{id, deleted: true}`. */
export type WebhookEndpointDeleted = z.infer<typeof WebhookEndpointDeletedSchema>;

/** `POST /v1/webhook_endpoints/{id}/rotate_secret`: the new secret; the previous one signs too until `previous_secret_expires_at`. */
export const WebhookSecretRotatedSchema = z
  .object({ id: z.string(), secret: z.string(), previous_secret_expires_at: z.number() })
  .meta({ id: 'WebhookSecretRotated' });
/** The new secret and until when the old one still signs (epoch s). */
export type WebhookSecretRotated = z.infer<typeof WebhookSecretRotatedSchema>;

/** `POST /v1/webhook_endpoints/{id}/test`: what the receiver answered a signed `webhook.test` delivery. */
export const WebhookTestResultSchema = z
  .object({
    id: z.string(),
    delivered: z.boolean(),
    /** The receiver's HTTP status, or null when none came (refused, timed out). */
    status: z.number().nullable(),
    error: z.string().nullable(),
    ms: z.number(),
  })
  .meta({ id: 'WebhookTestResult' });
/** A test delivery's outcome. */
export type WebhookTestResult = z.infer<typeof WebhookTestResultSchema>;

/** The furthest back a replay reaches, seconds: 7 days (docs/events.md). */
export const MAX_REPLAY_SINCE_S = 604_800;

const SINCE_MESSAGE = `since must be a whole number of seconds from 1 to ${MAX_REPLAY_SINCE_S} (7 days)`;

const EndpointIdField = z
  .string({ error: 'endpoint_id must be a webhook endpoint id such as we_…' })
  .regex(WEBHOOK_ENDPOINT_ID_PATTERN, { error: 'endpoint_id must be a webhook endpoint id such as we_…' })
  .optional();

const REPLAY_BODY = 'request body must be a JSON object';

/** `POST /v1/webhook_replays/event`: queue one event again, for one endpoint (`endpoint_id`) or each that selects it. */
export const ReplayEventBody = z.strictObject(
  {
    event_id: z
      .string({ error: 'event_id is required: the event to send again, such as evt_000000000042' })
      .regex(EVENT_ID_PATTERN, { error: 'event_id must be an event id such as evt_000000000042' }),
    endpoint_id: EndpointIdField,
  },
  { error: `${REPLAY_BODY} {event_id, endpoint_id?}` },
);

/** `POST /v1/webhook_replays`: queue again every event of the last `since` seconds, for one endpoint or each that selects them. */
export const ReplayBody = z.strictObject(
  {
    since: z
      .number({ error: `since is required: ${SINCE_MESSAGE}` })
      .int({ error: SINCE_MESSAGE })
      .min(1, { error: SINCE_MESSAGE })
      .max(MAX_REPLAY_SINCE_S, { error: SINCE_MESSAGE }),
    endpoint_id: EndpointIdField,
  },
  { error: `${REPLAY_BODY} {since, endpoint_id?}` },
);
/** A replay request as sent. */
export type ReplayRequest = z.input<typeof ReplayBody>;
/** A one-event replay request as sent. */
export type ReplayEventRequest = z.input<typeof ReplayEventBody>;

/** How many deliveries a replay queued. */
export const ReplayResultSchema = z.object({ queued: z.number() }).meta({ id: 'WebhookReplay' });
/** `{queued}`. */
export type ReplayResult = z.infer<typeof ReplayResultSchema>;
