/**
 * The state store: one SQLite database and its repositories. Nothing outside `store/`
 * writes SQL (docs/architecture.md "Layers").
 */
import { Store } from './database.js';
import { AgentRepo } from './repos/agents.js';
import { CallRepo } from './repos/calls.js';
import { TelephonyEventRepo } from './repos/telephony-events.js';
import { CarrierRepo } from './repos/carriers.js';
import { EventRepo } from './repos/events.js';
import { IdempotencyRepo } from './repos/idempotency.js';
import { RetentionRepo } from './repos/retention.js';
import { SessionRepo } from './repos/sessions.js';
import { TenantRepo } from './repos/tenants.js';
import { NumberRepo, TrunkRepo } from './repos/telephony.js';
import { WebhookRepo } from './repos/webhooks.js';

export { BatchAbortedError, Store, type WriteOptions } from './database.js';
export type { TenantRow, ApiKeyRow, AuditEventRow, TranscriptRedaction } from './repos/tenants.js';
export type { TrunkRow, NumberRow } from './repos/telephony.js';
export type { IdempotencyRow } from './repos/idempotency.js';
export type { AgentRow } from './repos/agents.js';
export type { CarrierCredentialRow, StreamTokenRow } from './repos/carriers.js';
export type { SessionListRow, SessionRow } from './repos/sessions.js';
export type { SessionBatch, SessionCounts } from './repos/retention.js';
export type { CallRow, CallWithSession, DialMove, DialStatus } from './repos/calls.js';
export type { TelephonyEventRow } from './repos/telephony-events.js';
export type { EventFilter, EventRow, NewEvent } from './repos/events.js';
export type { WebhookBacklogRow, WebhookDeliveryRow, WebhookEndpointRow, WebhookSecretsRow } from './repos/webhooks.js';

/** The repositories of one open store. */
export interface Repos {
  store: Store;
  tenants: TenantRepo;
  idempotency: IdempotencyRepo;
  trunks: TrunkRepo;
  numbers: NumberRepo;
  agents: AgentRepo;
  sessions: SessionRepo;
  calls: CallRepo;
  telephonyEvents: TelephonyEventRepo;
  /** What retention deletes (docs/api-decisions.md "Retention"). */
  retention: RetentionRepo;
  /** Carrier credentials and media stream tokens (docs/carrier-auth.md). */
  carriers: CarrierRepo;
  /** The event log (docs/events.md). */
  events: EventRepo;
  /** Webhook endpoints and their delivery queue (docs/events.md "Webhooks"). */
  webhooks: WebhookRepo;
}

/** Opens the database at `file` and prepares every repository over it. */
export function openRepos(file: string): Repos {
  const store = Store.open(file);
  return {
    store,
    tenants: new TenantRepo(store.db),
    idempotency: new IdempotencyRepo(store.db),
    trunks: new TrunkRepo(store.db),
    numbers: new NumberRepo(store.db),
    agents: new AgentRepo(store.db),
    sessions: new SessionRepo(store.db),
    calls: new CallRepo(store.db),
    telephonyEvents: new TelephonyEventRepo(store.db),
    retention: new RetentionRepo(store.db),
    carriers: new CarrierRepo(store.db),
    events: new EventRepo(store.db),
    webhooks: new WebhookRepo(store.db),
  };
}
