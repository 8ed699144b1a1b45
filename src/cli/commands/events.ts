/**
 * `vagent events list|tail`: the tenant's event log (docs/events.md) as a page
 * (`GET /v1/events`) or followed live over Server-Sent Events, printed one line per event —
 * `2026-11-27 12:00:01  --> call.answered  evt_000000000042  cl_123` — or, with `--json`, one
 * event object per line (JSON Lines; `list` ends with a line holding the page's cursor).
 */
import type { EventListQuery, EventView, StreamState } from '../../client/index.js';
import { EVENT_ID_PATTERN, EVENT_PATTERN, typesOf } from '../../domain/events.js';
import { ID_PATTERNS } from '../../domain/ids.js';
import type { CommandContext } from '../context.js';
import { InterruptedError, InvalidValueError } from '../errors.js';
import { accent, bad, dim, good, hint, mark, printable, printJsonLine, quoted, say } from '../output.js';
import { wholeNumber } from '../number-arg.js';

/** Flags shared by `events list` and `events tail`. */
export interface EventFilterFlags {
  /** `--type`, repeatable; each may also be comma-separated. */
  type?: string[];
  /** `--call cl_…`. */
  call?: string;
}

/** Flags of `vagent events list`. */
export interface EventListFlags extends EventFilterFlags {
  after?: string;
  limit?: string;
}

/**
 * The event type patterns of `--type` flags (`call.*`, `session.turn`, `*`), or undefined for all.
 * @throws InvalidValueError (param `types`) naming a pattern that is malformed or selects no type.
 */
export function typePatterns(flags: string[] | undefined): string[] | undefined {
  if (flags === undefined || flags.length === 0) return undefined;
  const patterns = flags.flatMap((f) => f.split(',')).map((p) => p.trim());
  const example = 'e.g. --type call.* --type session.turn';
  for (const p of patterns) {
    if (!EVENT_PATTERN.test(p))
      throw new InvalidValueError(
        `--type must be an event type or pattern such as call.* or session.turn, not ${quoted(p)}`,
        'types',
        example,
      );
  }
  const { unknown } = typesOf(patterns);
  if (unknown.length > 0)
    throw new InvalidValueError(
      `--type ${unknown.map((u) => quoted(u)).join(', ')}: no such event type (see docs/events.md for the list)`,
      'types',
      example,
    );
  return patterns;
}

/** The `--call` flag checked, or undefined. @throws InvalidValueError (param `call_id`). */
function callFlag(value: string | undefined): string | undefined {
  if (value !== undefined && !ID_PATTERNS.call.test(value))
    throw new InvalidValueError(`--call must be a call id such as cl_4503599627370497, not ${quoted(value)}`, 'call_id');
  return value;
}

const pad2 = (n: number) => String(n).padStart(2, '0');

