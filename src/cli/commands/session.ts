/**
 * `vagent session show|end` (spec: Endpoints › Sessions; `GET /v1/sessions/{id}`,
 * `POST /v1/sessions/{id}/end`).
 */
import type { CommandContext } from '../context.js';
import { printJson } from '../output.js';
import { printSessionDetail, printSummary } from './chat-view.js';

/** `vagent session show SE_ID`: turns, costs, cache hits and latency; `--json` the detail as it is. */
export async function show(ctx: CommandContext, id: string): Promise<void> {
  const detail = await (await ctx.client()).getSession(id);
  if (ctx.json) return printJson(detail);
  printSessionDetail(detail);
}

/** `vagent session end SE_ID`: ends the session and prints its summary; `--json` the end result. */
export async function end(ctx: CommandContext, id: string): Promise<void> {
  const res = await (await ctx.client()).endSession(id);
  if (ctx.json) return printJson(res);
  printSummary(res);
}
