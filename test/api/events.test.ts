/**
 * `GET /v1/events` (docs/events.md): the events of a session's life, written with each change,
 * as a page and as a resumable Server-Sent Events stream; bad queries refused; tenants apart.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { EventView } from '../../src/contract/events.js';
import { makeTestApp, type TestApp } from '../support/app.js';
import { EMI } from '../support/agents.js';

let t: TestApp;
afterEach(async () => {
  await t?.close();
});

async function session(app: TestApp, turns: string[], end = true): Promise<string> {
  await app.agent('ag_ev').catch(() => undefined);
  const id = (JSON.parse((await app.call('POST', '/v1/sessions', { agent_id: 'ag_ev' })).body) as { session_id: string }).session_id;
  for (const text of turns) expect((await app.call('POST', `/v1/sessions/${id}/turn`, { text })).statusCode).toBe(200);
  if (end) expect((await app.call('POST', `/v1/sessions/${id}/end`)).statusCode).toBe(200);
  return id;
}

async function list(app: TestApp, query = '', key?: string): Promise<{ data: EventView[]; has_more: boolean; next_cursor: string | null }> {
  const res = await app.call('GET', `/v1/events${query}`, undefined, key ? { key } : {});
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body);
}

/** Reads SSE frames from a fetch body until `n` events arrived (or the stream ends). */
async function readEvents(body: ReadableStream<Uint8Array>, n: number): Promise<{ events: EventView[]; comments: string[] }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  const events: EventView[] = [];
  const comments: string[] = [];
  while (events.length < n) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += decoder.decode(value, { stream: true });
    let cut: number;
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const lines = frame.split('\n');
      for (const l of lines) if (l.startsWith(':')) comments.push(l.slice(1).trim());
      const data = lines.find((l) => l.startsWith('data: '));
      const id = lines.find((l) => l.startsWith('id: '));
      const type = lines.find((l) => l.startsWith('event: '));
      if (data) {
        const e = JSON.parse(data.slice(6)) as EventView;
        expect([id?.slice(4), type?.slice(7)]).toEqual([e.id, e.type]);
        events.push(e);
      }
    }
  }
  reader.releaseLock();
  return { events, comments };
}

