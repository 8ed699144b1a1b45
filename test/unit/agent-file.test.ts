/**
 * Agent files for `vagent agent apply` (src/cli/agent-file.ts): zod issues placed at the
 * line and column of the YAML or JSON node they name; directories; unreadable files.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  expandAgentPaths,
  formatProblem,
  loadAgentFile,
  loadAgentFiles,
  parseAgentSource,
  parseFieldPath,
  type AgentFile,
  type InvalidAgentFile,
} from '../../src/cli/agent-file.js';

const VALID = `id: ag_clinic_booking
name: Clinic appointment booking
direction: inbound
language: en-IN
opening:
  - text: "Namaste, this is Sunrise Clinic."
  - text: "May I have your name?"
    requires_user_input: true
steps:
  - id: name
    ask: "May I have your name?"
    capture: { slot: patient_name, type: person_name }
  - id: phone
    ask: "What is your mobile number?"
    capture: { slot: phone, type: digits, min_length: 10, max_length: 10 }
    confirm: digits
closing: "Thank you, see you soon. Goodbye!"
`;

const dirs: string[] = [];
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'vagent-agent-file-'));
  dirs.push(d);
  return d;
}
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

function invalid(f: AgentFile): InvalidAgentFile {
  if (f.ok) throw new Error(`expected problems in ${f.file}`);
  return f;
}

/** `LINE:COL field: message` of each problem, for compact expectations. */
const where = (f: AgentFile) => invalid(f).problems.map((p) => `${p.line}:${p.col} ${p.field ?? ''}`.trim());

describe('parseAgentSource (YAML)', () => {
  it('accepts a valid agent and keeps the source as written', () => {
    const f = parseAgentSource('clinic.yaml', VALID);
    expect(f.ok).toBe(true);
    if (!f.ok) return;
    expect(f.id).toBe('ag_clinic_booking');
    expect(f.agent.steps[1]!.max_attempts).toBe(2);
    expect((f.source as { steps: unknown[] }).steps[1]).not.toHaveProperty('max_attempts');
  });

  it('places a wrong type in steps[1] at the value in a flow mapping', () => {
    const text = VALID.replace('type: digits', 'type: phone_number');
    const col = text.split('\n')[14]!.indexOf('phone_number') + 1;
    const [p] = invalid(parseAgentSource('clinic.yaml', text)).problems;
    expect(p).toMatchObject({ file: 'clinic.yaml', line: 15, col, field: 'steps[1].capture.type' });
    expect(p!.message).toMatch(/^Invalid option: expected one of .*"digits"/);
    expect(formatProblem(p!)).toMatch(new RegExp(`^clinic\\.yaml:15:${col}: steps\\[1\\]\\.capture\\.type: Invalid option`));
  });

  it('places a missing field where its parent mapping starts, and says it is missing', () => {
    const f = parseAgentSource('clinic.yaml', VALID.replace('    ask: "What is your mobile number?"\n', ''));
    expect(invalid(f).problems).toEqual([
      { file: 'clinic.yaml', line: 13, col: 5, field: 'steps[1].ask', message: 'missing (expected string)' },
    ]);
  });

  it('places an empty value at its key', () => {
    const f = parseAgentSource('clinic.yaml', VALID.replace('ask: "What is your mobile number?"', 'ask:'));
    expect(where(f)).toEqual(['14:5 steps[1].ask']);
  });

  it('places each unknown top-level key at the key itself', () => {
    const f = parseAgentSource('clinic.yaml', `${VALID}colour: blue\nvoice_speed: 2\n`);
    expect(invalid(f).problems.map(formatProblem)).toEqual([
      'clinic.yaml:18:1: colour: unknown key',
      'clinic.yaml:19:1: voice_speed: unknown key',
    ]);
  });

  it('reports every problem of a file, sorted by position', () => {
    const text = VALID.replace('direction: inbound', 'direction: sideways').replace('id: name', 'id: Name') + 'extra: 1\n';
    expect(where(parseAgentSource('clinic.yaml', text))).toEqual(['3:12 direction', '10:9 steps[0].id', '18:1 extra']);
  });

  it('reports YAML syntax errors at their position, without validating', () => {
    const f = parseAgentSource('broken.yaml', 'id: ag_x\nname: a: b\n');
    const [p] = invalid(f).problems;
    expect(p).toMatchObject({ file: 'broken.yaml', line: 2, col: 7 });
    expect(p!.field).toBeUndefined();
    expect(p!.message).toMatch(/^invalid YAML: /);
    expect(where(parseAgentSource('dup.yaml', 'id: ag_x\nid: ag_y\n'))).toEqual(['2:1']);
  });

  it('says so for an empty file, and for a root that is not a mapping', () => {
    expect(invalid(parseAgentSource('empty.yaml', '# nothing\n')).problems[0]!.message).toBe('the file is empty');
    expect(invalid(parseAgentSource('list.yaml', '- a\n- b\n')).problems[0]).toMatchObject({ line: 1, col: 1, field: '(root)' });
  });
});

