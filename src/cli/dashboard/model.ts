/**
 * What `vagent dashboard` shows, as plain data: the calls of the tenant and their turns, built
 * from `GET /v1/calls` and then from the event stream (docs/events.md). A call first seen after
 * its first event (in progress at start, or first seen mid-call) gets its earlier events from
 * the log (`GET /v1/events?call_id=`, ./history.ts); every event is applied to its
 * call once, told apart by its id (ids sort as the events happened). Every function here is
 * pure — a model and an event in, a new model out — so the screen is a function of the events
 * seen, and is tested without a terminal.
 *
 * The fields read from an event's `data` (session.turn: `heard`, `reply`, `layer`,
 * `latency_ms`, `cost_inr`, `step_progress`, `cache_hit`; call.*: `direction`, `from`, `to`,
 * `agent_id`; call.ended: `end_reason`, `duration_s`, `cost_inr`) may each be missing: a missing
 * field leaves what is known unchanged.
 */
import type { CallStatus, EventView } from '../../client/index.js';
import { eventSeq } from '../../domain/events.js';
import { printable } from './printable.js';

/** One turn of a call: what the caller said, the reply, and how it was made. */
export interface TurnRow {
  at: number;
  heard: string | null;
  reply: string | null;
  layer: string | null;
  latencyMs: number | null;
  costInr: number | null;
}

/** Where a call is. */
export type CallPhase = 'created' | 'ringing' | 'answered' | 'ended';

/** A call as the dashboard shows it. Times are epoch seconds. */
export interface CallRow {
  callId: string;
  sessionId: string | null;
  direction: 'inbound' | 'outbound' | null;
  /** The other party's number: the caller's (inbound) or the callee's (outbound), E.164. */
  number: string | null;
  agentId: string | null;
  phase: CallPhase;
  startedAt: number;
  answeredAt: number | null;
  endedAt: number | null;
  endReason: string | null;
  durationS: number | null;
  costInr: number;
  /** Workflow steps done of total, from the last turn that said. */
  steps: { done: number; total: number } | null;
  /** The last {@link MAX_TURNS} turns, oldest first. */
  turns: TurnRow[];
  /** The last {@link MAX_EVENTS} events of the call, oldest first. */
  events: EventView[];
  /** The sequence number of the newest event applied to the row (its id's number), or null before any. */
  upTo: number | null;
  /**
   * The call's earlier events (`GET /v1/events?call_id=`): `wanted` for a call first seen after
   * its first event (in progress when the dashboard started, or first seen mid-call), `loading`
   * while they are fetched, `done` once merged (or not needed).
   */
  history: 'wanted' | 'loading' | 'done';
  /** False when the history could not be loaded whole (failed, or cut at the page cap). */
  historyComplete: boolean;
  /** While the history is not merged: the live events applied to the row (at most {@link MAX_PENDING}), to rebuild it with. */
  pending: EventView[];
}

/** The dashboard's model: the calls by id, newest first in `order`, and the day's counters. */
export interface DashboardModel {
  calls: Readonly<Record<string, CallRow>>;
  order: readonly string[];
  /** The last event applied (events not after it are ignored). */
  lastEventId: string | null;
  tenant: string | null;
  /** Calls started today (since local midnight of `day`). */
  callsToday: number;
  /** Local day `YYYY-MM-DD` the counters are of. */
  day: string;
  /** Spend today in INR: the daemon's figure at start plus the turns seen since; null when unknown. */
  spentInr: number | null;
  /** The daily budget in INR; null for none or unknown. */
  budgetInr: number | null;
  /** Turns that said whether their reply audio came from the cache, and how many did. */
  cache: { turns: number; hits: number };
}

/** Turns kept per call. */
export const MAX_TURNS = 200;
/** Events kept per call. */
export const MAX_EVENTS = 100;
/** Live events kept per call while its history loads. */
export const MAX_PENDING = 500;
/** Pages of 100 events read of a call's history, at most. */
export const MAX_HISTORY_PAGES = 10;
/** Seconds an ended call stays on the list (faded), then leaves it. */
export const FADE_AFTER_S = 60;
/** Seconds an ended call stays in the model (for its call view), then is dropped. */
export const FORGET_AFTER_S = 600;

