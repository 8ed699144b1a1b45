/**
 * `vagent call show|list|hangup`: following calls (`GET /v1/calls/{id}`, `GET /v1/calls`,
 * `POST /v1/calls/{id}/hangup`; docs/calls.md), and the flag and error helpers the call commands
 * share. Placing a call is in call-place.ts, the simulator in call-simulate.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ApiResponseError,
  type CallHangup,
  type CallListQuery,
  type CallStatus,
  type DialStatus,
  type LineOutcome,
  type ListResponse,
} from '../../client/index.js';
import { EXAMPLE_DID } from '../../domain/e164.js';
import { CALL_SOURCES } from '../../domain/calls.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../domain/ids.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT, HintedApiError, InvalidValueError, UsageError } from '../errors.js';
import {
  bad,
  dim,
  formatTime,
  good,
  hint,
  mark,
  ok,
  orDash,
  printable,
  printFields,
  printJson,
  printTable,
  quoted,
  rupees,
} from '../output.js';
import { checkWritable, writeFileWhole } from '../out-file.js';
import { costLine } from './chat-view.js';
import { checkId } from './ids.js';
import { completeWavSizes } from './recording-file.js';
import { wholeNumber } from '../number-arg.js';

/** Flags of `vagent call list`. */
export interface CallListFlags {
  status?: string;
  /** `phone` or `simulator`. */
  source?: string;
  limit?: string;
  cursor?: string;
  all?: boolean;
}

const CALL_STATUSES = ['in_progress', 'completed'] as const;

/** An API error with the hint `hints` has for its code, as a CliError (exit 1); other errors unchanged. */
export function withHint(err: unknown, hints: Record<string, (message: string) => string>): unknown {
  if (err instanceof ApiResponseError) {
    const explain = hints[err.code];
    if (!explain) return err;
    return new HintedApiError(err, explain(err.message));
  }
  return err;
}

/** A whole number of seconds for people: `42 s`, `3 min 05 s`, `1 h 02 min`. */
function formatDuration(s: number | null): string {
  if (s === null) return dim('-');
  const total = Math.round(s);
  if (total < 60) return `${total} s`;
  if (total < 3600) return `${Math.floor(total / 60)} min ${String(total % 60).padStart(2, '0')} s`;
  return `${Math.floor(total / 3600)} h ${String(Math.floor((total % 3600) / 60)).padStart(2, '0')} min`;
}

/** Dial statuses coloured: green when answered or ringing, red when failed or unknown, dim when not dialled or completed. */
const DIAL_COLOUR: Partial<Record<DialStatus, (s: string) => string>> = {
  answered: good,
  ringing: good,
  failed: bad,
  unknown: bad,
  not_dialled: dim,
  completed: dim,
};
const dialText = (s: DialStatus): string => (DIAL_COLOUR[s] ?? String)(s.replace('_', ' '));
const statusText = (s: CallStatus['status']): string => (s === 'in_progress' ? 'in progress' : 'completed');

/**
 * `vagent call recording CL_ID -o FILE`: saves the call's recording (a WAV; docs/media.md
 * "Recordings"); `-o -` writes it to stdout. An existing file is replaced only with `--force`.
 * A call still in progress gives the recording so far, its WAV sizes set so it plays, and says so.
 * The file is private to the operator (mode 0600), as the state dir's copy is: it holds a call.
 * @throws UsageError (exit 2) for a FILE that cannot be written (checked before the download);
 *   CliError (exit 1) for an existing file without `--force`; ApiResponseError not_found when
 *   the call has no recording.
 */
export async function recording(ctx: CommandContext, id: string, flags: { output: string; force?: boolean }): Promise<void> {
  checkId('call', id);
  const toStdout = flags.output === '-';
  if (!toStdout) {
    checkWritable(flags.output, 'the recording');
    if (!flags.force && fs.existsSync(flags.output))
      throw new CliError(`${printable(flags.output)} exists; add --force to replace it`, EXIT.error);
  }
  // A call still on the line: its header's sizes are set in the copy, so the part so far plays.
  const { bytes, fixed: partial } = completeWavSizes(Buffer.from(await (await ctx.client()).downloadRecording(id)));
  const partialHint = `call ${id} is still in progress: this is the recording so far; save it again after the call ends for the whole call`;
  if (toStdout) {
    process.stdout.write(bytes);
    if (partial) hint(partialHint);
    return;
  }
  writeFileWhole(flags.output, bytes, 'the recording', 0o600);
  if (ctx.json) return printJson({ call_id: id, file: path.resolve(flags.output), bytes: bytes.length, partial });
  ok(`saved the recording of ${id} to ${flags.output} (${bytes.length} bytes${partial ? ', partial' : ''})`);
  if (partial) hint(partialHint);
}

