/**
 * `vagent admin …`: local commands on a state dir. They open the database directly, so they work
 * with or without a running daemon (SQLite WAL allows both).
 *
 * This file holds what every admin command shares (the flags, opening an existing state dir) and
 * the API key and audit commands; tenants are in admin-tenant.ts, purge and export in
 * admin-data.ts, the audio cache in admin-cache.ts, the database in admin-db.ts.
 */
import fs from 'node:fs';
import { loadSettings } from '../../config/load.js';
import { statePaths } from '../../config/paths.js';
import { loginUrl, readDaemonAddress } from '../../config/daemon-address.js';
import type { Settings } from '../../config/schema.js';
import { openRuntime, type Runtime } from '../../daemon/runtime.js';
import type { CommandContext } from '../context.js';
import { dim, formatTime, hint, ok, orDash, printJson, printTable, say } from '../output.js';
import { CliError, EXIT } from '../errors.js';
import { wholeNumber } from '../number-arg.js';

/** Flags shared by admin commands. */
export interface AdminFlags {
  stateDir?: string;
  config?: string;
}

/**
 * Opens an existing state dir. A missing one is refused rather than created: a mistyped
 * --state-dir would otherwise get a fresh database, and keys no daemon knows about.
 */
export function withRuntime<T>(flags: AdminFlags, fn: (rt: Runtime) => T): T {
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
export async function withRuntimeAsync<T>(flags: AdminFlags, fn: (rt: Runtime) => Promise<T>): Promise<T> {
  const rt = openAdminRuntime(flags);
  try {
    return await fn(rt);
  } finally {
    rt.close();
  }
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
  const limit = flags.limit === undefined ? 50 : wholeNumber('--limit', 'limit', flags.limit, 1, 10_000);
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
