/**
 * Loading agent workflow files (docs/agents.md) for `vagent agent apply`: YAML or JSON, checked
 * locally with {@link parseAgentDefinition} before anything is sent, with every problem placed
 * at its line and column (`agents/clinic.yaml:31:30: steps[2].capture.type: …`).
 *
 * Positions come from the `yaml` package's CST: a zod issue path is walked down the parsed
 * document to the node it names. JSON files are read with `JSON.parse` (strict JSON) and
 * located through the same YAML parse, since YAML 1.2 is a superset of JSON.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isMap, isScalar, isSeq, LineCounter, parseDocument, type Document, type Node } from 'yaml';
import { AGENT_FILE_EXTENSIONS, formatIssuePath, isAgentFileName, parseAgentDefinition, type AgentDefinition } from '../domain/agent.js';
import { contextWarnings } from '../engine/context-needs.js';

export { AGENT_FILE_EXTENSIONS };

/** A field path as zod reports it: `['steps', 2, 'capture', 'type']`. */
export type FieldPath = (string | number)[];

/** One problem in an agent file. */
export interface AgentFileProblem {
  /** The file as named on the command line (or joined to its directory). */
  file: string;
  /** 1-based position; absent when the file could not be read at all. */
  line?: number;
  col?: number;
  /** The field (`steps[2].capture.type`); absent for file-level problems (syntax, unreadable). */
  field?: string;
  message: string;
  /**
   * True when the path itself failed: missing, unreadable, or a directory without agent files.
   * `vagent agent apply` exits 2 for those (a file it cannot read), 1 for a file it read and refused.
   */
  unreadable?: true;
}

/** A file that passed local validation. */
export interface ValidAgentFile {
  ok: true;
  file: string;
  /** The agent id (`ag_…`). */
  id: string;
  /** The value as written in the file: what is sent to the daemon. */
  source: unknown;
  /** The validated definition, with defaults applied. */
  agent: AgentDefinition;
  /** A problem placed at `field` (e.g. a `param` the daemon rejected), located in this file. */
  problemAt(field: string | FieldPath, message: string): AgentFileProblem;
  /**
   * What is valid but likely a mistake, located like problems: a `{{context.x}}` neither in
   * `required_context` nor in `context_defaults` (engine/context-needs.ts). Not a reason to refuse.
   */
  warnings: AgentFileProblem[];
}

/** A file that failed: unreadable, not YAML/JSON, or not a valid agent. */
export interface InvalidAgentFile {
  ok: false;
  file: string;
  /** At least one; sorted by position. */
  problems: AgentFileProblem[];
}

/** The outcome of loading one agent file. */
export type AgentFile = ValidAgentFile | InvalidAgentFile;

/** Where a problem is: `FILE:LINE:COL`, or `FILE` when the file could not be read. */
export function problemLocation(p: AgentFileProblem): string {
  return p.line === undefined ? p.file : `${p.file}:${p.line}:${p.col ?? 1}`;
}

/** What a problem is: `field: message`, or the message alone for file-level problems. */
export function problemDetail(p: AgentFileProblem): string {
  return p.field === undefined ? p.message : `${p.field}: ${p.message}`;
}

/** `FILE:LINE:COL: field: message` (parts that are unknown are left out). */
export function formatProblem(p: AgentFileProblem): string {
  return `${problemLocation(p)}: ${problemDetail(p)}`;
}

/** The inverse of {@link formatIssuePath}: `steps[2].capture.type` → `['steps', 2, 'capture', 'type']`. */
export function parseFieldPath(field: string): FieldPath {
  if (field === '' || field === '(root)') return [];
  const out: FieldPath = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) out.push(m[2] === undefined ? m[1]! : Number(m[2]));
  return out;
}

const READ_ERRORS: Record<string, string> = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'is a directory',
  ENOTDIR: 'not a directory',
};

/** A short reason for a filesystem error (`permission denied`), without the errno noise. */
export function readError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  return `cannot read: ${(code && READ_ERRORS[code]) ?? (err as Error).message}`;
}

/** Where a node's text starts; null for an empty value (`ask:` with nothing after it). */
function startOf(node: unknown): number | null {
  if (!node || typeof node !== 'object' || !('range' in node)) return null;
  const range = (node as Node).range;
  if (!range) return null;
  if (isScalar(node) && node.value === null && range[0] === range[1]) return null;
  return range[0];
}