/** `vagent call show CL_ID`: status, dial status, numbers, room, duration and cost. */
export async function show(ctx: CommandContext, id: string): Promise<void> {
  const call = await (await ctx.client()).getCall(checkId('call', id));
  if (ctx.json) return printJson(call);
  printFields([
    ['call', printable(call.call_id)],
    ['session', printable(call.session_id)],
    ['agent', printable(call.agent_id)],
    ['direction', printable(call.direction)],
    ['transport', orDash(call.transport ?? null)],
    ['source', call.source === 'simulator' ? 'simulator (vagent call simulate)' : orDash(call.source ?? null)],
    ['status', statusText(call.status)],
    [
      'dial status',
      call.dial_error ? `${dialText(call.dial_status)} ${dim(`(${printable(call.dial_error)})`)}` : dialText(call.dial_status),
    ],
    ['to', printable(call.to)],
    ['from', orDash(call.from)],
    ['customer', orDash(call.customer_name)],
    ['trunk', orDash(call.trunk_id)],
    ['room', orDash(call.room_name)],
    ['provider call', orDash(call.provider_call_id)],
    ...callTimes(call),
    ['cost', costLine(call.cost)],
    ['recording', orDash(call.recording_url ?? null)],
  ]);
  if (call.recording_url) hint(`save it: vagent call recording ${call.call_id} -o ${call.call_id}.wav`);
  if (call.status === 'in_progress') {
    hint(`session: vagent session show ${call.session_id}`);
    hint(`hang up: vagent call hangup ${call.call_id}`);
  }
}

/** The started, answered, ended and duration rows of a call. */
function callTimes(call: CallStatus): Array<[string, string]> {
  return [
    ['started', formatTime(call.started_at)],
    ['answered', call.answered_at === null ? dim('-') : formatTime(call.answered_at)],
    ['ended', call.ended_at === null ? dim('-') : formatTime(call.ended_at)],
    ['duration', formatDuration(call.duration_s)],
  ];
}

/** Hints for hang-up errors, by API error code. */
const HANGUP_HINTS: Record<string, (message: string) => string> = {
  hangup_failed: () => 'nothing changed and the call may still be on the line: run the same command again; see `vagent telephony check`',
  telephony_not_configured: () => 'the daemon needs LiveKit to hang up a dialled call: see `vagent telephony check`',
  not_found: () => 'see `vagent call list` for call ids',
  session_not_found: () => 'call ids look like cl_4503599627370497: see `vagent call list`',
  idempotency_key_reuse: () => 'this --idempotency-key was used for another request; use a new key',
  idempotency_key_in_progress: () => 'a hang-up with this --idempotency-key is still running; wait, then retry with the same key',
};

/** The first line `vagent call hangup` prints, by what became of the line. */
const HANGUP_LINES: Record<LineOutcome, (id: string) => string> = {
  hung_up: (id) => `hung up call ${id}: its session has ended`,
  already_gone: (id) => `call ${id} ended: its line was already gone`,
  not_dialled: (id) => `call ${id} ended: it was never dialled, so there was no line to hang up`,
};

/**
 * `vagent call hangup CL_ID [--idempotency-key K]`: hangs up the call's line through LiveKit,
 * ends its session and completes it; a call whose line is already gone succeeds and says so.
 * @throws UsageError (exit 2) for a bad key; CliError (exit 1 with a hint) for API errors.
 */
