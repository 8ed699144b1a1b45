/**
 * `vagent admin …`: local commands on a state dir (DESIGN.md §5). They open the database
 * directly, so they work with or without a running daemon (SQLite WAL allows both).
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import { loadSettings } from '../../config/load.js';
import { statePaths } from '../../config/paths.js';
import { loginUrl, readDaemonAddress } from '../../config/daemon-address.js';
import { auditModeNotice } from '../../config/notices.js';
import type { Settings } from '../../config/schema.js';
import { isoTimeMs, startOfLocalDay } from '../../domain/time.js';
import { exportSessions } from '../../services/archive.js';
import type { PurgeCounts } from '../../services/retention.js';
import { openRuntime, type Runtime } from '../../server/runtime.js';
import { MAX_RETENTION_DAYS, type TenantView } from '../../services/tenants.js';
import { checkWebhookUrl, DEFAULT_SIGNATURE_TOLERANCE_S, SIGNATURE_HEADER, WebhookTargetError } from '../../telephony/routing-webhook.js';
import type { CommandContext } from '../context.js';
import { dim, formatTime, formatTimeIn, hint, ok, orDash, printFields, printJson, printTable, rupees, say } from '../output.js';
import { CliError, EXIT, UsageError } from '../errors.js';
import { readStdin } from '../prompt.js';

/** Flags shared by admin commands. */
export interface AdminFlags {
  stateDir?: string;
  config?: string;
}

/**
 * Opens an existing state dir. A missing one is refused rather than created: a mistyped
 * --state-dir would otherwise get a fresh database, and keys no daemon knows about.
 */
function withRuntime<T>(flags: AdminFlags, fn: (rt: Runtime) => T): T {
  const rt = openAdminRuntime(flags);
  try {
    return fn(rt);
  } finally {
    rt.close();
  }
}

/**
 * The settings of `flags` (config file, environment, flags), for a state dir that exists.
 * @throws CliError (exit 1) when the state dir holds no database: a mistyped --state-dir.
 */
export function existingStateSettings(flags: AdminFlags): Settings {
  const settings = loadSettings(flags);
  if (!fs.existsSync(statePaths(settings.state_dir).database)) {
    throw new CliError(
      `no vagent state dir at ${settings.state_dir}`,
      EXIT.error,
      `start the daemon there once (vagent serve --state-dir ${settings.state_dir}), or pass the right --state-dir / VAGENT_STATE_DIR`,
    );
  }
  return settings;
}

/** The runtime of an existing state dir, opened without start-up recovery (a daemon may serve it). @throws CliError when there is none. */
function openAdminRuntime(flags: AdminFlags): Runtime {
  return openRuntime(existingStateSettings(flags), { recover: false });
}

/** {@link withRuntime} for a command that awaits (a purge's batches, an export's writes). */
async function withRuntimeAsync<T>(flags: AdminFlags, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = openAdminRuntime(flags);
  try {
    return await fn(rt);
  } finally {
    rt.close();
  }
}

/**
 * `vagent admin tenant create NAME`. When the instance runs in `auth_mode` `audit` (as the
 * daemon of this state dir recorded it, else these settings) and a second tenant now exists,
 * warns once on stderr that tenants are not isolated and how to switch to `enforce`.
 */
export function tenantCreate(ctx: CommandContext, name: string, flags: AdminFlags): void {
  const { t, unisolated } = withRuntime(flags, (rt) => {
    const created = rt.services.tenants.createTenant(name);
    const mode = readDaemonAddress(rt.settings.state_dir)?.auth_mode ?? rt.settings.auth_mode;
    return { t: created, unisolated: mode === 'audit' && rt.services.tenants.listTenants().length >= 2 };
  });
  if (unisolated) hint(auditModeNotice());
  if (ctx.json) return printJson(t);
  ok(`tenant ${t.name} created`);
  hint(`next: vagent admin key create --tenant ${t.name}`);
}

/** `vagent admin tenant list`. */
export async function tenantList(ctx: CommandContext, flags: AdminFlags): Promise<void> {
  const tenants = withRuntime(flags, (rt) => rt.services.tenants.listTenants());
  if (ctx.json) return printJson({ data: tenants });
  await printTable(
    tenants,
    [
      { header: 'NAME', cell: (t) => t.name },
      { header: 'CREATED', cell: (t) => formatTime(t.created_at) },
      {
        header: 'DAILY BUDGET (INR)',
        cell: (t) => (t.daily_budget_inr === null ? dim('instance default') : String(t.daily_budget_inr)),
      },
      { header: 'RETENTION', cell: (t) => retentionText(t.retention_days, true) },
    ],
    'No tenants.',
  );
}

