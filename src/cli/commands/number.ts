/**
 * `vagent number add|list|bind|rm` (`/v1/numbers`: src/contract/numbers.ts; docs/api-decisions.md "Numbers").
 */
import { ApiResponseError, type CreateNumberRequest, type NumberRecord } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { CliError, EXIT } from '../errors.js';
import { formatTime, ok, orDash, printFields, printJson, printTable } from '../output.js';
import { confirmDelete, type DeleteFlags } from '../prompt.js';
import { requireE164 } from '../e164-arg.js';

/** Flags of `vagent number add`. */
export interface NumberAddFlags {
  label?: string;
  trunk?: string;
  agent?: string;
}

function showNumber(n: NumberRecord): void {
  printFields([
    ['number', n.number],
    ['id', n.id],
    ['label', orDash(n.label)],
    ['trunk', orDash(n.trunk_id)],
    ['agent', orDash(n.agent_id)],
    ['created', formatTime(n.created_at)],
  ]);
}

/**
 * An agent the daemon refused to bind, with what to do about it; other errors pass through.
 * An outbound agent is refused (`invalid_request`, param `agent_id`): a number answers calls
 * that come in, and an outbound script expects the context its call was placed with.
 */
function explainAgentError(err: unknown): unknown {
  if (!(err instanceof ApiResponseError) || err.param !== 'agent_id') return err;
  const hint =
    err.code === 'invalid_request' && /direction outbound/.test(err.message)
      ? 'bind an agent with direction inbound (see the DIRECTION column of `vagent agent list`); outbound agents are placed with `vagent call place`'
      : err.code === 'not_found'
        ? 'see `vagent agent list` for the agents of this tenant; add one with `vagent agent apply -f FILE`'
        : undefined;
  if (hint === undefined) return err;
  return new CliError(`${err.code}: ${err.message}`, EXIT.error, hint);
}

/** `vagent number add NUMBER`. */
export async function add(ctx: CommandContext, number: string, flags: NumberAddFlags): Promise<void> {
  requireE164(number, 'NUMBER', 'number');
  const body: CreateNumberRequest = { number };
  if (flags.label !== undefined) body.label = flags.label;
  if (flags.trunk !== undefined) body.trunk_id = flags.trunk;
  if (flags.agent !== undefined) body.agent_id = flags.agent;
  const client = await ctx.client();
  const rec = await client.createNumber(body).catch((err: unknown) => {
    throw explainAgentError(err);
  });
  if (ctx.json) return printJson(rec);
  ok(`${rec.number} registered`);
  showNumber(rec);
}

/** `vagent number list`. */
export async function list(ctx: CommandContext): Promise<void> {
  const res = await (await ctx.client()).listNumbers();
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'NUMBER', cell: (n) => n.number },
      { header: 'LABEL', cell: (n) => orDash(n.label) },
      { header: 'TRUNK', cell: (n) => orDash(n.trunk_id) },
      { header: 'AGENT', cell: (n) => orDash(n.agent_id) },
      { header: 'CREATED', cell: (n) => formatTime(n.created_at) },
    ],
    'No numbers yet. Register one: vagent number add +918047001234 --label "Bengaluru support"',
  );
}

/** `vagent number bind NUMBER AGENT_ID`. @throws CliError (exit 1, with a hint) for an agent that cannot answer the number. */
export async function bind(ctx: CommandContext, number: string, agentId: string): Promise<void> {
  requireE164(number, 'NUMBER', 'number');
  const client = await ctx.client();
  const rec = await client.bindNumber(number, agentId).catch((err: unknown) => {
    throw explainAgentError(err);
  });
  if (ctx.json) return printJson(rec);
  ok(`${rec.number} now answered by ${rec.agent_id}`);
}

/**
 * `vagent number rm NUMBER [--yes]`: asks first on a terminal (see {@link confirmDelete}).
 * @throws UsageError (exit 2) without a terminal and without `--yes`.
 */
export async function rm(ctx: CommandContext, number: string, flags: DeleteFlags = {}): Promise<void> {
  requireE164(number, 'NUMBER', 'number');
  await confirmDelete(`number ${number}`, flags.yes);
  const res = await (await ctx.client()).deleteNumber(number);
  if (ctx.json) return printJson(res);
  ok(`${res.number} removed (the number itself stays with your carrier)`);
}
