/**
 * `npm run build && node bench/media.mjs`: the carrier media path of a real daemon (docs/media.md),
 * driven by simulated Twilio calls (src/cli/simulator/sim-client.ts) over
 * `GET /v1/media/twilio`, on this machine, in one run.
 *
 * The daemon runs in its own process with `VAGENT_RECOGNIZER=fake` (the recogniser hears the
 * transcripts each stream passes as custom parameter `vagent_fake_transcripts`) and VAD on.
 * Every call is an inbound booking with ag_clinic_booking: after the opening, the caller says
 * "My name is Priya Sharma", "yes" (to the readback), "tomorrow", "yes", each after the bot's
 * reply to the previous line, at real-time pacing in 20 ms μ-law frames, and hangs up once the
 * last reply has played. The four lines are synthesised ONCE with the embedded voice (eSpeak
 * NG) and cut into frames once (prepareSimLine); every call shares them. Calls start 30 ms
 * apart (at most 3 s of ramp). The clients run in child processes (bench/lib/media-load.mjs; one
 * per 100 calls), which compete with the daemon for this machine's cores: their CPU is shown.
 *
 *   (a) response latency: the client's end of speech → first reply frame received, ms, p50 and
 *       p99 over every caller turn, at 1, 20 and 100 concurrent calls. Each turn waits on the
 *       end-of-utterance silence of its step (src/media/endpointing.ts DEFAULT_EOU_SILENCE_MS:
 *       name and date 800 ms, yes/no 500 ms; the VAD's hangover — WebRTC mode 2, 20 ms frames:
 *       100 ms — is subtracted by the segmenter, so it adds nothing), so "overhead" = latency −
 *       that turn's silence. Target: overhead p99 ≤ 60 ms at 100 calls, i.e. p99 ≤ silence + 60.
 *   (b) capacity: N = 50, 100, 150, … concurrent calls (up to a cap) while a steady load of text
 *       turns (`POST /v1/sessions/{id}/turn`, FAQ question, other sessions) runs from this
 *       process. A step passes when every call completed every turn, the worst call's outbound
 *       frame lateness p99 (the sim client's play-out queue running dry mid-clip) is ≤ 20 ms and
 *       no frame was dropped (every reply has as many frames as in the single-call run). Steps
 *       stop at the first failure. Target ≥ 100 calls. Also per step: the daemon's RSS per call
 *       ((peak VmRSS during the step − VmRSS idle just before) ÷ N), the `/v1` turn p99 against
 *       the same turn load with no calls (a ratio), and the CPU of the daemon and the clients.
 *       The daemon does not log its own play-out statistics (lateness, drops), so these are
 *       client-side figures only.
 *   (c) the embedded recogniser's real-time factor: bench/media-rtf.mjs is run and its table
 *       shown (skipped, with a note, when pocketsphinx is not installed).
 *   (d) the first call after start (bench/lib/first-call.mjs): the daemon is restarted on its
 *       state dir (the audio cache filled, as after any restart) with the default recogniser;
 *       as soon as /v1/health answers, 100 calls one after another, each hung up at the first
 *       frame of its opening: the first call's opening latency (`start` sent → first opening
 *       frame) against the 100th's, as a ratio. Target: the first ≤ 300 ms.
 * Targets are reported (PASS / FAIL), never enforced: the exit code is 0 unless the bench
 * itself fails. Writes bench/results/media.json.
 *
 * Environment: BENCH_MEDIA_QUICK=1 (latency at 1 and 5 calls, capacity 10 and 20, 20 calls for
 * (d), no RTF; about 2½ minutes), BENCH_MEDIA_LATENCY_CALLS ("1,20,100"), BENCH_MEDIA_CAPACITY_STEP
 * (50), BENCH_MEDIA_CAPACITY_MAX (300), BENCH_MEDIA_TURN_RATE (20 turns/s), BENCH_MEDIA_BASELINE_S
 * (10), BENCH_MEDIA_RTF (1; 0 skips (c)), BENCH_MEDIA_WAIT_QUIET_S (0: before each step, wait up to that
 * long for other processes to leave the CPU idle; the CPU of other processes during each step
 * is reported either way, in "cpu d/c/o"), BENCH_MEDIA_CAPACITY_ALL=1 (run every capacity step up to
 * the cap even after one failed, to see the trend; capacity stays the last step before the first
 * failure), BENCH_MEDIA_FIRST_CALLS (100: the calls of (d)), BENCH_VAGENT_LOG_LEVEL (warn).
 * BENCH_SMOKE=1 (bench/smoke.mjs): one caller line, no latency step (a capacity step of 1 call
 * runs the same path), a 1 s baseline, 3 calls for (d), no RTF; no target judged, an incomplete call fails the run; results
 * in bench/results/smoke/.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { prepareSimLine } from '../dist/cli/simulator/sim-client.js';
import { DEFAULT_EOU_SILENCE_MS } from '../dist/media/endpointing.js';
import { WebRtcVad } from '../dist/media/vad-webrtc.js';
import { EspeakSynthesizer } from '../dist/adapters/speech/espeak.js';
import { hostBusyCores, procTicks } from './lib/cpu.mjs';
import { cleanup, makeTempDir, peakRssMiB, startServer } from './lib/procs.mjs';
import { fixed, percentile, table } from './lib/stats.mjs';
import { SMOKE, invalid, judged, loud, numEnv, numListEnv, resultsFile, smokeOr, warnings } from './lib/report.mjs';
import { measureFirstCall } from './lib/first-call.mjs';
import { admin, api, rssMiB } from './lib/vagent.mjs';
import { waitForAllAudio } from './sessions.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = resultsFile('media.json');
const QUICK = process.env.BENCH_MEDIA_QUICK === '1';
const LATENCY_CALLS = numListEnv('BENCH_MEDIA_LATENCY_CALLS', smokeOr([], QUICK ? [1, 5] : [1, 20, 100]));
const CAPACITY_STEP = numEnv('BENCH_MEDIA_CAPACITY_STEP', smokeOr(1, QUICK ? 10 : 50));
const CAPACITY_MAX = numEnv('BENCH_MEDIA_CAPACITY_MAX', smokeOr(1, QUICK ? 20 : 300));
const TURN_RATE = numEnv('BENCH_MEDIA_TURN_RATE', 20);
const BASELINE_S = numEnv('BENCH_MEDIA_BASELINE_S', smokeOr(1, QUICK ? 3 : 10));
const RUN_RTF = numEnv('BENCH_MEDIA_RTF', SMOKE || QUICK ? 0 : 1) !== 0;
const FIRST_CALLS = Math.max(2, numEnv('BENCH_MEDIA_FIRST_CALLS', smokeOr(3, QUICK ? 20 : 100)));
const LOG_LEVEL = process.env.BENCH_VAGENT_LOG_LEVEL || 'warn';
const WAIT_QUIET_S = numEnv('BENCH_MEDIA_WAIT_QUIET_S', 0);
const NOISY_CORES = 0.25;
const KEEP_GOING = process.env.BENCH_MEDIA_CAPACITY_ALL === '1';
const CALLS_PER_CLIENT = 100;
const STAGGER_MS = 30;
const MAX_RAMP_MS = 3000;
const AGENT = 'ag_clinic_booking';
const TARGETS = { overhead_p99_ms: 60, lateness_p99_ms: 20, capacity_calls: 100, first_call_opening_ms: 300 };

/** The caller's lines and the step each answers (its end-of-utterance silence); the first only in the smoke mode. */
const LINES = [
  { text: 'My name is Priya Sharma', expect: 'name' },
  { text: 'yes', expect: 'yes_no' },
  { text: 'tomorrow', expect: 'date' },
  { text: 'yes', expect: 'yes_no' },
].slice(0, SMOKE ? 1 : undefined);
const SILENCE_MS = LINES.map((l) => DEFAULT_EOU_SILENCE_MS[l.expect]);
const TURN_TEXT = 'what are your fees?';
const TICKS_PER_S = 100;

