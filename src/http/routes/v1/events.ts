/**
 * `GET /v1/events` (docs/events.md "Reading events"): the tenant's events, as a page of JSON, or
 * with `Accept: text/event-stream` as a live Server-Sent Events stream (WHATWG HTML "Server-sent
 * events"): each event as `id:` (its id), `event:` (its type) and `data:` (the event object),
 * resumed after the `Last-Event-ID` a reconnecting client sends, with a `: heartbeat` comment
 * every 15 s. The stream is written here rather than through an SSE plugin: a client that reads
 * too slowly must be cut off (its unsent bytes bounded), where the plugins wait for it for ever.
 */
import type { ServerResponse } from 'node:http';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { selectionOf, type EventSelection } from '../../../app/events.js';
import { ApiError } from '../../../domain/errors.js';
import { eventId, eventSeq, EVENT_ID_PATTERN } from '../../../domain/events.js';
import { parseSessionNumber } from '../../../domain/ids.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import { errorResponses, EventPageSchema, EventQuerySchema } from '../../../contract/index.js';
import { principalOf } from '../../plugins/auth.js';

/** Heartbeat comment interval, ms: keeps proxies from closing an idle stream, and shows the reader it is alive. */
export const HEARTBEAT_MS = 15_000;
/** Unsent bytes a stream may hold before its reader is cut off as too slow. */
export const MAX_UNSENT_BYTES = 1024 * 1024;
/** Events read from the log per pass of a stream. */
const STREAM_PAGE = 200;

/** Options of {@link eventRoutes} (tests shorten the heartbeat and the bound). */
export interface EventRouteOptions {
  heartbeatMs?: number;
  maxUnsentBytes?: number;
}

/** Registers `GET /v1/events`. */
export function eventRoutes(services: Services, options: EventRouteOptions = {}): FastifyPluginAsyncZod {
  const { events } = services;
  const heartbeatMs = options.heartbeatMs ?? HEARTBEAT_MS;
  const maxUnsent = options.maxUnsentBytes ?? MAX_UNSENT_BYTES;
  const open = new Set<() => void>();
  return async (app) => {
    installSchemaErrors(app);
    // A stream never goes idle: the daemon's stop ends them, so it does not wait for their readers.
    app.addHook('preClose', (done) => {
      for (const close of open) close();
      done();
    });
    app.get(
      '/events',
      {
        schema: {
          summary: 'List events, or follow them live with Accept: text/event-stream (resumable with Last-Event-ID)',
          tags: ['events'],
          querystring: EventQuerySchema,
          response: { 200: EventPageSchema, ...errorResponses },
        },
      },
      async (request, reply) => {
        const { tenantId } = principalOf(request);
        const q = request.query;
        const selection = selectionFrom(q.types, q.call_id, q.session_id);
        const wantsStream = (request.headers.accept ?? '').includes('text/event-stream');
        if (!wantsStream) {
          const after = q.after === undefined ? 0 : eventSeq(q.after)!;
          const page = events.page(tenantId, after, q.limit, selection);
          const last = page.events.at(-1);
          return { data: page.events, has_more: page.hasMore, next_cursor: page.hasMore && last ? last.id : null };
        }
        const header = request.headers['last-event-id'];
        const resume = typeof header === 'string' && header.trim() !== '' ? header.trim() : null;
        if (resume !== null && !EVENT_ID_PATTERN.test(resume)) {
          throw new ApiError('invalid_request', 'Last-Event-ID must be an event id such as evt_000000000042', { param: 'Last-Event-ID' });
        }
        // Resume after the reader's last event; else after `after`; else from now on. An id past
        // the newest event names one this log never had (a state dir started afresh): said, not
        // waited on in silence.
        const start = resume !== null ? eventSeq(resume)! : q.after !== undefined ? eventSeq(q.after)! : events.durableSeq();
        if (start > events.durableSeq()) {
          const newest = eventId(events.durableSeq());
          const which = resume !== null ? 'Last-Event-ID' : 'after';
          throw new ApiError(
            'invalid_request',
            `${which} ${resume ?? q.after} is past the newest event (${newest}): this log never had it`,
            {
              param: which,
            },
          );
        }
        reply.hijack();
        const res = reply.raw;
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
          connection: 'keep-alive',
          'x-accel-buffering': 'no',
          'x-request-id': request.id,
        });
        res.write(`retry: 2000\n: vagent events of tenant ${tenantId}\n\n`);
        follow(res, tenantId, start, selection);
      },
    );

    /** Writes the durable events after `cursor` to `res` as they come, until either side closes. */
    function follow(res: ServerResponse, tenantId: string, start: number, selection: EventSelection): void {
      let cursor = start;
      let closed = false;
      const close = (comment: string | null) => {
        if (closed) return;
        closed = true;
        unsubscribe();
        clearInterval(heartbeat);
        open.delete(stop);
        if (comment !== null && !res.destroyed) res.end(`: ${comment}\n\n`);
        else res.destroy();
      };
      const stop = () => close('the daemon is stopping');
      const pump = () => {
        while (!closed) {
          const durable = events.durableSeq();
          const page = events.page(tenantId, cursor, STREAM_PAGE, selection);
          for (const e of page.events) res.write(`id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
          const last = page.events.at(-1);
          cursor = page.hasMore && last ? eventSeq(last.id)! : Math.max(cursor, durable, last ? eventSeq(last.id)! : 0);
          if (res.writableLength > maxUnsent) {
            close('closed: this reader is too slow; reconnect with Last-Event-ID to resume');
            return;
          }
          if (!page.hasMore) return;
        }
      };
      const unsubscribe = events.subscribe(pump);
      const heartbeat = setInterval(() => {
        events.poll(); // events written by another process (an admin command)
        if (!closed) res.write(': heartbeat\n\n');
      }, heartbeatMs);
      heartbeat.unref();
      open.add(stop);
      res.on('close', () => close(null));
      pump();
    }
  };
}

/**
 * The selection of a query's `types`, `call_id` and `session_id`.
 * @throws ApiError invalid_request naming `types` (a pattern that names no event type).
 */
function selectionFrom(types: string | undefined, callId: string | undefined, sessionId: string | undefined): EventSelection {
  const call = callId === undefined ? null : parseSessionNumber(callId, 'call');
  const session = sessionId === undefined ? null : parseSessionNumber(sessionId);
  // Both given: the events of that call and that session, none when they are not the same one.
  if (call !== null && session !== null && call !== session) return { types: [], subject: call };
  const selection = selectionOf(types === undefined ? null : types.split(','), call ?? session);
  if (selection.unknown.length > 0) {
    throw new ApiError(
      'invalid_request',
      `types names no event type: ${selection.unknown.join(', ')} (the Event schema of GET /v1/openapi.json lists them)`,
      {
        param: 'types',
      },
    );
  }
  return { types: selection.types, subject: selection.subject };
}