describe('parseAgentSource (JSON)', () => {
  const json = JSON.stringify(
    {
      id: 'ag_emi',
      name: 'EMI',
      direction: 'outbound',
      language: 'hi-IN',
      opening: [{ text: 'Namaste' }],
      steps: [{ id: 'paid', ask: 'Kya aapne EMI bhari?', capture: { slot: 'paid', type: 'yes_or_no' } }],
      closing: 'Dhanyavaad',
    },
    null,
    2,
  );

  it('locates issues in a JSON file through the same document positions', () => {
    const f = parseAgentSource('emi.json', json);
    const line = json.split('\n').findIndex((l) => l.includes('"yes_or_no"')) + 1;
    const col = json.split('\n')[line - 1]!.indexOf('"yes_or_no"') + 1;
    expect(invalid(f).problems).toHaveLength(1);
    expect(invalid(f).problems[0]).toMatchObject({ line, col, field: 'steps[0].capture.type' });
  });

  it('accepts valid JSON and reports invalid JSON at the parser position', () => {
    expect(parseAgentSource('emi.json', json.replace('yes_or_no', 'yes_no')).ok).toBe(true);
    const f = parseAgentSource('emi.json', '{\n  "id": "ag_emi",\n}\n');
    expect(invalid(f).problems[0]).toMatchObject({ line: 3, col: 1 });
    expect(invalid(f).problems[0]!.message).toMatch(/^invalid JSON: /);
  });

  it('a valid file places a field the daemon rejected (problemAt)', () => {
    const f = parseAgentSource('emi.json', json.replace('yes_or_no', 'yes_no'));
    if (!f.ok) throw new Error('expected valid');
    const p = f.problemAt('steps[0].capture.slot', 'invalid_request: no');
    expect(formatProblem(p)).toMatch(/^emi\.json:\d+:\d+: steps\[0\]\.capture\.slot: invalid_request: no$/);
    expect(p.line).toBe(json.split('\n').findIndex((l) => l.includes('"slot"')) + 1);
  });
});

describe('files and directories', () => {
  it('a directory stands for its .yaml, .yml and .json files, sorted; other files are left out', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'b.yml'), VALID.replace('ag_clinic_booking', 'ag_b'));
    fs.writeFileSync(path.join(d, 'a.json'), '{}');
    fs.writeFileSync(path.join(d, 'c.yaml'), VALID.replace('ag_clinic_booking', 'ag_c'));
    fs.writeFileSync(path.join(d, 'README.md'), '# agents');
    fs.mkdirSync(path.join(d, 'sub.yaml'));
    const { files, problems } = expandAgentPaths([d]);
    expect(problems).toEqual([]);
    expect(files.map((f) => path.basename(f))).toEqual(['a.json', 'b.yml', 'c.yaml']);

    const loaded = loadAgentFiles([d]);
    expect(loaded.files.map((f) => [path.basename(f.file), f.ok])).toEqual([
      ['a.json', false],
      ['b.yml', true],
      ['c.yaml', true],
    ]);
  });

  it('an empty directory and a missing path are problems, not exceptions', () => {
    const d = tmp();
    const missing = path.join(d, 'nope.yaml');
    const { files, problems } = expandAgentPaths([d, missing]);
    expect(files).toEqual([]);
    expect(problems.map(formatProblem)).toEqual([
      `${d}: no .yaml, .yml, .json files in this directory`,
      `${missing}: cannot read: no such file or directory`,
    ]);
  });

  it('an unreadable file is reported with a short reason, not an errno dump', () => {
    const d = tmp();
    const file = path.join(d, 'agent.yaml');
    fs.writeFileSync(file, VALID);
    expect(invalid(loadAgentFile(d)).problems.map(formatProblem)).toEqual([`${d}: cannot read: is a directory`]);
    const under = path.join(file, 'child.yaml');
    expect(invalid(loadAgentFile(under)).problems.map(formatProblem)).toEqual([`${under}: cannot read: not a directory`]);
    expect(loadAgentFile(file).ok).toBe(true);
  });

  it('an agent id defined by two files is a problem of the later one', () => {
    const d = tmp();
    fs.writeFileSync(path.join(d, 'one.yaml'), VALID);
    fs.writeFileSync(path.join(d, 'two.yaml'), VALID);
    const { files } = loadAgentFiles([d]);
    expect(files[0]!.ok).toBe(true);
    expect(invalid(files[1]!).problems.map(formatProblem)).toEqual([
      `${path.join(d, 'two.yaml')}:1:5: id: ag_clinic_booking is also defined in ${path.join(d, 'one.yaml')}`,
    ]);
  });
});

describe('parseFieldPath', () => {
  it('is the inverse of the issue path format', () => {
    expect(parseFieldPath('steps[2].capture.type')).toEqual(['steps', 2, 'capture', 'type']);
    expect(parseFieldPath('opening[0]')).toEqual(['opening', 0]);
    expect(parseFieldPath('(root)')).toEqual([]);
  });
});
