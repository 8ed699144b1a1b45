/**
 * The pure parts of `vagent agent test` (docs/agent-tests.md): the scenario schema and its
 * located problems, the expectation checks, the JUnit XML escaper and report.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { XMLValidator } from 'fast-xml-parser';
import { parseScenarioSource } from '../../src/cli/agent-test/scenario-file.js';
import { checkSession, checkTurn, describeFailure, type TurnObservation } from '../../src/cli/agent-test/expect.js';
import { junitInputErrorXml, junitXml, xmlEscape } from '../../src/cli/agent-test/report.js';
import { updateFile } from '../../src/cli/agent-test/update.js';
import type { FileRun } from '../../src/cli/agent-test/run.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-scenario-unit-'));
fs.copyFileSync(path.join(import.meta.dirname, '..', '..', 'config', 'agents', 'ag_clinic_booking.yaml'), path.join(dir, 'clinic.yaml'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
const file = path.join(dir, 's.yaml');

const turn = (over: Partial<TurnObservation> = {}): TurnObservation => ({
  reply: 'That is Priya Sharma, right?',
  step: 'name',
  layer: 'capture',
  llm_used: false,
  slots: { visit_date: '2026-11-21', phone: '0987654321', can_pay: true },
  ended: false,
  cost_inr: 0.0012,
  ...over,
});

describe('scenario files', () => {
  it('loads a valid file with its agent, resolved beside it', () => {
    const r = parseScenarioSource(file, 'agent: clinic.yaml\nscenarios:\n  - name: a\n    turns: [{ caller: hi }]\n');
    expect(r.ok).toBe(true);
    if (r.ok) {
      expect(r.agent.id).toBe('ag_clinic_booking');
      expect(r.agent.file).toBe(path.join(dir, 'clinic.yaml'));
      expect(r.resolve('a.wav')).toBe(path.join(dir, 'a.wav'));
    }
  });

  it('places each problem at its line and column', () => {
    const text = [
      'agent: clinic.yaml',
      'scenarios:',
      '  - name: a',
      '    turns:',
      '      - caller: hi',
      '        expect: { step: 7, ended: maybe, slots: { Bad: 1 }, max_cost_inr: -1 }',
      '    expect: { outcome: done, colour: red }',
    ].join('\n');
    const r = parseScenarioSource(file, text);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const lines = r.problems.map((p) => `${p.line}:${p.col}: ${p.field}: ${p.message}`);
    expect(lines).toEqual(
      expect.arrayContaining([
        '6:25: scenarios[0].turns[0].expect.step: step must be a string',
        '6:35: scenarios[0].turns[0].expect.ended: ended must be true or false',
        expect.stringMatching(/^6:\d+: scenarios\[0\]\.turns\[0\]\.expect\.slots\.Bad: a slot name is lowercase/),
        '6:75: scenarios[0].turns[0].expect.max_cost_inr: max_cost_inr must be 0 or more',
        expect.stringMatching(/^7:24: scenarios\[0\]\.expect\.outcome: outcome must be one of/),
        '7:30: scenarios[0].expect.colour: unknown key',
      ]),
    );
  });
});

describe('scenario file mistakes', () => {
  const problemsOf = (name: string, text: string): string[] => {
    const r = parseScenarioSource(path.join(dir, name), text);
    return r.ok ? [] : r.problems.map((p) => `${p.line}:${p.col}: ${p.field ? `${p.field}: ` : ''}${p.message}`);
  };
  it('says a missing agent: is required', () => {
    expect(problemsOf('s.yaml', 'scenarios:\n  - name: a\n    turns: [{ caller: hi }]\n')).toEqual(['1:1: agent: required']);
    expect(problemsOf('s.yaml', 'agent: 7\nscenarios:\n  - name: a\n    turns: [{ caller: hi }]\n')).toEqual([
      '1:8: agent: agent must be a string',
    ]);
  });
  it('recognises an agent file in one problem, saying where scenario files are', () => {
    const text = fs.readFileSync(path.join(dir, 'clinic.yaml'), 'utf8');
    expect(problemsOf('clinic.yaml', text)).toEqual([
      '1:1: this is an agent file, not a scenario file (a scenario file names its agent file with agent:; docs/agent-tests.md)',
    ]);
    fs.mkdirSync(path.join(dir, 'tests'), { recursive: true });
    expect(problemsOf('clinic.yaml', text)).toEqual([
      `1:1: this is an agent file, not a scenario file (scenarios are in ${path.join(dir, 'tests')}${path.sep}; docs/agent-tests.md)`,
    ]);
  });
  it('reports a .json file that is not JSON as invalid JSON, at its place', () => {
    const problems = problemsOf('s.test.json', '{"agent": "clinic.yaml", "scenarios": [}');
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^1:\d+: invalid JSON: /);
    expect(problemsOf('s.test.json', '{"agent": "clinic.yaml", "scenarios": [{"name": "a", "turns": [{"caller": "hi"}]}]}')).toEqual([]);
  });
});

describe('expectations', () => {
  it('passes what holds: any case, a list of fragments, a regex, slots as text or numbers', () => {
    const expectations = {
      reply_contains: ['priya SHARMA', 'right?'],
      reply_matches: '^that is .+, right\\?$',
      step: 'name',
      layer: 'capture',
      llm_used: false,
      slots: { visit_date: '2026-11-21', can_pay: true },
      ended: false,
      max_cost_inr: 0.01,
    };
    expect(checkTurn(1, expectations, turn())).toEqual([]);
    expect(checkTurn(1, undefined, turn())).toEqual([]);
  });

  it('names each failed expectation with the turn, expected and got, in the order written', () => {
    const failures = checkTurn(
      3,
      { reply_contains: 'Sharma', step: 'day', slots: { phone: '0987654321', visit_time: '10:30' }, max_cost_inr: 0.001 },
      turn({ reply: 'Sorry?' }),
    );
    expect(failures.map(describeFailure)).toEqual([
      'turn 3: reply_contains: expected "Sharma", got "Sorry?"',
      'turn 3: step: expected "day", got "name"',
      'turn 3: slots.visit_time: expected "10:30", got nothing',
      'turn 3: max_cost_inr: expected "at most 0.001", got 0.0012',
    ]);
  });

  it('checks the end of a scenario against the summary', () => {
    const got = { outcome: 'partial', slots: { a: 1 }, ended: true, cost_inr: 0 };
    expect(checkSession({ outcome: 'partial', slots: { a: 1 }, ended: true }, got)).toEqual([]);
    expect(checkSession({ outcome: 'completed', ended: false }, got).map(describeFailure)).toEqual([
      'end: outcome: expected "completed", got "partial"',
      'end: ended: expected false, got true',
    ]);
  });
});

describe('JUnit XML', () => {
  it('escapes markup and drops what XML 1.0 cannot hold', () => {
    expect(xmlEscape(`<a href="x">Tom & 'Jerry'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;Tom &amp; &apos;Jerry&apos;&lt;/a&gt;');
    expect(xmlEscape('bell\u0007 nul\u0000 lone\ud800 ok\u{1F600} tab\tnl\n')).toBe(
      'bell\uFFFD nul\uFFFD lone\uFFFD ok\u{1F600} tab\tnl\n',
    );
    expect(xmlEscape('हाँ ₹')).toBe('हाँ ₹');
  });

  it('writes a well-formed report for hostile names and replies', () => {
    const hostile = `]]></failure><x a="\u0001">&amp;</x><!--`;
    const run: FileRun = {
      file: `dir/${hostile}.yaml`,
      agent_file: 'a.yaml',
      agent_id: 'ag_x',
      scenarios: [
        { name: hostile, passed: true, failures: [], error: null, turns: [], session: null, duration_ms: 3 },
        {
          name: `${hostile} 2`,
          passed: false,
          failures: [{ turn: 1, expectation: 'reply_contains', expected: hostile, got: hostile }],
          error: null,
          turns: [{ n: 1, caller: hostile, failures: [], ...turn({ reply: hostile }) }],
          session: { outcome: 'abandoned', slots: {}, ended: false, cost_inr: 0 },
          duration_ms: 1500,
        },
      ],
    };
    const xml = junitXml([run]);
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).toContain('tests="2" failures="1"');
    expect(xml).toContain('time="1.503"');
  });
});

describe('JUnit XML of bad input', () => {
  it('is one failed test case holding every problem, well-formed whatever they say', () => {
    const xml = junitInputErrorXml('1 of 1 scenario files have problems: nothing was run', ['a.yaml:1:1: agent: required', '<x>&\u0001']);
    expect(XMLValidator.validate(xml)).toBe(true);
    expect(xml).toContain('tests="1" failures="1"');
    expect(xml).toContain('type="bad_input">a.yaml:1:1: agent: required\n&lt;x&gt;&amp;\uFFFD</failure>');
  });
});

describe('--update', () => {
  const text = '# c\nagent: clinic.yaml\nscenarios:\n  - name: a # keep\n    turns:\n      - caller: hi\n';
  const ran = (passed: boolean): FileRun => ({
    file,
    agent_file: 'clinic.yaml',
    agent_id: 'ag_clinic_booking',
    scenarios: [
      {
        name: 'a',
        passed,
        failures: [],
        error: null,
        turns: [{ n: 1, caller: 'hi', failures: [], ...turn({ slots: { patient_name: 'Hi' } }) }],
        session: { outcome: 'abandoned', slots: {}, ended: false, cost_inr: 0 },
        duration_ms: 1,
      },
    ],
  });
  const load = () => {
    fs.writeFileSync(file, text);
    const r = parseScenarioSource(file, text);
    if (!r.ok) throw new Error('invalid');
    return r;
  };

  it('records a passing scenario, comments kept', () => {
    const out = updateFile(load(), ran(true));
    expect(out.text).toBe(
      '# c\nagent: clinic.yaml\nscenarios:\n  - name: a # keep\n    turns:\n      - caller: hi\n        expect:\n' +
        '          reply_contains: That is Priya Sharma, right?\n          step: name\n          layer: capture\n' +
        '          slots:\n            patient_name: Hi\n    expect:\n      outcome: abandoned\n      ended: false\n',
    );
  });

  it('leaves a failing scenario, and a file changed on disk since it was read', () => {
    expect(updateFile(load(), ran(false))).toMatchObject({ text: null, message: expect.stringContaining('1 failing scenario left') });
    const loaded = load();
    fs.appendFileSync(file, '# edited\n');
    expect(updateFile(loaded, ran(true))).toMatchObject({ text: null, message: expect.stringContaining('changed on disk') });
  });
});
