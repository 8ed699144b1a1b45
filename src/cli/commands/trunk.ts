/**
 * `vagent trunk add|list|show|rm` (`/v1/trunks`: src/contract/trunks.ts; docs/api-decisions.md "Trunks").
 */
import type { CreateTrunkRequest, NumberRecord, Trunk } from '../../client/index.js';
import type { CommandContext } from '../context.js';
import { UsageError } from '../errors.js';
import { dim, formatTime, ok, orDash, printFields, printJson, printTable, say } from '../output.js';
import { requireE164 } from '../e164-arg.js';
import { confirmDelete, promptHidden, readStdin, type DeleteFlags } from '../prompt.js';

/** Flags of `vagent trunk add`. */
export interface TrunkAddFlags {
  address: string;
  name?: string;
  number?: string[];
  providerTrunkId?: string;
  username?: string;
  passwordStdin?: boolean;
}

function showTrunk(t: Trunk): void {
  printFields([
    ['id', t.id],
    ['name', orDash(t.name)],
    ['address', t.address],
    ['numbers', t.numbers.length ? t.numbers.join(', ') : dim('-')],
    ['provider trunk', orDash(t.provider_trunk_id)],
    ['credentials', t.has_credentials ? 'stored (encrypted)' : dim('none')],
    ['created', formatTime(t.created_at)],
  ]);
}

/** `vagent trunk add`: registers a trunk; the password comes from stdin or a hidden prompt. */
export async function add(ctx: CommandContext, flags: TrunkAddFlags): Promise<void> {
  if (flags.passwordStdin && !flags.username) throw new UsageError('--password-stdin needs --username');
  for (const n of flags.number ?? []) requireE164(n, '--number', 'numbers');
  const body: CreateTrunkRequest = { address: flags.address };
  if (flags.name !== undefined) body.name = flags.name;
  if (flags.number?.length) body.numbers = flags.number;
  if (flags.providerTrunkId !== undefined) body.provider_trunk_id = flags.providerTrunkId;
  if (flags.username !== undefined) {
    const password = flags.passwordStdin
      ? await readStdin()
      : await promptHidden(`SIP password for ${flags.username}: `, '--password-stdin');
    body.auth = { username: flags.username, password };
  }
  const client = await ctx.client();
  const trunk = await client.createTrunk(body);
  if (ctx.json) return printJson(trunk);
  ok(`trunk ${trunk.id} added`);
  showTrunk(trunk);
}

/** `vagent trunk list`. */
export async function list(ctx: CommandContext): Promise<void> {
  const res = await (await ctx.client()).listTrunks();
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'ID', cell: (t) => t.id },
      { header: 'NAME', cell: (t) => orDash(t.name) },
      { header: 'ADDRESS', cell: (t) => t.address },
      { header: 'NUMBERS', cell: (t) => (t.numbers.length ? t.numbers.join(' ') : dim('-')) },
      { header: 'AUTH', cell: (t) => (t.has_credentials ? 'yes' : dim('no')) },
      { header: 'CREATED', cell: (t) => formatTime(t.created_at) },
    ],
    'No trunks yet. Add one: vagent trunk add --address sip.example-carrier.in --number +912240001234',
  );
}

/** `vagent trunk show ID`. */
export async function show(ctx: CommandContext, id: string): Promise<void> {
  const trunk = await (await ctx.client()).getTrunk(id);
  if (ctx.json) return printJson(trunk);
  showTrunk(trunk);
}

/** A word for a POSIX shell: as it is when it is safe, else in single quotes. */
const shellWord = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", "'\\''")}'`);

/**
 * The command that attaches a number record to a trunk again. A record's trunk is set only
 * when it is registered (`POST /v1/numbers`; there is no call that changes it), so the record
 * is registered again with its label and agent.
 */
export function reattachCommand(n: NumberRecord, trunk = 'tk_NEW'): string {
  const extra = [n.label !== null ? ` --label ${shellWord(n.label)}` : '', n.agent_id !== null ? ` --agent ${n.agent_id}` : ''].join('');
  return `vagent number rm ${n.number} --yes && vagent number add ${n.number} --trunk ${trunk}${extra}`;
}

/**
 * `vagent trunk rm ID [--yes]`: asks first on a terminal (see {@link confirmDelete}), naming
 * the number records on the trunk: the daemon keeps them with no trunk (`trunk_id` null), and
 * a trunk added again is a new trunk that they do not point to. After the delete, says which
 * numbers were detached and the command that attaches each again.
 * @throws UsageError (exit 2) without a terminal and without `--yes`.
 */
export async function rm(ctx: CommandContext, id: string, flags: DeleteFlags = {}): Promise<void> {
  const client = await ctx.client();
  const onTrunk = (await client.listNumbers()).data.filter((n) => n.trunk_id === id);
  const names = onTrunk.map((n) => n.number).join(', ');
  await confirmDelete(
    onTrunk.length === 0
      ? `trunk ${id}`
      : `trunk ${id} (${names} ${onTrunk.length === 1 ? 'uses it and will be detached: its trunk is cleared, and adding a trunk again does not re-attach it' : 'use it and will be detached: their trunk is cleared, and adding a trunk again does not re-attach them'})`,
    flags.yes,
  );
  const res = await client.deleteTrunk(id);
  if (ctx.json) return printJson(res);
  ok(`trunk ${res.id} removed`);
  if (onTrunk.length === 0) return;
  say(`detached (no trunk now): ${names}. Adding a trunk again does not re-attach them; once the new trunk is added, for each:`);
  for (const n of onTrunk) say(`  ${reattachCommand(n)}`);
}
