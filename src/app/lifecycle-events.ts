/**
 * What the session and call use cases record in the event log (docs/events.md): the events of a
 * session's open, turns and end, and a call's end with its whole report. Pure builders and one
 * writer the use cases call from their write steps.
 */
import type { TurnResult } from '../contract/index.js';
import type { EndReason } from '../domain/events.js';
import { openingClips } from '../engine/turn.js';
import { costView, microToInr, totalMicro, ZERO_COST } from '../domain/money.js';
import type { CallWithSession, Repos } from '../store/index.js';
import type { EventInput, EventLog } from './events.js';
import type { SessionMetrics, StoredTurn } from './session-model.js';
import type { LiveSession, Summary } from './session-types.js';
import type { Tx } from './unit-of-work.js';

/**
 * `session.opened`: the agent, the customer's name, the title, the opening the agent says and
 * what the open cost (INR); `call_id` set when the session is a call's own (the call and its
 * session share the number N).
 */
export function sessionOpenedEvent(s: LiveSession, title: string | null, ofCall = false): EventInput {
  return {
    tenantId: s.tenantId,
    type: 'session.opened',
    sessionId: s.id,
    callId: ofCall ? s.id : null,
    data: {
      agent_id: s.agent.def.id,
      customer_name: s.customerName,
      title,
      opening: openingText(s),
      cost: costView(s.metrics.opening_cost ?? ZERO_COST),
    },
  };
}

/** What the agent says when session `s` opens (its opening lines, rendered with the session's values). */
function openingText(s: LiveSession): string {
  return openingClips(s.agent, { customer_name: s.customerName, context: s.context })
    .map((c) => c.text)
    .join(' ');
}

/**
 * `session.turn`: what was heard (or the phone-line event), the reply, the layer that answered,
 * its latency (ms) and cost (INR), whether its audio was all cached, the steps done of all after
 * it (`GET /v1/sessions/{id}` has each step's state).
 */
export function sessionTurnEvent(s: LiveSession, stored: StoredTurn, view: TurnResult, callId: number | null): EventInput {
  return {
    tenantId: s.tenantId,
    type: 'session.turn',
    sessionId: s.id,
    callId,
    data: {
      turn: stored.index,
      heard: stored.user_text,
      ...(stored.event ? { event: stored.event } : {}),
      stt_confidence: stored.stt_confidence,
      reply: stored.reply_text,
      layer: stored.layer,
      cursor: stored.cursor,
      latency_ms: stored.latency_ms.total,
      cost_inr: view.cost.total_inr,
      cache_hit: view.cache_hit,
      ...ttsFallbacksOf(view),
      step_progress: { done: view.state.step_progress.done, total: view.state.step_progress.total },
      ended: stored.ended,
    },
  };
}

/** `tts_fallbacks`: each clip an agent's cloud voice failed to speak (`fallback:<provider>:<why>`), when there is one. */
function ttsFallbacksOf(view: TurnResult): { tts_fallbacks?: string[] } {
  const details = view.trace.steps.filter((s) => s.layer === 'tts').map((s) => String(s.detail));
  return details.length > 0 ? { tts_fallbacks: details } : {};
}

/** What ended a session, for its events (`call.ended` `end_reason`; `session.ended` `reason`). */
export interface SessionEnd {
  summary: Summary;
  metrics: SessionMetrics;
  endedAt: number;
  reason: EndReason;
  /** The call's recording, or null. */
  recordingUrl: string | null;
}

/**
 * Appends `session.ended` (summary, cost) and, when the session carries a call, that call's one
 * `call.ended`: the end-of-call report (parties, agent, timings, end reason, summary, transcript,
 * costs). Runs in the end's write step: the session's end happens once, so does its call's.
 */
export function appendEndEventsTx(tx: Tx, events: EventLog, repos: Repos, s: LiveSession, end: SessionEnd): void {
  const call = repos.calls.get(s.id) ?? null;
  const cost = costView(end.metrics.cost);
  events.appendTx(tx, {
    tenantId: s.tenantId,
    type: 'session.ended',
    sessionId: s.id,
    callId: call === null ? null : s.id,
    data: {
      reason: end.reason,
      outcome: 'outcome' in end.summary ? end.summary.outcome : null,
      summary: end.summary,
      cost,
      turns: end.metrics.turns,
    },
  });
  if (call === null) return;
  events.appendTx(tx, {
    tenantId: s.tenantId,
    type: 'call.ended',
    sessionId: s.id,
    callId: s.id,
    data: callReport(call, s, end, repos.sessions.turns(s.seq)),
  });
}

/** The end-of-call report of `call` (`call.ended` `data`; docs/events.md "The end-of-call report"). */
function callReport(call: CallWithSession, s: LiveSession, end: SessionEnd, turns: string[]): Record<string, unknown> {
  const started = call.created_at;
  return {
    end_reason: end.reason,
    direction: call.direction,
    from: call.from_number,
    to: call.to_number,
    agent_id: call.agent_id,
    customer_name: s.customerName,
    dial_status: call.dial_status,
    created_at: started,
    answered_at: call.answered_at,
    ended_at: end.endedAt,
    duration_s: Math.max(0, Math.round((end.endedAt - (call.answered_at ?? started)) * 10) / 10),
    outcome: 'outcome' in end.summary ? end.summary.outcome : null,
    extracted: 'extracted' in end.summary ? end.summary.extracted : {},
    summary: end.summary,
    transcript: [{ speaker: 'agent', text: openingText(s), at: started, turn: 0, layer: 'opening' }, ...transcriptOf(turns)],
    cost: costView(end.metrics.cost),
    cost_inr: microToInr(totalMicro(end.metrics.cost)),
    recording_url: end.recordingUrl,
  };
}

/** The transcript of a session's stored turns: the caller's line (if any) then the agent's, each with its time and layer. */
function transcriptOf(turns: string[]): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const text of turns) {
    const t = JSON.parse(text) as StoredTurn;
    if (t.user_text) out.push({ speaker: 'caller', text: t.user_text, at: t.at, turn: t.index });
    else if (t.event) out.push({ speaker: 'caller', event: t.event, at: t.at, turn: t.index });
    if (t.reply_text) out.push({ speaker: 'agent', text: t.reply_text, at: t.at, turn: t.index, layer: t.layer });
  }
  return out;
}