const pad2 = (n: number) => String(n).padStart(2, '0');
/** The local day `YYYY-MM-DD` of an epoch-seconds time. */
export function localDay(epochS: number): string {
  const d = new Date(epochS * 1000);
  return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())}`;
}

/** A model with no calls, of the day of `nowS`. */
export function emptyModel(nowS: number): DashboardModel {
  return {
    calls: {},
    order: [],
    lastEventId: null,
    tenant: null,
    callsToday: 0,
    day: localDay(nowS),
    spentInr: null,
    budgetInr: null,
    cache: { turns: 0, hits: 0 },
  };
}

/** A non-empty string of an event's data, made safe to draw (./printable.ts), or null. */
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? printable(v) : null);
const safe = (v: string | null): string | null => (v === null ? null : printable(v));
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The fields of a row its events build up, as they are before the first (a history replay starts from these). */
export function unplayed(): Pick<
  CallRow,
  'phase' | 'endedAt' | 'endReason' | 'durationS' | 'costInr' | 'steps' | 'turns' | 'events' | 'upTo'
> {
  return { phase: 'created', endedAt: null, endReason: null, durationS: null, costInr: 0, steps: null, turns: [], events: [], upTo: null };
}

function newRow(callId: string, startedAt: number): CallRow {
  return {
    callId,
    sessionId: null,
    direction: null,
    number: null,
    agentId: null,
    startedAt,
    answeredAt: null,
    ...unplayed(),
    history: 'done',
    historyComplete: true,
    pending: [],
  };
}

/** A call of `GET /v1/calls` as a row. */
function rowOfStatus(c: CallStatus): CallRow {
  return {
    ...newRow(c.call_id, c.started_at),
    sessionId: c.session_id,
    direction: c.direction,
    number: safe(c.direction === 'inbound' ? c.from : c.to),
    agentId: safe(c.agent_id),
    phase: c.status === 'completed' ? 'ended' : c.answered_at !== null ? 'answered' : c.dial_status === 'ringing' ? 'ringing' : 'created',
    answeredAt: c.answered_at,
    endedAt: c.ended_at,
    durationS: c.duration_s,
    costInr: c.cost.total_inr,
    history: 'wanted',
  };
}

/** Puts `row` in the model (replacing the row of its id), keeping `order` newest first (`resort`: its start may have moved). */
export function put(model: DashboardModel, row: CallRow, resort = false): DashboardModel {
  const calls = { ...model.calls, [row.callId]: row };
  const order =
    model.calls[row.callId] !== undefined
      ? resort
        ? [...model.order].sort((a, b) => calls[b]!.startedAt - calls[a]!.startedAt)
        : model.order
      : [row.callId, ...model.order].sort((a, b) => calls[b]!.startedAt - calls[a]!.startedAt);
  return { ...model, calls, order };
}

/**
 * The model with the calls of `GET /v1/calls` (newest first) added: the calls in progress, the
 * calls of today counted, calls already known left as they are.
 */
export function seedCalls(model: DashboardModel, calls: readonly CallStatus[]): DashboardModel {
  let m = model;
  for (const c of calls) {
    if (localDay(c.started_at) === m.day && m.calls[c.call_id] === undefined) m = { ...m, callsToday: m.callsToday + 1 };
    if (m.calls[c.call_id] === undefined && c.status === 'in_progress') m = put(m, rowOfStatus(c));
  }
  return m;
}

/** The model with the day's spend and budget from the daemon (`GET /v1/telephony/check` `budget`). */
export function withBudget(model: DashboardModel, budget: { spent_inr: number; budget_inr: number | null }): DashboardModel {
  return { ...model, spentInr: budget.spent_inr, budgetInr: budget.budget_inr };
}

/** The row of the call an event is about (by call id, else by session id), or null. */
function rowOf(model: DashboardModel, e: EventView): CallRow | null {
  if (e.call_id !== null) return model.calls[e.call_id] ?? null;
  if (e.session_id === null) return null;
  for (const id of model.order) if (model.calls[id]!.sessionId === e.session_id) return model.calls[id]!;
  return null;
}

/** `data.step_progress` as steps done of total, or null. */
function stepsOf(v: unknown): { done: number; total: number } | null {
  if (v === null || typeof v !== 'object') return null;
  const done = num((v as { done?: unknown }).done);
  const total = num((v as { total?: unknown }).total);
  return done === null || total === null ? null : { done, total };
}

const keepLast = <T>(list: readonly T[], item: T, max: number): T[] => [...list.slice(Math.max(0, list.length - max + 1)), item];

/** True when `e` is already in `row` (its id not after the last event applied to the row). */
function seenBy(row: CallRow, e: EventView): boolean {
  const seq = eventSeq(e.id);
  return seq !== null && row.upTo !== null && seq <= row.upTo;
}

/** The model with a turn event's cache hit counted (once per turn applied to a row). */
export function countCache(m: DashboardModel, e: EventView): DashboardModel {
  if (e.type !== 'session.turn' || typeof e.data.cache_hit !== 'boolean') return m;
  return { ...m, cache: { turns: m.cache.turns + 1, hits: m.cache.hits + (e.data.cache_hit ? 1 : 0) } };
}

/** `row` after event `e` of its call (not yet applied to it); the model's counters are left to the caller. */
export function rowEvent(prev: CallRow, e: EventView): CallRow {
  const d = e.data;
  const seq = eventSeq(e.id);
  const row: CallRow = {
    ...prev,
    events: keepLast(prev.events, e, MAX_EVENTS),
    sessionId: prev.sessionId ?? e.session_id,
    upTo: seq ?? prev.upTo,
  };
  if (e.type.startsWith('call.')) {
    const direction = str(d.direction);
    if (direction === 'inbound' || direction === 'outbound') row.direction = direction;
    const number = row.direction === 'inbound' ? str(d.from) : str(d.to);
    if (number !== null) row.number = number;
    row.agentId = str(d.agent_id) ?? row.agentId;
  }
  switch (e.type) {
    case 'call.ringing':
      if (row.phase === 'created') row.phase = 'ringing';
      break;
    case 'call.answered':
      if (row.phase !== 'ended') row.phase = 'answered';
      row.answeredAt ??= e.created_at;
      break;
    case 'call.failed':
      row.endReason = str(d.end_reason) ?? str(d.dial_error) ?? row.endReason ?? 'dial_failed';
      break;
    case 'call.ended':
      row.phase = 'ended';
      row.endedAt = e.created_at;
      row.endReason = str(d.end_reason) ?? row.endReason;
      row.durationS = num(d.duration_s) ?? row.durationS;
      row.costInr = num(d.cost_inr) ?? row.costInr;
      break;
    case 'session.turn': {
      const turn: TurnRow = {
        at: e.created_at,
        heard: str(d.heard),
        reply: str(d.reply),
        layer: str(d.layer),
        latencyMs: num(d.latency_ms),
        costInr: num(d.cost_inr),
      };
      row.turns = keepLast(row.turns, turn, MAX_TURNS);
      if (row.phase === 'created' || row.phase === 'ringing') row.phase = 'answered'; // someone is talking
      if (turn.costInr !== null && row.phase !== 'ended') row.costInr += turn.costInr;
      row.steps = stepsOf(d.step_progress) ?? row.steps;
      break;
    }
    default:
      break;
  }
  return row;
}

/**
 * The model after event `e` of the live stream. An event not after
 * {@link DashboardModel.lastEventId} changes nothing (a replay); nor does one its call's row
 * already has (from the call's history). A call event of an unknown call adds the call, and
 * when it is not the call's first event (`sequence` over 1, other than `call.created`) asks for the call's history
 * ({@link CallRow.history}). A turn's cost is added to the day's spend.
 */
export function applyEvent(model: DashboardModel, e: EventView): DashboardModel {
  const seq = eventSeq(e.id);
  const lastSeq = model.lastEventId === null ? null : eventSeq(model.lastEventId);
  if (seq !== null && lastSeq !== null && seq <= lastSeq) return model;
  let m: DashboardModel = { ...model, lastEventId: e.id, tenant: model.tenant ?? e.tenant_id };
  if (e.type === 'session.turn') {
    const cost = num(e.data.cost_inr);
    if (m.spentInr !== null && cost !== null) m = { ...m, spentInr: m.spentInr + cost };
  }
  const existing = rowOf(m, e);
  if (existing === null && e.call_id === null) return m;
  let row = existing ?? newRow(e.call_id!, e.created_at);
  if (existing === null) {
    // A call first seen now (started before the dashboard, past the calls it loaded) counts too.
    if (localDay(e.created_at) === m.day) m = { ...m, callsToday: m.callsToday + 1 };
    // Only its session's `session.opened` (of no call) comes before a call's `call.created`.
    if (e.sequence !== null && e.sequence > 1 && e.type !== 'call.created') row = { ...row, history: 'wanted' };
  }
  if (seenBy(row, e)) return m;
  if (row.history !== 'done') row = { ...row, pending: keepLast(row.pending, e, MAX_PENDING) };
  return put(countCache(m, e), rowEvent(row, e));
}

/**
 * The model on the day of `nowS`, without the calls ended more than {@link FORGET_AFTER_S} ago:
 * after midnight the day's counters start again (the spend is unknown until the daemon says).
 */
export function prune(model: DashboardModel, nowS: number): DashboardModel {
  let m = model;
  const day = localDay(nowS);
  if (day !== m.day) m = { ...m, day, callsToday: 0, spentInr: null, cache: { turns: 0, hits: 0 } };
  const stale = m.order.filter((id) => {
    const r = m.calls[id]!;
    return r.endedAt !== null && nowS - r.endedAt > FORGET_AFTER_S;
  });
  if (stale.length === 0) return m;
  const calls = { ...m.calls };
  for (const id of stale) delete calls[id];
  return { ...m, calls, order: m.order.filter((id) => calls[id] !== undefined) };
}

/** True when the call ended: its row is shown faded. */
export const isEnded = (r: CallRow): boolean => r.phase === 'ended';

/**
 * The rows of the list, newest first: calls in progress, and calls ended less than
 * {@link FADE_AFTER_S} ago; with `filter`, only those whose id, number, agent or end reason
 * contains it (case-insensitive).
 */
export function visibleRows(model: DashboardModel, nowS: number, filter = ''): CallRow[] {
  const f = filter.trim().toLowerCase();
  return model.order
    .map((id) => model.calls[id]!)
    .filter((r) => r.endedAt === null || nowS - r.endedAt < FADE_AFTER_S)
    .filter((r) => f === '' || [r.callId, r.number, r.agentId, r.endReason].some((v) => v?.toLowerCase().includes(f)));
}

/** Calls in progress. */
export const activeCount = (model: DashboardModel): number => model.order.filter((id) => model.calls[id]!.phase !== 'ended').length;

/** Percent of the turns whose reply came from the audio cache, or null before any said. */
export const cacheHitPercent = (model: DashboardModel): number | null =>
  model.cache.turns === 0 ? null : Math.round((100 * model.cache.hits) / model.cache.turns);

/** A number with its middle masked for a screen others may see: `+91987•••3210`. */
export function maskNumber(n: string | null): string {
  if (n === null) return '-';
  if (n.length <= 7) return n;
  return `${n.slice(0, 6)}${'•'.repeat(Math.max(1, n.length - 10))}${n.slice(-4)}`;
}

/** Seconds the call has lasted (to its end, or to `nowS`). */
export function elapsedS(r: CallRow, nowS: number): number {
  if (r.durationS !== null && r.phase === 'ended') return r.durationS;
  const from = r.answeredAt ?? r.startedAt;
  return Math.max(0, (r.endedAt ?? nowS) - from);
}

/** Seconds as `m:ss` or `h:mm:ss`. */
export function clock(s: number): string {
  const t = Math.floor(s);
  const h = Math.floor(t / 3600);
  const mm = Math.floor((t % 3600) / 60);
  return h > 0 ? `${h}:${pad2(mm)}:${pad2(t % 60)}` : `${mm}:${pad2(t % 60)}`;
}