/**
 * The offset of the node a field path names, or of its nearest existing ancestor (a missing
 * field is reported where its parent starts). With `key`, the offset of that key in the map
 * the path names (for unknown keys). Scenario files (agent-test/scenario-file.ts) are located the same way.
 */
export function offsetOf(doc: Document, field: FieldPath, key?: string): number {
  let node: unknown = doc.contents;
  let offset = startOf(node) ?? 0;
  const segs = key === undefined ? field : [...field, key];
  for (const [i, seg] of segs.entries()) {
    let next: unknown;
    let keyNode: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => String(isScalar(p.key) ? p.key.value : p.key) === String(seg));
      if (!pair) break;
      next = pair.value;
      keyNode = pair.key;
    } else if (isSeq(node) && typeof seg === 'number') {
      next = node.items[seg];
      if (next === undefined) break;
    } else {
      break;
    }
    const start = key !== undefined && i === segs.length - 1 ? startOf(keyNode) : (startOf(next) ?? startOf(keyNode));
    if (start !== null) offset = start;
    node = next;
  }
  return offset;
}

/** Rewords zod's wording where it reads badly in a file (`received undefined`/`null` → missing). */
export function reword(message: string): string {
  const missing = /^Invalid input: expected (\w+), received (?:undefined|null)$/.exec(message);
  return missing ? `missing (expected ${missing[1]})` : message;
}

/** Parses JSON strictly; on failure returns the message and the offset the parser names. */
export function parseJson(text: string): { value: unknown } | { error: string; offset: number } {
  try {
    return { value: JSON.parse(text) as unknown };
  } catch (err) {
    const message = (err as Error).message;
    const at = /at position (\d+)/.exec(message);
    return {
      error: message.replace(/ in JSON at position \d+.*$/s, '').replace(/^JSON\.parse: /, ''),
      offset: at ? Number(at[1]) : 0,
    };
  }
}

/** A file's text parsed with positions ({@link parseLocated}). */
export type LocatedSource =
  | {
      ok: true;
      /** The file's value: strict JSON for a `.json` file, else YAML. */
      source: unknown;
      /** The file parsed as YAML (a superset of JSON): its nodes carry the positions. */
      doc: Document;
      /** Where `field` (and its key `key`) is, 1-based. */
      locate: (field: FieldPath, key?: string) => { line: number; col: number };
    }
  | { ok: false; problems: AgentFileProblem[] };

/** `problems` in file order. */
export function sortProblems(problems: AgentFileProblem[]): AgentFileProblem[] {
  return problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.col ?? 0) - (b.col ?? 0));
}

/**
 * Parses the text of an agent or scenario file with positions: `invalid JSON` / `invalid YAML`
 * at their place, or `the file is empty`, as problems. Pure.
 * @param file the name used in problems; a `.json` ending selects strict JSON parsing
 */
export function parseLocated(file: string, text: string): LocatedSource {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const pos = (offset: number) => lineCounter.linePos(offset);
  const fail = (problems: AgentFileProblem[]): LocatedSource => ({ ok: false, problems: sortProblems(problems) });
  let source: unknown;
  if (file.toLowerCase().endsWith('.json')) {
    const parsed = parseJson(text);
    if ('error' in parsed) return fail([{ file, ...pos(parsed.offset), message: `invalid JSON: ${parsed.error}` }]);
    source = parsed.value;
  } else {
    if (doc.errors.length > 0) {
      return fail(
        doc.errors.map((e) => ({
          file,
          ...pos(e.pos[0]),
          message: `invalid YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`,
        })),
      );
    }
    try {
      source = doc.toJS({ maxAliasCount: 100 });
    } catch (err) {
      return fail([{ file, line: 1, col: 1, message: `invalid YAML: ${(err as Error).message}` }]);
    }
  }
  if (source === null || source === undefined) return fail([{ file, line: 1, col: 1, message: 'the file is empty' }]);
  return { ok: true, source, doc, locate: (field, key) => pos(doc.errors.length > 0 ? 0 : offsetOf(doc, field, key)) };
}

/**
 * The problems of zod `issues` at their places: each unknown key at the key itself, every other
 * issue at its field with `messageOf(issue)`.
 */