/** Flags of `vagent admin tenant set`. */
export interface TenantSetFlags extends AdminFlags {
  /** Rupees a day, `0` (no budget for this tenant) or `default` (the instance setting). */
  budgetInr?: string;
  /** Whole days, `0` (keep for ever) or `default` (the instance's `retention_days`). */
  retentionDays?: string;
  /** An https URL, or `none`. */
  inboundWebhook?: string;
  webhookSecretStdin?: boolean;
}

/** How to allow what the webhook URL policy refused on purpose (both the daemon and this command read the setting). */
const WEBHOOK_POLICY_HINTS: Partial<Record<string, string>> = {
  scheme_not_allowed:
    'only for a receiver you trust on a private network: set VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true (or inbound_webhook_allow_http: true in the config file) for vagent serve and for this command',
  address_not_allowed:
    'only for a receiver on your own network: set VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true (or inbound_webhook_allow_private: true in the config file) for vagent serve and for this command',
};

/** Shortest signing secret accepted from stdin (a generated one has 32 random characters). */
const MIN_SECRET_LENGTH = 16;

/** A new webhook signing secret: `whsec_` + 32 base64url characters (192 random bits). */
function newWebhookSecret(): string {
  return `whsec_${crypto.randomBytes(24).toString('base64url')}`;
}

/**
 * `--budget-inr`: `default` → null (the instance's `tenant_daily_budget_inr` applies), else
 * rupees from 0 (no budget for this tenant).
 * @throws UsageError (exit 2) for anything else.
 */
function parseBudget(value: string): number | null {
  if (value === 'default') return null;
  const n = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n)) {
    throw new UsageError(
      `--budget-inr must be rupees a day (0 = no budget for this tenant) or "default", not "${value}"`,
      'example: --budget-inr 500, --budget-inr 0, --budget-inr default',
    );
  }
  return n;
}

/**
 * `--retention-days`: `default` → null (the instance's `retention_days` applies), else whole
 * days from 0 (keep this tenant's records for ever) to {@link MAX_RETENTION_DAYS}.
 * @throws UsageError (exit 2) for anything else.
 */
function parseRetentionDays(value: string): number | null {
  if (value === 'default') return null;
  const n = /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n > MAX_RETENTION_DAYS) {
    throw new UsageError(
      `--retention-days must be whole days from 0 (keep for ever) to ${MAX_RETENTION_DAYS}, or "default", not "${value}"`,
      'example: --retention-days 90, --retention-days 0, --retention-days default',
    );
  }
  return n;
}

function retentionText(days: number | null, short = false): string {
  if (days === null) return dim('instance default');
  if (days === 0) return short ? 'keep' : 'kept for ever (0)';
  return `${days} day${days === 1 ? '' : 's'}`;
}

function budgetText(inr: number | null): string {
  if (inr === null) return dim('instance default');
  return inr === 0 ? 'none (0: no budget for this tenant)' : `${rupees(inr)} a day`;
}

function printTenant(t: TenantView): void {
  printFields([
    ['tenant', t.name],
    ['created', formatTime(t.created_at)],
    ['daily budget', budgetText(t.daily_budget_inr)],
    ['retention', retentionText(t.retention_days)],
    ['inbound webhook', orDash(t.inbound_webhook_url)],
    ['webhook secret', t.has_inbound_webhook_secret ? 'set (stored encrypted)' : dim('none')],
  ]);
}

/**
 * `vagent admin tenant set NAME [--budget-inr N|default] [--retention-days N|0|default]
 * [--inbound-webhook URL|none] [--webhook-secret-stdin]`: a tenant's daily budget, retention
 * (issue 15 item 2) and inbound routing webhook. A webhook
 * set without `--webhook-secret-stdin` gets a generated signing secret, printed only here.
 * @throws UsageError (exit 2) for bad flags; CliError (exit 1) for a URL the webhook policy
 *   (settings `inbound_webhook_allow_http`/`_private`) refuses; ApiError not_found (tenant).
 */
