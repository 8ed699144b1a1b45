/**
 * `/v1/calls`: placing a call (prepared, or dialled through LiveKit SIP), its status, the list,
 * the hang-up (docs/calls.md; docs/api-decisions.md "Calls").
 */
import { z } from 'zod';
import { E164_PATTERN, EXAMPLE_DID } from '../domain/e164.js';
import { CALL_SOURCES, DIAL_LIMITS, DIAL_STATUSES } from '../domain/calls.js';
import { CALLS_CURSOR } from '../domain/cursor.js';
import { CostSchema as Cost, idField, listOf, namedE164 as e164, namedText as text, pageQuery } from './common.js';
import { RequestContext } from './sessions.js';

/** A whole number of seconds within the dial limit `name` (src/domain/calls.ts), or null, or absent. */
const seconds = (name: keyof typeof DIAL_LIMITS) => {
  const { min, max } = DIAL_LIMITS[name];
  const msg = `${name} must be a whole number of seconds from ${min} to ${max}`;
  return z.number({ error: msg }).int({ error: msg }).min(min, { error: msg }).max(max, { error: msg }).nullish();
};

/**
 * `POST /v1/calls` body; a malformed agent id is `workflow_not_found`, a malformed trunk id
 * `trunk_not_found` (docs/api-decisions.md "Errors").
 */
export const PlaceCallBody = z.object(
  {
    agent_id: idField('agent', 'workflow_not_found', 'agent_id is required: an outbound agent, for example ag_emi_reminder'),
    to: z
      .string({ error: `to is required: the number to call, in E.164 such as ${EXAMPLE_DID}` })
      .regex(E164_PATTERN, { error: `to must be an E.164 number such as ${EXAMPLE_DID}` }),
    from: e164('from').nullish(),
    context: RequestContext.nullish(),
    title: text(200, 'title').nullish(),
    customer_name: text(200, 'customer_name').nullish(),
    dial: z.boolean({ error: 'dial must be true or false' }).nullish(),
    trunk_id: idField('trunk', 'trunk_not_found', 'trunk_id must be a string such as tk_…').nullish(),
    ringing_timeout_s: seconds('ringing_timeout_s'),
    max_call_duration_s: seconds('max_call_duration_s'),
  },
  { error: 'request body must be a JSON object with agent_id and to' },
);
/**
 * A `POST /v1/calls` body as sent (what the client takes): numbers E.164, timers whole seconds;
 * `dial: true` rings the phone through LiveKit SIP, otherwise the call is only prepared.
 */
export type PlaceCallRequest = z.input<typeof PlaceCallBody>;
/** A validated `POST /v1/calls` body (what the call service takes). */
export type PlaceCallInput = z.infer<typeof PlaceCallBody>;

/** The placement response. */
export const CallPlacementSchema = z
  .object({
    call_id: z.string(),
    session_id: z.string(),
    agent_id: z.string(),
    to: z.string(),
    from: z.string().nullable(),
    idempotent: z.boolean(),
    status: z.enum(['prepared', 'ringing']),
    dial_required: z.boolean(),
    room_name: z.string().optional(),
    provider_call_id: z.string().optional(),
    trunk_id: z.string().optional(),
    dial_status: z.enum(DIAL_STATUSES).optional(),
    answered_at: z.number().nullable().optional(),
  })
  .meta({ id: 'CallPlacement' });
/**
 * The response of `POST /v1/calls`: `status` `prepared` (nothing dialled) or `ringing`; a dialled
 * call adds its room, provider call id, trunk, `dial_status` and `answered_at` (epoch seconds).
 */
export type CallPlacement = z.infer<typeof CallPlacementSchema>;

/** The status of a call, with vagent's extension fields after `cost`. */
export const CallStatusSchema = z
  .object({
    call_id: z.string(),
    session_id: z.string(),
    agent_id: z.string(),
    status: z.enum(['in_progress', 'completed']),
    started_at: z.number(),
    ended_at: z.number().nullable(),
    duration_s: z.number().nullable(),
    customer_name: z.string().nullable(),
    cost: Cost,
    direction: z.enum(['outbound', 'inbound']),
    to: z.string(),
    from: z.string().nullable(),
    dial_status: z.enum(DIAL_STATUSES),
    dial_error: z.string().nullable(),
    trunk_id: z.string().nullable(),
    room_name: z.string().nullable(),
    provider_call_id: z.string().nullable(),
    answered_at: z.number().nullable(),
    transport: z.enum(['twilio', 'exotel', 'plivo', 'livekit']).nullable().meta({
      description: "What carries the call's audio: a carrier WebSocket stream or a LiveKit room; null while none has (a prepared call).",
    }),
    source: z.enum(CALL_SOURCES).meta({
      description:
        'Who made the call: phone (a call on a line: a carrier stream, a LiveKit room, a prepared call) or simulator (a stream `vagent call simulate` opened with an API key). A label for reports; budgets and costs treat both alike.',
    }),
    recording_url: z.string().nullable().meta({
      description:
        "Where the call's recording is served (`GET /v1/calls/{call_id}/recording`, a 16 kHz PCM WAV), or null when it has none: recording is off for its agent and tenant, it carried no audio (a text session), or the recording was purged with the session or beyond the disk cap.",
    }),
  })
  .meta({ id: 'CallStatus' });
/** The response of `GET /v1/calls/{call_id}`: times in epoch seconds, null while not yet so. */
export type CallStatus = z.infer<typeof CallStatusSchema>;

/** `POST /v1/calls/{call_id}/hangup` response (extension): the call after it, and what became of its line. */
export const CallHangupSchema = CallStatusSchema.extend({
  line: z.enum(['hung_up', 'already_gone', 'not_dialled']),
}).meta({ id: 'CallHangup' });
/** The response of `POST /v1/calls/{call_id}/hangup`. */
export type CallHangup = z.infer<typeof CallHangupSchema>;

/** `GET /v1/calls` page. */
export const CallListSchema = listOf(CallStatusSchema);

/** `GET /v1/calls` query. */
export const CallListQuery = z.object({
  status: z.enum(['in_progress', 'completed'], { error: 'status must be in_progress or completed' }).optional(),
  source: z
    .enum(CALL_SOURCES, { error: `source must be ${CALL_SOURCES.join(' or ')}` })
    .optional()
    .meta({ description: 'Only calls of this source: phone or simulator.' }),
  ...pageQuery(CALLS_CURSOR),
});
/** A `GET /v1/calls` query as sent. */
export type CallListRequest = z.input<typeof CallListQuery>;

/** `{call_id}` path parameters: a malformed id is `session_not_found` (the lookup is keyed by session; docs/api-decisions.md "Errors"). */
export const CallParams = z.object({ call_id: idField('call', 'session_not_found') });
