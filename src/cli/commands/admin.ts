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
import { openRuntime, type Runtime } from '../../server/runtime.js';
import type { TenantView } from '../../services/tenants.js';
import { checkWebhookUrl, DEFAULT_SIGNATURE_TOLERANCE_S, SIGNATURE_HEADER, WebhookTargetError } from '../../telephony/routing-webhook.js';
import type { CommandContext } from '../context.js';
import { dim, formatTime, hint, ok, orDash, printFields, printJson, printTable, rupees, say } from '../output.js';
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
  const settings = loadSettings(flags);
  if (!fs.existsSync(statePaths(settings.state_dir).database)) {
    throw new CliError(`no vagent state dir at ${settings.state_dir}`, EXIT.error,
      `start the daemon there once (vagent serve --state-dir ${settings.state_dir}), or pass the right --state-dir / VAGENT_STATE_DIR`);
  }
  const rt = openRuntime(settings, { recover: false });
  try {
    return fn(rt);
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
  await printTable(tenants, [
    { header: 'NAME', cell: (t) => t.name },
    { header: 'CREATED', cell: (t) => formatTime(t.created_at) },
    { header: 'DAILY BUDGET (INR)', cell: (t) => (t.daily_budget_inr === null ? dim('instance default') : String(t.daily_budget_inr)) },
  ], 'No tenants.');
}

/** Flags of `vagent admin tenant set`. */
export interface TenantSetFlags extends AdminFlags {
  /** Rupees a day, `0` (no budget for this tenant) or `default` (the instance setting). */
  budgetInr?: string;
  /** An https URL, or `none`. */
  inboundWebhook?: string;
  webhookSecretStdin?: boolean;
}

/** How to allow what the webhook URL policy refused on purpose (both the daemon and this command read the setting). */
const WEBHOOK_POLICY_HINTS: Partial<Record<string, string>> = {
  scheme_not_allowed: 'only for a receiver you trust on a private network: set VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP=true (or inbound_webhook_allow_http: true in the config file) for vagent serve and for this command',
  address_not_allowed: 'only for a receiver on your own network: set VAGENT_INBOUND_WEBHOOK_ALLOW_PRIVATE=true (or inbound_webhook_allow_private: true in the config file) for vagent serve and for this command',
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
    throw new UsageError(`--budget-inr must be rupees a day (0 = no budget for this tenant) or "default", not "${value}"`,
      'example: --budget-inr 500, --budget-inr 0, --budget-inr default');
  }
  return n;
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
    ['inbound webhook', orDash(t.inbound_webhook_url)],
    ['webhook secret', t.has_inbound_webhook_secret ? 'set (stored encrypted)' : dim('none')],
  ]);
}

/**
 * `vagent admin tenant set NAME [--budget-inr N|default] [--inbound-webhook URL|none]
 * [--webhook-secret-stdin]`: a tenant's daily budget and inbound routing webhook. A webhook
 * set without `--webhook-secret-stdin` gets a generated signing secret, printed only here.
 * @throws UsageError (exit 2) for bad flags; CliError (exit 1) for a URL the webhook policy
 *   (settings `inbound_webhook_allow_http`/`_private`) refuses; ApiError not_found (tenant).
 */
export async function tenantSet(ctx: CommandContext, name: string, flags: TenantSetFlags): Promise<void> {
  if (flags.budgetInr === undefined && flags.inboundWebhook === undefined) {
    throw new UsageError('nothing to set: give --budget-inr and/or --inbound-webhook', `example: vagent admin tenant set ${name} --budget-inr 500`);
  }
  const budget = flags.budgetInr === undefined ? undefined : parseBudget(flags.budgetInr);
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
        checkWebhookUrl(flags.inboundWebhook, { allowHttp: rt.settings.inbound_webhook_allow_http, allowPrivate: rt.settings.inbound_webhook_allow_private });
      } catch (err) {
        if (!(err instanceof WebhookTargetError)) throw err;
        throw new CliError(`${err.reason}: ${err.message}`, EXIT.error, WEBHOOK_POLICY_HINTS[err.reason]);
      }
    }
    let t = tenants.getTenant(name);
    if (budget !== undefined) t = tenants.setBudget(name, budget);
    if (clear) t = tenants.setInboundWebhook(name, null);
    else if (flags.inboundWebhook !== undefined) {
      t = tenants.setInboundWebhook(name, { url: flags.inboundWebhook, secretSealed: credentials.sealText(secret!, name, 'inbound_webhook') });
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
    say(`The receiver must verify the ${SIGNATURE_HEADER} header on every request: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>,`);
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
  await printTable(keys, [
    { header: 'ID', cell: (k) => k.id },
    { header: 'TENANT', cell: (k) => k.tenant },
    { header: 'KEY', cell: (k) => k.hint },
    { header: 'CREATED', cell: (k) => formatTime(k.created_at) },
    { header: 'REVOKED', cell: (k) => (k.revoked_at === null ? dim('-') : formatTime(k.revoked_at)) },
  ], 'No API keys. Create one: vagent admin key create --tenant default');
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
  await printTable(events, [
    { header: 'WHEN', cell: (e) => formatTime(e.at) },
    { header: 'CALLER', cell: (e) => `${e.actor_tenant_id} ${dim(e.actor_key_id)}` },
    { header: 'OWNER', cell: (e) => e.owner_tenant_id },
    { header: 'RESOURCE', cell: (e) => e.resource_id },
    { header: 'ROUTE', cell: (e) => `${e.method} ${e.route}` },
    { header: 'REQUEST', cell: (e) => orDash(e.request_id) },
  ], 'No cross-tenant access recorded.');
}
