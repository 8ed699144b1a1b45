// `node eval/run.mjs --llm` (eval/README.md "With the language model"): every case is played
// twice through the same daemon, pointed at the fake model server of `npm run fake-llm`
// (dist/devtools/fake-llm.js, default answers, no scripted rule) — once against the agents of the
// rules alone, once against the same agents with an `llm` block (docs/llm.md "Where the model
// acts"). This file holds the model's part: the fake, the agents' `llm` block, and the table of
// the rules' misses the model recovered, per row (held-out: counts only, as everywhere).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { rowLabel } from './cases.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The `llm` block of an evaluation agent: the daemon's model (the fake's), short instructions. */
export const EVAL_LLM = {
  instructions: 'You answer callers of an evaluation line. Be brief.',
  max_output_tokens: 60,
};

/** Starts the fake model server (default answers) on loopback; `{url, model, requests, close}`. */
export async function startEvalFake() {
  const { startFakeLlm } = await import(path.join(ROOT, 'dist', 'devtools', 'fake-llm.js'));
  return startFakeLlm();
}

const PARTS = ['tuning', 'heldout', 'own'];

/**
 * Per report row and part, from the same cases played by the rules alone (`rules`) and with the
 * model (`withModel`, in the same order): `misses` (rules wrong), `recovered` (rules wrong, with
 * the model right), `broken` (rules right, with the model wrong), and how many turns asked the
 * model and took its answer.
 */
export function recoveries(rules, withModel) {
  const rows = new Map();
  const empty = () => Object.fromEntries(PARTS.map((p) => [p, { rows: 0, misses: 0, recovered: 0, broken: 0 }]));
  rules.forEach((r, i) => {
    const m = withModel[i];
    const labels = [rowLabel(r.case), ...(r.case.also ?? [])];
    for (const label of labels) {
      const row = rows.get(label) ?? { label, parts: empty(), asked: 0, taken: 0 };
      const part = row.parts[r.case.part];
      part.rows += 1;
      if (!r.ok) part.misses += 1;
      if (!r.ok && m.ok) part.recovered += 1;
      if (r.ok && !m.ok) part.broken += 1;
      if (m.llm?.asked) row.asked += 1;
      if (m.llm?.taken) row.taken += 1;
      rows.set(label, row);
    }
  });
  return [...rows.values()];
}

/** Prints the recovery table (after the rules' own table). */
export function printRecoveries(rows, order) {
  const rank = (l) => (order.includes(l) ? order.indexOf(l) : order.length);
  rows.sort((a, b) => rank(a.label) - rank(b.label) || (a.label < b.label ? -1 : 1));
  const cell = (p) => (p.rows === 0 ? '—' : `${p.recovered}/${p.misses}${p.broken ? ` (−${p.broken})` : ''}`);
  const head = ['row', 'tuning', 'held-out', 'own', 'model asked', 'answer taken'];
  const lines = rows.map((r) => [
    r.label,
    cell(r.parts.tuning),
    cell(r.parts.heldout),
    cell(r.parts.own),
    String(r.asked),
    String(r.taken),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  process.stdout.write(
    '\nWith the language model (the fake model server, default answers; not a real model):\n' +
      'recovered/misses of the rules per part, (−N): cases the rules had right and got wrong with the model\n' +
      `${fmt(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${lines.map(fmt).join('\n')}\n` +
      "The fake fills a slot from the caller's own words (a number, yes/no, an enum value named, a capitalised\n" +
      'name, an ISO date) and names an intent only when it is said: this shows which misses the model step can\n' +
      "reach and that its answers pass the rules' type checks, not what a real model would get right.\n",
  );
}

/** What a turn's trace says about the model: asked (a request was sent), taken (its answer acted on). */
export function modelUse(trace) {
  const step = (trace?.steps ?? []).find((s) => s.layer === 'llm');
  return { asked: trace?.llm_used === true, taken: step?.result === 'match' };
}