/** `node bin/vagent admin … --json` on the daemon's state dir. */

/** utime + stime per thread of a process (tid → ticks), for the busiest thread: the daemon's main loop or a media worker. */
function threadTicks(pid) {
  const out = new Map();
  try {
    for (const tid of fs.readdirSync(`/proc/${pid}/task`)) out.set(Number(tid), procTicks(`${pid}/task/${tid}`));
  } catch {
    /* gone */
  }
  return out;
}

/** Busy ticks of the whole host (all cores). */
function hostBusyTicks() {
  const f = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  return f[0] + f[1] + f[2] + f[5] + f[6] + (f[7] ?? 0);
}

/** Synthesises the caller's lines once and cuts them into Twilio frames once. */
async function prepareLines() {
  if (!(await EspeakSynthesizer.available())) {
    throw new Error(
      'the embedded synthesiser (optional dependency @echogarden/espeak-ng-emscripten) is not installed, or dist/ is not built',
    );
  }
  const synth = new EspeakSynthesizer();
  try {
    const voice = synth.voiceFor('en-IN');
    const out = [];
    for (const line of LINES) {
      const a = await synth.synthesize(line.text, voice, { timeoutMs: 15_000 });
      out.push({ text: line.text, prepared: prepareSimLine(a.samples, a.sampleRate, 'twilio') });
    }
    return out;
  } finally {
    await synth.close();
  }
}

