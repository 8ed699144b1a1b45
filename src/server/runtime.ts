/**
 * Opens a state dir for use: directory (0700), master key, database with migrations,
 * services, the `default` tenant on a fresh dir, and recovery of crashed idempotency claims.
 * Used by the daemon and by the local `vagent admin` commands.
 */
import type { Settings } from '../config/schema.js';
import { statePaths } from '../config/paths.js';
import { createServices, type Services } from '../services/index.js';
import { openRepos } from '../store/index.js';
import { ensureStateDir, loadMasterKey } from '../store/state-dir.js';

/** An opened state dir. */
export interface Runtime {
  settings: Settings;
  services: Services;
  /** True when this open created tenant `default` (a fresh state dir). */
  fresh: boolean;
  /** Idempotency claims released and records purged at open. */
  recovered: { released: number; purged: number };
  close(): void;
}

/**
 * Opens the state dir named by `settings.state_dir`.
 * @param options `recover: false` for admin commands (see above); default true.
 * @throws StateDirError for an unusable dir or master key; Error for a database it cannot migrate.
 */
export function openRuntime(settings: Settings, options: { recover?: boolean } = {}): Runtime {
  ensureStateDir(settings.state_dir);
  const masterKey = loadMasterKey(settings.state_dir, settings.master_key);
  const repos = openRepos(statePaths(settings.state_dir).database);
  try {
    const services = createServices(repos, {
      authMode: settings.auth_mode,
      masterKey,
      idempotencyRetentionHours: settings.idempotency_retention_hours,
    });
    const fresh = services.tenants.ensureDefaultTenant();
    // Only the lock-holding daemon may release claims: an admin command running beside a live
    // daemon must not free claims of requests that are still in flight.
    const recovered = options.recover === false ? { released: 0, purged: 0 } : services.idempotency.recover();
    return { settings, services, fresh, recovered, close: () => repos.store.close() };
  } catch (err) {
    repos.store.close();
    throw err;
  }
}
