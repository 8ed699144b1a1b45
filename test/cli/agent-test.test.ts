/**
 * `vagent agent test` (docs/agent-tests.md), through the built binary: the shipped scenarios of
 * the four example agents pass; an edit to a copy of an agent that breaks a step fails with the
 * broken expectation named; malformed, missing and hostile scenario files are bad input (exit 2,
 * nothing run); `--junit` writes a report CI can read and `--update` records a passing run.
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanupAll, requireBuild, ROOT, runCli, tempDir } from '../support/daemon.js';

const AGENTS = path.join(ROOT, 'config', 'agents');
const TIMEOUT = { timeoutMs: 60_000 };

/** A temp dir holding a copy of `ag_clinic_booking.yaml` and a scenario file `text` beside it. */
function workspace(scenario: string, edit: (agent: string) => string = (a) => a): { dir: string; file: string } {
  const dir = tempDir('vagent-agent-test-');
  fs.writeFileSync(path.join(dir, 'clinic.yaml'), edit(fs.readFileSync(path.join(AGENTS, 'ag_clinic_booking.yaml'), 'utf8')));
  const file = path.join(dir, 'clinic.test.yaml');
  fs.writeFileSync(file, scenario);
  return { dir, file };
}

const SCENARIO = `# the clinic, two turns
agent: clinic.yaml
now: "2026-11-20T10:00:00+05:30"
scenarios:
  - name: name then day
    turns:
      - caller: "Priya Sharma"
        expect: { step: name, layer: capture, reply_contains: "Priya Sharma" }
      - caller: "yes"
        expect: { step: day, slots: { patient_name: Priya Sharma } }
      - caller: "tomorrow"
        expect: { step: day, reply_matches: "twenty-first of November" }
      - caller: "yes"
        expect: { step: time, slots: { visit_date: "2026-11-21" } }
`;

beforeAll(requireBuild);
afterAll(cleanupAll);