/**
 * A steady load of text turns at `rate` per second over `sessions` until `stop()`; resolves
 * with the latencies (ms) and errors. Requests are fired on schedule whether or not the
 * previous ones answered (an open-loop load, so a slow daemon shows as latency, not as fewer
 * requests).
 */
function turnLoad(url, key, sessions, rate) {
  const latencies = [];
  let errors = 0;
  let stopped = false;
  const inflight = new Set();
  const t0 = performance.now();
  let i = 0;
  const done = (async () => {
    while (!stopped) {
      const due = t0 + (i * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      if (stopped) break;
      const sid = sessions[i % sessions.length];
      i += 1;
      const start = performance.now();
      const p = api(url, key, 'POST', `/v1/sessions/${sid}/turn`, { text: TURN_TEXT })
        .then(
          () => {
            latencies.push(performance.now() - start);
          },
          () => {
            errors += 1;
          },
        )
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await Promise.all(inflight);
    return { latencies, errors };
  })();
  return {
    stop: () => {
      stopped = true;
      return done;
    },
  };
}

/**
 * Runs `n` calls in child processes (one per {@link CALLS_PER_CLIENT}); samples the daemon's
 * RSS meanwhile. Returns the per-call summaries, peak RSS and CPU use in cores.
 */
async function runCalls(ctx, n) {
  await waitQuiet();
  const clients = Math.ceil(n / CALLS_PER_CLIENT);
  const staggerMs = Math.min(STAGGER_MS, MAX_RAMP_MS / n) * clients;
  const ticks0 = {
    daemon: procTicks(ctx.daemon.pid),
    threads: threadTicks(ctx.daemon.pid),
    host: hostBusyTicks(),
    at: performance.now(),
  };
  const children = [];
  for (let c = 0; c < clients; c++) {
    const calls = Math.floor(n / clients) + (c < n % clients ? 1 : 0);
    const file = path.join(ctx.tmp, `load-${n}-${c}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        url: `${ctx.daemon.url.replace(/^http/, 'ws')}/v1/media/twilio`,
        key: ctx.key,
        agentId: AGENT,
        calls,
        staggerMs,
        lines: ctx.lines,
        afterReplyMs: 200,
        timeoutMs: 90_000,
      }),
      { mode: 0o600 },
    );
    await sleep(staggerMs / clients);
    children.push(spawnLoad(file));
  }
  let peakRss = rssMiB(ctx.daemon.pid);
  const childTicks = new Map();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, rssMiB(ctx.daemon.pid) ?? 0);
    for (const ch of children) childTicks.set(ch.pid, Math.max(childTicks.get(ch.pid) ?? 0, procTicks(ch.pid)));
  }, 250);
  let results;
  try {
    results = (await Promise.all(children.map((ch) => ch.done))).flat();
  } finally {
    clearInterval(sampler);
  }
  const seconds = (performance.now() - ticks0.at) / 1000;
  const cores = (ticks) => ticks / TICKS_PER_S / seconds;
  const daemonCores = cores(procTicks(ctx.daemon.pid) - ticks0.daemon);
  const clientCores = cores([...childTicks.values()].reduce((a, b) => a + b, 0));
  const hostCores = cores(hostBusyTicks() - ticks0.host);
  let mainThread = 0;
  let busiestOther = 0;
  for (const [tid, t] of threadTicks(ctx.daemon.pid)) {
    const used = cores(t - (ticks0.threads.get(tid) ?? 0));
    if (tid === ctx.daemon.pid) mainThread = used;
    else busiestOther = Math.max(busiestOther, used);
  }
  return {
    results,
    peakRss,
    seconds,
    clients,
    cpu: {
      daemon: daemonCores,
      mainThread,
      busiestOther,
      clients: clientCores,
      other: Math.max(0, hostCores - daemonCores - clientCores),
    },
  };
}

/** Spawns one load child; `done` resolves with its per-call summaries. */
function spawnLoad(file) {
  const child = spawn(process.execPath, [path.join(ROOT, 'bench', 'lib', 'media-load.mjs'), file], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d) => {
    err += d;
  });
  const done = new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => {
      if (code !== 0) reject(new Error(`media-load exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(out));
    });
  });
  return { pid: child.pid, done };
}

