/**
 * Durability under `kill -9` (docs/api-decisions.md "Durability"; docs/unit-of-work.md
 * "Durability"): every create whose 201 reached the client survives, its Idempotency-Key replays
 * instead of creating again, retried in-flight keys create at most one trunk each, and the database
 * passes `PRAGMA integrity_check`.
 */
import http from 'node:http';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, cleanupAll, requireBuild, startDaemon, type Daemon } from '../support/daemon.js';

const LOOPS = 8;
/** Acknowledged creates after which the daemon is killed. */
const KILL_AFTER = 360;
/** Upper bound of requests per loop, so that the loops end even if the kill never comes. */
const PER_LOOP_MAX = 80;
const REQUEST_TIMEOUT_MS = 10_000;

interface Sent {
  key: string;
  body: { address: string; name: string; numbers: string[] };
}

const post = (url: string, apiKey: string, s: Sent) =>
  fetch(`${url}/v1/trunks`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'idempotency-key': s.key },
    body: JSON.stringify(s.body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });

/**
 * Starts a create whose body is only half sent: the daemon holds it, unanswered, until it
 * dies. Resolves once the first half has been handed to the kernel; `settled` ends with the
 * connection.
 */
async function halfSent(url: string, apiKey: string, s: Sent): Promise<{ settled: Promise<void> }> {
  const body = Buffer.from(JSON.stringify(s.body));
  const req = http.request(`${url}/v1/trunks`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${apiKey}`,
      'content-type': 'application/json',
      'idempotency-key': s.key,
      'content-length': String(body.length),
    },
  });
  const settled = new Promise<void>((resolve) => {
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      res.on('close', () => resolve());
    });
  });
  await new Promise<void>((resolve, reject) => req.write(body.subarray(0, 10), (err) => (err ? reject(err) : resolve())));
  return { settled };
}

/** Runs `fn` over `items` with `width` workers. */
async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

beforeAll(requireBuild);
afterAll(cleanupAll, 30_000);

describe('kill -9 under concurrent creates', () => {
  it('loses no acknowledged write and keeps idempotency exact', { timeout: 60_000 }, async () => {
    let daemon: Daemon = await startDaemon();
    const stateDir = daemon.stateDir;
    const apiKey = await adminKey(stateDir);
    const run = Math.random().toString(36).slice(2, 8);

    const sent: Sent[] = [];
    const acked = new Map<string, { id: string; body: Sent['body'] }>(); // key → trunk
    const unexpected: string[] = [];
    let killed = false;
    let inFlightAtKill = 0;
    const inFlight = new Set<string>();
    const kill = () => {
      killed = true;
      inFlightAtKill = inFlight.size;
      daemon.proc.kill('SIGKILL');
    };
    let armed = false;
    // Killed a few ms after the threshold, once the loops have sent their next requests, so
    // that some are mid-way through the daemon (claimed, not yet committed) when it dies.
    const arm = () => {
      armed = true;
      setTimeout(kill, 3);
    };

    // One create that is certainly unanswered at the kill: its body never completes.
    const partial: Sent = {
      key: `crash-${run}-partial`,
      body: { address: 'sip.example-carrier.in', name: `crash ${run} partial`, numbers: [] },
    };
    sent.push(partial);
    const partialReq = await halfSent(daemon.url, apiKey, partial);

    await Promise.all(
      Array.from({ length: LOOPS }, async (_, loop) => {
        for (let i = 0; i < PER_LOOP_MAX && !killed; i++) {
          const s: Sent = {
            key: `crash-${run}-${loop}-${i}`,
            body: {
              address: 'sip.example-carrier.in',
              name: `crash ${run} ${loop}/${i}`,
              numbers: [`+9122400${String(loop * 100 + i).padStart(5, '0')}`],
            },
          };
          sent.push(s);
          inFlight.add(s.key);
          try {
            const res = await post(daemon.url, apiKey, s);
            const text = await res.text();
            if (res.status === 201) {
              acked.set(s.key, { id: (JSON.parse(text) as { id: string }).id, body: s.body });
              if (acked.size >= KILL_AFTER && !armed) arm();
            } else if (!killed) {
              unexpected.push(`${res.status} ${text.slice(0, 200)}`);
            }
          } catch (err) {
            if (!killed) unexpected.push(String(err));
            return; // the daemon is gone: this loop is done
          } finally {
            inFlight.delete(s.key);
          }
        }
      }),
    );
    const killedOnThreshold = killed;
    if (!killed) kill(); // the loops ran out first: still end the half-sent request
    await partialReq.settled;

    expect(unexpected).toEqual([]);
    expect(killedOnThreshold).toBe(true);
    expect(inFlightAtKill).toBeGreaterThan(0);
    expect(acked.has(partial.key)).toBe(false);
    expect((await daemon.exited).signal).toBe('SIGKILL');
    expect(acked.size).toBeGreaterThanOrEqual(KILL_AFTER);

    // Restart on the same state dir: the stale lock is taken over, claims are released.
    daemon = await startDaemon({ stateDir });
    const list = async () => {
      const res = await fetch(`${daemon.url}/v1/trunks`, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: Array<{ id: string; name: string }>; has_more: boolean };
      expect(body.has_more).toBe(false);
      return body.data;
    };
    // Claims left in progress by the kill are released at start-up; only unacknowledged keys can have one.
    const released = Number((await daemon.waitForOutput(/"claims_released":(\d+)/, 'stdout'))[1]);
    expect(released).toBeLessThanOrEqual(sent.length - acked.size);
    const afterCrash = await list();
    const byName = new Map(afterCrash.map((t) => [t.name, t.id]));
    expect(byName.size).toBe(afterCrash.length);
    const lost = [...acked.values()].filter((a) => byName.get(a.body.name) !== a.id).map((a) => a.body.name);
    expect(lost).toEqual([]);

    // Every acknowledged key replays the stored 201: same trunk, no new one.
    const notReplayed: string[] = [];
    await pool([...acked.entries()], LOOPS, async ([key, a]) => {
      const res = await post(daemon.url, apiKey, { key, body: a.body });
      const body = (await res.json()) as { id: string };
      if (res.status !== 201 || res.headers.get('idempotency-replayed') !== 'true' || body.id !== a.id) {
        notReplayed.push(`${key}: ${res.status} ${res.headers.get('idempotency-replayed')} ${body.id}`);
      }
    });
    expect(notReplayed).toEqual([]);

    // Unacknowledged keys (in flight at the kill): a retry either replays or creates, once.
    const unacked = sent.filter((s) => !acked.has(s.key));
    expect(unacked.length).toBeGreaterThan(0);
    const retried = new Map<string, string>();
    for (const s of unacked) {
      for (let attempt = 0; attempt < 2; attempt++) {
        const res = await post(daemon.url, apiKey, s);
        const body = (await res.json()) as { id: string };
        expect(res.status, JSON.stringify(body)).toBe(201);
        if (attempt === 0) retried.set(s.key, body.id);
        else {
          expect(res.headers.get('idempotency-replayed')).toBe('true');
          expect(body.id).toBe(retried.get(s.key));
        }
      }
    }

    const final = await list();
    const names = final.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.sort()).toEqual(sent.map((s) => s.body.name).sort());
    for (const s of unacked) expect(final.find((t) => t.name === s.body.name)?.id).toBe(retried.get(s.key));

    expect((await daemon.stop()).code).toBe(0);
    const db = new Database(path.join(stateDir, 'vagent.db'), { fileMustExist: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(db.pragma('foreign_key_check')).toEqual([]);
    } finally {
      db.close();
    }
  });
});
