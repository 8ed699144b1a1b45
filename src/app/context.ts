/**
 * What services know about the request they serve, and what they depend on.
 */
import type { Repos } from '../store/index.js';
import type { EventLog } from './events.js';
import type { CredentialBox } from './secrets.js';
import type { UnitOfWork } from './unit-of-work.js';

/** The principal (the API key holder) of one request. */
export interface Principal {
  tenantId: string;
  keyId: string;
  requestId: string;
  method: string;
  /** The route pattern (`/v1/trunks/:trunk_id`), never the raw URL (it may hold phone numbers). */
  route: string;
}

/** Dependencies shared by services. */
export interface ServiceDeps {
  repos: Repos;
  /** Runs every write of a use case, with its request's idempotent response (docs/unit-of-work.md). */
  uow: UnitOfWork;
  authMode: 'audit' | 'enforce';
  credentials: CredentialBox;
  /** The event log: every state change appends its event in its write step (docs/events.md). */
  events: EventLog;
  /** Current time in epoch seconds (fractional). */
  nowS: () => number;
}
