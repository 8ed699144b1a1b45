/**
 * Adding keys to the mappings of a YAML (or JSON) file by inserting text, every other character
 * of the file kept as written: comments, the spaces before them, quoting, blank lines and flow
 * or block style. Printing a `yaml` Document again would reformat all of these (one space before
 * a comment, its own quoting), so `vagent agent test --update` (docs/agent-tests.md "Recording
 * expectations") writes its expectations this way.
 *
 * Positions are the `range` offsets the `yaml` package gives each node ([start, value end, node
 * end], in UTF-16 code units of the text: https://eemeli.org/yaml/#nodes).
 */
import { Document, isMap, type YAMLMap } from 'yaml';

/** A key to add, with its value, to the mapping at `path` of the parsed file. */
export interface KeyAddition {
  /** Keys and indexes from the document's root to the mapping. */
  path: readonly (string | number)[];
  /** A key the mapping does not have. */
  key: string;
  /** A map of plain data (strings, numbers, booleans, maps of them). */
  value: Record<string, unknown>;
}

/** One piece of text to insert at `at`. */
interface Insertion {
  at: number;
  text: string;
}

/** The value as a flow mapping: JSON in a JSON file, else YAML's own flow style. */
function flowValue(value: Record<string, unknown>, json: boolean): string {
  if (json) return JSON.stringify(value);
  const doc = new Document(value);
  (doc.contents as YAMLMap).flow = true;
  return doc.toString({ lineWidth: 0 }).trimEnd();
}

/** The column of offset `at` in `text` (0-based). */
function columnOf(text: string, at: number): number {
  return at - (text.lastIndexOf('\n', at - 1) + 1);
}

/**
 * Where a key added to `map` goes, and its text: inside a flow mapping after its last value
 * (`{ caller: hi }` → `{ caller: hi, expect: {…} }`); after the last line of a block mapping, at
 * the column of its keys, the value as a block two columns further in.
 */
function insertionFor(text: string, map: YAMLMap, addition: KeyAddition, json: boolean, eol: string): Insertion | null {
  const range = map.range;
  if (!range) return null;
  if (map.flow) {
    const last = map.items.at(-1);
    const key = json ? JSON.stringify(addition.key) : addition.key;
    const entry = `${key}: ${flowValue(addition.value, json)}`;
    if (!last) return { at: range[0] + 1, text: ` ${entry} ` };
    const end =
      (last.value as { range?: [number, number, number] } | null)?.range?.[1] ??
      (last.key as { range?: [number, number, number] }).range?.[1];
    return end === undefined ? null : { at: end, text: `, ${entry}` };
  }
  const indent = ' '.repeat(columnOf(text, range[0]));
  const inner = `${indent}  `;
  const body = new Document(addition.value)
    .toString({ lineWidth: 0 })
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? '' : `${inner}${line}`));
  const lines = [`${indent}${addition.key}:`, ...body].join(eol) + eol;
  const end = range[1];
  if (end > 0 && text[end - 1] === '\n') return { at: end, text: lines };
  const nl = text.indexOf('\n', end);
  return nl < 0 ? { at: text.length, text: eol + lines } : { at: nl + 1, text: lines };
}

/**
 * `text` with each of `additions` written in, everything else as it was. Additions at one place
 * are written in the order given (a turn's key before its scenario's, when both end there).
 * @param doc  `text` parsed by the `yaml` package (positions kept: its default)
 * @param json true for a JSON file: what is added is JSON too
 * @returns the new text, or null when an addition's path does not lead to a mapping written in
 *   the file (an alias, a scalar)
 */
export function insertKeys(text: string, doc: Document, additions: readonly KeyAddition[], json: boolean): string | null {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const insertions: Insertion[] = [];
  for (const addition of additions) {
    const node = doc.getIn(addition.path, true);
    if (!isMap(node) || node.has(addition.key)) return null;
    const insertion = insertionFor(text, node, addition, json, eol);
    if (insertion === null) return null;
    insertions.push(insertion);
  }
  // Stable: equal offsets keep the order given.
  insertions.sort((a, b) => a.at - b.at);
  let out = '';
  let from = 0;
  for (const { at, text: piece } of insertions) {
    out += text.slice(from, at) + piece;
    from = at;
  }
  return out + text.slice(from);
}