describe('GET /v1/events', () => {
  it("lists a text session's life in order, one sequence without a gap, and none of another tenant's", async () => {
    t = await makeTestApp();
    const id = await session(t, ['hello', 'what are your hours?']);
    const page = await list(t);
    expect(page.data.map((e) => [e.type, e.session_id, e.call_id, e.sequence])).toEqual([
      ['session.opened', id, null, 1],
      ['session.turn', id, null, 2],
      ['session.turn', id, null, 3],
      ['session.ended', id, null, 4],
    ]);
    expect(page.data.map((e) => e.id)).toEqual([...page.data.map((e) => e.id)].sort());
    const turn = page.data[1]!;
    expect(turn.data).toMatchObject({ turn: 1, heard: 'hello', layer: expect.any(String), reply: expect.any(String) });
    expect(page.data[3]!.data).toMatchObject({ reason: 'api_hangup', turns: 2 });
    expect([page.has_more, page.next_cursor]).toEqual([false, null]);

    const other = t.tenantKey('other');
    expect((await list(t, '', other)).data).toEqual([]);
    expect((await list(t, '?types=session.turn')).data.map((e) => e.sequence)).toEqual([2, 3]);
    expect((await list(t, '?types=call.*')).data).toEqual([]);
    expect((await list(t, `?session_id=${id}&call_id=cl_1`)).data).toEqual([]);
    expect((await list(t, `?session_id=${id}&limit=2`)).next_cursor).toBe(page.data[1]!.id);
    expect((await list(t, `?after=${page.data[1]!.id}`)).data.map((e) => e.sequence)).toEqual([3, 4]);
  });

  it('refuses a bad query naming the parameter, and a failed change records nothing', async () => {
    t = await makeTestApp();
    for (const [query, param] of [
      ['?types=call.nope', 'types'],
      ['?types=%3Cscript%3E', 'types'],
      ['?after=evt_12', 'after'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?types=call.nope,session.*', 'types'],
      ['?call_id=se_1', 'call_id'],
      [`?types=${'a.b,'.repeat(300)}`, 'types'],
    ] as const) {
      const res = await t.call('GET', `/v1/events${query}`);
      expect([res.statusCode, JSON.parse(res.body).error.code, JSON.parse(res.body).error.param], query).toEqual([
        400,
        'invalid_request',
        param,
      ]);
    }
    const bad = await t.call('GET', '/v1/events', undefined, { headers: { accept: 'text/event-stream', 'last-event-id': 'nope' } });
    expect([bad.statusCode, JSON.parse(bad.body).error.param]).toEqual([400, 'Last-Event-ID']);
    const named = await t.call('GET', '/v1/events?types=session.turn,call.nope');
    expect(JSON.parse(named.body).error.message).toMatch(/; not call\.nope$/);
    // An id past the newest event: one this log never had (a state dir started afresh).
    const past = await t.call('GET', '/v1/events', undefined, {
      headers: { accept: 'text/event-stream', 'last-event-id': 'evt_000000999999' },
    });
    expect([past.statusCode, JSON.parse(past.body).error.param]).toEqual([400, 'Last-Event-ID']);
    expect(JSON.parse(past.body).error.message).toMatch(/past the newest event \(evt_000000000000\)/);
    expect((await t.call('POST', '/v1/sessions', { agent_id: 'ag_missing' })).statusCode).toBe(404);
    expect((await list(t)).data).toEqual([]);
  });

  it('streams events live, and a reader resuming with Last-Event-ID gets each missed one once', async () => {
    t = await makeTestApp();
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const headers = { authorization: `Bearer ${t.key}`, accept: 'text/event-stream' };
    const first = new AbortController();
    const live = await fetch(`${url}/v1/events`, { headers, signal: first.signal });
    expect([live.status, live.headers.get('content-type')]).toEqual([200, 'text/event-stream; charset=utf-8']);
    const reading = readEvents(live.body!, 2);
    const id = await session(t, ['hello'], false);
    const seen = (await reading).events;
    expect(seen.map((e) => [e.type, e.session_id, e.sequence])).toEqual([
      ['session.opened', id, 1],
      ['session.turn', id, 2],
    ]);
    first.abort();

    // Missed while away: a turn and the end.
    expect((await t.call('POST', `/v1/sessions/${id}/turn`, { text: 'what are your hours?' })).statusCode).toBe(200);
    expect((await t.call('POST', `/v1/sessions/${id}/end`)).statusCode).toBe(200);
    const again = new AbortController();
    const resumed = await fetch(`${url}/v1/events`, { headers: { ...headers, 'last-event-id': seen[1]!.id }, signal: again.signal });
    const missed = (await readEvents(resumed.body!, 2)).events;
    expect(missed.map((e) => [e.type, e.sequence])).toEqual([
      ['session.turn', 3],
      ['session.ended', 4],
    ]);
    again.abort();

    // From the first event: every later one, once, in order; and only session.turn when asked.
    const third = new AbortController();
    const filtered = await fetch(`${url}/v1/events?types=session.turn`, {
      headers: { ...headers, 'last-event-id': seen[0]!.id },
      signal: third.signal,
    });
    expect((await readEvents(filtered.body!, 2)).events.map((e) => e.sequence)).toEqual([2, 3]);
    third.abort();
  });

  it('streams a tenant only its own events, whatever the filters', async () => {
    t = await makeTestApp();
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const other = t.tenantKey('other');
    await t.agent('ag_ev', { key: other });
    const abort = new AbortController();
    const res = await fetch(`${url}/v1/events?types=*`, {
      headers: { authorization: `Bearer ${other}`, accept: 'text/event-stream' },
      signal: abort.signal,
    });
    const reading = readEvents(res.body!, 1);
    const mine = await session(t, ['hello']); // tenant default: not for this reader
    const theirs = (
      JSON.parse((await t.call('POST', '/v1/sessions', { agent_id: 'ag_ev' }, { key: other })).body) as { session_id: string }
    ).session_id;
    const got = (await reading).events;
    abort.abort();
    expect(got.map((e) => [e.type, e.session_id, e.tenant_id])).toEqual([['session.opened', theirs, 'other']]);
    expect(mine).not.toBe(theirs);
    // Asking for another tenant's call by id finds nothing.
    expect((await list(t, `?session_id=${mine}`, other)).data).toEqual([]);
  });

  it('cuts off a reader too slow to keep up, with a last comment saying how to resume', async () => {
    t = await makeTestApp({}, {}, { events: { maxUnsentBytes: 64 * 1024 } });
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const res = await fetch(`${url}/v1/events`, { headers: { authorization: `Bearer ${t.key}`, accept: 'text/event-stream' } });
    const { uow, events } = t.runtime.services;
    const filler = 'x'.repeat(100_000);
    // Far more than the socket buffers hold, written while the reader reads nothing.
    for (let i = 0; i < 5; i++) {
      await uow.write((tx) => {
        for (let j = 0; j < 20; j++) events.appendTx(tx, { tenantId: 'default', type: 'session.turn', sessionId: 5, data: { filler } });
      });
    }
    const { events: got, comments } = await readEvents(res.body!, 1000);
    expect(got.length).toBeGreaterThan(0);
    expect(got.length).toBeLessThan(100);
    expect(comments.at(-1)).toMatch(/too slow; reconnect with Last-Event-ID/);
  });

  it('a call refused by the budget records budget.exceeded once a minute, and no call.created', async () => {
    let clock = 1_800_000_000;
    t = await makeTestApp({ tenant_daily_budget_inr: 1, call_reservation_inr: 2 }, { nowS: () => clock });
    expect((await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' })).statusCode).toBe(201);
    for (let i = 0; i < 3; i++) expect((await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' })).statusCode).toBe(429);
    // The event has a write of its own, queued by the refusal: wait for it.
    const settled = async (n: number) => {
      for (let i = 0; i < 50 && (await list(t, '?types=budget.*')).data.length < n; i++) await new Promise((r) => setTimeout(r, 20));
    };
    await settled(1);
    expect((await list(t)).data.map((e) => e.type)).toEqual(['session.opened', 'call.created', 'budget.exceeded']);
    clock += 61;
    expect((await t.call('POST', '/v1/calls', { ...EMI, to: '+919876543210' })).statusCode).toBe(429);
    await settled(2);
    const exceeded = (await list(t, '?types=budget.*')).data;
    expect(exceeded.map((e) => [e.sequence, e.call_id, e.data.budget_inr])).toEqual([
      [null, null, 1],
      [null, null, 1],
    ]);
  });

  it('purges events past events_retention_days, oldest first', async () => {
    let clock = 1_800_000_000;
    t = await makeTestApp({ events_retention_days: 1 }, { nowS: () => clock });
    await session(t, ['hello']);
    clock += 86_400 + 1;
    await session(t, ['hi']);
    const before = (await list(t)).data;
    expect(await t.runtime.services.events.purgeExpired(2)).toBe(3);
    expect((await list(t)).data).toEqual(before.slice(3));
  });

  it("masks digits or leaves out the transcript text of a tenant's events, as its redact_transcripts says", async () => {
    t = await makeTestApp();
    const { tenants } = t.runtime.services;
    tenants.setRedaction('default', 'digits');
    const id = await session(t, ['my number is 98765 43210'], true);
    const turn = (await list(t, `?types=session.turn&session_id=${id}`)).data[0]!;
    expect(turn.data.heard).toBe('my number is ••••• •••••');
    tenants.setRedaction('default', 'text');
    const id2 = await session(t, ['call me at 98765'], true);
    const turn2 = (await list(t, `?types=session.turn&session_id=${id2}`)).data[0]!;
    expect([turn2.data.heard, turn2.data.reply]).toEqual([null, null]);
    expect(() => tenants.setRedaction('default', 'some')).toThrow(/off, digits or text/);
    // What the turn itself stored is the caller's text.
    const detail = await t.call('GET', `/v1/sessions/${id}`);
    expect(detail.body).toContain('98765 43210');
    // redact() on a call's report: transcript text and captured values.
    const { redact } = await import('../../src/app/events.js');
    const report = {
      transcript: [{ speaker: 'caller', text: 'PIN 4321', at: 1 }],
      extracted: { phone: '9876543210', amount: 5000 },
      end_reason: 'busy',
    };
    expect(redact(report, 'digits')).toEqual({
      transcript: [{ speaker: 'caller', text: 'PIN ••••', at: 1 }],
      extracted: { phone: '••••••••••', amount: '••••' },
      end_reason: 'busy',
    });
    expect(redact(report, 'text')).toEqual({ transcript: [{ speaker: 'caller', text: null, at: 1 }], extracted: {}, end_reason: 'busy' });
  });
});
