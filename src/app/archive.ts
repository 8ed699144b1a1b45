/**
 * `vagent admin export` (docs/api-decisions.md "Retention"): sessions as an operator's own archive, before a
 * purge deletes them. One record per session: Session detail as `GET /v1/sessions/{id}` shows
 * it (its `turns` and the extension `session`), its tenant, and `calls`: the session's call as
 * `GET /v1/calls/{id}` shows it (none for a session opened without one). Nothing secret is in
 * either view (no keys, no trunk credentials, no webhook secrets, no idempotency keys).
 *
 * A call's recording (docs/media.md "Recordings") shows as its `recording_url`; the record's
 * `recording` names its file in the state dir, which `vagent admin export --recordings DIR` copies.
 *
 * Sessions are read a page at a time in storage order, so memory stays bounded however many
 * the store holds, and no read transaction stays open between pages.
 */
import type { CallStatusView } from './call-views.js';
import { callStatusView } from './call-views.js';
import type { Services } from './index.js';
import type { SessionDetailView } from './session-types.js';

/** Sessions read per page. */
const PAGE = 200;

/** What to export. */
export interface ExportScope {
  /** One tenant's sessions, or null for every tenant's. */
  tenant: string | null;
  /** Sessions created at or after this time, epoch seconds (default: the first). */
  since: number;
  /** Sessions created before this time, epoch seconds (default: all). */
  before: number;
}

/** One exported session (one JSON line). */
export type ExportedSession = SessionDetailView & {
  /** The tenant the session belongs to. */
  tenant: string;
  /** The session's call in the spec's Call status shape (at most one). */
  calls: CallStatusView[];
  /** The call's recording in the state dir (absolute path), or null when it has none. */
  recording: string | null;
};

/**
 * The sessions in `scope`, oldest first, each as an {@link ExportedSession}.
 * @throws Error when a session's agent revision is missing from the store (never purged while
 *   a session pins it).
 */
export function* exportSessions(services: Services, scope: ExportScope): Generator<ExportedSession> {
  const { repos } = services;
  let after = 0;
  for (;;) {
    const rows = repos.sessions.page(scope.tenant, scope.since, scope.before, after, PAGE);
    for (const row of rows) {
      const call = repos.calls.get(row.id);
      const recorded = call !== undefined && call.transport !== null && services.recordings.has(row.id);
      yield {
        ...services.sessions.detailOfRow(row),
        tenant: row.tenant_id,
        calls: call ? [callStatusView(call, recorded ? services.recordings.urlOf(row.id) : null)] : [],
        recording: recorded ? services.recordings.pathOf(row.id) : null,
      };
    }
    if (rows.length < PAGE) return;
    after = rows[rows.length - 1]!.seq;
  }
}
