/**
 * `npm run build && node bench/media-livekit.mjs`: the LiveKit room transport of a real daemon
 * (docs/media.md "LiveKit rooms"), beside the carrier figures of bench/media.mjs, on this machine,
 * in one run.
 *
 * The daemon runs in its own process with `VAGENT_RECOGNIZER=fake`, the VAD on, and LiveKit set
 * to the fake LiveKit server started in this process (src/devtools/fake-livekit.ts) with its
 * development room driver (`VAGENT_DEV_FAKE_ROOMS=1`): vagent joins each call's room from its
 * media child process, reads the callee's audio with rtc-node's `AudioStream` and plays through
 * an rtc-node `AudioSource`, exactly as in a real room; only the wire is PCM over a WebSocket.
 *
 * Every call is an outbound EMI reminder (`POST /v1/calls` with `dial: true`, ag_emi_reminder):
 * the fake callee answers and, after each of vagent's replies, says "yes speaking", "yes I will
 * pay", "tomorrow", "yes" (synthesised ONCE with the embedded voice, shared by every call), then
 * hangs up once the next reply has played. The fake recogniser hears the same lines
 * (`vagent_fake_transcripts` in the call's context). Calls start 30 ms apart.
 *
 *   (a) reply latency: the end of a callee line (its last frame sent by the fake) → the first
 *       frame of vagent's reply the fake receives, ms, p50/p99 over every line, at 1, 20 and 50
 *       concurrent calls. "Overhead" = latency − the step's end-of-utterance silence (yes/no
 *       500 ms, date 800 ms): what the room path and the turn add. Target (reported): overhead
 *       p99 ≤ 150 ms at 20 calls.
 *   (b) capacity: N = 25, 50, 75, … calls at once (up to a cap). A step passes when every call
 *       heard a reply to each of its four lines and the overhead p99 stays ≤ 250 ms. Steps stop
 *       at the first failure. Per step: the daemon's RSS per call (its media child process
 *       included), and the CPU of the daemon, of its room process and of this process (the
 *       fake LiveKit and its callees).
 * Targets are reported (PASS / FAIL), never enforced. Writes bench/results/media-livekit.json.
 *
 * Environment: BENCH_LK_QUICK=1 (1 and 5 calls, capacity 10; about a minute),
 * BENCH_LK_LATENCY_CALLS ("1,20,50"), BENCH_LK_CAPACITY_STEP (25), BENCH_LK_CAPACITY_MAX (150),
 * BENCH_VAGENT_LOG_LEVEL (warn). BENCH_SMOKE=1 (bench/smoke.mjs): one callee line, no warm-up
 * call and no latency step, a capacity step of 1 call (the same path); no target judged, a call without its reply fails the run; results in
 * bench/results/smoke/.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { resample } from '../dist/media/audio-resample.js';
import { startFakeLiveKit } from '../dist/devtools/fake-livekit.js';
import { DEFAULT_EOU_SILENCE_MS } from '../dist/media/endpointing.js';
import { EspeakSynthesizer } from '../dist/adapters/speech/espeak.js';
import { toSpokenText } from '../dist/engine/spoken.js';
import { procTicks } from './lib/cpu.mjs';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { fixed, percentile, table } from './lib/stats.mjs';
import { CALL_BODY, SMOKE, invalid, judged, numEnv, numListEnv, resultsFile, smokeOr } from './lib/report.mjs';
import { admin, api, rssMiB } from './lib/vagent.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = resultsFile('media-livekit.json');
const QUICK = process.env.BENCH_LK_QUICK === '1';
const LATENCY_CALLS = numListEnv('BENCH_LK_LATENCY_CALLS', smokeOr([], QUICK ? [1, 5] : [1, 20, 50]));
const CAPACITY_STEP = numEnv('BENCH_LK_CAPACITY_STEP', smokeOr(1, QUICK ? 10 : 25));
const CAPACITY_MAX = numEnv('BENCH_LK_CAPACITY_MAX', smokeOr(1, QUICK ? 10 : 150));
const LOG_LEVEL = process.env.BENCH_VAGENT_LOG_LEVEL || 'warn';
const STAGGER_MS = 30;
const FROM = '+912240001234';
/** The prepare-only EMI reminder call of the HTTP benches, dialled here. */
const EMI_CALL = JSON.parse(CALL_BODY);

