/**
 * The event log over `/v1/events` (docs/events.md): one page of events, and the live stream
 * as an async iterable that survives dropped connections and daemon restarts.
 *
 * The stream is Server-Sent Events (the WHATWG HTML standard, "Server-sent events"), parsed
 * with `eventsource-parser`. It resumes with the `Last-Event-ID` header after a dropped
 * connection, and yields each event once: an event whose id is not after the last one yielded
 * (a replay by the daemon) is skipped — event ids sort as the events happened
 * (src/domain/events.ts).
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { EventPageSchema, EventQuery, EventView } from '../contract/events.js';
import type { z } from 'zod';
import { eventSeq } from '../domain/events.js';
import { ApiResponseError, DaemonUnreachableError, describeCause, errorOfResponse, type HttpTransport } from './http.js';

/** A page of events, oldest first: `{data, has_more, next_cursor}`; pass `next_cursor` back as `after`. */
export type EventPage = z.infer<typeof EventPageSchema>;

/**
 * Query of `GET /v1/events`: `types` (event types or patterns such as `call.*`, as a list or
 * comma-separated), `call_id`, `session_id`, and for a page `after` (an event id) and `limit`
 * (1–100, daemon default 100).
 */
export type EventListQuery = Omit<EventQuery, 'types'> & { types?: string | readonly string[] };

/** The query string of `query` (without `?`), leaving out what is not given. */
function queryString(query: EventListQuery, page: boolean): string {
  const params = new URLSearchParams();
  const types = typeof query.types === 'string' ? query.types : query.types?.join(',');
  if (types) params.set('types', types);
  if (query.call_id !== undefined) params.set('call_id', query.call_id);
  if (query.session_id !== undefined) params.set('session_id', query.session_id);
  if (page && query.after !== undefined) params.set('after', query.after);
  if (page && query.limit !== undefined) params.set('limit', String(query.limit));
  return params.toString();
}

/**
 * `GET /v1/events`: one page of the tenant's events, oldest first.
 * @throws ApiResponseError (`invalid_request` naming `types`, `after`, `limit` …);
 *   DaemonUnreachableError.
 */
export async function listEvents(transport: HttpTransport, query: EventListQuery = {}): Promise<EventPage> {
  const qs = queryString(query, true);
  return (await transport.request<EventPage>('GET', `/v1/events${qs ? `?${qs}` : ''}`)).body;
}

/** What the stream is doing, told through {@link StreamEventsOptions.onState}. */
export type StreamState =
  | { state: 'connected' }
  /** The connection dropped (or could not be made); the next try is in `delayMs` ms. `attempt` counts from 1. */
  | { state: 'reconnecting'; attempt: number; delayMs: number; reason: string };

/** Options of {@link streamEvents}. */
export interface StreamEventsOptions {
  /** Event types or patterns (`call.*`, `session.turn`); all when left out. */
  types?: string | readonly string[];
  /** Only this call's events (`cl_…`). */
  callId?: string;
  /** Only this session's events (`se_…`). */
  sessionId?: string;
  /**
   * Start after this event id (`evt_…`), sent as `Last-Event-ID`; without it the stream starts
   * with the events from now on.
   */
  lastEventId?: string;
  /** Ends the stream: the iteration then finishes without an error. */
  signal?: AbortSignal;
  /** Told when the stream is connected, and before each reconnection. */
  onState?: (state: StreamState) => void;
  /**
   * Wait before reconnection `attempt` (1, 2, …), in milliseconds. Default: 500 ms doubling up
   * to 10 s, with ±20 % jitter; a `retry:` field from the daemon sets the first wait.
   */
  backoffMs?: (attempt: number) => number;
  /**
   * A connection that sends nothing (not even a heartbeat comment, which the daemon sends every
   * 15 s) for this long is taken as dropped, in milliseconds (default 45 000).
   */
  idleTimeoutMs?: number;
  /**
   * When the very first connection fails in transit (refused, reset), throw
   * DaemonUnreachableError rather than retry (default true). Once connected, every drop is
   * retried until `signal` ends the stream.
   */
  failFast?: boolean;
}

/** Answers after which retrying cannot help: the request itself is refused. */
const isFatal = (status: number) => status >= 400 && status < 500 && status !== 408 && status !== 429;

/** The default wait before reconnection `attempt`: `base` doubling up to 10 s, ±20 % jitter. */
function defaultBackoff(base: number, attempt: number): number {
  const ms = Math.min(base * 2 ** (attempt - 1), 10_000);
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done);
  });
}

/** The event of an SSE message, or null for one that is not an event object. */
function eventOf(message: EventSourceMessage): EventView | null {
  try {
    const value = JSON.parse(message.data) as unknown;
    if (value === null || typeof value !== 'object' || typeof (value as { id?: unknown }).id !== 'string') return null;
    return value as EventView;
  } catch {
    return null;
  }
}

