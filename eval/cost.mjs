// The rules' cost per evaluation turn, in microseconds: every case (slot value or closing) run
// through the built rules directly (eval/direct.mjs), timed over whole passes; the median of
// several passes is reported. With `--base DIR`, a second build (DIR holding engine/slots and
// engine/intents.js, e.g. the main branch built apart) is timed in the same process, passes
// alternating, and the ratio new/base is printed.
//
// Usage: npx tsc -p tsconfig.build.json && node eval/cost.mjs [--base DIR] [--runs N] [--json]
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { DIST, loadRules } from './direct.mjs';
import { loadAllCases } from './cases.mjs';

function parseArgs(argv) {
  const args = { base: null, runs: 9, json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--base') args.base = path.resolve(argv[++i] ?? '');
    else if (a === '--runs') args.runs = Math.max(1, Number(argv[++i]) || 9);
    else if (a === '--json') args.json = true;
    else throw new Error(`unknown argument ${a}`);
  }
  return args;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** µs per case of one pass of `run` over `cases`. */
function pass(run, cases) {
  const t0 = performance.now();
  for (const c of cases) run(c);
  return ((performance.now() - t0) * 1000) / cases.length;
}

const args = parseArgs(process.argv.slice(2));
const cases = loadAllCases();
const builds = [{ name: 'new', dir: DIST }];
if (args.base) builds.push({ name: 'base', dir: args.base });
for (const b of builds) {
  b.run = await loadRules(b.dir);
  for (let i = 0; i < 3; i++) pass(b.run, cases); // warm-up: JIT and lazily built tables
  b.samples = [];
}
for (let i = 0; i < args.runs; i++) for (const b of builds) b.samples.push(pass(b.run, cases));
const out = {
  cases: cases.length,
  runs: args.runs,
  builds: builds.map((b) => ({ name: b.name, dir: b.dir, us_per_turn: Math.round(median(b.samples) * 100) / 100 })),
};
if (args.base) out.ratio = Math.round((out.builds[0].us_per_turn / out.builds[1].us_per_turn) * 100) / 100;
if (args.json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
else {
  for (const b of out.builds)
    process.stdout.write(
      `${b.name.padEnd(5)} ${b.us_per_turn.toFixed(2).padStart(8)} µs/turn (median of ${args.runs} passes over ${out.cases} cases)  ${b.dir}\n`,
    );
  if (out.ratio !== undefined) process.stdout.write(`ratio new/base: ${out.ratio}\n`);
}