/** The callee's lines and the end-of-utterance silence of the step each answers; the first only in the smoke mode. */
const LINES = [
  { text: 'yes speaking', silenceMs: DEFAULT_EOU_SILENCE_MS.yes_no },
  { text: 'yes I will pay', silenceMs: DEFAULT_EOU_SILENCE_MS.yes_no },
  { text: 'tomorrow', silenceMs: DEFAULT_EOU_SILENCE_MS.date },
  { text: 'yes', silenceMs: DEFAULT_EOU_SILENCE_MS.yes_no },
].slice(0, SMOKE ? 1 : undefined);
const LATENCY_TARGET_MS = 150;
const CAPACITY_OVERHEAD_MS = 250;

/** The daemon's LiveKit room media processes: its children running the media worker (not its speech engine's). */
function roomProcessesOf(pid) {
  try {
    const children = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    return children.filter((c) => {
      try {
        return fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').includes('daemon/media-worker/worker.js');
      } catch {
        return false; // gone
      }
    });
  } catch {
    return [];
  }
}

async function synthesise() {
  const synth = new EspeakSynthesizer();
  try {
    const voice = synth.voiceFor('en-IN');
    const out = [];
    for (const l of LINES) {
      const a = await synth.synthesize(toSpokenText(l.text, 'en-IN'), voice, { timeoutMs: 15_000 });
      out.push(resample(a.samples, a.sampleRate, 48_000));
    }
    return out;
  } finally {
    await synth.close();
  }
}

/** Places `n` calls 30 ms apart and waits until every callee is done (or `timeoutMs`). */
async function runCalls(ctx, n, timeoutMs = 150_000) {
  const { daemon, key, fake } = ctx;
  const rooms = [];
  const placing = [];
  for (let i = 0; i < n; i++) {
    placing.push(
      api(daemon.url, key, 'POST', '/v1/calls', {
        ...EMI_CALL,
        from: FROM,
        dial: true,
        context: { ...EMI_CALL.context, vagent_fake_transcripts: LINES.map((l) => l.text) },
      }).then(
        (p) => rooms.push(p.room_name),
        (err) => {
          rooms.push(null);
          console.error(`  a dial failed: ${err.message}`);
        },
      ),
    );
    await sleep(STAGGER_MS);
  }
  await Promise.all(placing);
  const deadline = Date.now() + timeoutMs;
  const done = () => rooms.every((r) => r === null || fake.calleeLog(r)?.done === true);
  while (!done() && Date.now() < deadline) await sleep(200);
  const latencies = [];
  const overheads = [];
  let complete = 0;
  for (const room of rooms) {
    const log = room ? fake.calleeLog(room) : undefined;
    if (!log) continue;
    let answered = 0;
    log.lines.forEach((line, i) => {
      const reply = log.agentSpeech.find((s) => s.startMs >= line.endMs);
      if (!reply || line.endMs < 0) return;
      answered++;
      const ms = reply.startMs - line.endMs;
      latencies.push(ms);
      overheads.push(ms - LINES[i].silenceMs);
    });
    if (answered === LINES.length) complete++;
  }
  return { calls: n, complete, latencies, overheads };
}

const summary = (r) => ({
  calls: r.calls,
  complete: r.complete,
  turns: r.latencies.length,
  latency_p50_ms: percentile(r.latencies, 50),
  latency_p99_ms: percentile(r.latencies, 99),
  overhead_p50_ms: percentile(r.overheads, 50),
  overhead_p99_ms: percentile(r.overheads, 99),
});

