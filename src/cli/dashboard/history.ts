/**
 * The earlier events of a call the dashboard first sees after its first event (in progress
 * when it starts, or first seen mid-call), read from the event log (`GET /v1/events?call_id=`,
 * docs/events.md) and merged into the model (./model.ts): the call's row is rebuilt from them
 * and the live events it was shown with, each event once (told apart by its id), in order.
 */
import type { EventView } from '../../client/index.js';
import { eventSeq } from '../../domain/events.js';
import { countCache, put, rowEvent, unplayed, type CallPhase, type CallRow, type DashboardModel } from './model.js';

/** The ids of the calls whose history is wanted and not yet being loaded. */
export const historyWanted = (model: DashboardModel): string[] => model.order.filter((id) => model.calls[id]!.history === 'wanted');

/** The model with the history of `ids` marked as being loaded. */
export function historyLoading(model: DashboardModel, ids: readonly string[]): DashboardModel {
  let m = model;
  for (const id of ids) {
    const r = m.calls[id];
    if (r?.history === 'wanted') m = put(m, { ...r, history: 'loading' });
  }
  return m;
}

const PHASES: readonly CallPhase[] = ['created', 'ringing', 'answered', 'ended'];
const laterPhase = (a: CallPhase, b: CallPhase): CallPhase => (PHASES.indexOf(a) >= PHASES.indexOf(b) ? a : b);

/**
 * The model with call `callId`'s history (its events from `GET /v1/events?call_id=`, oldest
 * first) merged in: the row is rebuilt from the history and the live events it was shown with
 * (each event once, by id, in order), so the transcript and events start at the call's first.
 * `complete` false: the history was cut (the page cap) or failed, and the row says so. A call
 * no longer in the model, or already loaded, is left as it is.
 */
export function mergeHistory(model: DashboardModel, callId: string, history: readonly EventView[], complete: boolean): DashboardModel {
  const before = model.calls[callId];
  if (before === undefined || before.history === 'done') return model;
  const mine = history.filter(
    (e) => e.call_id === callId || (e.call_id === null && e.session_id !== null && e.session_id === before.sessionId),
  );
  const liveIds = new Set(before.pending.map((e) => e.id));
  const byId = new Map<string, EventView>();
  for (const e of [...mine, ...before.pending]) byId.set(e.id, e);
  const all = [...byId.values()].sort((a, b) => (eventSeq(a.id) ?? 0) - (eventSeq(b.id) ?? 0));
  let m: DashboardModel = { ...model, tenant: model.tenant ?? mine[0]?.tenant_id ?? null };
  let row: CallRow = { ...before, ...unplayed() };
  for (const e of all) {
    row = rowEvent(row, e);
    if (!liveIds.has(e.id)) m = countCache(m, e);
  }
  row = {
    ...row,
    phase: laterPhase(row.phase, before.phase),
    answeredAt: row.answeredAt ?? before.answeredAt,
    startedAt: Math.min(before.startedAt, all[0]?.created_at ?? before.startedAt),
    // What GET /v1/calls said the call had cost may count more than its turns' events.
    costInr: row.phase === 'ended' ? row.costInr : Math.max(row.costInr, before.costInr),
    history: 'done',
    historyComplete: complete,
    pending: [],
  };
  return put(m, row, true);
}
