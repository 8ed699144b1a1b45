// Evaluation cases for the slot extractors (docs/agents.md "Capture and slot types") and the
// report shared by the runners.
//
// Sources:
// - SGD dev sample (../shared/data/sgd-dev/sample.jsonl beside this repository, or
//   $VAGENT_SGD_SAMPLE): real user
//   turns of the Schema-Guided Dialogue dataset, CC BY-SA 4.0, Rastogi et al., AAAI 2020,
//   Google LLC. "Today" in it is 2019-03-01. This file only reads it; no row is copied here.
// - eval/fixtures/hinglish.jsonl: Hindi/Hinglish, digit and choice cases written for vagent.
//
// Mapping of SGD rows to slot types: `time`/`*_time` → time; `date`/`*_date` → date; counts
// (number_of_seats, number_of_rooms, passengers, …) → number (reported as "count");
// `transfer_amount`/`*amount*` → amount; recipient_name/`*person*`/contact name → person_name;
// rows tagged yes/no → yes_no (AFFIRM/AFFIRM_INTENT → true, NEGATE/NEGATE_INTENT → false).
// When a row holds two values of one type ("from the 11th until the 12th"), the one said first
// is expected: a single question takes the first answer. Rows tagged person_name whose turn
// names nobody expect no name (null).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

/**
 * Where the SGD sample is looked for: `$VAGENT_SGD_SAMPLE`, else `../shared/data/sgd-dev/sample.jsonl`
 * relative to the repository's root (the data sits beside the checkout, never inside it).
 */
export const SGD_SAMPLE = process.env.VAGENT_SGD_SAMPLE || path.resolve(HERE, '..', '..', 'shared', 'data', 'sgd-dev', 'sample.jsonl');
/** Our own Hindi/Hinglish/digits fixtures. */
export const FIXTURES = path.join(HERE, 'fixtures', 'hinglish.jsonl');
/** The reference time of every case: SGD's "today" is 2019-03-01 (a Friday). */
export const NOW_ISO = '2019-03-01T12:00:00+05:30';
/** The agents' timezone. */
export const TIMEZONE = 'Asia/Kolkata';

/** Accuracy targets (percent) per slot type, without any LLM. */
export const TARGETS = {
  time: 95,
  number: 95,
  yes_no: 95,
  date: 90,
  amount: 90,
  person_name: 85,
  digits: 95,
  choice: 95,
  text: 95,
};

const COUNT_SLOTS = new Set([
  'number_of_seats',
  'number_of_rooms',
  'passengers',
  'number_of_riders',
  'travelers',
  'number_of_beds',
  'number_of_days',
  'stay_length',
  'number_of_baths',
  'number_checked_bags',
  'number_of_tickets',
  'group_size',
  'party_size',
]);
const PERSON_SLOTS = new Set(['recipient_name', 'contact_name', 'receiver', 'payer', 'name_of_person', 'person_name']);

/** The slot type of an SGD slot name, or null when it is not evaluated. */
export function sgdSlotType(slot) {
  if (slot === 'time' || slot.endsWith('_time')) return 'time';
  if (slot === 'date' || slot.endsWith('_date')) return 'date';
  if (COUNT_SLOTS.has(slot)) return 'number';
  if (slot === 'amount' || slot.endsWith('_amount')) return 'amount';
  if (PERSON_SLOTS.has(slot)) return 'person_name';
  return null;
}

/** Index of `surface` in `text` as whole words, case-insensitive (Infinity when absent). */
function positionOf(text, surface) {
  const esc = surface.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const m = new RegExp(`(?<![\\p{L}\\p{N}])${esc}(?![\\p{L}\\p{N}])`, 'iu').exec(text);
  return m ? m.index : Infinity;
}

function canonical(type, raw) {
  if (type === 'number' || type === 'amount') return Number(raw);
  return raw;
}

