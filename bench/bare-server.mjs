/**
 * Baseline server for `npm run bench`: a bare fastify 5 app with nothing but the two routes
 * the benchmark compares vagent against — `GET /bare` (a small JSON object) and `POST /bare`
 * (echoes its small JSON body). Logger off, 127.0.0.1, port 0 (or argv[2]). It runs in its own
 * process, started by bench/run.mjs, and prints `bare-server listening on http://127.0.0.1:<port>`
 * on stdout once it accepts connections. SIGTERM/SIGINT close it.
 */
import Fastify from 'fastify';

const app = Fastify({ logger: false });

app.get('/bare', async () => ({ ok: true, service: 'bare', version: 1 }));
app.post('/bare', async (request) => request.body);

await app.listen({ host: '127.0.0.1', port: Number(process.argv[2] ?? 0) });
process.stdout.write(`bare-server listening on http://127.0.0.1:${app.server.address().port}\n`);

for (const signal of ['SIGTERM', 'SIGINT']) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