/** Aggregates the per-call summaries of one run; `reference` holds the single call's reply frames per turn. */
function summarise(run, n, reference) {
  const calls = run.results;
  const failed = calls.filter((c) => !c.ok);
  const ok = calls.filter((c) => c.ok);
  const latencies = [];
  const overheads = [];
  let missingTurns = 0;
  for (const c of ok) {
    for (const [i, silence] of SILENCE_MS.entries()) {
      const t = c.turns.find((u) => u.turn === i);
      if (!t || t.latencyMs === null || t.noReply) {
        missingTurns += 1;
        continue;
      }
      latencies.push(t.latencyMs);
      overheads.push(t.latencyMs - silence);
    }
  }
  let framesShort = 0;
  const shortReplies = {};
  if (reference) {
    for (const c of ok) {
      for (const [turn, frames] of reference) {
        const got = c.replyFrames.find((r) => r.turn === turn)?.frames ?? 0;
        if (got < frames) {
          framesShort += frames - got;
          shortReplies[turn] = (shortReplies[turn] ?? 0) + 1;
        }
      }
    }
  }
  const p99s = ok.map((c) => c.received.latenessP99);
  const incomplete = failed.length + ok.filter((c) => c.timeout || c.received.protocolErrors > 0).length;
  return {
    calls: n,
    failedCalls: failed.length,
    errors: [...new Set(failed.map((c) => c.error))].slice(0, 3),
    incomplete,
    missingTurns,
    turns: latencies.length,
    latencyP50: latencies.length ? percentile(latencies, 50) : null,
    latencyP99: latencies.length ? percentile(latencies, 99) : null,
    overheadP50: overheads.length ? percentile(overheads, 50) : null,
    overheadP99: overheads.length ? percentile(overheads, 99) : null,
    openingP99: ok.length
      ? percentile(
          ok.map((c) => c.openingMs ?? Infinity),
          99,
        )
      : null,
    latenessP99Worst: p99s.length ? Math.max(...p99s) : null,
    latenessMax: ok.length ? Math.max(...ok.map((c) => c.received.latenessMax)) : null,
    callsWithGaps: ok.filter((c) => c.received.latenessMax > 0).length,
    framesShort,
    shortReplies,
    sendLagMaxMs: ok.length ? Math.max(...ok.map((c) => c.maxSendLagMs)) : null,
    cpu: run.cpu,
    clients: run.clients,
    seconds: run.seconds,
  };
}

/** The single call's reply frames per turn (opening = -1), the reference for drop checks. */
function referenceFrames(run) {
  const c = run.results.find((r) => r.ok);
  return c ? new Map(c.replyFrames.map((r) => [r.turn, r.frames])) : null;
}

async function waitIdle(url, key) {
  // Let the previous step's streams finish closing and their sessions settle.
  for (let i = 0; i < 40; i++) {
    const calls = await api(url, key, 'GET', '/v1/calls?status=in_progress&limit=1');
    if (calls.data.length === 0) break;
    await sleep(250);
  }
  await sleep(1500);
}

/**
 * Waits up to BENCH_MEDIA_WAIT_QUIET_S for the host to be quiet (under {@link NOISY_CORES} busy,
 * the idle daemon included) before a step; returns the busy cores last seen.
 */
async function waitQuiet() {
  let busy = await hostBusyCores(500);
  for (const until = Date.now() + WAIT_QUIET_S * 1000; busy && busy.busy > NOISY_CORES && Date.now() < until;)
    busy = await hostBusyCores(1000);
  return busy;
}

