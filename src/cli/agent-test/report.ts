/**
 * What `vagent agent test` prints and writes (docs/agent-tests.md "Reports"): one line per
 * scenario (✓/✗, and for a failure the first failed expectation with its turn, expected and got,
 * and the caller's line and the reply of that turn), the `--json` object, and the `--junit` XML
 * report (one `<testsuite>` per scenario file, one `<testcase>` per scenario), in the JUnit XML
 * form CI systems read (the Ant JUnit task's `testsuites` schema; Jenkins, GitLab and GitHub
 * test-report actions read it).
 */
import { bad, dim, good, plural, printable, rupees } from '../output.js';
import { describeFailure, shown } from './expect.js';
import type { FileRun, ScenarioRun } from './run.js';

/** The counts of a run. */
export interface Totals {
  files: number;
  scenarios: number;
  passed: number;
  failed: number;
}

/** Counts the scenarios of `files`. */
export function totalsOf(files: FileRun[]): Totals {
  const all = files.flatMap((f) => f.scenarios);
  const passed = all.filter((s) => s.passed).length;
  return { files: files.length, scenarios: all.length, passed, failed: all.length - passed };
}

/** The first reason a scenario failed, in words: an error, else its first failed expectation. */
export function firstFailure(run: ScenarioRun): string | null {
  if (run.passed) return null;
  if (run.failures.length > 0) return describeFailure(run.failures[0]!);
  return run.error ?? 'failed';
}

/**
 * The lines that say one scenario: `✓ name (N turns, ₹x)`, or `✗ name: turn 3: step: expected …` and the turn's words.
 * Names, lines and replies come from scenario and agent files: they are shown {@link printable}.
 */
export function scenarioLines(run: ScenarioRun): string[] {
  const cost = run.session ? `, ${rupees(run.session.cost_inr)}` : '';
  const detail = dim(`(${plural(run.turns.length, 'turn')}${cost}, ${run.duration_ms} ms)`);
  const name = printable(run.name);
  if (run.passed) return [`  ${good('✓')} ${name} ${detail}`];
  const lines = [`  ${bad('✗')} ${name} ${detail}`, `      ${printable(firstFailure(run)!)}`];
  const first = run.failures[0];
  const turn = first && first.turn !== null ? run.turns[first.turn - 1] : undefined;
  if (turn) {
    lines.push(dim(`      caller: ${printable(shown(turn.caller))}`));
    if (turn.heard !== undefined) lines.push(dim(`      heard:  ${printable(shown(turn.heard))}`));
    lines.push(dim(printable(`      reply:  ${shown(turn.reply)} (step ${turn.step}, layer ${turn.layer})`)));
  }
  if (run.error && run.failures.length > 0) lines.push(`      ${printable(run.error)}`);
  const more = run.failures.length - 1;
  if (more > 0) lines.push(dim(`      … and ${plural(more, 'more failed expectation')} (--json shows them all)`));
  return lines;
}

/** The heading of one file's scenarios. */
export function fileHeading(run: Pick<FileRun, 'file' | 'agent_id' | 'agent_file'>): string {
  return `${printable(run.file)} ${dim(printable(`(${run.agent_id}, ${run.agent_file})`))}`;
}

/** The closing line of a run. */
export function totalsLine(t: Totals): string {
  const word = `${plural(t.scenarios, 'scenario')} in ${plural(t.files, 'file')}`;
  return t.failed === 0 ? good(`${word}: all ${t.passed} passed`) : bad(`${word}: ${t.passed} passed, ${t.failed} failed`);
}

/** The `--json` object: every file, scenario and turn as it ran, with the totals. */
export function jsonReport(files: FileRun[]): { passed: boolean; totals: Totals; files: FileRun[] } {
  const totals = totalsOf(files);
  return { passed: totals.failed === 0, totals, files };
}

// XML 1.0 allows tab, newline, carriage return and U+0020–U+D7FF, U+E000–U+FFFD, U+10000–U+10FFFF
// (https://www.w3.org/TR/xml/#charsets): anything else (control characters, lone surrogates,
// U+FFFE/U+FFFF) cannot be written even escaped, so it is replaced by U+FFFD.
const NOT_XML_CHAR = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

/**
 * Text as XML 1.0 character data or an attribute value: `& < > " '` escaped, characters XML
 * cannot hold replaced by U+FFFD. Safe in both places.
 */
export function xmlEscape(text: string): string {
  return text.replace(NOT_XML_CHAR, '\uFFFD').replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

/** The body of a failed test case: every failed expectation and the conversation as it ran. */
function failureText(run: ScenarioRun): string {
  const lines = run.failures.map(describeFailure);
  if (run.error) lines.push(run.error);
  lines.push('', 'conversation:');
  for (const t of run.turns) {
    lines.push(
      `  ${t.n}. caller: ${t.caller}`,
      `     agent:  ${t.reply}`,
      `     step ${t.step}, layer ${t.layer}${t.ended ? ', ended' : ''}`,
    );
  }
  if (run.session) lines.push(`outcome: ${run.session.outcome ?? 'none'}, slots: ${JSON.stringify(run.session.slots)}`);
  return lines.join('\n');
}

/** The `--junit` report: a complete XML document. */
export function junitXml(files: FileRun[]): string {
  const t = totalsOf(files);
  const totalMs = files.reduce((n, f) => n + f.scenarios.reduce((m, s) => m + s.duration_ms, 0), 0);
  const out = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="vagent agent test" tests="${t.scenarios}" failures="${t.failed}" errors="0" time="${seconds(totalMs)}">`,
  ];
  for (const f of files) {
    const failedHere = f.scenarios.filter((s) => !s.passed).length;
    const ms = f.scenarios.reduce((m, s) => m + s.duration_ms, 0);
    out.push(
      `  <testsuite name="${xmlEscape(f.file)}" tests="${f.scenarios.length}" failures="${failedHere}" errors="0" skipped="0" time="${seconds(ms)}">`,
    );
    for (const s of f.scenarios) {
      const head = `    <testcase classname="${xmlEscape(f.agent_id)}" name="${xmlEscape(s.name)}" file="${xmlEscape(f.file)}" time="${seconds(s.duration_ms)}"`;
      if (s.passed) {
        out.push(`${head}/>`);
        continue;
      }
      out.push(`${head}>`);
      out.push(
        `      <failure message="${xmlEscape(firstFailure(s) ?? 'failed')}" type="expectation">${xmlEscape(failureText(s))}</failure>`,
      );
      out.push('    </testcase>');
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

/**
 * The `--junit` report when nothing ran because of bad input (exit 2): one test suite holding one
 * failed test case, `load`, whose `<failure>` (type `bad_input`) has `message` as its message and
 * every problem line as its text — so a CI system shows the run as failed rather than missing.
 */
export function junitInputErrorXml(message: string, problems: readonly string[]): string {
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<testsuites name="vagent agent test" tests="1" failures="1" errors="0" time="0.000">',
    '  <testsuite name="vagent agent test" tests="1" failures="1" errors="0" skipped="0" time="0.000">',
    '    <testcase classname="vagent agent test" name="load" time="0.000">',
    `      <failure message="${xmlEscape(message)}" type="bad_input">${xmlEscape(problems.join('\n'))}</failure>`,
    '    </testcase>',
    '  </testsuite>',
    '</testsuites>',
    '',
  ].join('\n');
}
