/**
 * `vagent admin purge` and `vagent admin export`: delete sessions, calls and events older than a
 * cut-off, and archive sessions as JSON lines first, on a state dir directly.
 */
import fs from 'node:fs';
import path from 'node:path';
import { isoTimeMs, startOfLocalDay } from '../../domain/time.js';
import { exportSessions } from '../../app/archive.js';
import type { PurgeCounts } from '../../app/retention.js';
import type { CommandContext } from '../context.js';
import { formatTimeIn, hint, ok, printJson, printTable, quoted, say } from '../output.js';
import { CliError, EXIT, InvalidValueError, UsageError } from '../errors.js';
import { withRuntimeAsync, type AdminFlags } from './admin.js';

/** A time given on the command line: `YYYY-MM-DD` or an ISO 8601 time with its offset. */
const WITH_OFFSET = /T[0-9:.]+(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})$/;

/**
 * A `--before`/`--since` value in epoch seconds: `YYYY-MM-DD` is the start of that day in the
 * `timezone` setting; otherwise a full ISO 8601 time with an offset (`Z` or `+05:30`).
 * @throws InvalidValueError (exit 1, invalid_request) for anything else (a time without an offset would depend on the machine's zone).
 */
function parseCutoff(flag: string, value: string, timeZone: string): number {
  const v = value.trim();
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v) ? startOfLocalDay(v, timeZone) : null;
  if (day !== null) return day;
  const ms = WITH_OFFSET.test(v) ? isoTimeMs(v) : null;
  if (ms === null) {
    throw new InvalidValueError(
      `${flag} must be a date YYYY-MM-DD (the start of that day in ${timeZone}) or an ISO 8601 time with its offset, not ${quoted(value)}`,
      flag.slice(2),
      `example: ${flag} 2026-01-01, ${flag} 2026-01-01T00:00:00+05:30`,
    );
  }
  return ms / 1000;
}

/** The tables of a purge's counts, in the order shown. */
const PURGE_TABLES: Array<[keyof PurgeCounts, string]> = [
  ['sessions', 'sessions'],
  ['turns', 'session turns'],
  ['calls', 'calls'],
  ['audit_events', 'audit events'],
  ['telephony_events', 'telephony events'],
  ['agent_revisions', 'agent revisions'],
];

/**
 * Wait between two batches of `vagent admin purge`, ms. A running daemon's writes wait for the
 * write lock in SQLite's busy handler, which holds its event loop: purging back to back
 * (measured, 30k sessions beside a daemon writing every 2 ms) held its writes up to 425 ms
 * (p99 334 ms); with this pause, p99 14–24 ms, and the purge takes ~3× as long (30k in ~9 s).
 */
const ADMIN_PURGE_PAUSE_MS = 20;

/** Flags of `vagent admin purge`. */
export interface PurgeFlags extends AdminFlags {
  before?: string;
  tenant?: string;
  dryRun?: boolean;
}

/**
 * `vagent admin purge --before DATE [--tenant NAME] [--dry-run]`: deletes
 * what is older than the cut-off, whatever the retention settings, by the same rules and in
 * the same batches as the daemon's background purge, so it can run beside a serving daemon.
 * `--dry-run` counts exactly what would be deleted and changes nothing.
 * @throws UsageError (exit 2) without --before; InvalidValueError (exit 1) for a malformed date; ApiError invalid_request
 *   (a cut-off in the future), not_found (tenant).
 */
export async function purge(ctx: CommandContext, flags: PurgeFlags): Promise<void> {
  if (flags.before === undefined)
    throw new UsageError(
      '--before DATE is required: what was created before it is purged',
      'example: vagent admin purge --before 2026-01-01 --dry-run',
    );
  const out = await withRuntimeAsync(flags, async (rt) => {
    const before = parseCutoff('--before', flags.before!, rt.settings.timezone);
    const scope = { before, tenant: flags.tenant ?? null };
    const zone = rt.settings.timezone;
    if (flags.dryRun) return { counts: await rt.services.retention.count(scope), complete: true, before, zone };
    const { complete, ...counts } = await rt.services.retention.purge(scope, { pauseMs: ADMIN_PURGE_PAUSE_MS });
    return { counts, complete, before, zone };
  });
  const view = {
    dry_run: Boolean(flags.dryRun),
    before: new Date(out.before * 1000).toISOString(),
    tenant: flags.tenant ?? null,
    [flags.dryRun ? 'would_delete' : 'deleted']: out.counts,
  };
  if (ctx.json) return printJson(view);
  const who = flags.tenant ? `tenant ${flags.tenant}` : 'all tenants';
  if (flags.dryRun) say(`Dry run (nothing deleted): a purge of ${who} before ${formatTimeIn(out.before, out.zone)} would delete:`);
  else ok(`purged ${who}: records created before ${formatTimeIn(out.before, out.zone)}`);
  await printTable(
    PURGE_TABLES,
    [
      { header: 'RECORDS', cell: ([, label]) => label },
      { header: flags.dryRun ? 'WOULD DELETE' : 'DELETED', cell: ([k]) => String(out.counts[k]) },
    ],
    '',
  );
  if (flags.tenant) hint('telephony events and agent revisions belong to no tenant: a purge without --tenant handles them');
  hint('open sessions and calls whose line may still be up are never purged');
  if (flags.dryRun) hint(`to keep a copy first: vagent admin export --before ${flags.before} --output sessions.jsonl`);
}