export async function tenantSet(ctx: CommandContext, name: string, flags: TenantSetFlags): Promise<void> {
  if (flags.budgetInr === undefined && flags.inboundWebhook === undefined && flags.retentionDays === undefined) {
    throw new UsageError(
      'nothing to set: give --budget-inr, --retention-days and/or --inbound-webhook',
      `example: vagent admin tenant set ${name} --budget-inr 500`,
    );
  }
  const budget = flags.budgetInr === undefined ? undefined : parseBudget(flags.budgetInr);
  const retention = flags.retentionDays === undefined ? undefined : parseRetentionDays(flags.retentionDays);
  const clear = flags.inboundWebhook === 'none';
  if (flags.webhookSecretStdin && (flags.inboundWebhook === undefined || clear)) {
    throw new UsageError('--webhook-secret-stdin needs --inbound-webhook URL');
  }
  let secret: string | undefined;
  if (flags.webhookSecretStdin) {
    secret = (await readStdin()).trim();
    if (secret.length < MIN_SECRET_LENGTH || /\s/.test(secret)) {
      throw new UsageError(`the webhook secret on stdin must be at least ${MIN_SECRET_LENGTH} characters without spaces`);
    }
  }
  const generated = flags.inboundWebhook !== undefined && !clear && secret === undefined;
  if (generated) secret = newWebhookSecret();

  const view = withRuntime(flags, (rt) => {
    const { tenants, credentials } = rt.services;
    if (flags.inboundWebhook !== undefined && !clear) {
      try {
        checkWebhookUrl(flags.inboundWebhook, {
          allowHttp: rt.settings.inbound_webhook_allow_http,
          allowPrivate: rt.settings.inbound_webhook_allow_private,
        });
      } catch (err) {
        if (!(err instanceof WebhookTargetError)) throw err;
        throw new CliError(`${err.reason}: ${err.message}`, EXIT.error, WEBHOOK_POLICY_HINTS[err.reason]);
      }
    }
    let t = tenants.getTenant(name);
    if (budget !== undefined) t = tenants.setBudget(name, budget);
    if (retention !== undefined) t = tenants.setRetention(name, retention);
    if (clear) t = tenants.setInboundWebhook(name, null);
    else if (flags.inboundWebhook !== undefined) {
      t = tenants.setInboundWebhook(name, {
        url: flags.inboundWebhook,
        secretSealed: credentials.sealText(secret!, name, 'inbound_webhook'),
      });
    }
    return t;
  });

  if (ctx.json) return printJson(generated ? { ...view, webhook_secret: secret } : view);
  ok(`tenant ${view.name} updated`);
  printTenant(view);
  if (generated) {
    say();
    say('Webhook signing secret (shown only this once; store it with the receiver now):');
    say(`  ${secret}`);
    say(
      `The receiver must verify the ${SIGNATURE_HEADER} header on every request: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>,`,
    );
    say(`compared in constant time, and refuse a t more than ${DEFAULT_SIGNATURE_TOLERANCE_S / 60} minutes old.`);
  }
}

/** `vagent admin tenant show NAME`: budget and webhook; whether a signing secret is set, never the secret. */
export function tenantShow(ctx: CommandContext, name: string, flags: AdminFlags): void {
  const t = withRuntime(flags, (rt) => rt.services.tenants.getTenant(name));
  if (ctx.json) return printJson(t);
  printTenant(t);
}

/**
 * `vagent admin key create --tenant NAME`: prints the key once on stdout, and on stderr how to
 * log in at the daemon's real address ({@link loginUrl}: public URL, else where the daemon of
 * this state dir last listened, else these settings' host and port).
 */
export function keyCreate(ctx: CommandContext, flags: AdminFlags & { tenant: string }): void {
  const created = withRuntime(flags, (rt) => ({
    ...rt.services.tenants.createKey(flags.tenant),
    url: loginUrl(rt.settings, readDaemonAddress(rt.settings.state_dir)),
  }));
  if (ctx.json) return printJson({ key: created.key, tenant: created.tenant });
  say(created.key);
  hint(`API key ${created.id} for tenant ${created.tenant}. It is shown only this once; store it now.`);
  hint(`use it: vagent login --url ${created.url}   (paste the key), or export VAGENT_API_KEY=<key>`);
}

/** `vagent admin key list [--tenant NAME]`. */
export async function keyList(ctx: CommandContext, flags: AdminFlags & { tenant?: string }): Promise<void> {
  const keys = withRuntime(flags, (rt) => rt.services.tenants.listKeys(flags.tenant));
  if (ctx.json) return printJson({ data: keys });
  await printTable(
    keys,
    [
      { header: 'ID', cell: (k) => k.id },
      { header: 'TENANT', cell: (k) => k.tenant },
      { header: 'KEY', cell: (k) => k.hint },
      { header: 'CREATED', cell: (k) => formatTime(k.created_at) },
      { header: 'REVOKED', cell: (k) => (k.revoked_at === null ? dim('-') : formatTime(k.revoked_at)) },
    ],
    'No API keys. Create one: vagent admin key create --tenant default',
  );
}

/** `vagent admin key revoke ID`. */
export function keyRevoke(ctx: CommandContext, id: string, flags: AdminFlags): void {
  const key = withRuntime(flags, (rt) => rt.services.tenants.revokeKey(id));
  if (ctx.json) return printJson(key);
  ok(`key ${key.id} (${key.hint}) of tenant ${key.tenant} revoked; requests with it now get 401`);
}

