// Evaluation cases for the slot extractors (docs/agents.md "Capture and slot types") and the
// report shared by the runners.
//
// Sources:
// - SGD dev sample (../shared/data/sgd-dev/sample.jsonl beside this repository, or
//   $VAGENT_SGD_SAMPLE): real user
//   turns of the Schema-Guided Dialogue dataset, CC BY-SA 4.0, Rastogi et al., AAAI 2020,
//   Google LLC. "Today" in it is 2019-03-01. This file only reads it; no row is copied here.
// - eval/fixtures/hinglish.jsonl: Hindi/Hinglish, digit and choice cases written for vagent.
// - eval/fixtures/classes.jsonl: English cases of the classes the rules must generalise to
//   (names in a sentence, closings, declines, relative days), written for vagent.
//
// Mapping of SGD rows to slot types: `time`/`*_time` → time; `date`/`*_date` → date; counts
// (number_of_seats, number_of_rooms, passengers, …) → number (reported as "count");
// `transfer_amount`/`*amount*` → amount; recipient_name/`*person*`/contact name → person_name;
// rows tagged yes/no or decline_offer → yes_no (AFFIRM/AFFIRM_INTENT → true, NEGATE/NEGATE_INTENT
// → false); closings from the dialogue acts ({@link sgdClosing}, eval/README.md "Closing").
// The sample is split by dialogue into a tuning and a held-out part ({@link sgdPart}); the report
// prints failing cases of the tuning part only.
// When a row holds two values of one type ("from the 11th until the 12th"), the one said first
// is expected: a single question takes the first answer. Rows tagged person_name whose turn
// names nobody expect no name (null).
import { createHash } from 'node:crypto';
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
/** Our own English cases of the classes the rules must generalise to (names in a sentence, closings, declines, relative days). */
export const CLASS_FIXTURES = path.join(HERE, 'fixtures', 'classes.jsonl');
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
  amount: 95,
  person_name: 85,
  digits: 95,
  choice: 95,
  text: 95,
  closing: 90,
  not_closing: 95,
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

/** Share of SGD dialogues (percent) in the tuning part; the rest is held out. */
export const TUNING_PERCENT = 50;

/**
 * The part of the SGD sample a dialogue belongs to: `tuning` (the rules may be read and fixed
 * against it) or `heldout` (only ever counted). The rule is fixed and depends on the dialogue id
 * alone, so every turn of a dialogue lands in the same part: the first four bytes of
 * SHA-256(dialogue_id) as a big-endian integer, modulo 100, below {@link TUNING_PERCENT} → tuning.
 */
