/**
 * `vagent session list|show|end` (docs/api-decisions.md "Sessions"; `GET /v1/sessions/{id}`,
 * `POST /v1/sessions/{id}/end`; `GET /v1/sessions` is an extension).
 */
import type { SessionListQuery } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { hint, printJson } from '../output.js';
import { printSummary } from './chat-view.js';
import { printSessionDetail, printSessionList } from './session-view.js';
import { checkId } from './ids.js';
import { wholeNumber } from '../number-arg.js';

/** Flags of `vagent session list`. */
export interface SessionListFlags {
  limit?: string;
  cursor?: string;
}

/**
 * `vagent session list [--limit N] [--cursor C]`: the tenant's sessions, newest first;
 * `--json` the page as it is.
 * @throws InvalidValueError (exit 1, invalid_request) for a `--limit` that is not 1–100.
 */
export async function list(ctx: CommandContext, flags: SessionListFlags = {}): Promise<void> {
  const query: SessionListQuery = {};
  if (flags.limit !== undefined) {
    query.limit = wholeNumber('--limit', 'limit', flags.limit, 1, 100);
  }
  if (flags.cursor !== undefined) query.cursor = flags.cursor;
  const res = await (await ctx.client()).listSessions(query);
  if (ctx.json) return printJson(res);
  await printSessionList(res.data);
  if (res.has_more && res.next_cursor) hint(`more sessions: --cursor ${res.next_cursor} for the next page`);
}

/** `vagent session show SE_ID`: agent, status, steps with captured values, turns and costs; `--json` the detail as it is. */
export async function show(ctx: CommandContext, id: string): Promise<void> {
  const detail = await (await ctx.client()).getSession(checkId('session', id));
  if (ctx.json) return printJson(detail);
  await printSessionDetail(detail);
}

/** `vagent session end SE_ID`: ends the session and prints its summary; `--json` the end result. */
export async function end(ctx: CommandContext, id: string): Promise<void> {
  const res = await (await ctx.client()).endSession(checkId('session', id));
  if (ctx.json) return printJson(res);
  printSummary(res);
}