/** Runs bench/media-rtf.mjs; returns its stdout, or a note why not. */
function rtf() {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bench', 'media-rtf.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (r.status !== 0) return { ok: false, text: (r.stderr || r.stdout || `exit ${r.status}`).trim() };
  return { ok: true, text: r.stdout.trimEnd() };
}

async function main() {
  const loadAtStart = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const vad = await WebRtcVad.load();
  const detector = vad.createDetector({ sampleRate: 16000, frameMs: 20 }); // as src/daemon/media-worker/worker.ts makes it
  const hangoverMs = detector.hangoverMs;
  detector.close();

  process.stderr.write("bench/media: synthesising the caller's lines once\n");
  const lines = await prepareLines();
  const stateDir = makeTempDir('vagent-media-state-');
  const profileDir = makeTempDir('vagent-media-profile-');
  const tmp = makeTempDir('vagent-media-load-');
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    cwd: ROOT,
    env: { ...process.env, VAGENT_LOG_LEVEL: LOG_LEVEL, VAGENT_RECOGNIZER: 'fake', XDG_CONFIG_HOME: profileDir },
    stream: 'stderr',
  });
  const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  await waitForAllAudio(daemon.url, key);
  const health = await api(daemon.url, key, 'GET', '/v1/health').catch(() => null);
  const ctx = { daemon, key, lines, tmp };

  // Sessions for the /v1 turn load (another set of sessions than the calls').
  const turnSessions = [];
  for (let i = 0; i < 20; i++)
    turnSessions.push((await api(daemon.url, key, 'POST', '/v1/sessions', { agent_id: AGENT, customer_name: 'Bench' })).session_id);

  // Warm-up: one call, not reported (first-use costs of the workers and the clip cache); its
  // replies' frame counts are the reference for the drop checks.
  const reference = referenceFrames(await runCalls(ctx, 1));
  if (!reference) throw new Error('the warm-up call failed: no reference for the reply frames');
  await waitIdle(daemon.url, key);

  // (a) latency
  const latency = [];
  for (const n of LATENCY_CALLS) {
    process.stderr.write(`bench/media: (a) ${n} concurrent call${n === 1 ? '' : 's'}\n`);
    const run = await runCalls(ctx, n);
    latency.push(summarise(run, n, reference));
    await waitIdle(daemon.url, key);
  }

  // (b) capacity, with the /v1 turn load; its baseline first, with no calls.
  process.stderr.write(`bench/media: (b) /v1 turn baseline, ${TURN_RATE}/s for ${BASELINE_S} s with no calls\n`);
  const base = turnLoad(daemon.url, key, turnSessions, TURN_RATE);
  await sleep(BASELINE_S * 1000);
  const baseTurns = await base.stop();
  const baseP99 = percentile(baseTurns.latencies, 99);
  const capacity = [];
  let best = 0;
  for (let n = CAPACITY_STEP; n <= CAPACITY_MAX; n += CAPACITY_STEP) {
    process.stderr.write(`bench/media: (b) ${n} concurrent calls with ${TURN_RATE} turns/s\n`);
    const idleRss = rssMiB(daemon.pid);
    const load = turnLoad(daemon.url, key, turnSessions, TURN_RATE);
    const run = await runCalls(ctx, n);
    const turns = await load.stop();
    const s = summarise(run, n, reference);
    s.rssPerCallMiB = (run.peakRss - idleRss) / n;
    s.idleRssMiB = idleRss;
    s.turnP99 = turns.latencies.length ? percentile(turns.latencies, 99) : null;
    s.turnErrors = turns.errors;
    s.turnRatio = s.turnP99 !== null ? s.turnP99 / baseP99 : null;
    s.pass = s.incomplete === 0 && s.missingTurns === 0 && s.latenessP99Worst <= TARGETS.lateness_p99_ms && s.framesShort === 0;
    capacity.push(s);
    await waitIdle(daemon.url, key);
    if (s.pass && best === n - CAPACITY_STEP) best = n;
    if (!s.pass && !KEEP_GOING) break;
  }
  const peakRss = peakRssMiB(daemon.pid);
  await daemon.stop();
  for (const st of [...latency, ...capacity]) {
    if (st.incomplete || st.missingTurns)
      invalid(
        `${st.calls} calls: ${st.incomplete} calls incomplete, ${st.missingTurns} turns without a reply${st.errors.length ? `: ${st.errors.join('; ')}` : ''}`,
      );
  }

  // (d) the first call after start: the same state dir (its audio cache filled), restarted with
  // the default recogniser.
  process.stderr.write(`bench/media: (d) the first call after start: the daemon restarted, ${FIRST_CALLS} calls one after another\n`);
  const firstCall = await measureFirstCall({
    root: ROOT,
    stateDir,
    key,
    calls: FIRST_CALLS,
    env: { ...process.env, VAGENT_LOG_LEVEL: LOG_LEVEL, XDG_CONFIG_HOME: profileDir },
  });

  // (c) RTF
  let rtfOut = null;
  if (RUN_RTF) {
    process.stderr.write('bench/media: (c) bench/media-rtf.mjs\n');
    rtfOut = rtf();
  }

  // Report
  const eou = LINES.map((l, i) => `${l.expect} ${SILENCE_MS[i]}`).join(', ');
  const lat = (s) => [
    `${s.calls}`,
    `${s.turns}/${s.calls * LINES.length}`,
    fixed(s.latencyP50, 0),
    fixed(s.latencyP99, 0),
    fixed(s.overheadP50, 0),
    fixed(s.overheadP99, 0),
    fixed(s.openingP99, 0),
    fixed(s.latenessP99Worst, 1),
    String(s.framesShort),
    `${fixed(s.cpu.daemon, 2)} / ${fixed(s.cpu.clients, 2)} / ${fixed(s.cpu.other, 2)}`,
    `${fixed(s.cpu.mainThread, 2)} / ${fixed(s.cpu.busiestOther, 2)}`,
  ];
  const out = [];
  out.push('');
  out.push(
    `vagent media bench — ${os.cpus().length} cores (${os.cpus()[0]?.model ?? '?'}), load at start ${loadAtStart.join(' ')}, node ${process.version}`,
  );
  out.push(
    `  daemon: VAGENT_RECOGNIZER=fake, VAD on (WebRTC mode 2, 20 ms frames, hangover ${hangoverMs} ms, subtracted by the segmenter),`,
  );
  out.push(
    `  recognition ${health?.recognition?.status ?? '?'}; calls: Twilio μ-law 8 kHz, ${LINES.length} caller turns each, end-of-utterance silence per turn (ms): ${eou}`,
  );
  out.push(
    '  The simulated callers run in child processes on the same 2 cores as the daemon: "cpu d/c/o" shows daemon / clients / other processes,',
  );
  out.push('  "main/wkr" the daemon\'s main thread / its busiest other thread (the media worker), in cores averaged over the step.');
  out.push('');
  out.push("(a) response latency: caller end of speech → first reply frame received, ms; overhead = latency − that turn's silence");
  const head = ['calls', 'turns', 'lat p50', 'lat p99', 'over p50', 'over p99', 'open p99', 'late p99', 'short', 'cpu d/c/o', 'main/wkr'];
  out.push(table(head, latency.map(lat)));
  out.push('');
  out.push(
    `(b) capacity: + ${TURN_RATE} text turns/s on /v1 (baseline with no calls: p99 ${fixed(baseP99, 1)} ms over ${baseTurns.latencies.length} turns)`,
  );
  out.push(
    table(
      [...head, 'gaps', 'RSS/call MiB', 'turn p99', 'ratio', 'step'],
      capacity.map((s) => [
        ...lat(s),
        `${s.callsWithGaps}`,
        fixed(s.rssPerCallMiB, 2),
        fixed(s.turnP99, 1),
        `${fixed(s.turnRatio, 2)}×`,
        s.pass ? 'ok' : 'FAIL',
      ]),
    ),
  );
  out.push("  late p99: the worst call's p99 of outbound frame lateness (client play-out queue ran dry mid-clip), ms; short: reply frames");
  out.push('  missing against the single call; gaps: calls with any late frame; the daemon logs no play-out statistics of its own.');
  for (const s of [...latency, ...capacity]) {
    if (s.incomplete || s.missingTurns)
      out.push(
        `  ${s.calls} calls: ${s.incomplete} calls incomplete, ${s.missingTurns} turns without a reply${s.errors.length ? `: ${s.errors.join('; ')}` : ''}`,
      );
  }
  if (rtfOut) {
    out.push('');
    out.push('(c) embedded recogniser (pocketsphinx) real-time factor, bench/media-rtf.mjs:');
    out.push(
      rtfOut.ok
        ? rtfOut.text
            .split('\n')
            .map((l) => `  ${l}`)
            .join('\n')
        : `  not measured: ${rtfOut.text}`,
    );
  }
  const busy = [...latency, ...capacity].filter((s) => s.cpu.other > 0.25);
  if (busy.length) {
    loud(
      `other processes used the CPU during ${busy.length} of ${latency.length + capacity.length} steps (up to ${fixed(Math.max(...busy.map((s) => s.cpu.other)), 2)} cores of ${os.cpus().length}): the figures are pessimistic`,
    );
  }
  const at100 = latency.find((s) => s.calls === 100) ?? latency.at(-1);
  const verdict = (ok) => judged(ok, 'FAIL');
  out.push('');
  out.push(
    `(d) the first call after start: the daemon restarted on its state dir (audio cached), default recogniser; ${firstCall.calls} calls`,
  );
  out.push(
    `  one after another from ${fixed(firstCall.listening_to_first_call_ms, 0)} ms after its listening line, each hung up at its opening's first frame`,
  );
  out.push(
    table(
      ['opening latency, ms', 'first call', `call ${firstCall.calls}`, `calls 2–${firstCall.calls} p50`, 'first / last'],
      [
        [
          'start sent → first opening frame',
          fixed(firstCall.first_ms, 0),
          fixed(firstCall.last_ms, 0),
          fixed(firstCall.others_p50_ms, 0),
          `${fixed(firstCall.first_over_last, 1)}×`,
        ],
      ],
    ),
  );
  const warmState = (w) => (w ? `${w.state}, ${w.opening_clips} opening clips converted` : 'not reported');
  out.push(
    `  /v1/health media.warm_up when the first call started: ${warmState(firstCall.warm_up_at_first_call)}; at the end: ${warmState(firstCall.warm_up_at_end)}`,
  );
  out.push('');
  out.push(
    `${verdict(firstCall.first_ms <= TARGETS.first_call_opening_ms)}  the first call after start hears its opening within ${TARGETS.first_call_opening_ms} ms: ${fixed(firstCall.first_ms, 0)} ms (call ${firstCall.calls}: ${fixed(firstCall.last_ms, 0)} ms)`,
  );
  if (at100)
    out.push(
      `${verdict(at100.overheadP99 !== null && at100.overheadP99 <= TARGETS.overhead_p99_ms)}  latency at ${at100.calls} calls: p99 overhead ${fixed(at100.overheadP99, 0)} ms ≤ ${TARGETS.overhead_p99_ms} ms (p99 ≤ silence + ${TARGETS.overhead_p99_ms})`,
    );
  else out.push('(no latency step run)');
  const capped = best + CAPACITY_STEP > CAPACITY_MAX && capacity.every((s) => s.pass);
  out.push(
    `${!SMOKE && (QUICK || CAPACITY_MAX < TARGETS.capacity_calls) ? `(quick: capped at ${CAPACITY_MAX}, target not judged)` : verdict(best >= TARGETS.capacity_calls)}  capacity: ${best}${capped ? ' (the cap; no step failed)' : ''} concurrent calls with lateness p99 ≤ ${TARGETS.lateness_p99_ms} ms and no frame dropped (target ≥ ${TARGETS.capacity_calls})`,
  );
  out.push(`  daemon peak RSS ${fixed(peakRss, 0)} MiB`);
  for (const w of warnings) out.push(`  WARNING: ${w}`);
  process.stdout.write(`${out.join('\n')}\n`);

  fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
  fs.writeFileSync(
    RESULTS,
    `${JSON.stringify(
      {
        at: new Date().toISOString(),
        cores: os.cpus().length,
        loadAtStart,
        quick: QUICK,
        hangoverMs,
        silenceMs: Object.fromEntries(LINES.map((l, i) => [l.expect, SILENCE_MS[i]])),
        latency,
        turnBaselineP99: baseP99,
        capacity,
        capacityCalls: best,
        peakRssMiB: peakRss,
        firstCall,
        rtf: rtfOut,
        warnings,
      },
      null,
      2,
    )}\n`,
  );
}

try {
  await main();
} catch (err) {
  loud(`bench/media failed: ${err.stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
}
