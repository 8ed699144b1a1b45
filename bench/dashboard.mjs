/**
 * `vagent dashboard`'s CPU while CALLS (200) calls each take a turn every 3 s (target: under 15%
 * of one core), against a real daemon: the calls are prepared (`POST /v1/calls`), and their
 * sessions take typed turns, each call every TURN_EVERY_S on a staggered clock. The dashboard
 * runs in a pseudo-terminal of 120×40 (util-linux `script`), as an operator's terminal would
 * give it, and its process's CPU (utime + stime, /proc) is read over the measured seconds.
 *
 *   node bench/dashboard.mjs   (after `npm run build`)
 *
 * Environment: BENCH_DASHBOARD_CALLS (200), BENCH_DASHBOARD_S (20). BENCH_SMOKE=1: 20 calls for
 * 4 s (bench/smoke.mjs).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { procTicks } from './lib/cpu.mjs';
import { cleanup, makeTempDir, startServer } from './lib/procs.mjs';
import { CALL_BODY, invalid, judged, numEnv, smokeOr } from './lib/report.mjs';
import { admin, api } from './lib/vagent.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CALLS = numEnv('BENCH_DASHBOARD_CALLS', smokeOr(20, 200));
const SECONDS = numEnv('BENCH_DASHBOARD_S', smokeOr(4, 20));
const TURN_EVERY_S = 3;
const TARGET_CORE = 0.15;

/** The pid of `vagent dashboard` under `script` (its child), once it runs. */
async function dashboardPid(scriptPid) {
  for (let i = 0; i < 100; i++) {
    for (const dir of fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
      try {
        const stat = fs.readFileSync(`/proc/${dir}/stat`, 'utf8');
        const cmd = fs.readFileSync(`/proc/${dir}/cmdline`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (cmd.includes('dashboard') && cmd.includes('bin/vagent') && (ppid === scriptPid || isDescendant(Number(dir), scriptPid)))
          return Number(dir);
      } catch {
        // gone
      }
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('vagent dashboard did not start under script');
}

function isDescendant(pid, ancestor) {
  for (let p = pid, i = 0; p > 1 && i < 10; i++) {
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (p === ancestor) return true;
  }
  return false;
}

async function main() {
  const stateDir = makeTempDir('vagent-bench-dashboard-');
  const daemon = await startServer({
    name: 'vagent serve',
    args: ['bin/vagent', 'serve', '--port', '0', '--state-dir', stateDir],
    env: { ...process.env, VAGENT_LOG_LEVEL: 'warn', XDG_CONFIG_HOME: makeTempDir('vagent-bench-dashboard-profile-') },
    stream: 'stderr',
    timeoutMs: 60_000,
  });
  const key = admin(stateDir, 'key', 'create', '--tenant', 'default').key;
  const sessions = [];
  for (let i = 0; i < CALLS; i++) sessions.push((await api(daemon.url, key, 'POST', '/v1/calls', JSON.parse(CALL_BODY))).session_id);

  const out = path.join(makeTempDir('vagent-bench-dashboard-out-'), 'screen');
  const command = `stty cols 120 rows 40; exec node ${path.join(ROOT, 'bin', 'vagent')} dashboard`;
  const script = spawn('script', ['-qfc', command, out], {
    cwd: ROOT,
    env: { ...process.env, VAGENT_URL: daemon.url, VAGENT_API_KEY: key, TERM: 'xterm-256color' },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  try {
    const pid = await dashboardPid(script.pid);
    await new Promise((r) => setTimeout(r, 2000)); // its first frames and the call list
    // Each call takes a turn every TURN_EVERY_S, staggered over that period.
    let stop = false;
    const turns = { sent: 0, failed: 0 };
    const driver = (async () => {
      const spacingMs = (TURN_EVERY_S * 1000) / CALLS;
      for (let i = 0; !stop; i++) {
        const id = sessions[i % CALLS];
        api(daemon.url, key, 'POST', `/v1/sessions/${id}/turn`, { text: i % 2 ? 'yes' : 'what is this about?' }).then(
          () => (turns.sent += 1),
          () => (turns.failed += 1),
        );
        await new Promise((r) => setTimeout(r, spacingMs));
      }
    })();
    const t0 = procTicks(pid);
    const started = Date.now();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const cores = (procTicks(pid) - t0) / 100 / ((Date.now() - started) / 1000);
    stop = true;
    await driver;
    if (turns.sent === 0) invalid('no turn was answered');
    const screen = fs.readFileSync(out, 'utf8');
    if (!screen.includes('emi_reminder'))
      invalid(`the dashboard never showed the calls; its screen: ${JSON.stringify(screen.slice(-600))}`);
    console.log(
      `vagent dashboard: ${(100 * cores).toFixed(1)}% of one core with ${CALLS} calls, each taking a turn every ${TURN_EVERY_S} s ` +
        `(${turns.sent} turns, ${turns.failed} refused, over ${SECONDS} s) — target < ${100 * TARGET_CORE}%: ${judged(cores < TARGET_CORE)}`,
    );
  } finally {
    // q quits it (and so `script`); SIGTERM only if it has not gone within 3 s.
    const gone = new Promise((r) => script.once('exit', r));
    script.stdin.write('q');
    const timer = setTimeout(() => script.kill('SIGTERM'), 3000);
    await gone;
    clearTimeout(timer);
  }
}

try {
  await main();
} finally {
  await cleanup();
}
