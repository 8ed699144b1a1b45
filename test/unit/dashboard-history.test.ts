/**
 * The dashboard's history of a call first seen after its first event: a call in progress when
 * the dashboard starts, or one whose first event seen live is not its first. Its earlier events
 * (`GET /v1/events?call_id=`) are merged with the live ones, each event once, in order.
 */
import { describe, expect, it } from 'vitest';
import type { CallStatus } from '../../src/client/index.js';
import { historyLoading, historyWanted, mergeHistory } from '../../src/cli/dashboard/history.js';
import { applyEvent, cacheHitPercent, emptyModel, MAX_PENDING, seedCalls, withBudget } from '../../src/cli/dashboard/model.js';
import type { EventView } from '../../src/contract/events.js';
import { eventId } from '../../src/domain/events.js';

const T0 = new Date(2026, 10, 27, 12, 0, 0).getTime() / 1000;

/** The events of one call, ids `evt_…` from `firstId` on, sequences 1, 2, … */
function callEvents(callId: string, firstId: number, kinds: Array<[EventView['type'], Record<string, unknown>]>): EventView[] {
  return kinds.map(([type, data], i) => ({
    id: eventId(firstId + i * 2),
    type,
    created_at: T0 + i * 5,
    tenant_id: 'acme',
    call_id: callId,
    session_id: callId.replace('cl_', 'se_'),
    sequence: i + 1,
    data,
  }));
}

const turn = (heard: string, extra: Record<string, unknown> = {}): [EventView['type'], Record<string, unknown>] => [
  'session.turn',
  { heard, reply: `re: ${heard}`, layer: 'capture', latency_ms: 400, cost_inr: 0.5, cache_hit: true, ...extra },
];

/** A call with a created, an answered and four turns: ids 2, 4, … 12. */
const priya = () =>
  callEvents('cl_1', 2, [
    ['call.created', { direction: 'outbound', to: '+919876543210', agent_id: 'ag_clinic_booking' }],
    ['call.answered', {}],
    turn('My name is Priya Patel', { step_progress: { done: 1, total: 4 } }),
    turn('yes', { step_progress: { done: 2, total: 4 } }),
    turn('tomorrow', { step_progress: { done: 3, total: 4 }, cache_hit: false }),
    turn('10 am', { step_progress: { done: 4, total: 4 } }),
  ]);

const status = (id: string): CallStatus => ({
  call_id: id,
  session_id: id.replace('cl_', 'se_'),
  agent_id: 'ag_clinic_booking',
  status: 'in_progress',
  started_at: T0,
  ended_at: null,
  duration_s: null,
  customer_name: null,
  cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 1 },
  direction: 'outbound',
  to: '+919876543210',
  from: '+912240001234',
  dial_status: 'answered',
  dial_error: null,
  trunk_id: null,
  room_name: null,
  provider_call_id: null,
  answered_at: T0 + 5,
  transport: 'livekit',
  source: 'phone',
  recording_url: null,
});

