/**
 * Loading scenario files of `vagent agent test` (docs/agent-tests.md): YAML (or JSON), checked
 * with the scenario schema (src/domain/agent-scenario.ts), every problem placed at its
 * `FILE:LINE:COL` as in agent files (src/cli/agent-file.ts), and the agent file it names loaded
 * from disk — relative to the scenario file, so an edit to the agent is tested before it is applied.
 *
 * The parsed YAML document is kept: `--update` writes expectations back into it, comments and
 * formatting kept (agent-test/update.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Document } from 'yaml';
import { formatIssuePath } from '../../domain/agent.js';
import { parseScenarioFile, type ScenarioFile } from '../../domain/agent-scenario.js';
import {
  issueProblems,
  loadAgentFile,
  parseFieldPath,
  parseLocated,
  readError,
  sortProblems,
  reword,
  type AgentFileProblem,
  type FieldPath,
  type ValidAgentFile,
} from '../agent-file.js';

/** The largest scenario file read, in bytes: a scenario file is text written by hand. */
export const MAX_SCENARIO_FILE_BYTES = 1024 * 1024;

/** A scenario file that validated, with the agent file it tests. */
export interface LoadedScenarioFile {
  ok: true;
  /** The file as named on the command line (or joined to its directory). */
  file: string;
  scenarios: ScenarioFile;
  /** The agent file `agent:` names, validated (its path is `agent.file`). */
  agent: ValidAgentFile;
  /** The YAML document, for `--update`. */
  doc: Document;
  /** The file's text as read: `--update` refuses to write when the file changed since. */
  text: string;
  /** A path in this file's directory (`audio:` files), as the scenario names it. */
  resolve(relative: string): string;
  /** A problem placed at `field` in this file. */
  problemAt(field: string | FieldPath, message: string): AgentFileProblem;
}

/** A scenario file that did not validate (or whose agent file did not). */
export interface InvalidScenarioFile {
  ok: false;
  file: string;
  /** At least one; the agent file's own problems name that file. */
  problems: AgentFileProblem[];
  /** True when the scenario file itself is sound and only the agent file it names is not. */
  agentFileOnly?: true;
}

/** The outcome of loading one scenario file. */
export type ScenarioFileResult = LoadedScenarioFile | InvalidScenarioFile;

/** Reads a file as UTF-8 text when it is a regular file of at most `max` bytes; else a problem. */
function readBounded(file: string, max: number): { text: string } | { problem: AgentFileProblem } {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch (err) {
    return { problem: { file, message: readError(err), unreadable: true } };
  }
  if (!stat.isFile()) return { problem: { file, message: 'cannot read: not a regular file', unreadable: true } };
  if (stat.size > max) return { problem: { file, message: `cannot read: larger than ${max} bytes`, unreadable: true } };
  try {
    return { text: fs.readFileSync(file, 'utf8') };
  } catch (err) {
    return { problem: { file, message: readError(err), unreadable: true } };
  }
}

/** True when the key `field` ends with is absent from the object the rest of it leads to. */
function isMissing(source: unknown, field: readonly PropertyKey[]): boolean {
  let parent = source;
  for (const key of field.slice(0, -1)) parent = (parent as Record<PropertyKey, unknown> | null)?.[key];
  const last = field[field.length - 1];
  return last !== undefined && typeof parent === 'object' && parent !== null && !Object.hasOwn(parent, last);
}

/**
 * An agent file given where a scenario file belongs (an easy mistake: `vagent agent test
 * config/agents/`): the one-line problem that says so and where scenario files are, else null.
 * An agent file has an `id` and neither `agent` nor `scenarios` (docs/agent-tests.md).
 */
function agentFileMistake(file: string, source: unknown): string | null {
  if (typeof source !== 'object' || source === null || Array.isArray(source)) return null;
  if (!Object.hasOwn(source, 'id') || Object.hasOwn(source, 'agent') || Object.hasOwn(source, 'scenarios')) return null;
  const tests = path.join(path.dirname(file), 'tests');
  const where = fs.statSync(tests, { throwIfNoEntry: false })?.isDirectory()
    ? `scenarios are in ${tests}${path.sep}`
    : 'a scenario file names its agent file with agent:';
  return `this is an agent file, not a scenario file (${where}; docs/agent-tests.md)`;
}

/**
 * Parses and validates the text of one scenario file, then loads the agent file it names.
 * @param file the name used in problems; relative paths inside the file are resolved from its directory
 */
export function parseScenarioSource(file: string, text: string): ScenarioFileResult {
  const fail = (problems: AgentFileProblem[]): InvalidScenarioFile => ({ ok: false, file, problems: sortProblems(problems) });
  const located = parseLocated(file, text);
  if (!located.ok) return fail(located.problems);
  const { source, doc, locate } = located;
  const problemAt = (field: string | FieldPath, message: string): AgentFileProblem => {
    const p = typeof field === 'string' ? parseFieldPath(field) : field;
    return { file, ...locate(p), field: formatIssuePath(p), message };
  };
  const agentFile = agentFileMistake(file, source);
  if (agentFile !== null) return fail([{ file, line: 1, col: 1, message: agentFile }]);
  const result = parseScenarioFile(source);
  if (!result.ok) {
    return fail(issueProblems(file, result.issues, locate, (i) => (isMissing(source, i.path) ? 'required' : reword(i.message))));
  }

  const dir = path.dirname(file);
  const resolve = (relative: string) => (path.isAbsolute(relative) ? relative : path.join(dir, relative));
  const agentPath = resolve(result.file.agent);
  const read = readBounded(agentPath, MAX_SCENARIO_FILE_BYTES);
  if ('problem' in read) return fail([problemAt(['agent'], `${agentPath}: ${read.problem.message}`)]);
  const agent = loadAgentFile(agentPath);
  if (!agent.ok) {
    return { ...fail([problemAt(['agent'], `${agentPath} is not a valid agent file`), ...agent.problems]), agentFileOnly: true };
  }
  return { ok: true, file, scenarios: result.file, agent, doc, text, resolve, problemAt };
}

/** Reads and validates one scenario file and its agent file; never throws (an unreadable file is a problem). */
export function loadScenarioFile(file: string): ScenarioFileResult {
  const read = readBounded(file, MAX_SCENARIO_FILE_BYTES);
  if ('problem' in read) return { ok: false, file, problems: [read.problem] };
  return parseScenarioSource(file, read.text);
}
