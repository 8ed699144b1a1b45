/**
 * All human and JSON output of the CLI goes through here. Colours obey
 * `NO_COLOR`/`FORCE_COLOR` and are off when stdout is not a terminal.
 */
import pc from 'picocolors';
import { ApiResponseError, DaemonUnreachableError } from '../client/index.js';
import { ApiError } from '../domain/errors.js';
import { boundedMessage, CliError, errorObject, InvalidValueError } from './errors.js';

// C0 controls, DEL and C1 controls (ECMA-48: ESC and CSI start the escape sequences a terminal
// obeys), the Unicode line and paragraph separators, and the bidirectional embeddings, overrides
// and isolates (Unicode UAX #9), which reorder what a terminal shows. Letters, marks, emoji and
// their joiners (U+200C, U+200D) are left alone.
// eslint-disable-next-line no-control-regex -- control characters are what this matches
export const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const SHORT_ESCAPES: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/**
 * Text from outside the CLI (a caller's words, an agent or scenario file, the daemon's answers)
 * made safe to print on a terminal: every control character is shown as an escape instead of
 * being obeyed — `\n`, `\r`, `\t`, and `\x1b` / `\u009b` for the others — so that no escape
 * sequence in it can recolour, move the cursor or retitle the operator's terminal. Hindi, emoji
 * and every other printable Unicode text stay as they are. JSON output needs none of this
 * (`JSON.stringify` escapes C0 controls).
 */
export function printable(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (c) =>
      SHORT_ESCAPES[c] ??
      (c.charCodeAt(0) < 0x100
        ? `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`
        : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  );
}

/** {@link printable} line by line: a message of several lines keeps its line breaks (a list of problems), each line escaped. */
export function printableLines(text: string): string {
  return boundedMessage(text).split('\n').map(printable).join('\n');
}

/** Most characters of a value {@link quoted} shows. */
export const QUOTE_MAX = 80;

/**
 * A value the operator gave, quoted for an error message: `"+91 80"`; a long one cut to its
 * first {@link QUOTE_MAX} characters and its length, `"aaaa…" (100000 characters)`, so that a
 * hostile value cannot flood the terminal or a log; control characters escaped ({@link printable}).
 * Every error that echoes a value quotes it through here.
 */
export function quoted(value: string, max = QUOTE_MAX): string {
  const chars = [...value];
  if (chars.length <= max) return `"${printable(value)}"`;
  return `"${printable(chars.slice(0, max).join(''))}…" (${chars.length} characters)`;
}

/** Writes a value as pretty JSON (the API's object as it is) on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Writes a line on stdout. */
export function say(line = ''): void {
  process.stdout.write(`${line}\n`);
}

/** Writes a hint line on stderr (so stdout stays clean for pipes). */
export function hint(line: string): void {
  process.stderr.write(`${pc.dim(line)}\n`);
}

/** Success line: a green tick and text. */
export function ok(line: string): void {
  say(`${pc.green('✔')} ${line}`);
}

/** Dims text (secondary columns). */
export const dim = (s: string): string => pc.dim(s);
/** Bold text (headings). */
export const bold = (s: string): string => pc.bold(s);

/** A column of a table: header and cell getter. */
export interface Column<T> {
  header: string;
  cell: (row: T) => string;
}

/**
 * Prints rows as an aligned, borderless table (like `kubectl get`), or `empty` when there
 * are no rows.
 */
export async function printTable<T>(rows: T[], columns: Column<T>[], empty: string): Promise<void> {
  if (rows.length === 0) {
    say(dim(empty));
    return;
  }
  const { default: Table } = await import('cli-table3');
  const table = new Table({
    head: columns.map((c) => c.header),
    chars: {
      top: '',
      'top-mid': '',
      'top-left': '',
      'top-right': '',
      bottom: '',
      'bottom-mid': '',
      'bottom-left': '',
      'bottom-right': '',
      left: '',
      'left-mid': '',
      mid: '',
      'mid-mid': '',
      right: '',
      'right-mid': '',
      middle: '  ',
    },
    style: { head: pc.isColorSupported ? ['bold'] : [], border: [], 'padding-left': 0, 'padding-right': 0 },
  });
  for (const row of rows) table.push(columns.map((c) => c.cell(row)));
  say(
    table
      .toString()
      .split('\n')
      .map((l) => l.trimEnd())
      .join('\n'),
  );
}

/** Prints `label: value` pairs aligned. */
export function printFields(fields: Array<[string, string]>): void {
  const width = Math.max(...fields.map(([k]) => k.length));
  for (const [k, v] of fields) say(`${dim(`${k}:`.padEnd(width + 1))} ${v}`);
}

/** An epoch-seconds timestamp as local `YYYY-MM-DD HH:MM`. */
export function formatTime(epochS: number): string {
  const d = new Date(epochS * 1000);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}`;
}

/**
 * `2026-11-01 00:00 Asia/Kolkata`: epoch seconds as a wall-clock time in IANA zone `timeZone`,
 * named, for a time the settings' zone defines (a purge cut-off given as a date).
 * @throws RangeError for an unknown zone
 */
export function formatTimeIn(epochS: number, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(epochS * 1000))
      .map((x) => [x.type, x.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute} ${timeZone}`;
}

/** `null`/empty shown as a dim dash; any other value is the daemon's, shown {@link printable}. */
export const orDash = (v: string | null | undefined): string => (v === null || v === undefined || v === '' ? dim('-') : printable(v));

