/**
 * `vagent webhook add|list|show|rm|test|rotate-secret|replay` (`/v1/webhook_endpoints`:
 * src/contract/webhooks.ts; docs/events.md "Webhooks").
 */
import { MAX_REPLAY_SINCE_S } from '../../contract/index.js';
import type { WebhookEndpoint } from '../../client/index.js';
import { WebhookClient } from '../../client/webhooks.js';
import type { CommandContext } from '../context.js';
import { CliError, InvalidValueError, UsageError } from '../errors.js';
import { bad, dim, formatTime, good, hint, ok, orDash, printFields, printJson, printTable, quoted, say } from '../output.js';
import { confirmDelete, type DeleteFlags } from '../prompt.js';
import { checkId } from './ids.js';

const webhooks = async (ctx: CommandContext) => new WebhookClient(await ctx.client());

const statusText = (e: WebhookEndpoint) =>
  e.status === 'failing' ? bad(`failing since ${formatTime(e.failing_since ?? 0)}`) : good('active');

/** The latest attempt: `[200]`, `[503]` or `[no answer]` and when, or `-` before the first. */
const lastText = (e: WebhookEndpoint) =>
  e.last_attempt_at === null
    ? '-'
    : `${e.last_error === null ? good(`[${e.last_status ?? 'ok'}]`) : bad(e.last_status === null ? '[no answer]' : `[${e.last_status}]`)} ${formatTime(e.last_attempt_at)}`;

/** How many deliveries wait, in red while the latest attempt failed. */
const pendingText = (e: WebhookEndpoint) =>
  e.pending_deliveries > 0 && e.last_error !== null ? bad(String(e.pending_deliveries)) : String(e.pending_deliveries);

function showEndpoint(e: WebhookEndpoint): void {
  printFields([
    ['id', e.id],
    ['url', e.url],
    ['events', e.events.join(', ')],
    ['status', statusText(e)],
    ['pending', pendingText(e)],
    ['last attempt', lastText(e)],
    ...(e.last_error === null ? [] : ([['last error', e.last_error]] as [string, string][])),
    ['created', formatTime(e.created_at)],
  ]);
}

/** Splits `--events call.*,session.ended` (commas, spaces or both). */
export function eventPatternsOf(value: string): string[] {
  return value
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}

/** `vagent webhook add URL [--events …]`: prints the signing secret, the one time it is shown. */
export async function add(ctx: CommandContext, url: string, flags: { events?: string }): Promise<void> {
  const events = flags.events === undefined ? undefined : eventPatternsOf(flags.events);
  if (events?.length === 0) throw new UsageError('--events needs at least one event type or pattern, such as call.*,session.ended');
  const created = await (await webhooks(ctx)).create({ url, ...(events ? { events } : {}) });
  if (ctx.json) return printJson(created);
  ok(`webhook endpoint ${created.id} added`);
  showEndpoint(created);
  say();
  say(`signing secret: ${created.secret}`);
  hint('This is the only time the secret is shown: store it now (vagent webhook rotate-secret gives a new one).');
  hint('Verify each delivery with a Standard Webhooks library (headers webhook-id, webhook-timestamp, webhook-signature).');
}

/** `vagent webhook list`. */
export async function list(ctx: CommandContext): Promise<void> {
  const res = await (await webhooks(ctx)).list();
  if (ctx.json) return printJson(res);
  await printTable(
    res.data,
    [
      { header: 'ID', cell: (e) => e.id },
      { header: 'URL', cell: (e) => e.url },
      { header: 'EVENTS', cell: (e) => e.events.join(',') },
      { header: 'STATUS', cell: statusText },
      { header: 'PENDING', cell: pendingText },
      { header: 'LAST ATTEMPT', cell: lastText },
      { header: 'CREATED', cell: (e) => formatTime(e.created_at) },
    ],
    'No webhook endpoints yet. Add one: vagent webhook add https://crm.example.com/vagent --events call.ended',
  );
}

/** `vagent webhook show ID`. */
export async function show(ctx: CommandContext, id: string): Promise<void> {
  const e = await (await webhooks(ctx)).get(checkId('webhook', id));
  if (ctx.json) return printJson(e);
  showEndpoint(e);
}

/** `vagent webhook rm ID [--yes]`: the endpoint and its queued deliveries. */
export async function rm(ctx: CommandContext, id: string, flags: DeleteFlags = {}): Promise<void> {
  checkId('webhook', id);
  await confirmDelete(`webhook endpoint ${id} (deliveries not yet sent to it are dropped)`, flags.yes);
  const res = await (await webhooks(ctx)).delete(id);
  if (ctx.json) return printJson(res);
  ok(`webhook endpoint ${res.id} removed`);
}

