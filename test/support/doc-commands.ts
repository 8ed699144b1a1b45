/**
 * The shell commands the README and docs/*.md show: every fenced ```sh block, cut into the
 * commands a shell would run one after another (a line continued with `\`, or a quote left
 * open, goes on to the next line; comments and blank lines are dropped).
 *
 * Only the command boundaries are worked out here; the words of each command are left to bash
 * itself when the command is run (test/cli/docs-commands.test.ts).
 */
import fs from 'node:fs';
import path from 'node:path';

/** One command of a fenced `sh` block. */
export interface DocCommand {
  /** The file, relative to the repository: `README.md`, `docs/media.md`. */
  file: string;
  /** 1-based line of the command's first line in that file. */
  line: number;
  /** The command as a shell reads it, continuation lines included, comments dropped. */
  text: string;
}

/** The fences whose blocks are shell commands. */
const SHELL_FENCE = /^(\s*)```(?:sh|bash|shell)\s*$/;
const FENCE_END = /^\s*```\s*$/;

/**
 * Cuts a block's lines into commands. Tracks single and double quotes and `#` comments (a `#`
 * at the start of a word, outside quotes) the way a POSIX shell does (XCU 2.2, 2.3).
 * @param first 1-based line number of `lines[0]` in the file
 */
export function splitCommands(file: string, lines: string[], first: number): DocCommand[] {
  const out: DocCommand[] = [];
  let text = '';
  let start = -1;
  let quote: '' | "'" | '"' = '';
  lines.forEach((raw, i) => {
    let kept = '';
    for (let j = 0; j < raw.length; j++) {
      const c = raw[j]!;
      if (quote === "'") {
        kept += c;
        if (c === "'") quote = '';
        continue;
      }
      if (quote === '"') {
        kept += c;
        if (c === '\\' && j + 1 < raw.length) kept += raw[++j]!;
        else if (c === '"') quote = '';
        continue;
      }
      if (c === '#' && (j === 0 || /\s/.test(raw[j - 1]!))) break;
      if (c === '\\' && j + 1 < raw.length) {
        kept += c + raw[++j]!;
        continue;
      }
      if (c === "'" || c === '"') quote = c;
      kept += c;
    }
    if (quote === '' && kept.trim() === '' && text === '') return;
    if (start < 0) start = first + i;
    const continued = quote === '' && /\\\s*$/.test(kept);
    // A continued line joins the next with a space (the shell drops `\` and the newline); a
    // quote left open keeps its newline, which is part of the quoted word.
    text += continued ? `${kept.replace(/\\\s*$/, '')} ` : quote !== '' ? `${kept}\n` : kept;
    if (quote === '' && !continued) {
      out.push({ file, line: start, text: text.replace(/\s+$/, '').replace(/^\s+/, '') });
      text = '';
      start = -1;
    }
  });
  if (text.trim() !== '') out.push({ file, line: start, text: text.trim() });
  return out;
}

/** Every command of every fenced `sh` block of `file` (relative to `root`), in order. */
export function docCommands(root: string, file: string): DocCommand[] {
  const lines = fs.readFileSync(path.join(root, file), 'utf8').split('\n');
  const out: DocCommand[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = SHELL_FENCE.exec(lines[i]!);
    if (!open) continue;
    const indent = open[1]!.length;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length && !FENCE_END.test(lines[j]!); j++)
      body.push(lines[j]!.slice(Math.min(indent, /^\s*/.exec(lines[j]!)![0].length)));
    out.push(...splitCommands(file, body, i + 2));
    i = j;
  }
  return out;
}

/** The README, then docs/*.md by name: the files whose commands are checked. */
export function docFiles(root: string): string[] {
  const docs = fs
    .readdirSync(path.join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}
