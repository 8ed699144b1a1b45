import { describe, expect, it } from 'vitest';
import type { CallStatus } from '../../src/client/index.js';
import {
  activeCount,
  applyEvent,
  cacheHitPercent,
  clock,
  elapsedS,
  emptyModel,
  maskNumber,
  MAX_TURNS,
  prune,
  seedCalls,
  visibleRows,
  withBudget,
} from '../../src/cli/dashboard/model.js';
import { eachKey, initialUi, MAX_FILTER, onKey, type KeyInfo, type UiState } from '../../src/cli/dashboard/keys.js';
import type { EventView } from '../../src/contract/events.js';
import { eventId } from '../../src/domain/events.js';

const T0 = new Date(2026, 10, 27, 12, 0, 0).getTime() / 1000;
let seq = 0;
const ev = (type: EventView['type'], callId: string | null, data: Record<string, unknown> = {}, at = T0 + seq): EventView => ({
  id: eventId(++seq),
  type,
  created_at: at,
  tenant_id: 'acme',
  call_id: callId,
  session_id: callId === null ? 'se_99' : callId.replace('cl_', 'se_'),
  sequence: 1,
  data,
});
const apply = (events: EventView[], m = emptyModel(T0)) => events.reduce(applyEvent, m);

const status = (id: string, over: Partial<CallStatus> = {}): CallStatus => ({
  call_id: id,
  session_id: id.replace('cl_', 'se_'),
  agent_id: 'ag_emi_reminder',
  status: 'in_progress',
  started_at: T0 - 30,
  ended_at: null,
  duration_s: null,
  customer_name: null,
  cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 1.5 },
  direction: 'outbound',
  to: '+919876543210',
  from: '+912240001234',
  dial_status: 'answered',
  dial_error: null,
  trunk_id: null,
  room_name: null,
  provider_call_id: null,
  answered_at: T0 - 25,
  transport: 'livekit',
  source: 'phone',
  recording_url: null,
  ...over,
});

