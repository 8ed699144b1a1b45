/**
 * `npm run bench` (after a build): a text turn through the language model layer (docs/llm.md),
 * against the same daemon's turn answered by the rules, in one run.
 *
 * One daemon (a fresh state dir, its example agents) pointed at the fake model server of
 * `npm run fake-llm` (dist/devtools/fake-llm.js, run in this process on loopback). Every sample
 * opens a session of ag_clinic_booking (not timed) and times one `POST /v1/sessions/{id}/turn`,
 * one request at a time:
 *   (r)   "what are your fees?"   the FAQ layer: the rules answer, no model
 *   (m0)  "do you take UPI?"      no FAQ matches: the model answers (streamed), the fake at once
 *   (m300) the same, the fake waiting 300 ms before it answers
 * The three alternate sample by sample (r, m0, m300, then the next order…), so that load elsewhere
 * on the host falls on each alike. Printed per kind: p50 and p99 of the turn (client wall time),
 * of the model step (`trace.latency_ms.llm`), and of vagent's own overhead on top of the model
 * (turn − model step, per sample); then each as a ratio to the rules turn's p50/p99 of this run.
 * The model turns' overhead includes what a rules turn does not have: building the prompt, the
 * HTTP request and stream to the fake, checking the answer, the engine's second pass with it, and
 * pricing the tokens. Writes bench/results/llm.json. No target is judged.
 *
 * Environment: BENCH_LLM_SAMPLES (100 per kind), BENCH_LLM_WARMUP (10 per kind),
 * BENCH_LLM_DELAY_MS (300: the slow fake's delay).
 * BENCH_SMOKE=1 (bench/smoke.mjs): 5 samples per kind, 1 warm-up; a failed turn fails the run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { invalid, numEnv, resultsFile, smokeOr, warnings } from './lib/report.mjs';
import { fixed, percentile, table } from './lib/stats.mjs';
import { admin, api, untilAgentAudio } from './lib/vagent.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SAMPLES = numEnv('BENCH_LLM_SAMPLES', smokeOr(5, 100));
const WARMUP = numEnv('BENCH_LLM_WARMUP', smokeOr(1, 10));
const DELAY_MS = numEnv('BENCH_LLM_DELAY_MS', 300);

const KINDS = [
  { id: 'r', title: '(r) rules: FAQ answer', text: 'what are your fees?', delay: null, layer: 'faq' },
  { id: 'm0', title: '(m0) model, fake at 0 ms', text: 'do you take UPI?', delay: 0, layer: 'llm' },
  { id: 'm300', title: `(m${DELAY_MS}) model, fake at ${DELAY_MS} ms`, text: 'do you take UPI?', delay: DELAY_MS, layer: 'llm' },
];

async function main() {
  const { startFakeLlm } = await import(path.join(ROOT, 'dist', 'devtools', 'fake-llm.js'));
  const fake = await startFakeLlm();
  const stateDir = makeTempDir('vagent-bench-llm-state-');
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: ROOT,
    env: {
      ...process.env,
      VAGENT_LOG_LEVEL: 'warn',
      XDG_CONFIG_HOME: makeTempDir('vagent-bench-llm-profile-'),
      VAGENT_LLM_BASE_URL: fake.url,
      VAGENT_LLM_MODEL: fake.model,
    },
    stream: 'stderr',
    timeoutMs: 60_000,
  });
  const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  await untilAgentAudio(daemon.url, key, 'ag_clinic_booking');

  /** One timed turn of `kind` in a fresh session: client wall time and the model step, ms. */
  const sample = async (kind) => {
    fake.setRules(kind.delay ? [{ match: '.', delay_ms: kind.delay }] : []);
    const { session_id: id } = await api(daemon.url, key, 'POST', '/v1/sessions', { agent_id: 'ag_clinic_booking' });
    const started = performance.now();
    const turn = await api(daemon.url, key, 'POST', `/v1/sessions/${id}/turn`, { text: kind.text });
    const ms = performance.now() - started;
    if (turn.trace.layer !== kind.layer) invalid(`${kind.title}: the turn was answered by layer ${turn.trace.layer}, not ${kind.layer}`);
    const llm = turn.trace.latency_ms.llm ?? 0;
    return { ms, llm, overhead: ms - llm };
  };

  const seen = Object.fromEntries(KINDS.map((k) => [k.id, []]));
  process.stderr.write(`bench/llm: ${WARMUP} warm-up and ${SAMPLES} samples per kind, one request at a time\n`);
  for (let i = 0; i < WARMUP + SAMPLES; i++) {
    // Rotate the order each round: each kind follows each other kind as often.
    for (let j = 0; j < KINDS.length; j++) {
      const kind = KINDS[(i + j) % KINDS.length];
      const s = await sample(kind);
      if (i >= WARMUP) seen[kind.id].push(s);
    }
  }
  await daemon.stop();
  await fake.close();

  const stats = (xs) => ({ p50: percentile(xs, 50), p99: percentile(xs, 99) });
  const figures = Object.fromEntries(
    KINDS.map((k) => {
      const xs = seen[k.id];
      return [
        k.id,
        {
          title: k.title,
          samples: xs.length,
          turn_ms: stats(xs.map((s) => s.ms)),
          llm_ms: stats(xs.map((s) => s.llm)),
          overhead_ms: stats(xs.map((s) => s.overhead)),
        },
      ];
    }),
  );
  const base = figures.r.turn_ms;
  const ratio = (x, b) => (b > 0 ? x / b : null);
  for (const f of Object.values(figures)) {
    f.turn_vs_rules = { p50: ratio(f.turn_ms.p50, base.p50), p99: ratio(f.turn_ms.p99, base.p99) };
    f.overhead_vs_rules = { p50: ratio(f.overhead_ms.p50, base.p50), p99: ratio(f.overhead_ms.p99, base.p99) };
  }

  const rows = Object.values(figures).map((f) => [
    f.title,
    `${fixed(f.turn_ms.p50, 1)} / ${fixed(f.turn_ms.p99, 1)}`,
    `${fixed(f.llm_ms.p50, 1)} / ${fixed(f.llm_ms.p99, 1)}`,
    `${fixed(f.overhead_ms.p50, 1)} / ${fixed(f.overhead_ms.p99, 1)}`,
    `${fixed(f.turn_vs_rules.p50, 2)}× / ${fixed(f.turn_vs_rules.p99, 2)}×`,
    `${fixed(f.overhead_vs_rules.p50, 2)}× / ${fixed(f.overhead_vs_rules.p99, 2)}×`,
  ]);
  console.log('\nText turn through the language model layer vs the rules (p50 / p99, ms; ratios to the rules turn of this run)');
  console.log(table(['kind', 'turn', 'model step', 'overhead = turn − model', 'turn ÷ rules', 'overhead ÷ rules'], rows));

  const file = resultsFile('llm.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(
    file,
    JSON.stringify({ when: new Date().toISOString(), samples: SAMPLES, delay_ms: DELAY_MS, figures, warnings }, null, 2) + '\n',
  );
  console.log(`\nresults: ${path.relative(ROOT, file)}`);
}

try {
  await main();
} finally {
  await cleanup();
}