describe('vagent agent test', { timeout: 120_000 }, () => {
  it('passes the shipped scenarios of the four example agents (exit 0)', async () => {
    const r = await runCli(['agent', 'test', 'config/agents/tests/'], TIMEOUT);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const id of ['ag_clinic_booking', 'ag_emi_reminder', 'ag_emi_reminder_hi', 'ag_delivery_confirmation'])
      expect(r.stdout).toContain(id);
    expect(r.stdout).toMatch(/scenarios in 4 files: all \d+ passed/);
    expect(r.stdout).not.toContain('✗');
  });

  it('fails (exit 1) naming the broken expectation, its turn, expected and got, when an edit breaks a step', async () => {
    // The date step now captures a time: "tomorrow" is no longer understood there.
    const { file } = workspace(SCENARIO, (a) =>
      a.replace('capture: { slot: visit_date, type: date }', 'capture: { slot: visit_date, type: time }'),
    );
    const r = await runCli(['agent', 'test', file], TIMEOUT);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ name then day');
    expect(r.stdout).toContain('turn 3: reply_matches: expected "/twenty-first of November/i", got');
    expect(r.stderr).toContain('error: 1 of 1 scenarios failed');

    const json = await runCli(['agent', 'test', file, '--json'], TIMEOUT);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as { passed: boolean; files: Array<{ scenarios: Array<{ failures: unknown[] }> }> };
    expect(report.passed).toBe(false);
    expect(report.files[0]!.scenarios[0]!.failures[0]).toMatchObject({ turn: 3, expectation: 'reply_matches' });
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'test_failed' } });
  });

  it('fails the shipped clinic scenarios (and only those) when a copy of config/agents/ has its date step broken', async () => {
    const dir = tempDir('vagent-agent-test-');
    fs.cpSync(AGENTS, dir, { recursive: true });
    const clinic = path.join(dir, 'ag_clinic_booking.yaml');
    fs.writeFileSync(
      clinic,
      fs.readFileSync(clinic, 'utf8').replace('{ slot: visit_date, type: date }', '{ slot: visit_date, type: number }'),
    );
    const r = await runCli(['agent', 'test', path.join(dir, 'tests')], TIMEOUT);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('✗ books an appointment');
    expect(r.stdout).toMatch(
      /turn 3: reply_contains: expected "That is Saturday, the twenty-first of November, right\?", got "Sorry, I did not catch that\./,
    );
    const failed = r.stdout.split('\n').filter((l) => l.includes('✗'));
    expect(failed.length).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/ag_emi_reminder\.test\.yaml[^\n]*\n(?: {2}✓[^\n]*\n)+/);
  });

  it('writes a JUnit XML report with one testcase per scenario and the failure in it', async () => {
    const { dir, file } = workspace(SCENARIO.replace('expect: { step: time,', 'expect: { step: phone,'));
    const junit = path.join(dir, 'report.xml');
    const r = await runCli(['agent', 'test', file, '--junit', junit], TIMEOUT);
    expect(r.code).toBe(1);
    const xml = fs.readFileSync(junit, 'utf8');
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="vagent agent test" tests="1" failures="1"/);
    expect(xml).toContain('<testcase classname="ag_clinic_booking" name="name then day"');
    expect(xml).toContain('<failure message="turn 4: step: expected &quot;phone&quot;, got &quot;time&quot;" type="expectation">');
  });

  it('--update records a passing run into turns without expectations, keeping the file as written', async () => {
    const text = `# keep this comment
agent: clinic.yaml   # and this one
now: "2026-11-20T10:00:00+05:30"
scenarios:
  - name: recorded
    turns:
      - caller: "Priya Sharma"
        expect: { step: name }
      - caller: "yes"   # confirms the name
`;
    const { file } = workspace(text);
    const r = await runCli(['agent', 'test', file, '--update'], TIMEOUT);
    expect(r.code).toBe(0);
    const updated = fs.readFileSync(file, 'utf8');
    // The file as written, spaces before its comments included, then what was recorded.
    expect(updated.startsWith(text)).toBe(true);
    expect(updated).toContain('# keep this comment');
    expect(updated).toContain('agent: clinic.yaml   # and this one');
    expect(updated).toContain('expect: { step: name }');
    expect(updated).toMatch(
      /- caller: "yes" {3}# confirms the name\n {8}expect:\n {10}reply_contains: Got it\. Which day would you like to come in\?\n {10}step: day/,
    );
    expect(updated).toMatch(/outcome: abandoned/);
    // What was recorded passes when run again.
    expect((await runCli(['agent', 'test', file], TIMEOUT)).code).toBe(0);
  });

  it('--update leaves a failing scenario as it is', async () => {
    const text = SCENARIO.replace('expect: { step: name,', 'expect: { step: day,') + '      - caller: "four pm"\n';
    const { file } = workspace(text);
    const r = await runCli(['agent', 'test', file, '--update'], TIMEOUT);
    expect(r.code).toBe(1);
    expect(fs.readFileSync(file, 'utf8')).toBe(text);
  });

  it.each([
    ['a YAML syntax error', 'agent: clinic.yaml\nscenarios: [\n', /clinic\.test\.yaml:3:1: invalid YAML/],
    [
      'an unknown key',
      SCENARIO.replace('reply_contains: "Priya', 'reply_contain: "Priya'),
      /clinic\.test\.yaml:8:47: scenarios\[0\]\.turns\[0\]\.expect\.reply_contain: unknown key/,
    ],
    [
      'a bad regular expression',
      SCENARIO.replace('twenty-first of November', '(unclosed'),
      /clinic\.test\.yaml:12:45: scenarios\[0\]\.turns\[2\]\.expect\.reply_matches: not a valid regular expression/,
    ],
    [
      'a turn without caller or audio',
      SCENARIO.replace('- caller: "yes"\n        expect: { step: day', '- expect: { step: day'),
      /scenarios\[0\]\.turns\[1\]: a turn needs caller \(text\) or audio/,
    ],
    [
      'a turn given only as audio',
      SCENARIO.replace('- caller: "yes"\n        expect: { step: day', '- audio: yes.wav\n        expect: { step: day'),
      /clinic\.test\.yaml:9:16: scenarios\[0\]\.turns\[1\]\.audio: a turn given only as audio cannot run as text/,
    ],
    [
      'no scenarios',
      'agent: clinic.yaml\nscenarios: []\n',
      /clinic\.test\.yaml:2:12: scenarios: scenarios must hold at least one scenario/,
    ],
    [
      'a missing agent file',
      SCENARIO.replace('agent: clinic.yaml', 'agent: nowhere.yaml'),
      /clinic\.test\.yaml:2:8: agent: .*nowhere\.yaml: cannot read: no such file or directory/,
    ],
    ['an empty file', '', /clinic\.test\.yaml:1:1: the file is empty/],
    ['a list instead of a map', '- one\n- two\n', /a scenario file must be a map with agent and scenarios/],
    [
      'an alias bomb',
      `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n`,
      /invalid YAML: .*alias/i,
    ],
    [
      'a caller line over 4000 characters',
      SCENARIO.replace('caller: "yes"', `caller: "${'y'.repeat(4001)}"`),
      /scenarios\[0\]\.turns\[1\]\.caller: caller must be at most 4000 characters/,
    ],
    [
      'a duplicate scenario name',
      `${SCENARIO}  - name: name then day\n    turns: [{ caller: "hi" }]\n`,
      /scenarios\[1\]\.name: another scenario is named "name then day"/,
    ],
  ])('refuses %s with FILE:LINE:COL and exit 2, running nothing', async (_what, text, message) => {
    const { file } = workspace(text);
    const r = await runCli(['agent', 'test', file], TIMEOUT);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).toContain('nothing was run');
    expect(r.stdout).toBe('');
  });

  it('refuses an agent file with a problem, at its own FILE:LINE:COL (exit 1, as agent apply does)', async () => {
    const { dir, file } = workspace(SCENARIO, (a) => a.replace('type: person_name', 'type: persons_name'));
    const r = await runCli(['agent', 'test', file], TIMEOUT);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('nothing was run');
    const applied = await runCli(['agent', 'apply', '-f', path.join(dir, 'clinic.yaml'), '--dry-run', '--json']);
    expect(applied.code).toBe(r.code);
    expect(JSON.parse(applied.stderr.trim().split('\n').at(-1)!).error.code).toBe('invalid_request');
    const json = await runCli(['agent', 'test', file, '--json'], TIMEOUT);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stderr.trim()).error.code).toBe('invalid_request');
    expect(r.stderr).toMatch(/clinic\.test\.yaml:2:8: agent: .*clinic\.yaml is not a valid agent file/);
    expect(r.stderr).toMatch(/clinic\.yaml:\d+:\d+: steps\[0\]\.capture\.type: Invalid option/);
  });

  it('refuses a missing path, a directory without scenario files, and a file too large to be a scenario file (exit 2)', async () => {
    const dir = tempDir('vagent-agent-test-');
    const missing = await runCli(['agent', 'test', path.join(dir, 'nope.yaml')], TIMEOUT);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.yaml: cannot read: no such file or directory/);
    const empty = await runCli(['agent', 'test', dir], TIMEOUT);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/no \.yaml, \.yml, \.json files in this directory/);
    const big = path.join(dir, 'big.yaml');
    fs.writeFileSync(big, `# ${'x'.repeat(1024 * 1024)}\n`);
    const r = await runCli(['agent', 'test', big], TIMEOUT);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/big\.yaml: cannot read: larger than 1048576 bytes/);
  });

  it('fails a scenario whose session cannot open (missing context), naming why', async () => {
    const { file } = workspace(SCENARIO, (a) => a.replace('timezone: Asia/Kolkata', 'timezone: Asia/Kolkata\nrequired_context: [branch]'));
    const r = await runCli(['agent', 'test', file], TIMEOUT);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/the session did not open: invalid_request: .*context\.branch/);
    expect(r.stdout).toMatch(/set them in the scenario file \(context: and customer_name:/);
    expect(r.stdout).not.toMatch(/pass them in the request/);
  });

  it('with --json, bad input is one JSON line on stderr holding every problem', async () => {
    const { file } = workspace('scenarios:\n  - name: a\n    turns: [{ caller: hi }]\n');
    const r = await runCli(['agent', 'test', file, '--json'], TIMEOUT);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    const err = JSON.parse(lines[0]!) as { error: { code: string; message: string } };
    expect(err.error.code).toBe('bad_arguments');
    expect(err.error.message).toMatch(/nothing was run: .*clinic\.test\.yaml:1:1: agent: required/);
  });

  it('writes the JUnit report on bad input too: one failed test case naming the problems', async () => {
    const { dir, file } = workspace('agent: clinic.yaml\nscenarios: []\n');
    const junit = path.join(dir, 'report.xml');
    const r = await runCli(['agent', 'test', file, '--junit', junit], TIMEOUT);
    expect(r.code).toBe(2);
    const xml = fs.readFileSync(junit, 'utf8');
    expect(xml).toContain('tests="1" failures="1"');
    expect(xml).toMatch(
      /<failure message="1 of 1 scenario files have problems: nothing was run" type="bad_input">.*scenarios must hold at least one/,
    );
  });

  it('recognises agent files given as scenario files: one line each, saying where the scenarios are', async () => {
    const r = await runCli(['agent', 'test', AGENTS], TIMEOUT);
    expect(r.code).toBe(2);
    const problems = r.stderr.split('\n').filter((l) => l.includes('ag_'));
    expect(problems).toHaveLength(fs.readdirSync(AGENTS).filter((n) => n.endsWith('.yaml')).length);
    for (const line of problems)
      expect(line).toMatch(
        /\.yaml:1:1: this is an agent file, not a scenario file \(scenarios are in .*config\/agents\/tests\/; docs\/agent-tests\.md\)$/,
      );
    expect(r.stderr).not.toMatch(/unknown key/);
  });
});