/** Cases from the SGD sample: [{id, source, type, text, expected, capture, note}]. */
export function loadSgdCases(file = SGD_SAMPLE) {
  const rows = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const cases = [];
  for (const row of rows) {
    const id = `${row.dialogue_id}#${row.turn_index}`;
    const byType = new Map();
    for (const [slot, surface] of Object.entries(row.slots)) {
      const type = sgdSlotType(slot);
      if (!type) continue;
      const entry = { slot, surface, value: canonical(type, row.slots_canonical[slot]), at: positionOf(row.user_text, surface) };
      const prev = byType.get(type);
      if (!prev || entry.at < prev.at) byType.set(type, entry);
    }
    for (const [type, e] of byType) {
      cases.push({
        id,
        source: 'sgd',
        type,
        text: row.user_text,
        expected: e.value,
        capture: {},
        note: `${e.slot}="${e.surface}"`,
      });
    }
    if (row.tags.includes('person_name') && !byType.has('person_name')) {
      cases.push({
        id,
        source: 'sgd',
        type: 'person_name',
        text: row.user_text,
        expected: null,
        capture: {},
        note: 'no name said',
      });
    }
    const acts = new Set(row.user_acts);
    if (row.tags.includes('yes') || row.tags.includes('no')) {
      const yes = acts.has('AFFIRM') || acts.has('AFFIRM_INTENT');
      const no = acts.has('NEGATE') || acts.has('NEGATE_INTENT');
      if (yes !== no)
        cases.push({
          id,
          source: 'sgd',
          type: 'yes_no',
          text: row.user_text,
          expected: yes,
          capture: {},
          note: [...acts].join(','),
        });
    }
  }
  return cases;
}

/** Cases from our fixtures: one JSON object per line {text, type, expected, capture?, note?}. */
export function loadFixtureCases(file = FIXTURES) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('//'))
    .map((l, i) => {
      const c = JSON.parse(l);
      return {
        id: `fixture#${i + 1}`,
        source: 'hinglish',
        type: c.type,
        text: c.text,
        expected: c.expected,
        capture: c.capture ?? {},
        note: c.note ?? '',
      };
    });
}

/** Every case: SGD first, then the fixtures. */
export function loadAllCases() {
  return [...loadSgdCases(), ...loadFixtureCases()];
}

/** Whether an extracted value equals the expected one (names case-insensitively; null = nothing). */
export function sameValue(type, got, expected) {
  if (expected === null) return got === null || got === undefined;
  if (got === null || got === undefined) return false;
  if (type === 'person_name') return String(got).toLowerCase() === String(expected).toLowerCase();
  if (type === 'number' || type === 'amount') return Number(got) === Number(expected);
  return got === expected;
}

const LABELS = { number: 'count' };

/** The report row label of a case: SGD rows by type ("count" for numbers), fixtures as "hinglish:<type>". */
export function rowLabel(c) {
  const t = LABELS[c.type] ?? c.type;
  return c.source === 'sgd' ? t : `${c.source}:${t}`;
}

/**
 * Prints the results table (and failures with `verbose`, or JSON with `json`) and returns the
 * exit code: 1 when a row misses its target.
 */
export function report(results, { verbose = false, json = false, title = '' } = {}) {
  const rows = new Map();
  for (const r of results) {
    const label = rowLabel(r.case);
    const row = rows.get(label) ?? { label, type: r.case.type, rows: 0, correct: 0, failures: [] };
    row.rows += 1;
    if (r.ok) row.correct += 1;
    else row.failures.push(r);
    rows.set(label, row);
  }
  const table = [...rows.values()].map((row) => {
    const accuracy = Math.round((1000 * row.correct) / row.rows) / 10;
    const target = TARGETS[row.type] ?? 95;
    return { ...row, accuracy, target, pass: accuracy >= target };
  });
  if (json) {
    const out = table.map(({ failures, ...row }) => ({
      ...row,
      failures: failures.map((f) => ({
        id: f.case.id,
        text: f.case.text,
        expected: f.case.expected,
        got: f.got ?? null,
        error: f.error,
      })),
    }));
    process.stdout.write(`${JSON.stringify({ title, rows: out }, null, 2)}\n`);
  } else {
    if (title) process.stdout.write(`${title}\n`);
    const head = ['slot type', 'rows', 'correct', 'accuracy', 'target', 'result'];
    const lines = table.map((r) => [
      r.label,
      String(r.rows),
      String(r.correct),
      `${r.accuracy.toFixed(1)}%`,
      `${r.target}%`,
      r.pass ? 'PASS' : 'FAIL',
    ]);
    const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
    const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    process.stdout.write(`${fmt(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${lines.map(fmt).join('\n')}\n`);
    if (verbose) {
      for (const r of table) {
        for (const f of r.failures) {
          process.stdout.write(
            `\nFAIL ${r.label} ${f.case.id} (${f.case.note})\n  text:     ${f.case.text}\n  expected: ${JSON.stringify(f.case.expected)}\n  got:      ${JSON.stringify(f.got ?? null)}${f.error ? `\n  error:    ${f.error}` : ''}\n`,
          );
        }
      }
    }
  }
  return table.every((r) => r.pass) ? 0 : 1;
}

/** Runs `fn` over `items` with at most `limit` in flight; results in input order. */
export async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  async function worker() {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