export async function hangup(ctx: CommandContext, id: string, flags: { idempotencyKey?: string }): Promise<void> {
  if (flags.idempotencyKey !== undefined && !IDEMPOTENCY_KEY_PATTERN.test(flags.idempotencyKey)) {
    throw new UsageError('--idempotency-key must be 1 to 255 printable ASCII characters');
  }
  checkId('call', id);
  const client = await ctx.client();
  let call: CallHangup;
  try {
    call = await client.hangUpCall(id, { idempotencyKey: flags.idempotencyKey ?? crypto.randomUUID() });
  } catch (err) {
    throw withHint(err, HANGUP_HINTS);
  }
  if (ctx.json) return printJson(call);
  ok(HANGUP_LINES[call.line](call.call_id));
  printFields([
    ['call', call.call_id],
    ['line', call.line.replace('_', ' ')],
    ['status', statusText(call.status)],
    ['dial status', dialText(call.dial_status)],
    ['to', call.to],
    ...callTimes(call),
    ['cost', costLine(call.cost)],
  ]);
  hint(`summary: vagent session show ${call.session_id}`);
}

/** Most pages `--all` follows: a guard against a cursor that never ends, not a real limit. */
const MAX_PAGES = 10_000;

/**
 * `vagent call list [--status S] [--source S] [--limit N] [--all]`: calls newest first, a
 * simulated call marked `sim` after its direction; `--all` follows `next_cursor` to the end
 * (then `--json` prints one page holding every call).
 * @throws InvalidValueError (exit 1, invalid_request) for a bad `--status`, `--source` or `--limit`.
 */
export async function list(ctx: CommandContext, flags: CallListFlags): Promise<void> {
  const query: CallListQuery = {};
  if (flags.status !== undefined) {
    const status = CALL_STATUSES.find((s) => s === flags.status);
    if (!status) throw new InvalidValueError(`--status must be in_progress or completed, not ${quoted(flags.status)}`, 'status');
    query.status = status;
  }
  if (flags.source !== undefined) {
    const source = CALL_SOURCES.find((s) => s === flags.source);
    if (!source) throw new InvalidValueError(`--source must be ${CALL_SOURCES.join(' or ')}, not ${quoted(flags.source)}`, 'source');
    query.source = source;
  }
  if (flags.limit !== undefined) query.limit = wholeNumber('--limit', 'limit', flags.limit, 1, 100);
  else if (flags.all) query.limit = 100;
  if (flags.cursor !== undefined) query.cursor = flags.cursor;
  const client = await ctx.client();
  let page = await client.listCalls(query);
  let res: ListResponse<CallStatus> = page;
  if (flags.all) {
    const data = [...page.data];
    for (let pages = 1; page.has_more && page.next_cursor !== null && pages < MAX_PAGES; pages++) {
      page = await client.listCalls({ ...query, cursor: page.next_cursor });
      data.push(...page.data);
    }
    res = { data, has_more: page.has_more, next_cursor: page.has_more ? page.next_cursor : null };
  }
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'CALL', cell: (c) => printable(c.call_id) },
      { header: 'STATUS', cell: (c) => statusText(c.status) },
      { header: 'DIAL', cell: (c) => dialText(c.dial_status) },
      {
        header: 'DIR',
        cell: (c) => `${c.direction === 'outbound' ? 'out' : 'in'}${c.source === 'simulator' ? ` ${mark('sim')}` : ''}`,
      },
      // Inbound: FROM is the caller's number; outbound: the caller ID presented.
      { header: 'FROM', cell: (c) => orDash(c.from) },
      { header: 'TO', cell: (c) => printable(c.to) },
      { header: 'AGENT', cell: (c) => printable(c.agent_id) },
      { header: 'STARTED', cell: (c) => formatTime(c.started_at) },
      { header: 'DURATION', cell: (c) => formatDuration(c.duration_s) },
      { header: 'COST', cell: (c) => rupees(c.cost.total_inr) },
    ],
    query.status || query.source
      ? `No ${query.status ? `${statusText(query.status)} ` : ''}${query.source ? `${query.source} ` : ''}calls.`
      : `No calls yet. Prepare one: vagent call place --agent ag_emi_reminder --to ${EXAMPLE_DID} --customer-name NAME --context @context.json`,
  );
  if (res.has_more && res.next_cursor) hint(`more calls: add --all, or --cursor ${res.next_cursor} for the next page`);
}
