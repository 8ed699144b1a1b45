/**
 * Session detail (`GET /v1/sessions/{id}`; `SessionDetailSchema` in src/contract/sessions.ts)
 * of a session held in memory and its row: the spec's fields and turns, then vagent's extension
 * object `session` (docs/api-decisions.md "Sessions"). Pure.
 */
import { costView, ZERO_COST } from '../domain/money.js';
import { buildSummary } from '../engine/summary.js';
import type { SessionRow } from '../store/index.js';
import { sessionDetail, stepViews, type SessionDetailExtension } from './session-model.js';
import type { LiveSession, SessionDetailView, Summary } from './session-types.js';

/** Session detail of `s` (its row `row`, its stored turns `turns`). */
export function detailViewOf(s: LiveSession, row: SessionRow, turns: Array<Record<string, unknown>>): SessionDetailView {
  let steps: SessionDetailExtension['steps'] = [];
  try {
    steps = stepViews(s.agent.def.steps, buildSummary(s.agent, s.state));
  } catch {
    // As for the summary: a state the summary cannot be built from shows no steps.
  }
  // The row says ended as soon as the end commits (the session list and the call's status read
  // it); `s` is marked ended only once that commit is durable. Both views must agree.
  const ended = s.status === 'ended' || row.status === 'ended';
  const summary = s.summary ?? (ended && row.summary ? (JSON.parse(row.summary) as Summary) : null);
  const outcome = ended && summary && 'outcome' in summary ? summary.outcome : null;
  return {
    ...sessionDetail(s.id, s.metrics, turns),
    session: {
      agent_id: row.agent_id,
      status: ended ? 'ended' : 'open',
      title: row.title,
      customer_name: row.customer_name,
      created_at: row.created_at,
      ended_at: ended ? row.ended_at : null,
      outcome,
      steps,
      opening: { tts_chars: s.metrics.opening_tts_chars ?? 0, cost: costView(s.metrics.opening_cost ?? ZERO_COST) },
    },
  };
}
