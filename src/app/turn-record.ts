/**
 * What one turn records (docs/api-decisions.md "Sessions"; Turn result): its cost and the
 * session's running metrics, the turn result the caller gets, and the row of the session's
 * turn log. Pure: the session use cases (src/app/sessions.ts) write what it returns in
 * their write step.
 */
import { addCost, costView, type CostMicro } from '../domain/money.js';
import type { TurnResult, TurnState } from '../contract/index.js';
import type { TurnEventKind, TurnOutput } from '../engine/turn.js';
import { stepProgress, type CompiledAgent, type EngineState } from '../engine/state.js';
import type { RenderedReply } from './clips.js';
import { sessionTotals, type SessionMetrics, type StoredTurn } from './session-model.js';
import type { LiveSession } from './session-types.js';
import type { LlmCall } from './llm-step.js';
import type { SessionEventInput, SttTelemetry } from './turn-input.js';

/** What {@link meterTurn} needs of a turn the engine has decided and whose clips have audio. */
export interface TurnFacts {
  session: LiveSession;
  sessionId: string;
  input: SttTelemetry;
  /** The phone-line event the turn answers, or '' for caller text. */
  event: TurnEventKind | '';
  /** The caller's text ('' for an event). */
  userText: string;
  out: TurnOutput;
  reply: RenderedReply;
  /** The turn's cost, micro-rupees. */
  cost: CostMicro;
  /** `performance.now()` when the turn request arrived, ms. */
  startedMs: number;
  /** The engine's time, ms. */
  classifierMs: number;
  /** The language-model request the turn sent, or null (docs/llm.md "Where the model acts"). */
  llm: LlmCall | null;
  /** Now, epoch seconds. */
  nowS: number;
}

/** The recogniser audio a turn is metered for, ms: `stt_audio_ms`, else `stt_ms + silence_ms`. */
export function sttAudioMsOf(input: SttTelemetry): number {
  return input.stt_audio_ms ?? (input.stt_ms ?? 0) + (input.silence_ms ?? 0);
}

/** The turn result's `state` (the opened session's too, before its first turn). */
export function stateView(agent: CompiledAgent, state: EngineState, stepDone: boolean): TurnState {
  return { cursor: state.cursor, step_done: stepDone, slots: {}, step_progress: stepProgress(agent, state) };
}

/** The turn result, the turn log's row and the session's metrics after the turn `t`. */
export function meterTurn(t: TurnFacts): { view: TurnResult; stored: StoredTurn; metrics: SessionMetrics } {
  const { session: s, input, out, reply, cost, event } = t;
  const sttAudioMs = sttAudioMsOf(input);
  const metrics: SessionMetrics = {
    ...s.metrics,
    turns: s.metrics.turns + 1,
    tts_chars: s.metrics.tts_chars + reply.liveChars,
    stt_audio_ms: s.metrics.stt_audio_ms + sttAudioMs,
    cache_hits: s.metrics.cache_hits + reply.hits,
    live_tts_calls: s.metrics.live_tts_calls + reply.misses,
    cost: addCost(s.metrics.cost, cost),
    total_silence_ms: s.metrics.total_silence_ms + (input.silence_ms ?? 0),
  };
  const llm = t.llm;
  if (llm !== null) {
    metrics.llm_calls = s.metrics.llm_calls + 1;
    metrics.llm_input_tokens = s.metrics.llm_input_tokens + llm.usage.promptTokens;
    metrics.llm_output_tokens = s.metrics.llm_output_tokens + llm.usage.completionTokens;
    metrics.llm_cached_tokens = s.metrics.llm_cached_tokens + llm.usage.cachedTokens;
  }
  const text = reply.clips.map((c) => c.text).join(' ');
  const totalMs = performance.now() - t.startedMs;
  metrics.total_latency_ms = s.metrics.total_latency_ms + totalMs;
  const latency = {
    total: round3(totalMs),
    llm: llm === null ? null : round3(llm.latencyMs),
    stt: input.stt_ms ?? null,
    tts: round3(reply.ttsMs),
    classifier: round3(t.classifierMs),
  };
  const view: TurnResult = {
    session_id: t.sessionId,
    text,
    spoken_text: reply.spokenText,
    audio_url: reply.audioUrl,
    clips: reply.clips,
    cache_hit: reply.clips.length > 0 && reply.misses === 0,
    ended: out.ended,
    state: stateView(s.agent, out.state, out.stepDone),
    trace: { layer: out.layer, llm_used: llm !== null, steps: [...out.trace, ...ttsTrace(reply)], latency_ms: latency },
    cost: costView(cost),
    session_totals: sessionTotals(metrics),
  };
  const usage =
    llm === null
      ? null
      : {
          model: llm.model,
          input_tokens: llm.usage.promptTokens,
          output_tokens: llm.usage.completionTokens,
          cached_tokens: llm.usage.cachedTokens,
        };
  if (usage !== null) view.trace.usage = usage;
  const stored: StoredTurn = {
    index: metrics.turns,
    at: t.nowS,
    user_text: t.userText,
    reply_text: text,
    layer: out.layer,
    cursor: out.state.cursor,
    ended: out.ended,
    cache_hits: reply.hits,
    live_tts_calls: reply.misses,
    tts_chars: reply.liveChars,
    cost: view.cost,
    latency_ms: {
      total: latency.total,
      tts: latency.tts,
      classifier: latency.classifier,
      stt: latency.stt,
      ...(llm !== null ? { llm: latency.llm } : {}),
    },
    stt_confidence: input.stt_confidence ?? null,
    stt_provider: input.stt_provider ?? null,
    silence_ms: input.silence_ms ?? null,
    stt_ms: input.stt_ms ?? null,
    stt_audio_ms: sttAudioMs,
    ...(usage !== null ? { llm: usage } : {}),
    ...(event ? { event, attempt: (input as SessionEventInput).attempt ?? null } : {}),
  };
  return { view, stored, metrics };
}

/** The trace entries of the reply's speech: one per clip a cloud voice failed to speak (the embedded engine spoke it). */
function ttsTrace(reply: RenderedReply): Array<{ layer: 'tts'; result: 'miss'; detail: string }> {
  return reply.fallbacks.map((detail) => ({ layer: 'tts', result: 'miss', detail }));
}

const round3 = (ms: number) => Math.round(ms * 1000) / 1000;