describe('dashboard call history', () => {
  it('a call first seen mid-call shows its whole transcript and events once its history is merged, none twice', () => {
    const all = priya();
    // The dashboard starts after the second turn: the live stream brings turns 3 and 4.
    let m = withBudget(emptyModel(T0), { spent_inr: 10, budget_inr: null });
    m = applyEvent(m, all[4]!);
    expect(historyWanted(m)).toEqual(['cl_1']);
    expect(m.calls.cl_1!.turns.map((t) => t.heard)).toEqual(['tomorrow']);
    m = historyLoading(m, historyWanted(m));
    expect(historyWanted(m)).toEqual([]);
    expect(m.calls.cl_1!.history).toBe('loading');
    m = applyEvent(m, all[5]!);
    // The history as read: every event up to the third turn (the one also seen live).
    m = mergeHistory(m, 'cl_1', all.slice(0, 5), true);
    const r = m.calls.cl_1!;
    expect(r.turns.map((t) => t.heard)).toEqual(['My name is Priya Patel', 'yes', 'tomorrow', '10 am']);
    expect(r.events.map((e) => e.type)).toEqual([
      'call.created',
      'call.answered',
      'session.turn',
      'session.turn',
      'session.turn',
      'session.turn',
    ]);
    expect(new Set(r.events.map((e) => e.id)).size).toBe(6);
    expect(r).toMatchObject({ phase: 'answered', steps: { done: 4, total: 4 }, costInr: 2, history: 'done', historyComplete: true });
    expect(r.number).toBe('+919876543210');
    expect(r.startedAt).toBe(T0);
    // Each turn's cache hit counted once; the day's spend counts only the turns seen live.
    expect(m.cache).toEqual({ turns: 4, hits: 3 });
    expect(cacheHitPercent(m)).toBe(75);
    expect(m.spentInr).toBe(11);
    // Merged once: a second answer changes nothing.
    expect(mergeHistory(m, 'cl_1', all, true)).toBe(m);
  });

  it('a call in progress at start: its history is wanted, and live events the history already had are not applied twice', () => {
    const all = priya();
    let m = seedCalls(emptyModel(T0), [status('cl_1')]);
    expect(historyWanted(m)).toEqual(['cl_1']);
    m = historyLoading(m, ['cl_1']);
    // The history is read up to the fourth turn, before the live stream delivers the third and fourth.
    m = mergeHistory(m, 'cl_1', all, true);
    m = applyEvent(m, all[4]!);
    m = applyEvent(m, all[5]!);
    const ended = callEvents('cl_1', 14, [['call.ended', { end_reason: 'completed_by_agent', cost_inr: 2.5 }]])[0]!;
    m = applyEvent(m, { ...ended, sequence: 7 });
    const r = m.calls.cl_1!;
    expect(r.turns).toHaveLength(4);
    expect(r.events).toHaveLength(7);
    expect(r).toMatchObject({ phase: 'ended', endReason: 'completed_by_agent', costInr: 2.5 });
    expect(m.callsToday).toBe(1);
    expect(m.tenant).toBe('acme');
  });

  it('a call whose first event is seen live needs no history', () => {
    const m = applyEvent(emptyModel(T0), priya()[0]!);
    expect(m.calls.cl_1!.history).toBe('done');
    // A daemon's call.created comes after its session's session.opened (sequence 1, of no call).
    const second = applyEvent(emptyModel(T0), { ...priya()[0]!, sequence: 2 });
    expect(second.calls.cl_1!.history).toBe('done');
    expect(historyWanted(m)).toEqual([]);
  });

  it('a history that could not be read keeps the live events and says so; the live events kept meanwhile are bounded', () => {
    const all = priya();
    let m = applyEvent(emptyModel(T0), all[4]!);
    m = historyLoading(m, ['cl_1']);
    m = mergeHistory(m, 'cl_1', [], false);
    expect(m.calls.cl_1).toMatchObject({ history: 'done', historyComplete: false, phase: 'answered' });
    expect(m.calls.cl_1!.turns.map((t) => t.heard)).toEqual(['tomorrow']);
    expect(m.cache).toEqual({ turns: 1, hits: 0 });

    let busy = applyEvent(emptyModel(T0), all[4]!);
    for (let i = 0; i < MAX_PENDING + 50; i++)
      busy = applyEvent(busy, { ...all[5]!, id: eventId(100 + i), sequence: 10 + i, data: { heard: `t${i}` } });
    expect(busy.calls.cl_1!.pending).toHaveLength(MAX_PENDING);
    // Events of other calls in a history answer are ignored, and a call no longer shown is left alone.
    const other = callEvents('cl_9', 1000, [turn('not mine')]);
    const merged = mergeHistory(busy, 'cl_1', [...all.slice(0, 4), ...other], true);
    expect(merged.calls.cl_1!.turns.some((t) => t.heard === 'not mine')).toBe(false);
    expect(merged.calls.cl_1!.turns.at(-1)!.heard).toBe(`t${MAX_PENDING + 49}`);
    expect(merged.calls.cl_1).toMatchObject({ history: 'done', pending: [] });
    expect(mergeHistory(busy, 'cl_404', all, true)).toBe(busy);
  });
});
