/**
 * The slot rules' cost per turn (µs), this build against the rules of an earlier revision built
 * apart, in one process: what did the rules that generalise (names in a sentence, closings,
 * declines, relative days; docs/agents.md "Capture and slot types", "Control intents") add to
 * every turn?
 *
 *   npm run build && node bench/extraction.mjs
 *
 * Base: the rules of revision BENCH_EXTRACTION_BASE_REV (default b090b33, the last commit before
 * those rules), taken with `git archive REV src tsconfig*.json` into a temp dir and compiled there
 * with this checkout's tsc, only src/engine/slots/index.ts, src/engine/intents.ts and what they
 * import (no type check, ≈ 2 s); or an existing build, BENCH_EXTRACTION_BASE_DIR (a dist/ holding
 * engine/slots/index.js and engine/intents.js, or a built checkout holding that dist/).
 *
 * Cases: the eval's (eval/cases.mjs, eval/README.md "Cases"): the SGD sample and the repository's
 * fixtures when the sample is there ($VAGENT_SGD_SAMPLE, else ../shared/data/sgd-dev/sample.jsonl
 * beside the checkout), else the fixtures alone (eval/fixtures/*.jsonl); the output says which.
 * Each case is one turn, run through the built rules directly (eval/direct.mjs loadRuleParts):
 *   slot extraction   extractSlot on the slot cases, µs per slot case
 *   control intent    normalizeUtterance + detectControlIntent on every case, µs per turn
 *   all               both, as a turn makes them: the intent check on every case, then the slot
 *                     extraction on the slot cases, µs per turn
 * Per group, one pass over its cases by each build in turn (the order alternating pass by pass),
 * BENCH_EXTRACTION_RUNS times (31), after 12 warm-up passes of every group (V8's optimising
 * tiers take ≈ 10 passes to settle on these rules). A pass makes at least 1000 calls (the cases
 * over again when fewer) and takes ≈ 5–60 ms; it is timed in CPU time of this process
 * (process.cpuUsage: user + system), which other processes on a shared 2-core machine disturb far
 * less than the wall clock (that moves by tens of percent between runs; its medians are in the
 * results file too). Printed: the median pass of each build, and new/base, the median of the
 * paired passes' ratios. Also printed: how many cases each build gets right (the eval's verdict,
 * direct), which shows the two builds differ.
 * Written to bench/results/extraction.json.
 *
 * A base that cannot be built or loaded is a loud warning and this build is measured alone; in
 * the smoke mode (BENCH_SMOKE=1, bench/smoke.mjs: 3 passes, 1 warm-up) it fails the run, unless
 * the clone lacks the base's history (a shallow clone), which stays a warning.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLASS_FIXTURES, FIXTURES, SGD_SAMPLE, loadFixtureCases, loadSgdCases, sameValue } from '../eval/cases.mjs';
import { DIST, loadRuleParts } from '../eval/direct.mjs';
import { cleanup, makeTempDir } from './lib/procs.mjs';
import { SMOKE, invalid, loud, numEnv, resultsFile, smokeOr, warnings } from './lib/report.mjs';
import { fixed, median, table } from './lib/stats.mjs';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RUNS = Math.max(1, numEnv('BENCH_EXTRACTION_RUNS', smokeOr(3, 31)));
const WARMUP = smokeOr(1, 12);
const BASE_REV = process.env.BENCH_EXTRACTION_BASE_REV || 'b090b33';
const BASE_DIR = process.env.BENCH_EXTRACTION_BASE_DIR || '';
/** The entry points of the rules; tsc follows their imports. */
const ENTRIES = ['src/engine/slots/index.ts', 'src/engine/intents.ts'];

/** Runs `cmd args` in the checkout; its stdout, or throws with its stderr. */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 << 20, ...opts });
  if (r.error) throw new Error(`${cmd} ${args.join(' ')}: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.status}: ${(r.stderr || r.stdout).trim().slice(-2000)}`);
  return r.stdout;
}