describe('dashboard model', () => {
  it('builds a call from its events: parties, phase, turns, steps, cost, end', () => {
    const m = apply([
      ev('call.created', 'cl_1', { direction: 'inbound', from: '+919876543210', to: '+918047001234', agent_id: 'ag_clinic_booking' }),
      ev('call.answered', 'cl_1'),
      ev('session.turn', 'cl_1', {
        heard: 'my name is Priya',
        reply: 'Thanks Priya',
        layer: 'capture',
        latency_ms: 840,
        cost_inr: 0.25,
        step_progress: { done: 1, total: 4 },
      }),
      ev('session.turn', 'cl_1', { heard: 'tomorrow', reply: 'At what time?', layer: 'llm', latency_ms: 1300, cost_inr: 0.5 }),
    ]);
    const r = m.calls.cl_1!;
    expect(r).toMatchObject({
      direction: 'inbound',
      number: '+919876543210',
      agentId: 'ag_clinic_booking',
      phase: 'answered',
      costInr: 0.75,
    });
    expect(r.steps).toEqual({ done: 1, total: 4 });
    expect(r.turns.map((t) => t.layer)).toEqual(['capture', 'llm']);
    expect(r.events).toHaveLength(4);
    expect(m.tenant).toBe('acme');
    expect(m.callsToday).toBe(1);
    expect(activeCount(m)).toBe(1);

    const ended = apply([ev('call.ended', 'cl_1', { end_reason: 'caller_hung_up', duration_s: 75, cost_inr: 2.1 }, T0 + 100)], m);
    expect(ended.calls.cl_1).toMatchObject({ phase: 'ended', endReason: 'caller_hung_up', durationS: 75, costInr: 2.1 });
    expect(activeCount(ended)).toBe(0);
    // Shown faded for a minute, then off the list; forgotten after ten.
    expect(visibleRows(ended, T0 + 130)).toHaveLength(1);
    expect(visibleRows(ended, T0 + 161)).toHaveLength(0);
    expect(prune(ended, T0 + 200).calls.cl_1).toBeDefined();
    expect(prune(ended, T0 + 701).calls.cl_1).toBeUndefined();
  });

  it('ignores a replayed event, and treats missing or ill-typed fields gracefully', () => {
    const first = ev('session.turn', 'cl_2', { heard: 42, reply: null, latency_ms: 'fast', step_progress: 'x' });
    const m = apply([first]);
    expect(m.calls.cl_2).toMatchObject({ direction: null, number: null, agentId: null, phase: 'answered', costInr: 0, steps: null });
    expect(m.calls.cl_2!.turns[0]).toMatchObject({ heard: null, reply: null, latencyMs: null });
    expect(applyEvent(m, first)).toBe(m);
    // A session event of no call (a text chat) adds no row.
    expect(apply([ev('session.turn', null, { heard: 'hi' })], m).order).toEqual(['cl_2']);
  });

  it('seeds the calls in progress from GET /v1/calls and counts the day', () => {
    const m = seedCalls(emptyModel(T0), [
      status('cl_3', { started_at: T0 - 10 }),
      status('cl_4', { status: 'completed', ended_at: T0 - 5, started_at: T0 - 60 }),
      status('cl_5', { started_at: T0 - 86_400 * 2 }),
    ]);
    expect(m.order).toEqual(['cl_3', 'cl_5']);
    expect(m.callsToday).toBe(2);
    expect(m.calls.cl_3).toMatchObject({ phase: 'answered', number: '+919876543210', costInr: 1.5 });
    // An event of a seeded call does not count it again.
    expect(apply([ev('call.ended', 'cl_3', { end_reason: 'api_hangup' })], m).callsToday).toBe(2);
  });

  it('adds turn costs to the day spend, and counts cache hits', () => {
    let m = withBudget(emptyModel(T0), { spent_inr: 10, budget_inr: 500 });
    m = apply(
      [
        ev('session.turn', 'cl_6', { cost_inr: 0.5, cache_hit: true }),
        ev('session.turn', 'cl_6', { cost_inr: 0.25, cache_hit: false }),
        ev('session.turn', 'cl_6', { cost_inr: 0.25 }),
      ],
      m,
    );
    expect(m.spentInr).toBe(11);
    expect(m.budgetInr).toBe(500);
    expect(cacheHitPercent(m)).toBe(50);
    expect(cacheHitPercent(emptyModel(T0))).toBeNull();
  });

  it('keeps a bounded number of turns, filters, and sorts newest first', () => {
    const events = [ev('call.created', 'cl_7', { direction: 'outbound', to: '+919812345678', agent_id: 'ag_emi_reminder' }, T0)];
    for (let i = 0; i < MAX_TURNS + 20; i++) events.push(ev('session.turn', 'cl_7', { heard: `t${i}` }, T0 + 1));
    events.push(ev('call.created', 'cl_8', { direction: 'inbound', from: '+918000000001', agent_id: 'ag_clinic_booking' }, T0 + 5));
    const m = apply(events);
    expect(m.calls.cl_7!.turns).toHaveLength(MAX_TURNS);
    expect(m.calls.cl_7!.turns.at(-1)!.heard).toBe(`t${MAX_TURNS + 19}`);
    expect(m.order).toEqual(['cl_8', 'cl_7']);
    expect(visibleRows(m, T0 + 10, 'CLINIC').map((r) => r.callId)).toEqual(['cl_8']);
    expect(visibleRows(m, T0 + 10, '98123').map((r) => r.callId)).toEqual(['cl_7']);
  });

  it('formats: masked numbers, clock, elapsed time', () => {
    expect(maskNumber('+919876543210')).toBe('+91987•••3210');
    expect(maskNumber(null)).toBe('-');
    expect(maskNumber('1234')).toBe('1234');
    expect(clock(5)).toBe('0:05');
    expect(clock(3725)).toBe('1:02:05');
    const m = apply([ev('call.created', 'cl_9', {}, T0), ev('call.answered', 'cl_9', {}, T0 + 10)]);
    expect(elapsedS(m.calls.cl_9!, T0 + 70)).toBe(60);
  });
});

