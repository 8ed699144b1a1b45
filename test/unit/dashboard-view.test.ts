/* eslint-disable no-control-regex -- the frames are read with their ANSI escape codes */
/**
 * `vagent dashboard` frames with ink-testing-library: the empty list, a list of calls, the call
 * view, a resize, NO_COLOR, and the running app fed by a stand-in daemon (events, keys, hang-up).
 */
import { createElement } from 'react';
import { afterEach, describe, expect, it } from 'vitest';
import type { CallStatus, EventView, StreamState } from '../../src/client/index.js';
import type { DashboardSource } from '../../src/cli/dashboard/app.js';
import { initialUi, type UiState } from '../../src/cli/dashboard/keys.js';
import { applyEvent, emptyModel, visibleRows, type DashboardModel } from '../../src/cli/dashboard/model.js';
import type { ViewProps } from '../../src/cli/dashboard/view.js';
import { eventId } from '../../src/domain/events.js';

// Colours on, as on a terminal (Ink's colour library reads this when it loads), so that the
// frames show where colour is used; the NO_COLOR case is the view's `color: false`.
process.env.FORCE_COLOR = '1';
const { render, cleanup } = await import('ink-testing-library');
const { Dashboard } = await import('../../src/cli/dashboard/app.js');
const { DashboardView } = await import('../../src/cli/dashboard/view.js');

afterEach(() => cleanup());

const T0 = new Date(2026, 10, 27, 12, 0, 0).getTime() / 1000;
let seq = 0;
const ev = (type: EventView['type'], callId: string, data: Record<string, unknown> = {}, at = T0): EventView => ({
  id: eventId(++seq),
  type,
  created_at: at,
  tenant_id: 'acme',
  call_id: callId,
  session_id: callId.replace('cl_', 'se_'),
  sequence: 1,
  data,
});

function twoCalls(): DashboardModel {
  return [
    ev('call.created', 'cl_1', { direction: 'inbound', from: '+919876543210', agent_id: 'ag_clinic_booking' }, T0 - 65),
    ev('call.answered', 'cl_1', {}, T0 - 60),
    ev('session.turn', 'cl_1', {
      heard: 'my name is Priya Sharma',
      reply: 'Thank you Priya, which day suits you?',
      layer: 'capture',
      latency_ms: 640,
      cost_inr: 0.4,
      step_progress: { done: 1, total: 4 },
    }),
    ev('call.created', 'cl_2', { direction: 'outbound', to: '+918123456789', agent_id: 'ag_emi_reminder' }, T0 - 20),
    ev('session.turn', 'cl_2', { heard: 'I will pay on Friday', reply: 'Noted: Friday.', layer: 'llm', latency_ms: 1450, cost_inr: 1.2 }),
  ].reduce(applyEvent, emptyModel(T0));
}

function frame(
  model: DashboardModel,
  over: Partial<ViewProps> & { ui?: UiState } = {},
): { lastFrame: () => string; raw: () => string; rerender: (p: Partial<ViewProps>) => void } {
  const props: ViewProps = {
    model,
    ui: initialUi,
    rows: visibleRows(model, T0, ''),
    nowS: T0,
    width: 80,
    height: 24,
    color: true,
    conn: { state: 'live' },
    url: 'http://127.0.0.1:8787',
    status: { telephony: 'ok', recognizer: null },
    ...over,
  };
  const app = render(createElement(DashboardView, props));
  return {
    lastFrame: () => strip(strip(app.lastFrame())),
    raw: () => app.lastFrame() ?? '',
    rerender: (p) => app.rerender(createElement(DashboardView, { ...props, ...p })),
  };
}