/**
 * Prints an error on stderr: `error: <code>: <message>` for API errors and for values refused
 * before sending (README.md "Exit codes"), with a hint line where one helps. Local `vagent admin`
 * commands throw the services' {@link ApiError} directly; it is reported the same way.
 * @param json `--json`: one line `{"error": {code, message, param?}}` (the error object of
 *   docs/api-decisions.md "Errors"; the API's own for API errors, the same shape for local ones), no hint.
 */
export function printError(err: unknown, json = false): void {
  if (json) {
    process.stderr.write(`${JSON.stringify({ error: errorObject(err) })}\n`);
    return;
  }
  const red = (s: string) => pc.red(s);
  // Messages and hints may quote the daemon's or the operator's text: shown, never obeyed. The
  // CLI's own messages may be several lines (a list of bad settings): each line is shown so.
  const shown = (text: string, lines: boolean) => (lines ? printableLines(text) : printable(boundedMessage(text)));
  const line = (text: string, lines = false) => process.stderr.write(`${red('error:')} ${shown(text, lines)}\n`);
  const hintOf = (text: string) => hint(shown(text, true));
  if (err instanceof ApiResponseError || err instanceof ApiError) {
    const param = err.param && !err.message.startsWith(err.param) ? ` (${err.param})` : '';
    line(`${err.code}: ${err.message}${param}`);
    if (err.code === 'unauthorized') hint('hint: log in with `vagent login --url URL`, or set VAGENT_API_KEY');
  } else if (err instanceof DaemonUnreachableError) {
    line(err.message);
  } else if (err instanceof CliError) {
    const code = err instanceof InvalidValueError ? `${err.code}: ` : '';
    line(`${code}${err.message}`, true);
    if (err.hint) hintOf(err.hint);
  } else {
    const e = err as Error;
    line(e?.message ?? String(err));
    if (process.env.VAGENT_DEBUG && e?.stack) process.stderr.write(`${e.stack}\n`);
  }
}

/** Writes a value as one compact JSON line on stdout (JSON Lines, for streams such as `vagent chat --json`). */
export function printJsonLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/**
 * Writes a problem line on stderr (`agents/x.yaml:3:7: steps[0].ask: …`), the location in bold.
 * Both may quote a file's text: each line is shown {@link printable} (a parser's message may
 * span lines).
 */
export function problem(location: string, message: string): void {
  const shown = printableLines(message);
  process.stderr.write(`${pc.bold(printable(location))}: ${shown}\n`);
}

/** Failure line on stderr: a red cross and text. */
export function failed(line: string): void {
  process.stderr.write(`${pc.red('✘')} ${line}\n`);
}

/** Cyan text (the agent's side of a chat). */
export const accent = (s: string): string => pc.cyan(s);
/** Yellow text (marks: readback, FAQ answer). */
export const mark = (s: string): string => pc.yellow(s);

// Built on first use: loading the en-IN locale data costs ~25 ms, which every command would
// pay at start-up (`vagent trunk list` prints no money).
let paise: Intl.NumberFormat | undefined;
const paiseFormat = (): Intl.NumberFormat =>
  (paise ??= new Intl.NumberFormat('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 }));

/**
 * Money for people: rupees with paise and Indian digit grouping (`₹0.42`, `₹12,500.00`,
 * `₹1,25,000.00`); an amount above zero but under half a paisa is `<₹0.01`, so a cost is never
 * shown as free when it is not. `--json` keeps the API's exact numbers (docs/api-decisions.md "Costs").
 * @param value INR (a number as the API shows it); null/undefined count as 0
 */
export function rupees(value: number | null | undefined): string {
  const n = value ?? 0;
  if (n > 0 && n < 0.005) return '<₹0.01';
  if (n < 0 && n > -0.005) return '-<₹0.01';
  return n < 0 ? `-₹${paiseFormat().format(-n)}` : `₹${paiseFormat().format(n)}`;
}

/**
 * A count and its noun, singular for one: `1 turn`, `3 turns`, `0 calls`.
 * @param plural the plural form when it is not `singular` + `s`
 */
export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return `${count} ${count === 1 ? singular : pluralForm}`;
}

/** A duration in milliseconds for people: `12 ms`, `1.4 s`. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** A progress display started by {@link progressBar}. */
export interface Progress {
  /** Redraws the bar at `done` of `total`. */
  update(done: number, total: number): void;
  /** Erases the bar (call before printing the result line). */
  clear(): void;
}

/**
 * A one-line progress bar on stderr (`label ████████░░░░ 31/42`), redrawn in place with `\r`.
 * Draws nothing when stderr is not a terminal, so logs and pipes stay clean.
 */
export function progressBar(label: string, width = 28): Progress {
  const tty = process.stderr.isTTY === true;
  let last = '';
  return {
    update(done, total) {
      if (!tty) return;
      const filled = total > 0 ? Math.min(width, Math.round((done / total) * width)) : width;
      const line = `${label} ${pc.green('█'.repeat(filled))}${pc.dim('░'.repeat(width - filled))} ${done}/${total}`;
      if (line === last) return;
      process.stderr.write(`\r\u001b[2K${line}`);
      last = line;
    },
    clear() {
      if (tty && last) process.stderr.write('\r\u001b[2K');
      last = '';
    },
  };
}

/** Green text (a step done). */
export const good = (s: string): string => pc.green(s);
/** Red text (a step failed). */
export const bad = (s: string): string => pc.red(s);
