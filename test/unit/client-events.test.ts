import { afterEach, describe, expect, it } from 'vitest';
import { ApiResponseError, DaemonUnreachableError, VagentClient, type StreamState } from '../../src/client/index.js';
import { ev, sse, SseServer } from '../support/fake-events.js';
import { eventId } from '../../src/domain/events.js';
import type { EventView } from '../../src/contract/events.js';

let servers: SseServer[] = [];
afterEach(async () => {
  for (const s of servers) if (s.server?.listening) await s.kill();
  servers = [];
});
async function serve(log: EventView[] = []): Promise<SseServer> {
  const s = new SseServer(log);
  servers.push(s);
  await s.start();
  return s;
}
const until = async (cond: () => boolean, ms = 5000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 10));
  }
};

describe('client.listEvents', () => {
  it('sends the filters as the query and returns the page', async () => {
    const s = await serve([ev(1), ev(2)]);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const page = await client.listEvents({ types: ['call.*', 'session.turn'], call_id: 'cl_1', after: 'evt_000000000001', limit: 5 });
    expect(page.data.map((e) => e.id)).toEqual([eventId(1), eventId(2)]);
    expect(page.next_cursor).toBe(eventId(2));
    const u = new URL(s.seen[0]!.url, s.url);
    expect(u.pathname).toBe('/v1/events');
    expect(Object.fromEntries(u.searchParams)).toEqual({
      types: 'call.*,session.turn',
      call_id: 'cl_1',
      after: 'evt_000000000001',
      limit: '5',
    });
    expect(s.seen[0]!.accept).toBe('application/json');
  });
});

describe('client.streamEvents', () => {
  it('yields events, survives a daemon restart resuming with Last-Event-ID, and skips a replayed duplicate', async () => {
    const s = await serve();
    const port = s.port;
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const states: StreamState[] = [];
    const got: string[] = [];
    const stop = new AbortController();
    const done = (async () => {
      for await (const e of client.streamEvents({
        types: 'call.*',
        signal: stop.signal,
        onState: (st) => states.push(st),
        backoffMs: () => 50,
      })) {
        got.push(e.id);
      }
    })();
    await until(() => s.sockets.size === 1);
    expect(s.seen[0]!.lastEventId).toBeUndefined();
    expect(s.seen[0]!.auth).toBe('Bearer vk_test');
    expect(new URL(s.seen[0]!.url, s.url).searchParams.get('types')).toBe('call.*');
    s.emit(ev(1));
    s.emit(ev(2));
    await until(() => got.length === 2);

    // The daemon dies; events 3 and 4 are written while it is down (or before the client is back).
    await s.kill();
    const log = [...s.log, ev(3), ev(4)];
    const again = new SseServer(log);
    servers.push(again);
    // The restarted daemon also replays event 2 on the new connection: a duplicate to skip.
    again.onConnect = (res) => res.write(sse(ev(2)));
    await new Promise((r) => setTimeout(r, 150)); // a refused connection or two first
    await again.start(port);
    await until(() => got.length === 4);
    expect(again.seen.at(-1)!.lastEventId).toBe(eventId(2));
    again.emit(ev(5));
    await until(() => got.length === 5);
    stop.abort();
    await done;

    expect(got).toEqual([1, 2, 3, 4, 5].map(eventId));
    expect(states[0]).toEqual({ state: 'connected' });
    expect(states.some((st) => st.state === 'reconnecting')).toBe(true);
    expect(states.at(-1)).toEqual({ state: 'connected' });
    const firstRetry = states.find((st) => st.state === 'reconnecting');
    expect(firstRetry).toMatchObject({ attempt: 1, delayMs: 50 });
  });

  it('resumes after lastEventId when given one, and skips events not after it', async () => {
    const s = await serve([ev(1), ev(2), ev(3)]);
    s.onConnect = (res) => res.write(sse(ev(1))); // a replay of an old event
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const got: string[] = [];
    for await (const e of client.streamEvents({ lastEventId: eventId(1) })) {
      got.push(e.id);
      if (got.length === 2) break; // breaking out closes the connection
    }
    expect(got).toEqual([eventId(2), eventId(3)]);
    expect(s.seen[0]!.lastEventId).toBe(eventId(1));
    await until(() => s.sockets.size === 0);
  });

  it('reconnects a stream that went silent (no heartbeat) and one the daemon closed', async () => {
    const s = await serve();
    s.onConnect = (res, n) => {
      if (n === 2) res.end(); // the second connection is closed at once
    };
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const states: StreamState[] = [];
    const stop = new AbortController();
    const done = (async () => {
      for await (const _ of client.streamEvents({
        signal: stop.signal,
        onState: (st) => states.push(st),
        idleTimeoutMs: 200,
        backoffMs: () => 10,
      }));
    })();
    await until(() => s.seen.length >= 3);
    stop.abort();
    await done;
    const reasons = states.flatMap((st) => (st.state === 'reconnecting' ? [st.reason] : []));
    expect(reasons[0]).toMatch(/nothing received/);
    expect(reasons[1]).toMatch(/closed the stream/);
  });

  it('throws the API error of a refused request (no retry)', async () => {
    const s = await serve();
    s.refuse = () => ({ status: 400, error: { code: 'invalid_request', message: 'types: unknown event type call.nope', param: 'types' } });
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const it = client.streamEvents({ types: 'call.nope' });
    const err = await it.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiResponseError);
    expect(err).toMatchObject({ code: 'invalid_request', param: 'types', status: 400 });
    expect(s.seen).toHaveLength(1);
  });

  it('retries a 503 answer', async () => {
    const s = await serve();
    s.refuse = (n) => (n === 1 ? { status: 503, error: { code: 'unavailable', message: 'starting' } } : undefined);
    const client = new VagentClient({ url: s.url, apiKey: 'vk_test' });
    const states: StreamState[] = [];
    const stop = new AbortController();
    const got: string[] = [];
    const done = (async () => {
      for await (const e of client.streamEvents({ signal: stop.signal, onState: (st) => states.push(st), backoffMs: () => 10 }))
        got.push(e.id);
    })();
    await until(() => s.sockets.size === 1);
    s.emit(ev(7));
    await until(() => got.length === 1);
    stop.abort();
    await done;
    expect(states[0]).toMatchObject({ state: 'reconnecting', reason: 'unavailable: starting' });
    expect(states[1]).toEqual({ state: 'connected' });
  });

  it('fails fast when the daemon is not there at first, unless told otherwise', async () => {
    const s = await serve();
    const url = s.url;
    await s.kill();
    const client = new VagentClient({ url, apiKey: 'vk_test' });
    await expect(client.streamEvents().next()).rejects.toThrow(DaemonUnreachableError);

    const stop = new AbortController();
    const states: StreamState[] = [];
    const it = client.streamEvents({ failFast: false, signal: stop.signal, backoffMs: () => 10, onState: (st) => states.push(st) });
    const next = it.next();
    await until(() => states.length >= 2);
    stop.abort();
    await expect(next).resolves.toEqual({ done: true, value: undefined });
    expect(states[0]).toMatchObject({ state: 'reconnecting', attempt: 1, reason: 'connection refused' });
  });
});
