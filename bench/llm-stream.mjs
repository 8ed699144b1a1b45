/**
 * `npm run build && node bench/llm-stream.mjs`: time to first audio for a model reply on a
 * simulated phone call (docs/media.md "The early clip"), streamed against not streamed, in one run.
 * The agent, the call and the wait for its stored turn are those of the test of the same
 * behaviour (test/support/llm-stream-call.mjs, used by test/cli/media-llm-stream.test.ts).
 *
 * One daemon (the fake recogniser, the embedded voice) against the fake OpenAI-compatible model
 * (src/devtools/fake-llm.ts) in this process. The caller (the carrier simulator over loopback,
 * Twilio dialect, a line spoken by eSpeak NG) asks an off-script question; the model answers with
 * the same three-sentence reply (about 40 words, one word per chunk) in two ways, alternating:
 *   streamed   one chunk every CHUNK_MS: the first sentence is complete after about a third of
 *              the reply, and is played while the rest is generated;
 *   whole      the same reply after the same wait (words × CHUNK_MS), its chunks then all at once:
 *              what a non-streaming model gives, so nothing can be played before it ends.
 * Reports, per way: time to first audio (the simulator's end of the caller's speech → the first
 * reply frame received, ms: median and worst), the model's wall time (ms, from the stored turn's
 * `latency_ms.llm`), and the gain of the median. One call of each way first is not counted (warm-up). BENCH_SMOKE=1 (bench/smoke.mjs): one call each,
 * short chunks. Environment: BENCH_LLM_CHUNK_MS (60), BENCH_LLM_CALLS (5 per way).
 */
import { fileURLToPath } from 'node:url';
import { prepareSimLine, simulateCall } from '../dist/cli/simulator/sim-client.js';
import { startFakeLlm } from '../dist/devtools/fake-llm.js';
import { EspeakSynthesizer } from '../dist/adapters/speech/espeak.js';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { fixed, percentile, table } from './lib/stats.mjs';
import { SMOKE, numEnv, smokeOr } from './lib/report.mjs';
import { admin, api } from './lib/vagent.mjs';
import { QUESTION, askingCall, llmClinicAgent, storedTurnOfLastCall } from '../test/support/llm-stream-call.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CHUNK_MS = numEnv('BENCH_LLM_CHUNK_MS', smokeOr(20, 60));
const CALLS = numEnv('BENCH_LLM_CALLS', smokeOr(1, 5));
const AGENT = 'ag_bench_stream';
const REPLY =
  'Yes, well behaved pets on a leash are welcome in the waiting area. ' +
  'Please tell the front desk when you arrive so they can seat you near the door, away from other patients. ' +
  'Large dogs may have to wait outside with a family member during the consultation itself.';
const WORDS = REPLY.split(/\s+/).length;

if (!(await EspeakSynthesizer.available())) {
  console.error('bench/llm-stream: the embedded synthesiser is not installed, or dist/ is not built (npm run build)');
  process.exit(1);
}
const synth = new EspeakSynthesizer();
const said = await synth.synthesize(QUESTION, 'en');
await synth.close();
const line = prepareSimLine(said.samples, said.sampleRate, 'twilio');

const fake = await startFakeLlm({ rules: [] });
const stateDir = makeTempDir('vagent-llm-stream-state-');
const profileDir = makeTempDir('vagent-llm-stream-profile-');
let daemon;
try {
  daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: ROOT,
    env: {
      ...process.env,
      VAGENT_LOG_LEVEL: 'warn',
      VAGENT_RECOGNIZER: 'fake',
      VAGENT_LLM_BASE_URL: fake.url,
      VAGENT_LLM_MODEL: 'fake-llm',
      VAGENT_LLM_TIMEOUT_MS: '20000',
      XDG_CONFIG_HOME: profileDir,
    },
    stream: 'stderr',
  });
  const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  await api(daemon.url, key, 'PUT', `/v1/agents/${AGENT}`, llmClinicAgent(AGENT, { max_output_tokens: 200 }));

  /** One call asking the question; the model answers as `rule` says. @returns first-audio latency and model time, ms */
  async function oneCall(rule) {
    fake.setRules([{ match: 'dog', reply: REPLY, ...rule }]);
    fake.clearCache();
    const sim = simulateCall(askingCall({ daemonUrl: daemon.url, key, agentId: AGENT, line, waitMs: 30_000, replyTimeoutMs: 30_000 }));
    sim.on('event', (e) => {
      if (e.type === 'reply_start' && e.turn === 0) setTimeout(() => sim.hangup(true), 200);
    });
    const t = await sim.done;
    const firstAudioMs = t.turns[0]?.latencyMs ?? null;
    // The caller hung up while the reply played: the turn may still be finishing; wait for it.
    const turn = await storedTurnOfLastCall((p) => api(daemon.url, key, 'GET', p), QUESTION);
    return { firstAudioMs, llmMs: turn?.latency_ms?.llm ?? null };
  }

  const ways = {
    streamed: { chunk_delay_ms: CHUNK_MS },
    whole: { delay_ms: CHUNK_MS * WORDS },
  };
  // One call each first, not counted: the first call after start pays for warming up.
  for (const way of Object.keys(ways)) await oneCall(ways[way]);
  const got = { streamed: [], whole: [] };
  for (let i = 0; i < CALLS; i++) for (const way of Object.keys(ways)) got[way].push(await oneCall(ways[way]));

  const med = (xs) => percentile(xs, 50);
  const rows = Object.entries(got).map(([way, rs]) => {
    const audio = rs.map((r) => r.firstAudioMs).filter((x) => x !== null);
    const llm = rs.map((r) => r.llmMs).filter((x) => x !== null);
    return [way, String(rs.length), fixed(med(audio), 0), fixed(Math.max(...audio), 0), fixed(med(llm), 0)];
  });
  console.log(
    `\nbench/llm-stream: time to first audio of a model reply on a simulated call (${WORDS} words, one chunk every ${CHUNK_MS} ms${SMOKE ? ', smoke' : ''})`,
  );
  console.log(table(['reply', 'calls', 'first audio p50 ms', 'worst ms', 'model p50 ms'], rows));
  const gain = med(got.whole.map((r) => r.firstAudioMs)) - med(got.streamed.map((r) => r.firstAudioMs));
  console.log(`  streamed first audio is ${fixed(gain, 0)} ms earlier (median)`);
  if (got.streamed.some((r) => r.firstAudioMs === null) || got.whole.some((r) => r.firstAudioMs === null)) {
    console.error('bench/llm-stream: a call got no reply');
    process.exitCode = 1;
  }
} finally {
  await daemon?.stop();
  await fake.close();
  await cleanup();
}