const strip = (f: string | undefined) => (f ?? '').replace(/\u001b\[[0-9;]*m/g, '');
const lines = (f: string | undefined) => (f ?? '').split('\n');
const width = (l: string) => [...strip(l)].length;

describe('dashboard frames', () => {
  it('empty: the header and a line saying how calls appear', () => {
    const f = frame(emptyModel(T0)).lastFrame()!;
    expect(f).toContain('vagent ● live http://127.0.0.1:8787 tenant -');
    expect(f).toMatch(/calls 0 active · 0 today/);
    expect(f).toContain('No calls in progress');
    expect(f).toContain('q quit');
    expect(lines(f).length).toBeLessThanOrEqual(23);
  });

  it('a list of calls: masked numbers, agents, steps, durations, turns, slow latency, costs', () => {
    const shown = frame(twoCalls());
    const f = shown.lastFrame();
    const raw = lines(shown.raw());
    const [row2, row1] = [lines(f).find((l) => l.includes('emi_'))!, lines(f).find((l) => l.includes('clinic_'))!];
    expect(f).toMatch(/calls 2 active · 2 today/);
    expect(f).toContain('tenant acme');
    expect(row2).toMatch(/^› out +\+91812•••6789 +emi_remin… +- +0:20 +"I will pay on…/);
    expect(row2).toMatch(/llm +1\.4s +₹1\.20/);
    expect(row1).toMatch(/in +\+91987•••3210 +clinic_bo… +1\/4 +1:00 +"my name is Pr…/);
    expect(row1).toMatch(/capture +640ms +₹0\.40/);
    // The slow turn is red (ANSI 31), the fast one is not.
    expect(raw.find((l) => l.includes('emi_'))).toMatch(/\u001b\[31m1\.4s/);
    expect(raw.find((l) => l.includes('clinic_'))).not.toMatch(/\u001b\[31m/);
    for (const l of lines(f)) expect(width(l)).toBeLessThanOrEqual(80);
    expect(lines(f).length).toBeLessThanOrEqual(23);
  });

  it('an ended call shows its end reason whole at 80 columns, faded', () => {
    // The longest end reason (docs/events.md "End reasons") fits.
    const longest = applyEvent(twoCalls(), ev('call.ended', 'cl_1', { end_reason: 'completed_by_agent' }, T0));
    const row = lines(frame(longest, { rows: visibleRows(longest, T0 + 5, '') }).lastFrame()).find((l) => l.includes('clinic_'))!;
    expect(row).toContain('ended: completed_by_agent');
    expect(width(row)).toBeLessThanOrEqual(80);
    const m = applyEvent(twoCalls(), ev('call.ended', 'cl_2', { end_reason: 'caller_hung_up', duration_s: 21, cost_inr: 1.3 }, T0));
    const shown = frame(m, { rows: visibleRows(m, T0 + 5, '') });
    const f = shown.lastFrame();
    expect(lines(f).find((l) => l.includes('emi_'))).toMatch(/ 0:21 +ended: caller_hung_up +₹1\.30$/);
    expect(lines(shown.raw()).find((l) => l.includes('emi_'))).toContain('\u001b[2memi_remin…'); // dim
    expect(f).toMatch(/calls 1 active · 2 today/);
  });

  it('the call view: the transcript with each turn’s layer, latency and cost, and the events', () => {
    const f = frame(twoCalls(), { ui: { ...initialUi, screen: 'call', selectedId: 'cl_1' } }).lastFrame()!;
    expect(f).toMatch(/cl_1 inbound \+91987•••3210 ag_clinic_booking steps 1\/4 1:00 ₹0\.40 answered/);
    expect(f).toMatch(/caller: my name is Priya Sharma/);
    expect(f).toMatch(/agent: Thank you Priya, which day suits you\? \[capture 640ms ₹0\.40\]/);
    expect(f).toContain('Events');
    expect(f).toMatch(/call\.answered evt_\d{12}/);
    expect(f).toContain('Esc back');
  });

  it('resizes: wider columns at 120×40, never taller than the terminal, and a long list scrolls to the cursor', () => {
    let m = twoCalls();
    for (let i = 10; i < 60; i++)
      m = applyEvent(
        m,
        ev('call.created', `cl_${i}`, { direction: 'outbound', to: `+9190000000${i}`, agent_id: 'ag_emi_reminder' }, T0 - i),
      );
    const rows = visibleRows(m, T0, '');
    const f = frame(m, { rows });
    expect(lines(f.lastFrame()).length).toBeLessThanOrEqual(23);
    f.rerender({ width: 120, height: 40, ui: { ...initialUi, selectedId: rows[45]!.callId } });
    const big = f.lastFrame()!;
    expect(lines(big).length).toBeLessThanOrEqual(39);
    expect(lines(big).length).toBeGreaterThan(30);
    expect(big).toContain(`› out`);
    expect(big).toContain(rows[45]!.number!.slice(-4));
    expect(Math.max(...lines(big).map(width))).toBeGreaterThan(80);
    for (const l of lines(big)) expect(width(l)).toBeLessThanOrEqual(120);
  });

  it('NO_COLOR: no colour codes, the cursor still marked', () => {
    const shown = frame(twoCalls(), { color: false, conn: { state: 'reconnecting', attempt: 2, reason: 'connection refused' } });
    const f = shown.lastFrame();
    expect(shown.raw()).not.toMatch(/\u001b\[3[0-7]m/);
    expect(f).toContain('vagent ○ reconnecting (try 2: connection refused) http://127.0.0.1:8787');
    expect(f).toMatch(/^› /m);
  });
});

/**
 * A stand-in daemon: events pushed by the test, hang-ups recorded; `calls` in progress at start
 * and the `history` of each call (`GET /v1/events?call_id=`), whose reads are counted.
 */
function fakeSource(calls: CallStatus[] = [], history: Record<string, EventView[]> = {}) {
  const queue: EventView[] = [];
  let wake: (() => void) | null = null;
  const hungUp: string[] = [];
  const historyReads: string[] = [];
  const source: DashboardSource = {
    url: 'http://127.0.0.1:9999',
    listCalls: async () => calls,
    callHistory: async (id) => {
      historyReads.push(id);
      return { events: history[id] ?? [], complete: true };
    },
    status: async () => ({
      budget: { spent_inr: 10, budget_inr: 500 },
      tenant: 'acme',
      daemon: { telephony: 'not_configured', recognizer: 'deepgram ok' },
    }),
    async *events({ signal, onState }: { signal: AbortSignal; onState: (s: StreamState) => void }) {
      onState({ state: 'connected' });
      while (!signal.aborted) {
        const e = queue.shift();
        if (e) yield e;
        else await new Promise<void>((r) => (wake = r));
      }
    },
    hangUp: async (id) => {
      hungUp.push(id);
      return `hung up ${id}`;
    },
  };
  return {
    source,
    hungUp,
    historyReads,
    push: (e: EventView) => {
      queue.push(e);
      wake?.();
    },
  };
}
const tick = (ms = 300) => new Promise((r) => setTimeout(r, ms));

describe('the running dashboard', () => {
  it('shows events as they come, opens a call, hangs up after y, and quits with q', async () => {
    const fake = fakeSource();
    const app = render(createElement(Dashboard, { source: fake.source, color: false, size: { width: 80, height: 24 }, now: () => T0 }));
    await tick();
    expect(strip(app.lastFrame())).toContain('No calls in progress');
    expect(strip(app.lastFrame())).toMatch(/spend today ₹10\.00 \/ ₹500\.00/);
    expect(strip(app.lastFrame())).toContain('telephony not_configured stt deepg');
    // Before any event: the tenant and the cache line are known from the start.
    expect(strip(app.lastFrame())).toContain('tenant acme');
    expect(strip(app.lastFrame())).toContain('cache hit - (no turns yet)');
    fake.push(ev('call.created', 'cl_1', { direction: 'inbound', from: '+919876543210', agent_id: 'ag_clinic_booking' }, T0 - 5));
    fake.push(
      ev('session.turn', 'cl_1', { heard: 'hello', reply: 'Hi, this is the clinic', layer: 'faq', latency_ms: 300, cost_inr: 0.5 }),
    );
    await tick();
    expect(strip(app.lastFrame())).toMatch(/› in +\+91987•••3210 +clinic_bo…/);
    expect(strip(app.lastFrame())).toMatch(/spend today ₹10\.50/);

    app.stdin.write('?');
    await tick(100);
    expect(strip(app.lastFrame())).toContain('Keys');
    app.stdin.write('?');
    app.stdin.write('\r');
    await tick(100);
    expect(strip(app.lastFrame())).toMatch(/caller: hello/);
    app.stdin.write('h');
    await tick(100);
    expect(strip(app.lastFrame())).toContain('Hang up cl_1 (+91987•••3210)? y/N');
    app.stdin.write('y');
    await tick(100);
    expect(fake.hungUp).toEqual(['cl_1']);
    expect(strip(app.lastFrame())).toContain('hung up cl_1');

    app.stdin.write('\u001b'); // Esc: back to the list
    await tick(100);
    app.stdin.write('/');
    app.stdin.write('zzz');
    app.stdin.write('\r');
    await tick(100);
    expect(strip(app.lastFrame())).toContain('No calls match "zzz".');
    app.rerender(createElement(Dashboard, { source: fake.source, color: false, size: { width: 60, height: 20 }, now: () => T0 }));
    await tick(100);
    expect(strip(app.lastFrame())).toBe('vagent dashboard needs 80×24 or more (this terminal: 60×20); q quits');
    app.stdin.write('q');
    await tick(100);
  });
});

describe('a dashboard opened mid-call', () => {
  it('shows the earlier turns and events of a call in progress, then the live ones, each once', async () => {
    const base = [
      ev('call.created', 'cl_5', { direction: 'outbound', to: '+919876543210', agent_id: 'ag_clinic_booking' }, T0 - 20),
      ev('call.answered', 'cl_5', {}, T0 - 18),
      ev('session.turn', 'cl_5', { heard: 'My name is Priya Patel', reply: 'Thanks Priya', layer: 'capture', latency_ms: 500 }, T0 - 15),
      ev('session.turn', 'cl_5', { heard: 'yes', reply: 'Which day?', layer: 'capture', latency_ms: 450 }, T0 - 10),
      ev('session.turn', 'cl_5', { heard: 'tomorrow', reply: 'At what time?', layer: 'llm', latency_ms: 700 }, T0 - 5),
    ].map((e, i) => ({ ...e, sequence: i + 1 }));
    const call: CallStatus = {
      call_id: 'cl_5',
      session_id: 'se_5',
      agent_id: 'ag_clinic_booking',
      status: 'in_progress',
      started_at: T0 - 20,
      ended_at: null,
      duration_s: null,
      customer_name: null,
      cost: { llm_inr: 0, tts_inr: 0, stt_inr: 0, total_inr: 0 },
      direction: 'outbound',
      to: '+919876543210',
      from: '+912240001234',
      dial_status: 'answered',
      dial_error: null,
      trunk_id: null,
      room_name: null,
      provider_call_id: null,
      answered_at: T0 - 18,
      transport: 'livekit',
      source: 'phone',
      recording_url: null,
    };
    // The history read has every event but the last; the live stream then brings the last two.
    const fake = fakeSource([call], { cl_5: base.slice(0, 4) });
    const app = render(createElement(Dashboard, { source: fake.source, color: false, size: { width: 80, height: 24 }, now: () => T0 }));
    await tick();
    fake.push(base[3]!);
    fake.push(base[4]!);
    await tick();
    expect(fake.historyReads).toEqual(['cl_5']);
    expect(strip(app.lastFrame())).toMatch(/› out +\+91987•••3210 +clinic_bo… +- +0:18 +"tomorrow" → A/);
    app.stdin.write('\r');
    await tick(100);
    const f = strip(app.lastFrame());
    expect(f).toMatch(/caller: My name is Priya Patel/);
    expect(f).toMatch(/caller: yes/);
    expect(f).toMatch(/caller: tomorrow/);
    expect(f.match(/caller: /g)).toHaveLength(3);
    expect(f).toMatch(/call\.created evt_\d{12}/);
    expect(f).toMatch(/call\.answered evt_\d{12}/);
    expect(f.match(/session\.turn evt_/g)).toHaveLength(3);
    expect(f).not.toContain('No turns yet');
    app.stdin.write('q');
    await tick(100);
  });
});

describe('the header at start', () => {
  it('says the telephony and the recogniser, on a line of their own that fits 80 columns, and the ? screen says what the header shows', () => {
    const shown = frame(emptyModel(T0), { status: { telephony: 'not_configured', recognizer: 'deepgram ok, sarvam unauthenticated' } });
    const f = lines(shown.lastFrame());
    expect(f[2]).toBe('telephony not_configured stt deepgram ok, sarvam unauthenticated');
    const unknown = frame(emptyModel(T0), { status: null }).lastFrame();
    expect(lines(unknown)[2]).toBe('telephony - stt -');
    const help = frame(emptyModel(T0), { ui: { ...initialUi, help: true } }).lastFrame();
    expect(help).toContain('speech recogniser (stt)');
    for (const l of lines(help)) expect(width(l)).toBeLessThanOrEqual(80);
  });

  it('the recogniser status: from GET /v1/health, with the cloud recognisers’ checks', async () => {
    const { recognizerStatus } = await import('../../src/cli/commands/dashboard.js');
    const on = { status: 'ok' as const, version: '1', recognition: { status: 'on' as const, provider: 'fake' } };
    expect(recognizerStatus(on, [])).toBe('fake');
    expect(recognizerStatus({ ...on, recognition: { status: 'off', provider: null, reason: 'no model' } }, [])).toBe('off');
    expect(recognizerStatus({ status: 'ok', version: '1' }, [])).toBe('none');
    const cloud = [
      { provider: 'deepgram', used_for: ['en'], ok: true, ms: 40 },
      { provider: 'sarvam', used_for: ['hi'], ok: false, problem: 'unauthenticated', ms: 50 },
    ];
    expect(recognizerStatus(on, cloud)).toBe('deepgram ok, sarvam unauthenticated');
  });
});

describe('footer messages', () => {
  it('a message gives the footer back to the keys after a while, without a key', async () => {
    const fake = fakeSource();
    const app = render(
      createElement(Dashboard, { source: fake.source, color: false, size: { width: 80, height: 24 }, now: () => T0, messageMs: 400 }),
    );
    await tick();
    fake.push(ev('call.created', 'cl_8', { direction: 'inbound', from: '+919876543210', agent_id: 'ag_clinic_booking' }, T0 - 5));
    fake.push(ev('call.ended', 'cl_8', { end_reason: 'caller_hung_up' }, T0 - 1));
    await tick();
    app.stdin.write('h');
    await tick(100);
    expect(strip(app.lastFrame())).toContain('cl_8 has already ended');
    expect(strip(app.lastFrame())).not.toContain('y/N');
    app.stdin.write('y');
    await tick(100);
    expect(fake.hungUp).toEqual([]);
    app.stdin.write('h');
    await tick(100);
    expect(strip(app.lastFrame())).toContain('cl_8 has already ended');
    await tick(600);
    expect(strip(app.lastFrame())).not.toContain('already ended');
    expect(strip(app.lastFrame())).toContain('q quit');
    app.stdin.write('q');
    await tick(100);
  });
});

describe('caller text on the screen', () => {
  it('control characters and escape sequences in what a caller said are shown escaped, never sent to the terminal', async () => {
    const { printable } = await import('../../src/cli/dashboard/printable.js');
    expect(printable('plain हिंदी text ₹1')).toBe('plain हिंदी text ₹1');
    expect(printable('\u001b[2J\u001b]0;pwned\u0007a\tb\nc\rd\u007f\u009b31m\u202eevil')).toBe('␛[2J␛]0;pwned␇a␉b␊c␍d␡\\x9b31m\\u202eevil');

    const hostile = '\u001b]0;pwned\u0007hi\u001b[2J\u001b[31mred\u009b1m\u202edone';
    const m = [
      ev('call.created', 'cl_1', { direction: 'inbound', from: '+9198\u001b[7m76543210', agent_id: 'ag_\u001b[5mclinic' }, T0 - 10),
      ev('session.turn', 'cl_1', { heard: hostile, reply: `ok\u001b[?1049l`, layer: 'llm\u0007', latency_ms: 300 }),
      ev('call.ended', 'cl_1', { end_reason: 'caller_\u001b[8mhung_up' }, T0),
    ].reduce(applyEvent, emptyModel(T0));
    const ui: UiState = { ...initialUi, screen: 'call', selectedId: 'cl_1' };
    for (const shown of [frame(m, { color: false, ui }), frame(m, { color: false, rows: visibleRows(m, T0, '') })]) {
      // Only Ink's own colour and style codes (ESC [ … m) reach the terminal.
      expect(shown.raw().replace(/\u001b\[[0-9;]*m/g, '')).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    }
    const f = frame(m, { color: false, ui }).lastFrame();
    expect(f).toContain('caller: ␛]0;pwned␇hi␛[2J␛[31mred\\x9b1m\\u202edone');
    expect(f).toContain('agent: ok␛[?1049l [llm␇');
    expect(f).toMatch(/call\.ended evt_\d+ caller_␛\[8mhung_up/);
    expect(f).toContain('+9198␛•••');
  });
});