/**
 * `GET /v1/events` with `Accept: text/event-stream`: the tenant's events as they happen, as an
 * async iterable of event objects in log order. A dropped connection, a silent one (no
 * heartbeat within {@link StreamEventsOptions.idleTimeoutMs}), an answer 5xx/408/429 or a daemon
 * restart is retried with backoff, resuming with `Last-Event-ID` = the last event yielded; an
 * event not after that one is skipped, so none is yielded twice. Breaking out of the loop or
 * aborting `signal` closes the connection.
 *
 * Before the first event, a reconnection without `lastEventId` resumes from "now" (the daemon
 * has no id to resume after).
 * @throws ApiResponseError when the daemon refuses the request (4xx: `invalid_request` naming
 *   `types`, `call_id` or `Last-Event-ID`, `unauthorized` …); DaemonUnreachableError when the first
 *   connection fails and {@link StreamEventsOptions.failFast} is on.
 */
export async function* streamEvents(transport: HttpTransport, options: StreamEventsOptions = {}): AsyncGenerator<EventView> {
  const stop = new AbortController();
  const onAbort = () => stop.abort();
  options.signal?.addEventListener('abort', onAbort);
  if (options.signal?.aborted) stop.abort();
  const qs = queryString({ types: options.types, call_id: options.callId, session_id: options.sessionId }, false);
  const url = `${transport.url}/v1/events${qs ? `?${qs}` : ''}`;
  const idleMs = options.idleTimeoutMs ?? 45_000;
  let base = 500;
  let last = options.lastEventId ?? null;
  let lastSeq = last === null ? null : eventSeq(last);
  let connectedOnce = false;
  let attempt = 0;
  try {
    while (!stop.signal.aborted) {
      let reason: string;
      const conn = new AbortController();
      // The body's reader is cancelled as well as the request aborted: an abort alone can be lost
      // once fetch's Request has been collected, leaving the stream (and the process) open
      // (https://github.com/nodejs/undici/issues/3644).
      let reader: ReadableStreamDefaultReader<Uint8Array> | null = null;
      const abortConn = () => {
        conn.abort();
        void reader?.cancel().catch(() => {});
      };
      stop.signal.addEventListener('abort', abortConn);
      let idle: NodeJS.Timeout | undefined;
      const touch = () => {
        clearTimeout(idle);
        idle = setTimeout(() => {
          conn.abort(new Error('idle'));
          void reader?.cancel().catch(() => {});
        }, idleMs);
      };
      try {
        const headers: Record<string, string> = { accept: 'text/event-stream', ...transport.upgradeHeaders() };
        if (last !== null) headers['last-event-id'] = last;
        touch();
        const res = await fetch(url, { headers, redirect: 'error', signal: conn.signal });
        if (!res.ok) {
          const err = await errorOfResponse(res, transport.url);
          if (isFatal(res.status)) throw err;
          reason = `${err.code}: ${err.message}`;
        } else if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream') || res.body === null) {
          await res.body?.cancel();
          throw new ApiResponseError(res.status, 'invalid_response', `the server at ${transport.url} did not answer with an event stream`);
        } else {
          connectedOnce = true;
          attempt = 0;
          options.onState?.({ state: 'connected' });
          const batch: EventSourceMessage[] = [];
          const parser = createParser({
            onEvent: (m) => batch.push(m),
            onRetry: (ms) => {
              base = Math.max(100, ms);
            },
          });
          const decoder = new TextDecoder();
          reader = res.body.getReader();
          for (;;) {
            const { value: chunk, done } = await reader.read();
            if (done || stop.signal.aborted) break;
            touch();
            parser.feed(decoder.decode(chunk, { stream: true }));
            for (const message of batch.splice(0)) {
              const event = eventOf(message);
              if (event === null) continue;
              const seq = eventSeq(event.id);
              if (seq !== null && lastSeq !== null && seq <= lastSeq) continue;
              last = event.id;
              lastSeq = seq;
              yield event;
            }
          }
          reason = conn.signal.aborted ? `nothing received for ${Math.round(idleMs / 1000)} s` : 'the daemon closed the stream';
        }
      } catch (err) {
        if (stop.signal.aborted) return;
        if (err instanceof ApiResponseError) throw err;
        reason = conn.signal.aborted ? `nothing received for ${Math.round(idleMs / 1000)} s` : describeCause(err);
        if (!connectedOnce && options.failFast !== false) throw new DaemonUnreachableError(transport.url, reason);
      } finally {
        clearTimeout(idle);
        stop.signal.removeEventListener('abort', abortConn);
        conn.abort();
        void reader?.cancel().catch(() => {});
      }
      attempt++;
      const delayMs = options.backoffMs ? options.backoffMs(attempt) : defaultBackoff(base, attempt);
      options.onState?.({ state: 'reconnecting', attempt, delayMs, reason });
      await pause(delayMs, stop.signal);
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    stop.abort();
  }
}
