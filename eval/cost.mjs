// The rules' cost per evaluation turn, in microseconds: every case (slot value or closing) run
// through the built rules directly (eval/direct.mjs), timed over whole passes; the median of
// several passes is reported for all cases, the slot cases (extractSlot) and the closing cases
// (the control-intent check every turn makes). With `--base DIR`, a second build (DIR holding engine/slots and
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
const all = loadAllCases();
const groups = {
  all,
  slots: all.filter((c) => c.type !== 'closing'),
  closing: all.filter((c) => c.type === 'closing'),
};
const builds = [{ name: 'new', dir: DIST }];
if (args.base) builds.push({ name: 'base', dir: args.base });
for (const b of builds) {
  b.run = await loadRules(b.dir);
  for (let i = 0; i < 3; i++) pass(b.run, all); // warm-up: JIT and lazily built tables
  b.samples = Object.fromEntries(Object.keys(groups).map((g) => [g, []]));
}
for (let i = 0; i < args.runs; i++)
  for (const [g, cases] of Object.entries(groups)) for (const b of builds) b.samples[g].push(pass(b.run, cases));
const round = (x) => Math.round(x * 100) / 100;
const out = {
  cases: Object.fromEntries(Object.entries(groups).map(([g, c]) => [g, c.length])),
  runs: args.runs,
  builds: builds.map((b) => ({
    name: b.name,
    dir: b.dir,
    us_per_turn: Object.fromEntries(Object.keys(groups).map((g) => [g, round(median(b.samples[g]))])),
  })),
};
if (args.base)
  out.ratio = Object.fromEntries(Object.keys(groups).map((g) => [g, round(out.builds[0].us_per_turn[g] / out.builds[1].us_per_turn[g])]));
if (args.json) process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
else {
  process.stdout.write(
    `µs per turn, median of ${args.runs} passes (cases: ${Object.entries(out.cases)
      .map(([g, n]) => `${g} ${n}`)
      .join(', ')})\n`,
  );
  const fmt = (name, row) =>
    `${name.padEnd(12)}${Object.keys(groups)
      .map((g) => String(row[g]).padStart(10))
      .join('')}\n`;
  process.stdout.write(fmt('', Object.fromEntries(Object.keys(groups).map((g) => [g, g]))));
  for (const b of out.builds) process.stdout.write(fmt(b.name, b.us_per_turn));
  if (out.ratio) process.stdout.write(fmt('new/base', out.ratio));
}
