/**
 * A small stand-in of the daemon's `GET /v1/events` for the event stream's client tests: a page
 * without `Accept: text/event-stream`, Server-Sent Events with it, resumed after
 * `Last-Event-ID`; it can be killed and restarted on the same port.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { EventView } from '../../src/contract/events.js';
import { eventId } from '../../src/domain/events.js';

/** Event number `seq` of the log, of call cl_1 unless `fields` say otherwise. */
export const ev = (seq: number, type: EventView['type'] = 'call.created', fields: Partial<EventView> = {}): EventView => ({
  id: eventId(seq),
  type,
  created_at: 1_795_000_000 + seq,
  tenant_id: 'default',
  call_id: 'cl_1',
  session_id: 'se_1',
  sequence: seq,
  data: { n: seq },
  ...fields,
});

/** An event as an SSE message. */
export const sse = (e: EventView) => `id: ${e.id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

/** A request the server got. */
export interface Seen {
  url: string;
  lastEventId: string | undefined;
  auth: string | undefined;
  accept: string | undefined;
}

/**
 * A small SSE daemon: `log` holds the events; a connection gets the events after its
 * Last-Event-ID (none without it), then `onConnect` may write more.
 */
export class SseServer {
  server: http.Server | undefined;
  port = 0;
  seen: Seen[] = [];
  sockets = new Set<http.ServerResponse>();
  onConnect: (res: http.ServerResponse, n: number) => void = () => {};
  /** An error answer for request `n` (1, 2, …), or undefined to serve it. */
  refuse: (n: number) => { status: number; error: Record<string, string> } | undefined = () => undefined;
  /** The page `GET /v1/events` answers (default: the whole log, nothing more). */
  page: (log: EventView[]) => { data: EventView[]; has_more: boolean; next_cursor: string | null } = (log) => ({
    data: log,
    has_more: false,
    next_cursor: log.at(-1)?.id ?? null,
  });
  /** What `GET /v1/calls/{id}` answers, or undefined for 404 not_found. */
  call: Record<string, unknown> | undefined;
  constructor(readonly log: EventView[]) {}

  async start(port = 0): Promise<void> {
    this.server = http.createServer((req, res) => {
      const lastEventId = req.headers['last-event-id'] as string | undefined;
      this.seen.push({
        url: req.url!,
        lastEventId,
        auth: req.headers.authorization,
        accept: req.headers.accept,
      });
      const refused = this.refuse(this.seen.length);
      if (refused) {
        res.writeHead(refused.status, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: refused.error }));
        return;
      }
      if (req.url!.startsWith('/v1/calls/')) {
        res.writeHead(this.call ? 200 : 404, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.call ?? { error: { code: 'not_found', message: 'no call', param: 'call_id' } }));
        return;
      }
      if (req.headers.accept !== 'text/event-stream') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(this.page(this.log)));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': hello\n\n');
      if (lastEventId !== undefined) for (const e of this.log.filter((x) => x.id > lastEventId)) res.write(sse(e));
      this.sockets.add(res);
      res.on('close', () => this.sockets.delete(res));
      this.onConnect(res, this.seen.length);
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', () => r()));
    this.port = (this.server.address() as AddressInfo).port;
  }
  /** Appends an event and sends it to every open stream. */
  emit(e: EventView): void {
    this.log.push(e);
    for (const res of this.sockets) res.write(sse(e));
  }
  /** Stops as a killed daemon does: every connection cut. */
  async kill(): Promise<void> {
    const server = this.server!;
    for (const res of this.sockets) res.socket?.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }
}