/** Flags of `vagent admin export`. */
export interface ExportFlags extends AdminFlags {
  tenant?: string;
  since?: string;
  before?: string;
  output?: string;
  force?: boolean;
  /** A directory the calls' recordings are copied to (`cl_N.wav`). */
  recordings?: string;
}

/** Waits until `stream` takes more (its buffer drained), or fails with its error. */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (err?: unknown) => {
      stream.off('drain', done);
      stream.off('error', done);
      if (err) reject(err as Error);
      else resolve();
    };
    stream.once('drain', done);
    stream.once('error', done);
  });
}

/**
 * `vagent admin export [--tenant NAME] [--since DATE] [--before DATE] [--output FILE] [--force]
 * [--recordings DIR]`: sessions as JSON lines, one per session with its turns and calls (see
 * app/archive.ts), oldest first, to stdout or to a new file of mode 0600; with `--recordings`,
 * each call's recording is copied to DIR (`cl_N.wav`, mode 0600) and its line says `recording_file`. Reads a page of
 * sessions at a time and waits for the output to drain, so memory stays bounded.
 * @throws InvalidValueError (exit 1) for a malformed date or `--since` not before `--before`; CliError
 *   for an existing `--output` file without `--force`; ApiError not_found (tenant).
 */
export async function exportSessionsCommand(ctx: CommandContext, flags: ExportFlags): Promise<void> {
  const result = await withRuntimeAsync(flags, async (rt) => {
    const tz = rt.settings.timezone;
    const since = flags.since === undefined ? 0 : parseCutoff('--since', flags.since, tz);
    const before = flags.before === undefined ? Number.MAX_SAFE_INTEGER : parseCutoff('--before', flags.before, tz);
    if (since >= before) throw new InvalidValueError('--since must be before --before', 'since');
    if (flags.tenant !== undefined) rt.services.tenants.getTenant(flags.tenant);
    let fd: number | null = null;
    if (flags.output !== undefined) {
      try {
        fd = fs.openSync(flags.output, flags.force ? 'w' : 'wx', 0o600);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EEXIST') {
          throw new CliError(
            `${flags.output} already exists; nothing was written`,
            EXIT.error,
            'choose a new file name, or pass --force to overwrite it',
          );
        }
        throw new CliError(`cannot write ${flags.output}: ${(err as Error).message}`);
      }
      fs.fchmodSync(fd, 0o600);
    }
    if (flags.recordings !== undefined) fs.mkdirSync(flags.recordings, { recursive: true, mode: 0o700 });
    const stream: NodeJS.WritableStream = fd === null ? process.stdout : fs.createWriteStream('', { fd, autoClose: true });
    let sessions = 0;
    let recordings = 0;
    try {
      for (const { recording, ...record } of exportSessions(rt.services, { tenant: flags.tenant ?? null, since, before })) {
        sessions += 1;
        // The recording is copied beside the archive (when asked), and the line names its file there.
        let copied: string | null = null;
        if (recording !== null && flags.recordings !== undefined) {
          copied = path.basename(recording);
          try {
            fs.copyFileSync(recording, path.join(flags.recordings, copied));
            fs.chmodSync(path.join(flags.recordings, copied), 0o600);
            recordings += 1;
          } catch {
            copied = null; // purged meanwhile
          }
        }
        const line = flags.recordings === undefined ? record : { ...record, recording_file: copied };
        if (!stream.write(`${JSON.stringify(line)}\n`)) await drained(stream);
      }
    } finally {
      if (fd !== null)
        await new Promise<void>((resolve, reject) => stream.end((err?: unknown) => (err ? reject(err as Error) : resolve())));
    }
    return { sessions, recordings };
  });
  if (flags.output === undefined) {
    if (!ctx.json) hint(`${result.sessions} session${result.sessions === 1 ? '' : 's'} exported`);
    return;
  }
  if (ctx.json)
    return printJson({
      sessions: result.sessions,
      output: flags.output,
      ...(flags.recordings !== undefined ? { recordings: result.recordings, recordings_dir: flags.recordings } : {}),
    });
  ok(`${result.sessions} session${result.sessions === 1 ? '' : 's'} exported to ${flags.output} (mode 0600)`);
  if (flags.recordings !== undefined)
    ok(`${result.recordings} recording${result.recordings === 1 ? '' : 's'} copied to ${flags.recordings} (cl_N.wav, mode 0600)`);
}