describe('dashboard keys', () => {
  const rows = apply([
    ev('call.created', 'cl_20', { direction: 'inbound' }, T0 + 1),
    ev('call.created', 'cl_21', { direction: 'inbound' }, T0 + 2),
  ]);
  const shown = visibleRows(rows, T0 + 3);

  it('moves with arrows and j/k from the first row, clamped; Enter opens, Esc goes back', () => {
    let ui = onKey(initialUi, 'j', {}, shown).ui;
    expect(ui.selectedId).toBe('cl_20');
    ui = onKey(ui, '', { downArrow: true }, shown).ui;
    expect(ui.selectedId).toBe('cl_20');
    ui = onKey(ui, 'k', {}, shown).ui;
    ui = onKey(ui, '', { upArrow: true }, shown).ui;
    expect(ui.selectedId).toBe('cl_21');
    ui = onKey(ui, '', { return: true }, shown).ui;
    expect(ui).toMatchObject({ screen: 'call', selectedId: 'cl_21' });
    ui = onKey(ui, '', { escape: true }, shown).ui;
    expect(ui.screen).toBe('list');
  });

  it('hangs up only after y, filters with /, quits with q', () => {
    const asked = onKey(initialUi, 'h', {}, shown);
    expect(asked).toMatchObject({ ui: { confirmHangup: 'cl_21' }, effect: null });
    expect(onKey(asked.ui, 'y', {}, shown).effect).toEqual({ type: 'hangup', callId: 'cl_21' });
    expect(onKey(asked.ui, 'n', {}, shown)).toMatchObject({ ui: { confirmHangup: null, message: 'not hung up' }, effect: null });
    expect(onKey(initialUi, 'h', {}, []).ui.message).toBe('no call to hang up');

    let ui = onKey(initialUi, '/', {}, shown).ui;
    for (const ch of ['c', 'l', '\u0007', 'x']) ui = onKey(ui, ch, {}, shown).ui;
    expect(ui.draft).toBe('clx');
    ui = onKey(ui, '', { backspace: true }, shown).ui;
    ui = onKey(ui, '', { return: true }, shown).ui;
    expect(ui).toMatchObject({ filter: 'cl', draft: null });
    expect(onKey(ui, 'q', {}, shown).effect).toEqual({ type: 'quit' });
    expect(onKey(ui, '', { escape: true }, shown).ui.filter).toBe('');
  });

  it('a paste into the filter keeps its first characters, bounded, without control characters', () => {
    const drafting = onKey(initialUi, '/', {}, shown).ui;
    const paste = 'clinic_booking '.repeat(20) + '\u001b[31m';
    const after = afterRead(drafting, paste).ui;
    expect(after.draft).toBe(paste.slice(0, MAX_FILTER));
    expect(afterRead(drafting, 'x'.repeat(1_000_000)).ui.draft).toHaveLength(MAX_FILTER);
    // Text added to a filter typed so far stops at the bound too; an escape sequence loses its ESC.
    const typed = afterRead(afterRead(drafting, 'ab').ui, '\u001b[2Jcd').ui.draft;
    expect(typed).toBe('ab[2Jcd');
    expect(afterRead(afterRead(drafting, 'y'.repeat(50)).ui, 'z'.repeat(50)).ui.draft).toBe('y'.repeat(50) + 'z'.repeat(10));
    // Pasted with a line break: the filter applies.
    expect(afterRead(drafting, `${'e'.repeat(150)}\r`).ui).toMatchObject({ filter: 'e'.repeat(MAX_FILTER), draft: null });
  });

  it('h on an ended call says it has ended, without asking', () => {
    const ended = applyEvent(rows, ev('call.ended', 'cl_21', { end_reason: 'api_hangup' }, T0 + 3));
    const list = visibleRows(ended, T0 + 4);
    expect(onKey(initialUi, 'h', {}, list)).toMatchObject({
      ui: { confirmHangup: null, message: 'cl_21 has already ended' },
      effect: null,
    });
    // In the call view of a call no longer on the list, the dashboard's lookup says it ended.
    const open: UiState = { ...initialUi, screen: 'call', selectedId: 'cl_21' };
    expect(onKey(open, 'h', {}, [], (id) => id === 'cl_21').ui).toMatchObject({ confirmHangup: null, message: 'cl_21 has already ended' });
    expect(onKey(open, 'h', {}, [], () => false).ui.confirmHangup).toBe('cl_21');
    // The message goes with the next key.
    expect(onKey(onKey(initialUi, 'h', {}, list).ui, 'j', {}, list).ui.message).toBeNull();
  });

  /** The UI state after the keys of one read of input, as the dashboard hands them to onKey. */
  function afterRead(ui: UiState, input: string, key: KeyInfo = {}): { ui: UiState; quit: boolean } {
    let quit = false;
    eachKey(
      input,
      key,
      () => ui.draft !== null,
      (i, k) => {
        const next = onKey(ui, i, k, shown);
        ui = next.ui;
        quit ||= next.effect?.type === 'quit';
      },
    );
    return { ui, quit };
  }

  it('keys read together are each a key: a filter typed with its Enter applies, a text run while filtering is taken whole', () => {
    // "/cl" and Enter in one read (a terminal multiplexer delivers send-keys so): the filter applies.
    expect(afterRead(initialUi, '/cl\r').ui).toMatchObject({ filter: 'cl', draft: null });
    expect(afterRead(initialUi, '/cl\n').ui).toMatchObject({ filter: 'cl', draft: null });
    // While filtering, the text comes whole and Enter still applies it; then q in the same read quits.
    const drafting = afterRead(initialUi, '/').ui;
    expect(afterRead(drafting, 'linic\rq')).toMatchObject({ ui: { filter: 'linic', draft: null }, quit: true });
    // "jj" moves down twice (clamped to the last row); Enter read with it opens that call.
    expect(afterRead(initialUi, 'jj\r').ui).toMatchObject({ screen: 'call', selectedId: 'cl_20' });
    // One key, or a key with Ctrl, is handed on as it came.
    const seen: Array<[string, KeyInfo]> = [];
    eachKey(
      'q',
      {},
      () => false,
      (i, k) => seen.push([i, k]),
    );
    eachKey(
      '',
      { escape: true },
      () => false,
      (i, k) => seen.push([i, k]),
    );
    eachKey(
      'ab',
      { ctrl: true },
      () => false,
      (i, k) => seen.push([i, k]),
    );
    expect(seen).toEqual([
      ['q', {}],
      ['', { escape: true }],
      ['ab', { ctrl: true }],
    ]);
  });
});
