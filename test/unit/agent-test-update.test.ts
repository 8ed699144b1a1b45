/**
 * `vagent agent test --update` (docs/agent-tests.md "Recording expectations"): the recorded
 * expectations are inserted into the file, and every other character of it stays as written —
 * the spaces before a comment, quoting, blank lines, flow or block style, CRLF line ends, JSON.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseDocument } from 'yaml';
import { parseScenarioSource } from '../../src/cli/agent-test/scenario-file.js';
import { insertKeys } from '../../src/cli/agent-test/insert-keys.js';
import { updateFile } from '../../src/cli/agent-test/update.js';
import type { FileRun, ScenarioRun, TurnRun } from '../../src/cli/agent-test/run.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-scenario-update-'));
fs.copyFileSync(path.join(import.meta.dirname, '..', '..', 'config', 'agents', 'ag_clinic_booking.yaml'), path.join(dir, 'clinic.yaml'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const turnRun = (n: number, reply: string, step: string, slots: TurnRun['slots'] = {}): TurnRun => ({
  n,
  caller: 'x',
  failures: [],
  reply,
  step,
  layer: 'capture',
  llm_used: false,
  slots,
  ended: false,
  cost_inr: 0,
});

const scenarioRun = (name: string, turns: TurnRun[]): ScenarioRun => ({
  name,
  passed: true,
  failures: [],
  error: null,
  turns,
  session: { outcome: 'abandoned', slots: {}, ended: false, cost_inr: 0 },
  duration_ms: 1,
});

/** `text` written as `name`, loaded, and updated with `scenarios`' results. */
function update(name: string, text: string, scenarios: ScenarioRun[]) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, text);
  const loaded = parseScenarioSource(file, text);
  if (!loaded.ok) throw new Error(loaded.problems.map((p) => p.message).join('; '));
  const run: FileRun = { file, agent_file: 'clinic.yaml', agent_id: 'ag_clinic_booking', scenarios };
  return updateFile(loaded, run);
}

describe('--update keeps the file as written', () => {
  it('keeps the spaces before comments, quoting and blank lines; block turns get block expectations', () => {
    const text = [
      '# keep this comment',
      "agent: 'clinic.yaml'    # and this one, four spaces before it",
      '',
      'scenarios:',
      '  - name: "first"   # three',
      '    turns:',
      '      - caller: hi   # greet',
      '',
      '      # the next turn',
      '      - caller: "Priya Sharma"',
      '        expect: {   step: name }',
      '      - caller: |',
      '          yes',
      '',
    ].join('\n');
    const out = update('block.test.yaml', text, [
      scenarioRun('first', [
        turnRun(1, 'Hello, your name?', 'name'),
        turnRun(2, 'That is Priya Sharma, right?', 'name'),
        turnRun(3, 'Got it: which day?', 'day', { patient_name: 'Priya Sharma' }),
      ]),
    ]);
    expect(out.message).toContain('recorded expectations for 2 turns and 1 scenario');
    expect(out.text).toBe(
      [
        '# keep this comment',
        "agent: 'clinic.yaml'    # and this one, four spaces before it",
        '',
        'scenarios:',
        '  - name: "first"   # three',
        '    turns:',
        '      - caller: hi   # greet',
        '        expect:',
        '          reply_contains: Hello, your name?',
        '          step: name',
        '          layer: capture',
        '',
        '      # the next turn',
        '      - caller: "Priya Sharma"',
        '        expect: {   step: name }',
        '      - caller: |',
        '          yes',
        '        expect:',
        '          reply_contains: "Got it: which day?"',
        '          step: day',
        '          layer: capture',
        '          slots:',
        '            patient_name: Priya Sharma',
        '    expect:',
        '      outcome: abandoned',
        '      ended: false',
        '',
      ].join('\n'),
    );
  });

  it('writes into flow turns in flow style, and keeps a file without a final line end and with CRLF line ends', () => {
    const text = 'agent: clinic.yaml  # x\r\nscenarios:\r\n  - name: a\r\n    turns: [{ caller: hi }, {caller: "yes",}]';
    const out = update('flow.test.yaml', text, [scenarioRun('a', [turnRun(1, 'Name, please?', 'name'), turnRun(2, 'Okay.', 'day')])]);
    expect(out.text).toBe(
      'agent: clinic.yaml  # x\r\nscenarios:\r\n  - name: a\r\n' +
        '    turns: [{ caller: hi, expect: { reply_contains: "Name, please?", step: name, layer: capture } }, ' +
        '{caller: "yes", expect: { reply_contains: Okay., step: day, layer: capture },}]\r\n' +
        '    expect:\r\n      outcome: abandoned\r\n      ended: false\r\n',
    );
    // The flow text parses back to the values recorded (a comma inside a flow scalar is quoted when it must be).
    const parsed = parseDocument(out.text!).toJS() as { scenarios: Array<{ turns: Array<{ expect: { reply_contains: string } }> }> };
    expect(parsed.scenarios[0]!.turns.map((t) => t.expect.reply_contains)).toEqual(['Name, please?', 'Okay.']);
  });

  it('a JSON scenario file stays JSON, its layout kept', () => {
    const text = '{\n  "agent": "clinic.yaml",\n  "scenarios": [\n    { "name": "a", "turns": [ { "caller": "hi" } ] }\n  ]\n}\n';
    const out = update('plain.test.json', text, [scenarioRun('a', [turnRun(1, 'Name, "please"?', 'name')])]);
    expect(out.text).toBe(
      '{\n  "agent": "clinic.yaml",\n  "scenarios": [\n    { "name": "a", "turns": [ { "caller": "hi", ' +
        '"expect": {"reply_contains":"Name, \\"please\\"?","step":"name","layer":"capture"} } ], ' +
        '"expect": {"outcome":"abandoned","ended":false} }\n  ]\n}\n',
    );
    expect(() => JSON.parse(out.text!)).not.toThrow();
  });

  it('a turn written as an alias is left as it is, and said so', () => {
    const text = 'agent: clinic.yaml\nscenarios:\n  - name: a\n    turns:\n      - &hi { caller: hi }\n      - *hi\n';
    const out = update('alias.test.yaml', text, [scenarioRun('a', [turnRun(1, 'Name?', 'name'), turnRun(2, 'Name?', 'name')])]);
    expect(out.message).toContain('recorded expectations for 1 turn and 1 scenario');
    expect(out.message).toContain('1 turn or scenario written as aliases (*name) left as they were');
    expect(out.text).toBe(
      'agent: clinic.yaml\nscenarios:\n  - name: a\n    turns:\n' +
        '      - &hi { caller: hi, expect: { reply_contains: Name?, step: name, layer: capture } }\n      - *hi\n' +
        '    expect:\n      outcome: abandoned\n      ended: false\n',
    );
  });

  it('insertKeys refuses a path that leads to no mapping, or to a key already there', () => {
    const text = 'a: [1]\nb: { c: 1 }\n';
    const doc = parseDocument(text);
    expect(insertKeys(text, doc, [{ path: ['a'], key: 'x', value: { y: 1 } }], false)).toBeNull();
    expect(insertKeys(text, doc, [{ path: ['b'], key: 'c', value: { y: 1 } }], false)).toBeNull();
    expect(insertKeys(text, doc, [{ path: ['b'], key: 'd', value: { y: 1 } }], false)).toBe('a: [1]\nb: { c: 1, d: { y: 1 } }\n');
  });
});
