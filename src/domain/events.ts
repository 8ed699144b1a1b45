/**
 * The event vocabulary (docs/events.md): what each state change is called, why a call ends, how
 * an event is named, and how a filter's type patterns (`call.*`) select types.
 */

/** Every event type, in the order docs/events.md lists them. */
export const EVENT_TYPES = [
  'call.created',
  'call.ringing',
  'call.answered',
  'call.failed',
  'call.ended',
  'call.barge_in',
  'call.dtmf',
  'session.opened',
  'session.turn',
  'session.ended',
  'inbound.unrouted',
  'budget.exceeded',
] as const;

/** One of {@link EVENT_TYPES}. */
export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Why a call ended (`call.ended` `data.end_reason`; docs/events.md "End reasons"): the agent
 * closed it; the caller hung up; an API `hangup`; nobody answered; the callee was busy; the dial
 * failed; the call reached its time limit; its media failed; the daemon restarted under it.
 */
export const END_REASONS = [
  'completed_by_agent',
  'caller_hung_up',
  'api_hangup',
  'no_answer',
  'busy',
  'dial_failed',
  'max_duration',
  'media_failed',
  'daemon_restart',
] as const;

/** One of {@link END_REASONS}. */
export type EndReason = (typeof END_REASONS)[number];

/** An event id: `evt_` and the event's place in the log, 12 digits or more, so that ids sort as the events do. */
export const EVENT_ID_PATTERN = /^evt_[0-9]{12,16}$/;

/** The id of the event at place `seq` of the log. */
export function eventId(seq: number): string {
  return `evt_${String(seq).padStart(12, '0')}`;
}

/** The log place of event id `id`, or null when `id` is not one. */
export function eventSeq(id: string): number | null {
  if (!EVENT_ID_PATTERN.test(id)) return null;
  const n = Number(id.slice(4));
  return Number.isSafeInteger(n) ? n : null;
}

/** A type pattern: a type, `prefix.*` (every type of that prefix), or `*` (all). */
export const EVENT_PATTERN = /^(\*|[a-z_]+\.\*|[a-z_]+\.[a-z_]+)$/;

/**
 * The types `patterns` select, in {@link EVENT_TYPES} order; the patterns that select none are
 * returned apart, so that the caller can name them.
 */
export function typesOf(patterns: readonly string[]): { types: EventType[]; unknown: string[] } {
  const unknown: string[] = [];
  const chosen = new Set<EventType>();
  for (const p of patterns) {
    const matches = EVENT_TYPES.filter((t) => p === '*' || p === t || (p.endsWith('.*') && t.startsWith(p.slice(0, -1))));
    if (matches.length === 0) unknown.push(p);
    for (const t of matches) chosen.add(t);
  }
  return { types: EVENT_TYPES.filter((t) => chosen.has(t)), unknown };
}
