/**
 * Events (docs/events.md): the event object, `GET /v1/events` (a page, or with
 * `Accept: text/event-stream` the live stream), and the query that filters both.
 */
import { z } from 'zod';
import { END_REASONS, EVENT_ID_PATTERN, EVENT_TYPES } from '../domain/events.js';
import { ID_PATTERNS, shortId } from '../domain/ids.js';

/** An event: one state change of a tenant's calls and sessions, in log order. */
export const EventSchema = z
  .object({
    id: z.string().regex(EVENT_ID_PATTERN),
    type: z.enum(EVENT_TYPES),
    created_at: z.number(),
    tenant_id: z.string(),
    call_id: z.string().regex(ID_PATTERNS.call).nullable(),
    session_id: z.string().regex(ID_PATTERNS.session).nullable(),
    /** 1, 2, 3 … per call (or per session of no call), without a gap; null for an event of neither. */
    sequence: z.number().int().nullable(),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Event' });

/** An event as sent: the API object, the SSE `data:`, and a webhook delivery's body. */
export type EventView = z.infer<typeof EventSchema>;

/** `call.ended` `data.end_reason`. */
export const EndReasonSchema = z.enum(END_REASONS);

const TYPES_MESSAGE = `types must be a comma-separated list of event types or patterns, such as call.*,session.turn`;

/** One item of `types`: `*`, a prefix and `.*` (`call.*`), or an event type. */
const TYPE_ITEM = `(\\*|${[...new Set(EVENT_TYPES.map((t) => t.split('.')[0]))].map((p) => `${p}\\.\\*`).join('|')}|${EVENT_TYPES.map((t) => t.replace('.', '\\.')).join('|')})`;
/** `types`: one or more {@link TYPE_ITEM}s, comma-separated. */
export const EVENT_TYPES_PATTERN = new RegExp(`^${TYPE_ITEM}(,${TYPE_ITEM})*$`);
const AFTER_MESSAGE = 'after must be an event id such as evt_000000000042';
const LIMIT_MESSAGE = 'limit must be a whole number from 1 to 100';

/** The query of `GET /v1/events`: `types`, `call_id`, and for a page `after` and `limit`. */
export const EventQuerySchema = z.object({
  types: z
    .string({ error: TYPES_MESSAGE })
    .max(1000, { error: 'types must be at most 1000 characters' })
    .regex(EVENT_TYPES_PATTERN, {
      error: (issue) => {
        const bad = String(issue.input)
          .split(',')
          .filter((t) => !EVENT_TYPES_PATTERN.test(t));
        return `${TYPES_MESSAGE}; not ${shortId(bad.join(','))}`;
      },
    })
    .optional(),
  call_id: z.string().regex(ID_PATTERNS.call, { error: 'call_id must be a call id such as cl_123' }).optional(),
  session_id: z.string().regex(ID_PATTERNS.session, { error: 'session_id must be a session id such as se_123' }).optional(),
  after: z.string().regex(EVENT_ID_PATTERN, { error: AFTER_MESSAGE }).optional(),
  limit: z.coerce
    .number({ error: LIMIT_MESSAGE })
    .int({ error: LIMIT_MESSAGE })
    .min(1, { error: LIMIT_MESSAGE })
    .max(100, { error: LIMIT_MESSAGE })
    .default(100),
});

/** The query of `GET /v1/events`, as sent (`limit` optional). */
export type EventQuery = z.input<typeof EventQuerySchema>;

/** A page of events: `{data, has_more, next_cursor}`; `next_cursor` is the last event's id (pass it as `after`). */
export const EventPageSchema = z
  .object({ data: z.array(EventSchema), has_more: z.boolean(), next_cursor: z.string().nullable() })
  .meta({ id: 'EventPage' });
