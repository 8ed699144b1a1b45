/**
 * `vagent admin tenant …`: create, list, show and set a tenant (its daily budget, retention and
 * inbound routing webhook with its signing secret), on a state dir directly.
 */
import crypto from 'node:crypto';
import { readDaemonAddress } from '../../config/daemon-address.js';
import { auditModeNotice } from '../../config/notices.js';
import { RECORDING_MODES, type RecordingMode } from '../../domain/agent.js';
import { MAX_RETENTION_DAYS, type TenantView } from '../../app/tenants.js';
import { DEFAULT_SIGNATURE_TOLERANCE_S, SIGNATURE_HEADER } from '../../adapters/webhook/webhook-signature.js';
import { checkWebhookUrl, WebhookTargetError } from '../../adapters/webhook/webhook-target.js';
import type { CommandContext } from '../context.js';
import { dim, formatTime, hint, ok, orDash, printFields, printJson, printTable, quoted, rupees, say } from '../output.js';
import { CliError, EXIT, InvalidValueError, UsageError } from '../errors.js';
import { readStdin } from '../prompt.js';
import { withRuntime, type AdminFlags } from './admin.js';

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
  /** `off`, `mono`, `dual` or `default` (not set). */
  recording?: string;
  /** An https URL, or `none`. */
  inboundWebhook?: string;
  /** `off`, `digits` or `text` (docs/events.md "Redaction"). */
  redactTranscripts?: string;
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
 * @throws InvalidValueError (exit 1, invalid_request, as the tenant service refuses it) for anything else.
 */
function parseBudget(value: string): number | null {
  if (value === 'default') return null;
  const n = /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isFinite(n)) {
    throw new InvalidValueError(
      `--budget-inr must be rupees a day (0 = no budget for this tenant) or "default", not ${quoted(value)}`,
      'budget',
      'example: --budget-inr 500, --budget-inr 0, --budget-inr default',
    );
  }
  return n;
}

/**
 * `--retention-days`: `default` → null (the instance's `retention_days` applies), else whole
 * days from 0 (keep this tenant's records for ever) to {@link MAX_RETENTION_DAYS}.
 * @throws InvalidValueError (exit 1, invalid_request, as the tenant service refuses it) for anything else.
 */
function parseRetentionDays(value: string): number | null {
  if (value === 'default') return null;
  const n = /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : NaN;
  if (!Number.isInteger(n) || n > MAX_RETENTION_DAYS) {
    throw new InvalidValueError(
      `--retention-days must be whole days from 0 (keep for ever) to ${MAX_RETENTION_DAYS}, or "default", not ${quoted(value)}`,
      'retention_days',
      'example: --retention-days 90, --retention-days 0, --retention-days default',
    );
  }
  return n;
}

/**
 * `--recording`: `default` → null (not set), else `off`, `mono` or `dual`.
 * @throws InvalidValueError (exit 1, invalid_request, as the tenant service refuses it) for anything else.
 */
function parseRecording(value: string): RecordingMode | null {
  if (value === 'default') return null;
  if (!(RECORDING_MODES as readonly string[]).includes(value)) {
    throw new InvalidValueError(
      `--recording must be off, mono, dual or "default", not ${quoted(value)}`,
      'recording',
      'example: --recording dual, --recording off, --recording default',
    );
  }
  return value as RecordingMode;
}

function recordingText(mode: RecordingMode | null): string {
  if (mode === null) return dim('not set (off unless the agent says)');
  if (mode === 'off') return 'off';
  return mode === 'dual' ? 'dual (caller left, agent right)' : 'mono (both parties mixed)';
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
    ['transcripts in events', t.redact_transcripts === 'off' ? 'kept' : t.redact_transcripts === 'digits' ? 'digits masked' : 'left out'],
    ['recording', recordingText(t.recording)],
    ['inbound webhook', orDash(t.inbound_webhook_url)],
    ['webhook secret', t.has_inbound_webhook_secret ? 'set (stored encrypted)' : dim('none')],
  ]);
}

/**
 * `vagent admin tenant set NAME [--budget-inr N|default] [--retention-days N|0|default]
 * [--inbound-webhook URL|none] [--webhook-secret-stdin]`: a tenant's daily budget, retention
 * and inbound routing webhook. A webhook
 * set without `--webhook-secret-stdin` gets a generated signing secret, printed only here.
 * @throws UsageError (exit 2) for no flag or flags that need each other; InvalidValueError (exit 1,
 *   invalid_request) for a value the tenant service would refuse; CliError (exit 1) for a URL the webhook policy
 *   (settings `inbound_webhook_allow_http`/`_private`) refuses; ApiError not_found (tenant).
 */
export async function tenantSet(ctx: CommandContext, name: string, flags: TenantSetFlags): Promise<void> {
  if (
    flags.budgetInr === undefined &&
    flags.inboundWebhook === undefined &&
    flags.retentionDays === undefined &&
    flags.redactTranscripts === undefined &&
    flags.recording === undefined
  ) {
    throw new UsageError(
      'nothing to set: give --budget-inr, --retention-days, --recording, --redact-transcripts and/or --inbound-webhook',
      `example: vagent admin tenant set ${name} --budget-inr 500`,
    );
  }
  const budget = flags.budgetInr === undefined ? undefined : parseBudget(flags.budgetInr);
  const retention = flags.retentionDays === undefined ? undefined : parseRetentionDays(flags.retentionDays);
  const redaction = flags.redactTranscripts;
  if (redaction !== undefined && !['off', 'digits', 'text'].includes(redaction)) {
    throw new InvalidValueError(
      `--redact-transcripts must be off, digits or text, not ${quoted(redaction)}`,
      'redact_transcripts',
      'digits: every digit heard, said or keyed is masked in its events; text: that text is left out of them',
    );
  }
  const recording = flags.recording === undefined ? undefined : parseRecording(flags.recording);
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
    if (redaction !== undefined) t = tenants.setRedaction(name, redaction);
    if (recording !== undefined) t = tenants.setRecording(name, recording);
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
