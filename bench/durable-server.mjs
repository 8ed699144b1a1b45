/**
 * Reference server for `npm run bench`: a bare fastify 5 app whose one route does what a vagent
 * turn must do before it may answer (docs/api-decisions.md "Idempotency", "Durability": the stored
 * response and the turn survive `kill -9` and power loss) and nothing else — no auth, no
 * validation, no engine, no speech, no idempotency check beyond the look-up inside the write.
 *
 *   POST /durable   the turn's durable write through vagent's own store (`dist/store`): one
 *                   group-commit batch per tick, in which each request looks its
 *                   Idempotency-Key up, stores the response under it and appends a row to a
 *                   session's turn log (200 sessions, in turn); the batch commits, the WAL is
 *                   fdatasync'ed, then each request gets the stored response.
 *
 * The rows are copies of a real turn's (argv[3]: a JSON file `{body, data, engine, metrics, cost_micro}`
 * that bench/run.mjs reads from the daemon's database), so the bytes written per request are a
 * turn's. Throughput of this route over bare POST is the ceiling of the turn ratio on the same
 * host: what is left when everything but the durable write costs nothing.
 *
 * Its database is a fresh vagent state database (every migration) in DIR (argv[4], an empty
 * directory its caller removes; without it, a temp dir of its own that it removes on exit), with
 * foreign keys off: the turn-log rows name sessions that were never opened. WAL checkpoints run
 * in the background worker, as in the daemon. It prints `durable-server listening on
 * http://127.0.0.1:<port>` on stdout; SIGTERM/SIGINT close it.
 *
 * Usage: node bench/durable-server.mjs PORT ROWS.json [DIR]   (after `npm run build`)
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { openRepos } from '../dist/store/index.js';

const SESSIONS = 200;
const TENANT = 'default';
const FINGERPRINT = 'f'.repeat(64);

const rows = JSON.parse(fs.readFileSync(process.argv[3], 'utf8'));
for (const name of ['body', 'data', 'engine', 'metrics']) {
  if (typeof rows[name] !== 'string') throw new Error(`${process.argv[3]}: "${name}" must be a string`);
}

const ownDir = process.argv[4] === undefined;
const dir = ownDir ? fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-bench-durable-')) : process.argv[4];
const repos = openRepos(path.join(dir, 'vagent.db'));
repos.store.db.pragma('foreign_keys = OFF');
repos.store.startBackgroundCheckpoints();

const turnIndex = new Array(SESSIONS).fill(0);
let requests = 0;

const app = Fastify({ logger: false });
app.post('/durable', async (request, reply) => {
  const header = request.headers['idempotency-key'];
  const key = typeof header === 'string' ? header : `durable-${requests}`;
  const session = requests % SESSIONS;
  requests += 1;
  const body = await repos.store.write(
    () => {
      const found = repos.idempotency.get(TENANT, key);
      if (found?.body) return found.body;
      turnIndex[session] += 1;
      repos.idempotency.put(TENANT, key, FINGERPRINT, 200, rows.body, Date.now() / 1000, true); // plain, as a turn stores it
      repos.sessions.addTurn(session + 1, turnIndex[session], rows.data, rows.engine, rows.metrics, rows.cost_micro ?? 0);
      return rows.body;
    },
    { savepoint: false },
  );
  reply.header('content-type', 'application/json; charset=utf-8');
  return body;
});

await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) });
process.stdout.write(`durable-server listening on http://127.0.0.1:${app.server.address().port}\n`);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    app
      .close()
      .then(() => repos.store.stopBackgroundCheckpoints())
      .then(
        () => {
          repos.store.close();
          if (ownDir) fs.rmSync(dir, { recursive: true, force: true });
          process.exit(0);
        },
        () => process.exit(1),
      );
  });
}