/** `vagent webhook test ID`: a signed `webhook.test` delivery; exit 1 when the receiver did not answer 2xx. */
export async function test(ctx: CommandContext, id: string): Promise<void> {
  const r = await (await webhooks(ctx)).test(checkId('webhook', id));
  if (ctx.json) printJson(r);
  else if (r.delivered) ok(`--> webhook.test  <-- [${r.status}] in ${r.ms} ms`);
  else say(`--> webhook.test  <-- ${bad(r.status === null ? '[no answer]' : `[${r.status}]`)} ${dim(orDash(r.error))}`);
  if (!r.delivered)
    throw new CliError(`the receiver did not accept the test delivery: ${r.error ?? 'no answer'}`, 1, undefined, 'webhook_test_failed');
}

/** `vagent webhook rotate-secret ID`: prints the new secret; the old one signs too for 24 hours. */
export async function rotateSecret(ctx: CommandContext, id: string): Promise<void> {
  const r = await (await webhooks(ctx)).rotateSecret(checkId('webhook', id));
  if (ctx.json) return printJson(r);
  ok(`webhook endpoint ${r.id} has a new secret`);
  say(`signing secret: ${r.secret}`);
  hint(`The previous secret signs too until ${formatTime(r.previous_secret_expires_at)}: switch your receiver before then.`);
}

const UNITS: Record<string, number> = { d: 86_400, h: 3600, m: 60, s: 1 };

const SINCE_EXAMPLE = 'e.g. --since 15m, --since 1h30m, --since 7d';

/**
 * Seconds of a `--since` duration: units `d`, `h`, `m`, `s` in that order, each at most once
 * (`90s`, `15m`, `1h30m`, `2d12h`), from 1s to 7d.
 * @throws InvalidValueError (exit 1, invalid_request, param `since`, as the daemon refuses a
 *   `since` out of range) for anything else, saying the bound in the flag's own terms.
 */
export function durationS(value: string): number {
  const v = value.trim();
  const shown = quoted(v, 40);
  if (/^-/.test(v))
    throw new InvalidValueError(`--since is how far back from now, without a minus sign, not ${shown}`, 'since', SINCE_EXAMPLE);
  const m = /^(?:(\d{1,7})d)?(?:(\d{1,7})h)?(?:(\d{1,7})m)?(?:(\d{1,7})s)?$/.exec(v);
  if (v === '' || !m)
    throw new InvalidValueError(`--since must be a duration such as 15m, 1h30m or 2d, not ${shown}`, 'since', SINCE_EXAMPLE);
  const seconds = ['d', 'h', 'm', 's'].reduce((sum, unit, i) => sum + Number(m[i + 1] ?? 0) * UNITS[unit]!, 0);
  if (seconds < 1 || seconds > MAX_REPLAY_SINCE_S)
    throw new InvalidValueError(
      `--since must be from 1s to at most 7d (the daemon replays the last 7 days at most), not ${shown}`,
      'since',
      SINCE_EXAMPLE,
    );
  return seconds;
}

/**
 * `vagent webhook replay EVT_ID | --since DURATION [--endpoint ID]` (also `vagent events replay`):
 * queues events again. Every value is checked before anything is sent.
 */
export async function replay(
  ctx: CommandContext,
  eventId: string | undefined,
  flags: { since?: string; endpoint?: string },
): Promise<void> {
  if (eventId === undefined && flags.since === undefined) {
    throw new UsageError('what to send again? give an event id (evt_…) or --since DURATION', 'example: vagent events replay --since 2h');
  }
  if (eventId !== undefined && flags.since !== undefined) throw new UsageError('give an event id (evt_…) or --since DURATION, not both');
  const target =
    flags.endpoint === undefined ? {} : { endpoint_id: checkId('webhook', flags.endpoint, { param: 'endpoint_id', flag: '--endpoint' }) };
  const since = flags.since === undefined ? undefined : durationS(flags.since);
  if (eventId !== undefined) checkId('event', eventId);
  const client = await webhooks(ctx);
  const r = since === undefined ? await client.replayEvent({ event_id: eventId!, ...target }) : await client.replay({ since, ...target });
  if (ctx.json) return printJson(r);
  ok(`${r.queued} ${r.queued === 1 ? 'delivery' : 'deliveries'} queued again`);
}