async function main() {
  const tmp = makeTempDir('vagent-bench-lk-');
  const stateDir = path.join(tmp, 'state');
  const lines = await synthesise();
  const fake = await startFakeLiveKit({
    callee: {
      steps: [...LINES.map((l, i) => ({ say: l.text, pcm: lines[i], sampleRate: 48_000 })), { hangup: true }],
      replyTimeoutMs: 20_000,
    },
  });
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: ROOT,
    env: {
      ...process.env,
      VAGENT_LOG_LEVEL: LOG_LEVEL,
      VAGENT_RECOGNIZER: 'fake',
      XDG_CONFIG_HOME: path.join(tmp, 'profile'),
      LIVEKIT_URL: fake.url,
      LIVEKIT_API_KEY: fake.apiKey,
      LIVEKIT_API_SECRET: fake.apiSecret,
      VAGENT_DEV_FAKE_ROOMS: '1',
      VAGENT_CALL_RESERVATION_INR: '0',
    },
    stream: 'stderr',
  });
  try {
    fake.webhookUrl = `${daemon.url}/v1/telephony/livekit/webhook`;
    const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
    await api(daemon.url, key, 'POST', '/v1/trunks', { name: 'bench', address: 'sip.example.in', numbers: [FROM] });
    const ctx = { daemon, key, fake };
    // One warm-up call: the room process loads rtc-node and the clips are converted once (not
    // in the smoke mode, whose figures mean nothing).
    if (!SMOKE) await runCalls(ctx, 1);

    console.log('\nLiveKit rooms (fake room, rtc-node AudioSource/AudioStream), outbound EMI reminder, fake recogniser');
    console.log('(a) reply latency: callee end of line → first reply frame, ms (overhead = latency − end-of-utterance silence)');
    const latency = [];
    for (const n of LATENCY_CALLS) latency.push(summary(await runCalls(ctx, n)));
    console.log(
      table(
        ['calls', 'complete', 'turns', 'p50', 'p99', 'overhead p50', 'overhead p99'],
        latency.map((r) => [
          r.calls,
          r.complete,
          r.turns,
          fixed(r.latency_p50_ms, 0),
          fixed(r.latency_p99_ms, 0),
          fixed(r.overhead_p50_ms, 0),
          fixed(r.overhead_p99_ms, 0),
        ]),
      ),
    );
    const at20 = latency.find((r) => r.calls === 20) ?? latency.at(-1);
    if (at20) {
      const latencyPass = at20.overhead_p99_ms !== null && at20.overhead_p99_ms <= LATENCY_TARGET_MS;
      console.log(
        `  target: overhead p99 ≤ ${LATENCY_TARGET_MS} ms at ${at20.calls} calls: ${judged(latencyPass, 'FAIL')} (${fixed(at20.overhead_p99_ms, 0)} ms)`,
      );
    } else {
      console.log('  (no latency step run)');
    }
    for (const r of latency) if (r.complete < r.calls) invalid(`${r.calls} LiveKit calls: only ${r.complete} heard a reply to every line`);

    console.log(`(b) capacity: every call answered on each line, overhead p99 ≤ ${CAPACITY_OVERHEAD_MS} ms`);
    const capacity = [];
    let best = 0;
    for (let n = CAPACITY_STEP; n <= CAPACITY_MAX; n += CAPACITY_STEP) {
      const rooms = roomProcessesOf(daemon.pid);
      const totalRss = () => [daemon.pid, ...rooms].reduce((n, pid) => n + (rssMiB(pid) ?? 0), 0);
      const roomTicks = () => rooms.reduce((n, pid) => n + procTicks(pid), 0);
      const idleRss = totalRss();
      const t0 = {
        at: Date.now(),
        daemon: procTicks(daemon.pid),
        room: rooms.length > 0 ? roomTicks() : null,
        self: process.cpuUsage(),
      };
      let peak = idleRss;
      const sampler = setInterval(() => {
        peak = Math.max(peak, totalRss());
      }, 500);
      const result = await runCalls(ctx, n);
      clearInterval(sampler);
      const seconds = (Date.now() - t0.at) / 1000;
      const cores = (a, b) => (a === null || b === null ? null : (b - a) / 100 / seconds);
      const self = process.cpuUsage(t0.self);
      const s = summary(result);
      const ok = s.complete === n && s.overhead_p99_ms !== null && s.overhead_p99_ms <= CAPACITY_OVERHEAD_MS;
      capacity.push({
        ...s,
        ok,
        rss_per_call_mib: (peak - idleRss) / n,
        daemon_cores: cores(t0.daemon, procTicks(daemon.pid)),
        room_processes: rooms.length,
        room_process_cores: rooms.length > 0 ? cores(t0.room, roomTicks()) : null,
        bench_cores: (self.user + self.system) / 1e6 / seconds,
      });
      if (!ok) break;
      best = n;
    }
    console.log(
      table(
        ['calls', 'complete', 'overhead p99', 'RSS/call MiB', 'daemon cores', 'room processes', 'their cores', 'fake+callees cores', ''],
        capacity.map((r) => [
          r.calls,
          r.complete,
          fixed(r.overhead_p99_ms, 0),
          fixed(r.rss_per_call_mib, 2),
          fixed(r.daemon_cores, 2),
          r.room_processes,
          fixed(r.room_process_cores, 2),
          fixed(r.bench_cores, 2),
          r.ok ? 'ok' : 'FAIL',
        ]),
      ),
    );
    console.log(
      QUICK && !SMOKE
        ? `  capacity: ${best} calls (quick: capped at ${CAPACITY_MAX}, target not judged)`
        : `  capacity: ${best} calls (target ≥ 50: ${judged(best >= 50, 'FAIL')})`,
    );
    for (const r of capacity)
      if (r.complete < r.calls) invalid(`${r.calls} LiveKit calls at once: only ${r.complete} heard a reply to every line`);
    fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
    fs.writeFileSync(RESULTS, JSON.stringify({ at: new Date().toISOString(), latency, capacity, capacity_calls: best }, null, 2));
  } finally {
    await daemon.stop();
    await fake.close();
    await cleanup();
  }
}

await main();
