/**
 * The stored shape of a session's metrics and turns, and the API views built from them
 * (`TurnResultSchema`, `SessionDetailSchema` in src/contract/sessions.ts; docs/api-decisions.md
 * "Costs").
 */
import { costView, type CostInr, type CostMicro } from '../domain/money.js';
import type { SessionListItem, SessionRecord, SessionStepView, SessionTotals } from '../contract/index.js';
import type { SessionSummary } from '../engine/summary.js';
import type { SessionListRow } from '../store/index.js';

/** Running counters of a session; money in integer micro-rupees, durations in ms. */
export interface SessionMetrics {
  turns: number;
  llm_calls: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  llm_cached_tokens: number;
  /** Characters sent to live synthesis. */
  tts_chars: number;
  /** Audio metered by the caller's speech recogniser (`stt_audio_ms` when the media core gives it, else `stt_ms` + `silence_ms`), ms. */
  stt_audio_ms: number;
  cache_hits: number;
  live_tts_calls: number;
  cost: CostMicro;
  total_latency_ms: number;
  total_silence_ms: number;
  /**
   * What the session's open cost (its opening and texts synthesised live then), micro-rupees:
   * part of `cost` from the session's first row on. Absent in sessions stored before it (nothing).
   */
  opening_cost?: CostMicro;
  /** Characters the open sent to live synthesis (part of `tts_chars`); absent as `opening_cost`. */
  opening_tts_chars?: number;
}

/** Metrics of a new session. */
export function emptyMetrics(): SessionMetrics {
  return {
    turns: 0,
    llm_calls: 0,
    llm_input_tokens: 0,
    llm_output_tokens: 0,
    llm_cached_tokens: 0,
    tts_chars: 0,
    stt_audio_ms: 0,
    cache_hits: 0,
    live_tts_calls: 0,
    cost: { llm: 0, tts: 0, stt: 0 },
    total_latency_ms: 0,
    total_silence_ms: 0,
  };
}

/** Percentage with two decimals; 0 when the whole is 0. */
export function percent(part: number, whole: number): number {
  return whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100;
}

/** `session_totals` of a turn result (`TurnResultSchema` in src/contract/sessions.ts). */
export function sessionTotals(m: SessionMetrics): SessionTotals {
  // Named fields rather than spreading costView: V8 copies a spread object that gains new keys
  // slowly (~5 µs here, on every turn).
  const c = costView(m.cost);
  return {
    llm_inr: c.llm_inr,
    tts_inr: c.tts_inr,
    stt_inr: c.stt_inr,
    total_inr: c.total_inr,
    turns: m.turns,
    llm_calls: m.llm_calls,
    tts_chars: m.tts_chars,
    llm_input_tokens: m.llm_input_tokens,
    llm_output_tokens: m.llm_output_tokens,
    cache_hit_percent: percent(m.cache_hits, m.cache_hits + m.live_tts_calls),
  };
}

/** One entry of the raw turn list of Session detail (an implementation detail of the spec). */
export interface StoredTurn {
  index: number;
  at: number;
  user_text: string;
  reply_text: string;
  layer: string;
  cursor: string;
  ended: boolean;
  cache_hits: number;
  live_tts_calls: number;
  tts_chars: number;
  cost: CostInr;
  /** ms; `llm` only on a turn that called the language model. */
  latency_ms: { total: number; tts: number; classifier: number; stt: number | null; llm?: number | null };
  /** The language-model request of the turn (docs/llm.md): model and tokens; absent when none was sent. */
  llm?: { model: string; input_tokens: number; output_tokens: number; cached_tokens: number };
  stt_confidence: number | null;
  stt_provider: string | null;
  silence_ms: number | null;
  /** End of speech → final transcript, ms (the turn body's `stt_ms`); null when not given. Absent in turns stored before it. */
  stt_ms?: number | null;
  /** Recogniser audio metered for this turn, ms (`stt_audio_ms`, else `stt_ms + silence_ms`). Absent in turns stored before it. */
  stt_audio_ms?: number;
  /** A phone-line event turn: its kind; absent on a caller's utterance. */
  event?: string;
  /** The event's silence re-prompt number, or null. */
  attempt?: number | null;
}

/** Session detail (`SessionDetailSchema` in src/contract/sessions.ts); `session_id` is the bare integer. */
export function sessionDetail(id: number, m: SessionMetrics, turns: Array<Record<string, unknown>>) {
  const clips = m.cache_hits + m.live_tts_calls;
  const c = costView(m.cost);
  return {
    session_id: id,
    cache_hits: m.cache_hits,
    live_tts_calls: m.live_tts_calls,
    llm_calls: m.llm_calls,
    total_cost_inr: c.total_inr,
    llm_cost_inr: c.llm_inr,
    tts_cost_inr: c.tts_inr,
    stt_cost_inr: c.stt_inr,
    llm_input_tokens: m.llm_input_tokens,
    llm_output_tokens: m.llm_output_tokens,
    llm_cached_tokens: m.llm_cached_tokens,
    tts_chars: m.tts_chars,
    stt_seconds: m.stt_audio_ms / 1000,
    cache_hit_percent: percent(m.cache_hits, clips),
    live_tts_percent: percent(m.live_tts_calls, clips),
    avg_latency_ms: m.turns === 0 ? 0 : Math.round((m.total_latency_ms / m.turns) * 1000) / 1000,
    total_latency_ms: Math.round(m.total_latency_ms * 1000) / 1000,
    total_silence_ms: m.total_silence_ms,
    turns,
  };
}

/** One step of a session as Session detail's extension shows it. */
export type StepView = SessionStepView;
/** Session detail's extension object `session`. */
export type SessionDetailExtension = SessionRecord;

/**
 * Session detail's extension `steps`: each step's status and attempts (from the summary the
 * state gives) with its slot and captured value.
 * @param defSteps the agent's steps in order (`id` and the captured slot)
 */
export function stepViews(defSteps: Array<{ id: string; capture?: { slot: string } | undefined }>, summary: SessionSummary): StepView[] {
  const byId = new Map(summary.steps.map((st) => [st.id, st]));
  return defSteps.map((d) => {
    const st = byId.get(d.id);
    const slot = d.capture?.slot ?? null;
    return {
      id: d.id,
      status: st?.status ?? 'pending',
      attempts: st?.attempts ?? 0,
      slot,
      value: slot === null ? null : (summary.extracted[slot] ?? null),
    };
  });
}

/** The list item of a stored session row. */
export function sessionListItem(row: SessionListRow): SessionListItem {
  const m = JSON.parse(row.metrics) as SessionMetrics;
  return {
    session_id: `se_${row.id}`,
    agent_id: row.agent_id,
    status: row.status,
    outcome: row.outcome,
    title: row.title,
    customer_name: row.customer_name,
    created_at: row.created_at,
    ended_at: row.ended_at,
    turns: m.turns,
    cost: costView(m.cost),
  };
}
