/**
 * Lines `vagent serve` and `vagent admin …` print for people (stderr) about how the instance is
 * set up: telephony (docs/calls.md "Connecting LiveKit"), the language model (docs/llm.md), tenant isolation (docs/api-decisions.md
 * "Auth"), retention (docs/api-decisions.md "Retention") and the database's space
 * (README.md "What grows on disk, and what bounds it").
 * They never hold a credential: LiveKit is named by host and the name vagent joins rooms as.
 */
import type { Settings } from './schema.js';

/**
 * One line saying whether telephony is configured and how, or how to configure it.
 * Configured: the LiveKit server's host (and port) and the name vagent joins call rooms as — never the URL's
 * user info, the API key or the secret.
 */
export function telephonyNotice(livekit: Settings['livekit']): string {
  if (livekit.url && livekit.api_key && livekit.api_secret) {
    let host: string;
    try {
      host = new URL(livekit.url).host;
    } catch {
      host = 'the configured LiveKit URL';
    }
    return `telephony: LiveKit at ${host}, joining call rooms as "${livekit.agent_name}" (check it: vagent telephony check)`;
  }
  return (
    'telephony: not configured: calls cannot be dialled and inbound calls are refused. ' +
    'To enable it, set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET (or livekit: url, api_key, api_secret in the config file) and restart vagent serve'
  );
}

/**
 * The warning that `auth_mode` `audit` (the default) does not isolate tenants, and how to switch
 * to `enforce`. Printed once by `vagent serve` in audit mode and by `vagent admin tenant create`
 * when a second tenant exists.
 */
export function auditModeNotice(): string {
  return (
    'warning: auth_mode is audit: tenants are not isolated. A key of one tenant can read and change ' +
    "another tenant's resources by id (each such access is recorded: vagent admin audit). " +
    'To isolate tenants, start vagent serve with VAGENT_AUTH_MODE=enforce (or auth_mode: enforce in the config file)'
  );
}

/** `1.5 GiB`, `320 MiB`, `12 KiB`, `512 B` (binary units). */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = n;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u += 1;
  }
  return u === 0 ? `${n} B` : `${v >= 10 ? Math.round(v) : v.toFixed(1)} ${units[u]}`;
}

/**
 * The one line telling the operator that the database never gives space back, and how to
 * change that: logged and printed by `vagent serve` at every start while the
 * database is at `auto_vacuum = NONE` (one too big to convert at open), and shown by
 * `vagent admin db stats`.
 * @param stateDir the state dir, named in the command to run
 * @param bytes the database's size
 */
export function vacuumNotice(stateDir: string, bytes: number): string {
  return (
    `notice: the database (${formatBytes(bytes)}) was created without incremental auto-vacuum, so space freed by ` +
    'expired records is reused but never returned to the disk. To convert and compact it once, stop vagent serve and run: ' +
    `vagent admin db vacuum --state-dir ${stateDir}   (it rewrites the whole file and needs free disk of about twice its size)`
  );
}

/**
 * One line on how long records are kept: the instance's `retention_days` (0: for ever, the
 * default), that tenants may differ, and how to change it or purge by hand.
 */
export function retentionNotice(days: number): string {
  if (days > 0) {
    return (
      `retention: sessions, calls and events older than ${days} day${days === 1 ? '' : 's'} are purged in the background ` +
      '(a tenant may differ: vagent admin tenant set NAME --retention-days N|0|default)'
    );
  }
  return (
    'retention: off, records are kept for ever (the database grows). To purge old ones, set VAGENT_RETENTION_DAYS ' +
    '(or retention_days in the config file), or run vagent admin export then vagent admin purge --before DATE'
  );
}

/**
 * One line on the language model (docs/llm.md): `llm: MODEL at HOST` when `llm.base_url` is set
 * (never the URL's path, query or the key), else `llm: off` and how to turn it on. With an
 * endpoint but no `llm.model`, it says that agents naming no model of their own will not call
 * it; without an endpoint, that a model or key set on their own are not used.
 */
export function llmNotice(llm: Settings['llm']): string {
  if (!llm.base_url) {
    const ignored = [llm.model ? 'llm.model (VAGENT_LLM_MODEL)' : null, llm.api_key ? 'VAGENT_LLM_API_KEY' : null].filter(
      (x): x is string => x !== null,
    );
    const unused =
      ignored.length > 0 ? ` ${ignored.join(' and ')} ${ignored.length > 1 ? 'are' : 'is'} set but not used without a base URL.` : '';
    return `llm: off (agents answer from their rules only).${unused} To enable it, set VAGENT_LLM_BASE_URL and VAGENT_LLM_MODEL (or llm: base_url, model in the config file) and restart vagent serve`;
  }
  let host: string;
  try {
    host = new URL(llm.base_url).host;
  } catch {
    host = 'the configured endpoint';
  }
  if (!llm.model) {
    return (
      `llm: no default model at ${host}, requests time out after ${llm.timeout_ms} ms. Only agents whose llm block names a model ` +
      'call it; the others (the shipped examples among them) answer from their rules (trace: not_configured). ' +
      'To give them one, set VAGENT_LLM_MODEL (or llm: model in the config file) and restart vagent serve'
    );
  }
  return `llm: ${llm.model} at ${host}, requests time out after ${llm.timeout_ms} ms`;
}

/**
 * The warning that the daemon's default model (`llm.model`) has no price in the price list, so
 * its calls count as costing 0 (the same warning `vagent agent apply` gives for an agent's model;
 * docs/agents.md "LLM"). @param pricingFile the price list in use, named in the fix
 */
export function llmPriceNotice(model: string, pricingFile: string): string {
  return (
    `warning: the daemon's model ${model} (llm.model) has no price in the price list: its calls will cost 0 in costs ` +
    `and the daily budget. To price it, add it under llm: in ${pricingFile} (or point VAGENT_PRICING_FILE at a copy) and restart vagent serve`
  );
}