export function sgdPart(dialogueId) {
  const h = createHash('sha256').update(String(dialogueId), 'utf8').digest();
  return h.readUInt32BE(0) % 100 < TUNING_PERCENT ? 'tuning' : 'heldout';
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

/** Whether an SGD row is a caller closing the conversation (see eval/README.md "Closing"), or null when it is left out. */
export function sgdClosing(row) {
  const acts = new Set(row.user_acts);
  const sys = (row.system_acts_before ?? []).join(',');
  if (acts.has('GOODBYE')) return true;
  // At "anything else?" only a no and/or thanks closes; a new request (INFORM_INTENT, REQUEST …) goes on.
  const onlyNoThanks = [...acts].every((a) => a === 'NEGATE' || a === 'THANK_YOU');
  if (sys.includes('REQ_MORE') && acts.size > 0 && onlyNoThanks) return true;
  // A bare thank-you after a result is answered by "anything else?" in SGD: neither a close nor content.
  if (acts.has('THANK_YOU')) return null;
  return false;
}

const MONTHS = /\b(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\b/i;
const NO_WORDS = /^\W*(no|nope|nah|not)\b/i;

/** The breakdown rows a case also counts in ("name: in a sentence", "date: relative", "yes/no: decline"). */
function breakdowns(type, text, surface, expected) {
  const out = [];
  if (
    type === 'person_name' &&
    expected !== null &&
    text
      .replace(/[^\p{L}\p{N}]+/gu, ' ')
      .trim()
      .toLowerCase() !== surface.toLowerCase()
  )
    out.push('name: in a sentence');
  if (type === 'date' && !MONTHS.test(surface) && !/\d{4}/.test(surface)) out.push('date: relative');
  if (type === 'yes_no' && expected === false && !NO_WORDS.test(text)) out.push('yes/no: decline');
  return out;
}

/** Cases from the SGD sample: [{id, source, part, type, text, expected, capture, note, also}]. */
export function loadSgdCases(file = SGD_SAMPLE) {
  const rows = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  const cases = [];
  for (const row of rows) {
    const id = `${row.dialogue_id}#${row.turn_index}`;
    const part = sgdPart(row.dialogue_id);
    const add = (type, expected, note, surface = '') =>
      cases.push({
        id,
        source: 'sgd',
        part,
        type,
        text: row.user_text,
        expected,
        capture: {},
        note,
        also: breakdowns(type, row.user_text, surface, expected),
      });
    const byType = new Map();
    for (const [slot, surface] of Object.entries(row.slots)) {
      const type = sgdSlotType(slot);
      if (!type) continue;
      const entry = { slot, surface, value: canonical(type, row.slots_canonical[slot]), at: positionOf(row.user_text, surface) };
      const prev = byType.get(type);
      if (!prev || entry.at < prev.at) byType.set(type, entry);
    }
    for (const [type, e] of byType) add(type, e.value, `${e.slot}="${e.surface}"`, e.surface);
    if (row.tags.includes('person_name') && !byType.has('person_name')) add('person_name', null, 'no name said');
    const acts = new Set(row.user_acts);
    if (row.tags.includes('yes') || row.tags.includes('no') || row.tags.includes('decline_offer')) {
      const yes = acts.has('AFFIRM') || acts.has('AFFIRM_INTENT');
      const no = acts.has('NEGATE') || acts.has('NEGATE_INTENT');
      if (yes !== no) add('yes_no', yes, [...acts].join(','));
    }
    const closing = sgdClosing(row);
    if (closing !== null) {
      add('closing', closing, [...acts].join(','));
      // Said at "anything else?" (REQ_MORE) or mid-flow: played at a question of that kind.
      cases[cases.length - 1].capture = { at: (row.system_acts_before ?? []).join(',').includes('REQ_MORE') ? 'more' : 'mid' };
    }
  }
  return cases;
}

/** Cases from a fixtures file: one JSON object per line {text, type, expected, capture?, note?}; `//` lines are comments. */
export function loadFixtureCases(file = FIXTURES, source = 'hinglish') {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('//'))
    .map((l, i) => {
      const c = JSON.parse(l);
      return {
        id: `${source}#${i + 1}`,
        source,
        part: 'own',
        type: c.type,
        text: c.text,
        expected: c.expected,
        capture: c.capture ?? {},
        note: c.note ?? '',
        also: [],
      };
    });
}

/**
 * Every case: SGD first, then the fixtures (Hindi/Hinglish, then the class fixtures). Without the
 * SGD sample (a fresh clone: the data sits beside the checkout, eval/README.md "Cases") it says so
 * on stderr and returns the own fixtures only; when `$VAGENT_SGD_SAMPLE` names a file that is not
 * there it throws (a mistake, not a missing download).
 */
export function loadAllCases() {
  const own = [...loadFixtureCases(FIXTURES, 'hinglish'), ...loadFixtureCases(CLASS_FIXTURES, 'own')];
  if (!fs.existsSync(SGD_SAMPLE)) {
    const msg = `SGD sample not found at ${SGD_SAMPLE}: set VAGENT_SGD_SAMPLE (eval/README.md)`;
    if (process.env.VAGENT_SGD_SAMPLE) throw new Error(msg);
    process.stderr.write(`eval: ${msg}; running the own fixtures only\n`);
    return own;
  }
  return [...loadSgdCases(), ...own];
}

/** Whether an extracted value equals the expected one (names case-insensitively; null = nothing). */
export function sameValue(type, got, expected) {
  if (type === 'closing') return got === expected;
  if (expected === null) return got === null || got === undefined;
  if (got === null || got === undefined) return false;
  if (type === 'person_name') return String(got).toLowerCase() === String(expected).toLowerCase();
  if (type === 'number' || type === 'amount') return Number(got) === Number(expected);
  return got === expected;
}

const LABELS = { number: 'count', person_name: 'name', yes_no: 'yes/no' };
const BREAKDOWN_TYPE = { 'name: in a sentence': 'person_name', 'date: relative': 'date', 'yes/no: decline': 'yes_no' };

/** The report row label of a case: SGD rows by type ("count" for numbers), fixtures as "<source>:<type>". */
export function rowLabel(c) {
  const t = c.type === 'closing' && c.expected === false ? 'not closing' : (LABELS[c.type] ?? c.type);
  return c.source === 'sgd' ? t : `${c.source}:${t}`;
}

function pct(correct, rows) {
  return rows === 0 ? null : Math.round((1000 * correct) / rows) / 10;
}

/**
 * Groups results into report rows. An SGD row counts its tuning and held-out cases apart and is
 * judged on the held-out part; a fixture row (own cases) is judged on all of its cases. Only
 * tuning and own failures are kept: held-out cases are only ever counted.
 */
export function tabulate(results) {
  const rows = new Map();
  const bump = (label, type, r) => {
    const row = rows.get(label) ?? {
      label,
      type,
      tuning: { rows: 0, correct: 0 },
      heldout: { rows: 0, correct: 0 },
      own: { rows: 0, correct: 0 },
      failures: [],
    };
    const part = row[r.case.part];
    part.rows += 1;
    if (r.ok) part.correct += 1;
    else if (r.case.part !== 'heldout') row.failures.push(r);
    rows.set(label, row);
  };
  for (const r of results) {
    bump(rowLabel(r.case), r.case.type, r);
    for (const extra of r.case.also ?? []) bump(extra, BREAKDOWN_TYPE[extra], r);
  }
  return [...rows.values()].map((row) => {
    const judged = row.own.rows > 0 ? row.own : row.heldout;
    const target = row.label.endsWith('not closing') ? TARGETS.not_closing : (TARGETS[row.type] ?? 95);
    const accuracy = pct(judged.correct, judged.rows);
    return {
      ...row,
      tuning: { ...row.tuning, accuracy: pct(row.tuning.correct, row.tuning.rows) },
      heldout: { ...row.heldout, accuracy: pct(row.heldout.correct, row.heldout.rows) },
      own: { ...row.own, accuracy: pct(row.own.correct, row.own.rows) },
      accuracy,
      target,
      pass: accuracy !== null && accuracy >= target,
    };
  });
}

export const ORDER = [
  'time',
  'date',
  'date: relative',
  'count',
  'amount',
  'name',
  'name: in a sentence',
  'yes/no',
  'yes/no: decline',
  'closing',
  'not closing',
];

/**
 * Prints the results table — per row the tuning and held-out parts side by side, the target and
 * the verdict on held-out (own fixtures: on their own cases) — and, with `verbose`, the failures
 * of the tuning part and of the fixtures (never a held-out case); or JSON with `json` (held-out:
 * counts only). Each row that misses its target is named on stderr at the end (label, judged
 * part, accuracy, target). Returns the exit code: 1 when a row misses its target.
 */
export function report(results, { verbose = false, json = false, title = '' } = {}) {
  const rank = (l) => (ORDER.includes(l) ? ORDER.indexOf(l) : ORDER.length);
  const table = tabulate(results).sort((a, b) => rank(a.label) - rank(b.label) || (a.label < b.label ? -1 : 1));
  const failureJson = (f) => ({ id: f.case.id, text: f.case.text, expected: f.case.expected, got: f.got ?? null, error: f.error });
  if (json) {
    const out = table.map(({ failures, ...row }) => ({ ...row, failures: failures.map(failureJson) }));
    process.stdout.write(`${JSON.stringify({ title, rows: out }, null, 2)}\n`);
  } else {
    if (title) process.stdout.write(`${title}\n`);
    const cell = (p) => (p.rows === 0 ? '—' : `${p.correct}/${p.rows} ${p.accuracy.toFixed(1)}%`);
    const head = ['row', 'tuning', 'held-out', 'own', 'target', 'result'];
    const lines = table.map((r) => [r.label, cell(r.tuning), cell(r.heldout), cell(r.own), `${r.target}%`, r.pass ? 'PASS' : 'FAIL']);
    const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
    const fmt = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
    process.stdout.write(`${fmt(head)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}\n${lines.map(fmt).join('\n')}\n`);
    process.stdout.write('Result: SGD rows on held-out, own rows on their fixtures. --verbose prints tuning and own failures only.\n');
    if (verbose) {
      for (const r of table) {
        if (r.label.includes(':') && !r.label.includes('hinglish') && !r.label.startsWith('own')) continue; // breakdowns repeat their parent row
        for (const f of r.failures) {
          process.stdout.write(
            `\nFAIL ${r.label} ${f.case.id} (${f.case.note})\n  text:     ${f.case.text}\n  expected: ${JSON.stringify(f.case.expected)}\n  got:      ${JSON.stringify(f.got ?? null)}${f.error ? `\n  error:    ${f.error}` : ''}\n`,
          );
        }
      }
    }
  }
  // The rows that miss their target, named last on stderr (the table may have scrolled away).
  for (const r of table.filter((row) => !row.pass)) {
    const part = r.own.rows > 0 ? 'own' : 'held-out';
    const got = r.accuracy === null ? 'no cases' : `${r.accuracy.toFixed(1)}%`;
    process.stderr.write(`eval: FAIL ${r.label}: ${part} ${got} < ${r.target}%\n`);
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