/** Whether `dir` holds a build of the rules. */
const holdsRules = (dir) => ENTRIES.every((e) => fs.existsSync(path.join(dir, e.replace(/^src\//, '').replace(/\.ts$/, '.js'))));

/**
 * The base build: BENCH_EXTRACTION_BASE_DIR as given, or BASE_REV compiled apart.
 * @returns {{dir: string, label: string}}
 * @throws Error saying why the base cannot be had (no git history, unknown revision, tsc failed)
 */
function baseBuild() {
  if (BASE_DIR) {
    const dir = path.resolve(BASE_DIR);
    for (const d of [dir, path.join(dir, 'dist')]) if (holdsRules(d)) return { dir: d, label: d };
    throw new Error(`BENCH_EXTRACTION_BASE_DIR=${BASE_DIR} holds no engine/slots/index.js and engine/intents.js (nor does its dist/)`);
  }
  const instead = 'set BENCH_EXTRACTION_BASE_REV, or point BENCH_EXTRACTION_BASE_DIR at a built dist/';
  try {
    run('git', ['rev-parse', '--git-dir']);
  } catch (err) {
    throw Object.assign(
      new Error(
        `no git history here (not a git clone, or git is not installed: ${err.message}); point BENCH_EXTRACTION_BASE_DIR at a built dist/ of the base`,
      ),
      { noHistory: true },
    );
  }
  let sha;
  try {
    sha = run('git', ['rev-parse', '--verify', '--quiet', `${BASE_REV}^{commit}`]).trim();
  } catch {
    throw Object.assign(
      new Error(`revision ${BASE_REV} is not in this clone's git history (a shallow clone?): fetch the history, ${instead}`),
      {
        noHistory: true,
      },
    );
  }
  const subject = run('git', ['log', '-1', '--format=%h %s', sha]).trim();
  const tmp = makeTempDir('vagent-bench-extraction-');
  const archive = spawnSync('git', ['archive', sha, 'src', 'tsconfig.json', 'tsconfig.build.json'], { cwd: ROOT, maxBuffer: 256 << 20 });
  if (archive.status !== 0) throw new Error(`git archive ${BASE_REV} failed: ${String(archive.stderr).trim()}`);
  run('tar', ['-x', '-C', tmp], { input: archive.stdout });
  const missing = ENTRIES.filter((e) => !fs.existsSync(path.join(tmp, e)));
  if (missing.length > 0) throw new Error(`revision ${BASE_REV} has no ${missing.join(', ')}: not a revision of these rules`);
  // Only the rules and what they import; types are not checked (the base is a built revision), and
  // no @types are needed, so the temp dir needs no node_modules.
  const config = {
    extends: './tsconfig.build.json',
    compilerOptions: { rootDir: 'src', outDir: 'dist', noCheck: true, sourceMap: false, types: [] },
    files: ENTRIES,
    include: [],
  };
  fs.writeFileSync(path.join(tmp, 'tsconfig.rules.json'), JSON.stringify(config));
  fs.writeFileSync(path.join(tmp, 'package.json'), JSON.stringify({ type: 'module' }));
  const tsc = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  run(process.execPath, [tsc, '-p', path.join(tmp, 'tsconfig.rules.json')]);
  return { dir: path.join(tmp, 'dist'), label: `${subject} (built apart)` };
}

/** The eval's cases: the SGD sample's and the fixtures' when the sample is there, else the fixtures'. */
function loadCases() {
  const fixtures = [...loadFixtureCases(FIXTURES, 'hinglish'), ...loadFixtureCases(CLASS_FIXTURES, 'own')];
  if (fs.existsSync(SGD_SAMPLE))
    return { source: `SGD sample (${SGD_SAMPLE}) and eval/fixtures/*.jsonl`, cases: [...loadSgdCases(), ...fixtures] };
  if (process.env.VAGENT_SGD_SAMPLE) throw new Error(`VAGENT_SGD_SAMPLE=${process.env.VAGENT_SGD_SAMPLE}: no such file`);
  return { source: 'eval/fixtures/*.jsonl only (no SGD sample: set VAGENT_SGD_SAMPLE for it)', cases: fixtures };
}

let sink = 0;
/** A pass makes at least this many calls (the cases over again when fewer), so that a pass over the fixtures alone is long enough to time. */
const MIN_CALLS_PER_PASS = 1000;
/**
 * One pass of `fn` over `cases` (repeated up to {@link MIN_CALLS_PER_PASS} calls): µs per call of
 * CPU time (this process, user + system) and of wall time. Results feed a sink so that no call is
 * dropped.
 */
function pass(fn, cases) {
  const reps = Math.ceil(MIN_CALLS_PER_PASS / cases.length);
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  for (let r = 0; r < reps; r++) for (const c of cases) if (fn(c) != null) sink++;
  const cpu = process.cpuUsage(cpu0);
  const calls = reps * cases.length;
  return { cpu: (cpu.user + cpu.system) / calls, wall: ((performance.now() - t0) * 1000) / calls };
}

async function main() {
  const { source, cases } = loadCases();
  const slotCases = cases.filter((c) => c.type !== 'closing');
  const builds = [{ name: 'new', dir: DIST, label: `this checkout's dist/ (${DIST})` }];
  try {
    const base = baseBuild();
    builds.push({ name: 'base', ...base });
  } catch (err) {
    // A clone without the base's history (a shallow one) can still measure this build: a warning,
    // also in the smoke mode. A base that is there but does not build is a broken bench.
    const message = `bench/extraction: the base rules (${BASE_DIR || BASE_REV}) cannot be built: ${err.message}; measuring this build alone`;
    if (err.noHistory) loud(message);
    else invalid(message);
  }
  for (const b of [...builds]) {
    try {
      b.rules = await loadRuleParts(b.dir);
    } catch (err) {
      if (b.name === 'new') throw new Error(`bench/extraction: cannot load the rules of ${b.label} (npm run build first?): ${err.message}`);
      invalid(
        `bench/extraction: the base rules of ${b.label} cannot be loaded: ${err.message}${SMOKE ? '' : '; measuring this build alone'}`,
      );
      builds.pop();
      continue;
    }
    const { slot, intent } = b.rules;
    b.groups = {
      slots: { fn: slot, cases: slotCases },
      intent: { fn: intent, cases },
      all: {
        fn: (c) => {
          const control = intent(c);
          return c.type === 'closing' ? control : slot(c);
        },
        cases,
      },
    };
    b.right = cases.filter((c) => {
      try {
        return sameValue(c.type, c.type === 'closing' ? intent(c) === 'goodbye' : slot(c), c.expected);
      } catch {
        return false;
      }
    }).length;
    for (let i = 0; i < WARMUP; i++) for (const g of Object.values(b.groups)) pass(g.fn, g.cases); // JIT, lazily built tables
    b.samples = { slots: [], intent: [], all: [] };
    b.wall = { slots: [], intent: [], all: [] };
  }
  const names = Object.keys(builds[0].samples);
  const start = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const order = i % 2 === 0 ? builds : [...builds].reverse();
    for (const g of names)
      for (const b of order) {
        const t = pass(b.groups[g].fn, b.groups[g].cases);
        b.samples[g].push(t.cpu);
        b.wall[g].push(t.wall);
      }
  }
  const seconds = (performance.now() - start) / 1000;

  const round = (x) => Math.round(x * 100) / 100;
  const result = {
    at: new Date().toISOString(),
    node: process.version,
    cases_source: source,
    cases: { all: cases.length, slots: slotCases.length, closing: cases.length - slotCases.length },
    runs: RUNS,
    builds: builds.map((b) => ({
      name: b.name,
      dir: b.dir,
      label: b.label,
      right: b.right,
      us_per_turn: Object.fromEntries(names.map((g) => [g, round(median(b.samples[g]))])),
      wall_us_per_turn: Object.fromEntries(names.map((g) => [g, round(median(b.wall[g]))])),
    })),
    warnings,
  };
  if (builds.length === 2)
    result.ratio = Object.fromEntries(
      names.map((g) => [g, round(median(builds[0].samples[g].map((x, i) => x / builds[1].samples[g][i])))]),
    );

  const heads = { slots: 'slot extraction', intent: 'control intent', all: 'all' };
  const rows = result.builds.map((b) => [b.name, ...names.map((g) => fixed(b.us_per_turn[g], 2)), `${b.right}/${cases.length}`]);
  if (result.ratio) rows.push(['new/base', ...names.map((g) => fixed(result.ratio[g], 2)), '']);
  const out = [
    `bench/extraction: the rules' cost per turn, µs of CPU (median of ${RUNS} passes each, alternating; ${fixed(seconds, 1)} s), Node ${process.version}`,
    `  cases: ${source}: ${cases.length} turns, ${slotCases.length} slot cases, ${cases.length - slotCases.length} closing cases`,
    ...result.builds.map((b) => `  ${b.name}: ${b.label}`),
    table(['build', ...names.map((g) => heads[g]), 'cases right'], rows),
    '  slot extraction: µs per slot case; control intent and all: µs per turn; new/base: median of the paired passes',
  ];
  console.log(out.join('\n'));
  const file = resultsFile('extraction.json');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  if (sink < 0) console.log(sink); // never: keeps the sink alive
}

try {
  await main();
} finally {
  await cleanup();
}