export function issueProblems(
  file: string,
  issues: readonly { path: FieldPath; message: string }[],
  locate: (field: FieldPath, key?: string) => { line: number; col: number },
  messageOf: (issue: { path: FieldPath; message: string }) => string,
): AgentFileProblem[] {
  const problems: AgentFileProblem[] = [];
  for (const issue of issues) {
    const unknown = /^Unrecognized keys?: (.+)$/.exec(issue.message);
    if (unknown) {
      for (const m of unknown[1]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)) {
        problems.push({ file, ...locate(issue.path, m[1]!), field: formatIssuePath([...issue.path, m[1]!]), message: 'unknown key' });
      }
      continue;
    }
    problems.push({ file, ...locate(issue.path), field: formatIssuePath(issue.path), message: messageOf(issue) });
  }
  return problems;
}

/**
 * Parses and validates the text of one agent file. Pure: the caller reads the file.
 * @param file the name used in problems; a `.json` ending selects strict JSON parsing
 * @param text the file's contents
 */
export function parseAgentSource(file: string, text: string): AgentFile {
  const located = parseLocated(file, text);
  if (!located.ok) return { ok: false, file, problems: located.problems };
  const { source, locate } = located;
  const result = parseAgentDefinition(source);
  if (!result.ok) return { ok: false, file, problems: sortProblems(issueProblems(file, result.issues, locate, (i) => reword(i.message))) };
  const problemAt = (field: string | FieldPath, message: string): AgentFileProblem => {
    const p = typeof field === 'string' ? parseFieldPath(field) : field;
    return { file, ...locate(p), field: formatIssuePath(p), message };
  };
  return {
    ok: true,
    file,
    id: result.agent.id,
    source,
    agent: result.agent,
    problemAt,
    warnings: contextWarnings(result.agent).map((w) => problemAt(w.path, w.message)),
  };
}

/** Reads and validates one agent file; never throws (an unreadable file is a problem). */
export function loadAgentFile(file: string): AgentFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, file, problems: [{ file, message: readError(err), unreadable: true }] };
  }
  return parseAgentSource(file, text);
}

/**
 * Expands `-f` arguments: a directory stands for its `.yaml`, `.yml` and `.json` files (not
 * recursive), sorted by name; a file stands for itself, whatever its ending.
 * @returns the files in order, and a problem for each argument that is missing or holds no agent files
 */
export function expandAgentPaths(paths: string[]): { files: string[]; problems: AgentFileProblem[] } {
  const files: string[] = [];
  const problems: AgentFileProblem[] = [];
  for (const p of paths) {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(p);
    } catch (err) {
      problems.push({ file: p, message: readError(err), unreadable: true });
      continue;
    }
    if (!stat.isDirectory()) {
      files.push(p);
      continue;
    }
    let names: string[];
    try {
      names = fs.readdirSync(p);
    } catch (err) {
      problems.push({ file: p, message: readError(err), unreadable: true });
      continue;
    }
    const found = names
      .filter(isAgentFileName)
      .sort()
      .map((n) => path.join(p, n))
      .filter((f) => fs.statSync(f, { throwIfNoEntry: false })?.isDirectory() !== true);
    if (found.length === 0)
      problems.push({ file: p, message: `no ${AGENT_FILE_EXTENSIONS.join(', ')} files in this directory`, unreadable: true });
    files.push(...found);
  }
  return { files, problems };
}

/**
 * Loads every agent file the `-f` arguments name, in order. An agent id defined by two files
 * is a problem of the later one (applying both would silently keep only the last).
 * @returns one entry per file, and the problems of arguments that named no readable file
 */
export function loadAgentFiles(paths: string[]): { files: AgentFile[]; problems: AgentFileProblem[] } {
  const { files, problems } = expandAgentPaths(paths);
  const seen = new Map<string, string>();
  const loaded = files.map((file): AgentFile => {
    const f = loadAgentFile(file);
    if (!f.ok) return f;
    const first = seen.get(f.id);
    if (first !== undefined) return { ok: false, file, problems: [f.problemAt(['id'], `${f.id} is also defined in ${first}`)] };
    seen.set(f.id, file);
    return f;
  });
  return { files: loaded, problems };
}
