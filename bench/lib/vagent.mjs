/**
 * The vagent calls the benchmarks share: local admin commands against a state dir, API requests
 * with a key (each with its own Idempotency-Key), and a process's resident memory.
 */
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** `vagent admin …args --state-dir D --json`, parsed. @throws Error with its stderr when it fails */
export function admin(stateDir, ...args) {
  const r = spawnSync(process.execPath, ['bin/vagent', 'admin', ...args, '--state-dir', stateDir, '--json'], {
    cwd: ROOT,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (r.status !== 0) throw new Error(`vagent admin ${args.join(' ')} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/**
 * One API request with `key`; `body` (an object, JSON-encoded here) or none; the parsed JSON answer.
 * @throws TypeError for a body that is already a string (it would be encoded twice: a 400)
 * @throws Error on a status other than 2xx
 */
export async function api(url, key, method, pathname, body) {
  if (typeof body === 'string') throw new TypeError(`${method} ${pathname}: pass the body as an object, not a string (api() encodes it)`);
  const headers = { authorization: `Bearer ${key}`, 'idempotency-key': crypto.randomUUID() };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url + pathname, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathname}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** Waits until agent `agentId`'s pre-synthesised clips are all ready or failed (GET /v1/agents/{id} `audio`). */
export async function untilAgentAudio(url, key, agentId) {
  for (;;) {
    const { audio } = await api(url, key, 'GET', `/v1/agents/${agentId}`);
    if (audio.ready + audio.failed >= audio.total) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Resident memory of process `pid` (Linux /proc), MiB, or null when it cannot be read. */
export function rssMiB(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : null;
}

/**
 * The text-turn route of the benchmarks, for autocannon (bench/lib/http.mjs): `POST
 * /v1/sessions/{id}/turn` with "what are your fees?" (the FAQ layer, cached audio), round-robin
 * over the sessions `ids`, each request under an Idempotency-Key of its own (`prefix-N`).
 * @param {{title: string, url: string, pid: number, key: string, ids: string[], prefix: string}} o
 * @returns the route, and `sent()`: how many requests it has set up so far
 */
export function turnRoute({ title, url, pid, key, ids, prefix }) {
  let seq = 0;
  return {
    title,
    url,
    pid,
    path: `/v1/sessions/${ids[0]}/turn`,
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ text: 'what are your fees?' }),
    requests: [
      {
        setupRequest(req) {
          seq += 1;
          req.path = `/v1/sessions/${ids[seq % ids.length]}/turn`;
          req.headers['Idempotency-Key'] = `${prefix}-${seq}`;
          return req;
        },
      },
    ],
    sent: () => seq,
  };
}
