/**
 * Wires the services of one daemon (or admin command) over an open store.
 */
import type { Repos } from '../store/index.js';
import { IdempotencyService } from './idempotency.js';
import { NumberService } from './numbers.js';
import { CredentialBox } from './secrets.js';
import { TenantService } from './tenants.js';
import { TrunkService } from './trunks.js';

/** Everything the HTTP layer calls. */
export interface Services {
  repos: Repos;
  tenants: TenantService;
  idempotency: IdempotencyService;
  trunks: TrunkService;
  numbers: NumberService;
  credentials: CredentialBox;
}

/** Options of {@link createServices}. */
export interface ServiceOptions {
  authMode: 'audit' | 'enforce';
  masterKey: Buffer;
  idempotencyRetentionHours: number;
  /** Epoch seconds; injectable for tests. */
  now?: () => number;
}

/** Builds the services over `repos`. */
export function createServices(repos: Repos, options: ServiceOptions): Services {
  const now = options.now ?? (() => Date.now() / 1000);
  const credentials = new CredentialBox(options.masterKey);
  const deps = { repos, authMode: options.authMode, credentials, now };
  const trunks = new TrunkService(deps);
  return {
    repos,
    credentials,
    tenants: new TenantService(repos, now),
    idempotency: new IdempotencyService(repos, options.masterKey, options.idempotencyRetentionHours * 3600, now),
    trunks,
    numbers: new NumberService(deps, trunks),
  };
}
