/**
 * The event log under `kill -9` (docs/events.md): a reader following the stream while sessions
 * open, take turns and end is cut off by the crash, reconnects to the restarted daemon with
 * `Last-Event-ID`, and ends up with every event of the log exactly once, in order; every event
 * it saw before the crash is still in the log (nothing shown is lost), every session's numbers
 * run 1, 2, 3 … without a gap, and a session whose end was acknowledged has exactly one
 * `session.ended`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { EventView } from '../../src/contract/events.js';
import { adminKey, api, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';

afterAll(cleanupAll);

/** Follows `url`'s event stream after `lastId` (or from now), pushing each event to `out`, until the stream ends. */
async function follow(url: string, key: string, lastId: string | null, out: EventView[]): Promise<void> {
  const headers: Record<string, string> = { authorization: `Bearer ${key}`, accept: 'text/event-stream' };
  if (lastId) headers['last-event-id'] = lastId;
  try {
    const res = await fetch(`${url}/v1/events`, { headers });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf('\n\n')) >= 0) {
        const data = buf
          .slice(0, cut)
          .split('\n')
          .find((l) => l.startsWith('data: '));
        buf = buf.slice(cut + 2);
        if (data) out.push(JSON.parse(data.slice(6)) as EventView);
      }
    }
  } catch {
    // The daemon died under the stream.
  }
}

async function allEvents(daemon: Daemon, key: string): Promise<EventView[]> {
  const out: EventView[] = [];
  let after = '';
  for (;;) {
    const page = await api(daemon, 'GET', `/v1/events?limit=100${after}`, { key });
    out.push(...(page.body.data as EventView[]));
    if (!page.body.has_more) return out;
    after = `&after=${page.body.next_cursor}`;
  }
}

describe('events across kill -9', () => {
  it('a reader resuming with Last-Event-ID after the restart has every event once, and nothing it saw is lost', async () => {
    requireBuild();
    const first = await startDaemon();
    const key = await adminKey(first.stateDir);
    const seen: EventView[] = [];
    const reading = follow(first.url, key, null, seen);
    await new Promise((r) => setTimeout(r, 200));

    const ended = new Set<string>();
    let stop = false;
    const worker = async () => {
      while (!stop) {
        try {
          const opened = await api(first, 'POST', '/v1/sessions', { key, body: { agent_id: 'ag_clinic_booking' } });
          if (opened.status !== 201) continue;
          const id = opened.body.session_id as string;
          for (const text of ['what are your fees?', 'Meera Shah'])
            await api(first, 'POST', `/v1/sessions/${id}/turn`, { key, body: { text } });
          const end = await api(first, 'POST', `/v1/sessions/${id}/end`, { key });
          if (end.status === 200) ended.add(id);
        } catch {
          return; // the daemon is gone
        }
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    while (seen.length < 150) await new Promise((r) => setTimeout(r, 20));
    await first.stop('SIGKILL');
    stop = true;
    await Promise.all(workers);
    await reading;
    const beforeCrash = [...seen];
    expect(beforeCrash.length).toBeGreaterThanOrEqual(150);

    const second = await startDaemon({ stateDir: first.stateDir });
    const resumed: EventView[] = [];
    const again = follow(second.url, key, beforeCrash.at(-1)!.id, resumed);
    const log = await allEvents(second, key);
    while (beforeCrash.length + resumed.length < log.length) await new Promise((r) => setTimeout(r, 20));
    await second.stop();
    await again;

    const got = [...beforeCrash, ...resumed];
    expect(got.map((e) => e.id)).toEqual(log.map((e) => e.id));
    expect(got).toEqual(log);
    const bySession = new Map<string, number[]>();
    for (const e of log) bySession.set(e.session_id!, [...(bySession.get(e.session_id!) ?? []), e.sequence!]);
    for (const [id, sequences] of bySession) expect(sequences, id).toEqual(sequences.map((_, i) => i + 1));
    for (const id of ended)
      expect(
        log.filter((e) => e.session_id === id && e.type === 'session.ended'),
        id,
      ).toHaveLength(1);
    expect(ended.size).toBeGreaterThan(0);
  }, 120_000);
});
