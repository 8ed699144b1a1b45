/**
 * CLI start-up: wall time of `node bin/vagent trunk list` (a real request to the running
 * daemon) against `node -e 0` (bare Node start-up on this machine), each run N times,
 * alternating so drift (CPU frequency, page cache, a noisy neighbour) hits both equally.
 * Each run is one child_process.spawnSync timed with process.hrtime.bigint(); two unrecorded
 * runs of each come first to warm the page cache. (`hyperfine -N --warmup 2 'node -e 0'
 * 'node bin/vagent trunk list'` gives comparable figures if installed; it is not required.)
 */
import { spawnSync } from 'node:child_process';
import { median, percentile } from './stats.mjs';

function timeOnce(args, opts) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  if (r.status !== 0) {
    throw new Error(`\`node ${args.join(' ')}\` exited ${r.status} (signal ${r.signal})\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  return { ms, stdout: r.stdout };
}

/**
 * @param {object} o
 * @param {string} o.cwd    project root (bin/vagent is relative to it)
 * @param {object} o.env    environment for the vagent CLI (VAGENT_URL, VAGENT_API_KEY, …)
 * @param {number} o.runs   recorded runs of each command
 * @param {number} o.expectTrunks  rows `trunk list` should print (sanity check)
 */
export function measureCliStartup({ cwd, env, runs, expectTrunks }) {
  const baseline = { label: 'node -e 0', args: ['-e', '0'], samples: [] };
  const vagent = { label: 'node bin/vagent trunk list', args: ['bin/vagent', 'trunk', 'list'], samples: [] };
  const opts = { cwd, env };

  for (let i = 0; i < 2; i++) {
    timeOnce(baseline.args, opts);
    const { stdout } = timeOnce(vagent.args, opts);
    const rows = stdout.split('\n').filter((l) => /\btk_/.test(l)).length;
    if (i === 0 && rows !== expectTrunks) {
      throw new Error(`vagent trunk list printed ${rows} trunk rows, expected ${expectTrunks}:\n${stdout}`);
    }
  }
  for (let i = 0; i < runs; i++) {
    // Alternate which goes first within each pair, too.
    const pair = i % 2 === 0 ? [baseline, vagent] : [vagent, baseline];
    for (const cmd of pair) cmd.samples.push(timeOnce(cmd.args, opts).ms);
  }
  const summary = (cmd) => ({
    command: cmd.label,
    runs: cmd.samples.length,
    median_ms: median(cmd.samples),
    p90_ms: percentile(cmd.samples, 90),
    min_ms: Math.min(...cmd.samples),
    samples_ms: cmd.samples.map((x) => Math.round(x * 100) / 100),
  });
  const b = summary(baseline);
  const v = summary(vagent);
  return { baseline: b, vagent: v, ratio_of_medians: v.median_ms / b.median_ms };
}