/** `vagent admin audit [--tenant NAME] [--limit N]`: cross-tenant accesses seen in audit mode. */
export async function audit(ctx: CommandContext, flags: AdminFlags & { tenant?: string; limit?: string }): Promise<void> {
  const limit = flags.limit === undefined ? 50 : Number(flags.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 10000) throw new UsageError('--limit must be a whole number from 1 to 10000');
  const events = withRuntime(flags, (rt) => rt.services.tenants.listAudit(limit, flags.tenant));
  if (ctx.json) return printJson({ data: events });
  await printTable(
    events,
    [
      { header: 'WHEN', cell: (e) => formatTime(e.at) },
      { header: 'CALLER', cell: (e) => `${e.actor_tenant_id} ${dim(e.actor_key_id)}` },
      { header: 'OWNER', cell: (e) => e.owner_tenant_id },
      { header: 'RESOURCE', cell: (e) => e.resource_id },
      { header: 'ROUTE', cell: (e) => `${e.method} ${e.route}` },
      { header: 'REQUEST', cell: (e) => orDash(e.request_id) },
    ],
    'No cross-tenant access recorded.',
  );
}

/** A time given on the command line: `YYYY-MM-DD` or an ISO 8601 time with its offset. */
const WITH_OFFSET = /T[0-9:.]+(?:[Zz]|[+-][0-9]{2}:?[0-9]{2})$/;

/**
 * A `--before`/`--since` value in epoch seconds: `YYYY-MM-DD` is the start of that day in the
 * `timezone` setting; otherwise a full ISO 8601 time with an offset (`Z` or `+05:30`).
 * @throws UsageError (exit 2) for anything else (a time without an offset would depend on the machine's zone).
 */
function parseCutoff(flag: string, value: string, timeZone: string): number {
  const v = value.trim();
  const day = /^\d{4}-\d{2}-\d{2}$/.test(v) ? startOfLocalDay(v, timeZone) : null;
  if (day !== null) return day;
  const ms = WITH_OFFSET.test(v) ? isoTimeMs(v) : null;
  if (ms === null) {
    throw new UsageError(
      `${flag} must be a date YYYY-MM-DD (the start of that day in ${timeZone}) or an ISO 8601 time with its offset, not "${value}"`,
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
 * `vagent admin purge --before DATE [--tenant NAME] [--dry-run]` (issue 15 item 2): deletes
 * what is older than the cut-off, whatever the retention settings, by the same rules and in
 * the same batches as the daemon's background purge, so it can run beside a serving daemon.
 * `--dry-run` counts exactly what would be deleted and changes nothing.
 * @throws UsageError (exit 2) without --before or for a malformed date; ApiError invalid_request
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
 * `vagent admin export [--tenant NAME] [--since DATE] [--before DATE] [--output FILE] [--force]`
 * (issue 15 item 2): sessions as JSON lines, one per session with its turns and calls (see
 * services/archive.ts), oldest first, to stdout or to a new file of mode 0600. Reads a page of
 * sessions at a time and waits for the output to drain, so memory stays bounded.
 * @throws UsageError (exit 2) for a malformed date or `--since` not before `--before`; CliError
 *   for an existing `--output` file without `--force`; ApiError not_found (tenant).
 */
export async function exportSessionsCommand(ctx: CommandContext, flags: ExportFlags): Promise<void> {
  const result = await withRuntimeAsync(flags, async (rt) => {
    const tz = rt.settings.timezone;
    const since = flags.since === undefined ? 0 : parseCutoff('--since', flags.since, tz);
    const before = flags.before === undefined ? Number.MAX_SAFE_INTEGER : parseCutoff('--before', flags.before, tz);
    if (since >= before) throw new UsageError('--since must be before --before');
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
    const stream: NodeJS.WritableStream = fd === null ? process.stdout : fs.createWriteStream('', { fd, autoClose: true });
    let sessions = 0;
    try {
      for (const record of exportSessions(rt.services, { tenant: flags.tenant ?? null, since, before })) {
        sessions += 1;
        if (!stream.write(`${JSON.stringify(record)}\n`)) await drained(stream);
      }
    } finally {
      if (fd !== null)
        await new Promise<void>((resolve, reject) => stream.end((err?: unknown) => (err ? reject(err as Error) : resolve())));
    }
    return { sessions };
  });
  if (flags.output === undefined) {
    if (!ctx.json) hint(`${result.sessions} session${result.sessions === 1 ? '' : 's'} exported`);
    return;
  }
  if (ctx.json) return printJson({ sessions: result.sessions, output: flags.output });
  ok(`${result.sessions} session${result.sessions === 1 ? '' : 's'} exported to ${flags.output} (mode 0600)`);
}
