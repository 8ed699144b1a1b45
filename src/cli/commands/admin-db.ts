/**
 * `vagent admin db stats|vacuum`: the state database's size and space (README.md "What grows on disk, and what bounds it").
 * `stats` works beside a running daemon; `vacuum` rewrites the file, so it takes the state
 * dir's daemon lock and refuses while a daemon runs.
 */
import { formatBytes } from '../../config/notices.js';
import { databaseReport, vacuumDatabase, VacuumRefusedError } from '../../daemon/db-admin.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { dim, hint, ok, printFields, printJson, say } from '../output.js';
import { existingStateSettings, type AdminFlags } from './admin.js';

/** The state dir of `flags`, refused when it holds no database (a mistyped --state-dir). */
function existingStateDir(flags: AdminFlags): string {
  return existingStateSettings(flags).state_dir;
}

const MODE_TEXT = {
  incremental: 'incremental (freed pages are given back to the disk in the background)',
  full: 'full (freed pages are given back at every commit)',
  none: 'none (freed pages are reused, never given back)',
} as const;

/**
 * `vagent admin db stats [--json]`: file and WAL size, page size, free pages, auto-vacuum mode
 * and rows per main table. `--json`: {@link DatabaseReport} (`notice` null unless the database
 * gives no space back).
 */
export function stats(ctx: CommandContext, flags: AdminFlags): void {
  const report = databaseReport(existingStateDir(flags));
  if (ctx.json) return printJson(report);
  printFields([
    ['file', report.file],
    ['size', `${formatBytes(report.file_bytes)} ${dim(`(${report.file_bytes} bytes)`)}`],
    ['WAL', formatBytes(report.wal_bytes)],
    ['pages', `${report.page_count} of ${formatBytes(report.page_size)}`],
    ['free pages', `${report.free_pages} ${dim(`(${formatBytes(report.free_bytes)})`)}`],
    ['auto-vacuum', MODE_TEXT[report.auto_vacuum]],
    ['schema version', String(report.schema_version)],
    ...Object.entries(report.rows).map(([table, n]): [string, string] => [`rows: ${table}`, String(n)]),
  ]);
  if (report.notice) {
    say();
    hint(report.notice);
  }
}

/**
 * `vagent admin db vacuum [--json]`: converts the database to incremental auto-vacuum and
 * compacts it. `--json`: {@link VacuumResult}.
 * @throws CliError (exit 1) while a daemon serves the state dir or when the disk lacks space.
 */
export function vacuum(ctx: CommandContext, flags: AdminFlags): void {
  const dir = existingStateDir(flags);
  let result;
  try {
    result = vacuumDatabase(dir);
  } catch (err) {
    if (err instanceof VacuumRefusedError) throw new CliError(err.message, EXIT.error, err.hint);
    throw err;
  }
  if (ctx.json) return printJson(result);
  ok(`database compacted: ${formatBytes(result.before_bytes)} → ${formatBytes(result.after_bytes)}; auto-vacuum ${result.auto_vacuum}`);
  if (result.auto_vacuum_before !== 'incremental') {
    hint('from now on vagent serve gives freed pages back to the disk in the background; this command is not needed again');
  }
}