/** An epoch-seconds timestamp as local `YYYY-MM-DD HH:MM:SS`. */
export function formatSeconds(epochS: number): string {
  const d = new Date(epochS * 1000);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A few words of what an event says (its `data`), for the end of its line; fields missing are left out. */
export function eventDetail(e: EventView): string {
  const d = e.data;
  switch (e.type) {
    case 'call.ended': {
      const reason = str(d.end_reason);
      const secs = num(d.duration_s);
      return [reason, secs === undefined ? undefined : `${Math.round(secs)} s`].filter(Boolean).join(' ');
    }
    case 'call.failed':
      return str(d.dial_error) ?? str(d.error) ?? '';
    case 'call.created':
      return [str(d.direction), str(d.agent_id)].filter(Boolean).join(' ');
    case 'session.turn': {
      const heard = str(d.heard);
      const ms = num(d.latency_ms);
      return [
        heard === undefined ? undefined : `"${heard.length > 40 ? `${heard.slice(0, 39)}…` : heard}"`,
        str(d.layer),
        ms === undefined ? undefined : `${Math.round(ms)} ms`,
      ]
        .filter(Boolean)
        .join(' ');
    }
    case 'call.dtmf':
      return str(d.digits) ?? str(d.keys) ?? '';
    default:
      return '';
  }
}

/** One line of an event, as `stripe listen` prints one: time, arrow, type, id, call or session, detail. */
export function eventLine(e: EventView): string {
  const shownType = printable(e.type);
  const type = e.type === 'call.ended' || e.type === 'call.failed' || e.type === 'budget.exceeded' ? mark(shownType) : accent(shownType);
  // Every field is the daemon's (and `heard` a caller's words): shown, never obeyed.
  const subject = printable(e.call_id ?? e.session_id ?? '');
  const detail = printable(eventDetail(e));
  return `${formatSeconds(e.created_at)}  --> ${type.padEnd(type.length + Math.max(0, 16 - e.type.length))} ${printable(e.id)}  ${subject}${detail ? `  ${dim(detail)}` : ''}`.trimEnd();
}

/**
 * `vagent events list [--type T…] [--call cl_…] [--after evt_…] [--limit N]`: one page of
 * events, oldest first; the next page's `--after` is hinted on stderr. With `--json`, the page
 * as JSON Lines: one event object per line, then a last line `{"has_more", "next_cursor"}` (the
 * page's own fields, as `call list --json` gives them; pass `next_cursor` as `--after`).
 * @throws InvalidValueError (exit 1, invalid_request) for a bad flag, before anything is sent;
 *   the API's not_found for a `--call` with no event that is no call of the tenant.
 */
export async function list(ctx: CommandContext, flags: EventListFlags): Promise<void> {
  const query: EventListQuery = {};
  const types = typePatterns(flags.type);
  if (types) query.types = types;
  const callId = callFlag(flags.call);
  if (callId) query.call_id = callId;
  if (flags.after !== undefined) {
    if (!EVENT_ID_PATTERN.test(flags.after))
      throw new InvalidValueError(`--after must be an event id such as evt_000000000042, not ${quoted(flags.after)}`, 'after');
    query.after = flags.after;
  }
  if (flags.limit !== undefined) query.limit = wholeNumber('--limit', 'limit', flags.limit, 1, 100);
  const client = await ctx.client();
  const page = await client.listEvents(query);
  // A call with no event may be no call at all: the API's own answer says which.
  if (page.data.length === 0 && callId !== undefined && flags.after === undefined) await client.getCall(callId);
  if (ctx.json) {
    for (const e of page.data) printJsonLine(e);
    printJsonLine({ has_more: page.has_more, next_cursor: page.has_more ? page.next_cursor : null });
    return;
  }
  for (const e of page.data) say(eventLine(e));
  if (page.data.length === 0) hint(emptyText(flags.after, callId));
  if (page.has_more && page.next_cursor) hint(`more events: add --after ${page.next_cursor}`);
}

/** What an empty page says: no events after a cursor, of a call (that exists), or at all. */
function emptyText(after: string | undefined, callId: string | undefined): string {
  const of = callId === undefined ? '' : ` of call ${callId}`;
  if (after !== undefined) return `No events${of} after ${after}.`;
  return callId === undefined ? 'No events yet.' : `No events${of} (they are kept for events_retention_days).`;
}

/** The stderr line for a change of the stream's state. */
function stateLine(url: string, state: StreamState, first: boolean): string {
  if (state.state === 'connected')
    return first ? `${good('Ready!')} Following the events of ${url} (Ctrl-C to stop)` : good('Reconnected.');
  return bad(`Connection lost (${state.reason}); reconnecting in ${(state.delayMs / 1000).toFixed(1)} s (try ${state.attempt})…`);
}

/**
 * `vagent events tail [--type T…] [--call cl_…] [--after evt_…]`: follows the events as they
 * happen until Ctrl-C (exit 130), reconnecting after a dropped connection or a daemon restart
 * without losing or repeating an event; the connection's state is told on stderr.
 * @throws InvalidValueError for a bad flag; DaemonUnreachableError (exit 3) when the daemon is
 *   not there at first; the API's error when it refuses the stream.
 */
export async function tail(ctx: CommandContext, flags: EventFilterFlags & { after?: string }): Promise<void> {
  const types = typePatterns(flags.type);
  const callId = callFlag(flags.call);
  if (flags.after !== undefined && !EVENT_ID_PATTERN.test(flags.after))
    throw new InvalidValueError(`--after must be an event id such as evt_000000000042, not ${quoted(flags.after)}`, 'Last-Event-ID');
  const client = await ctx.client();
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  let connections = 0;
  try {
    for await (const e of client.streamEvents({
      types,
      callId,
      lastEventId: flags.after,
      signal: stop.signal,
      onState: (state) => {
        if (!ctx.json || state.state === 'reconnecting') hint(stateLine(client.url, state, connections === 0));
        if (state.state === 'connected') connections++;
      },
    })) {
      if (ctx.json) printJsonLine(e);
      else say(eventLine(e));
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
  if (stop.signal.aborted) throw new InterruptedError('stopped following events');
}
