/**
 * The public shapes of `/v1` resources (spec: Resources and their fields), shared by the
 * services that build them, the client that reads them, and the tests.
 */
import type { SlotValue } from './agent.js';
import type { CostInr } from './money.js';
import type { CallSource, DialStatus, LineOutcome } from './calls.js';

/** A SIP trunk (spec: Trunk). The write-only `auth` never appears here; `has_credentials` reports it. */
export interface Trunk {
  /** `tk_<id>`. */
  id: string;
  name: string | null;
  /** Carrier SIP host, optionally `:port`. */
  address: string;
  /** Caller-ID numbers (E.164) the trunk may present. */
  numbers: string[];
  provider_trunk_id: string | null;
  has_credentials: boolean;
  /** Epoch seconds. */
  created_at: number;
}

/** A number record (spec: Number record); unset fields are null. */
export interface NumberRecord {
  /** `num_<id>`. */
  id: string;
  tenant_id: string;
  /** E.164. */
  number: string;
  trunk_id: string | null;
  agent_id: string | null;
  label: string | null;
  /** Epoch seconds. */
  created_at: number;
}

/** `{data, has_more, next_cursor}` (spec: Conventions). */
export interface ListResponse<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

/** Pre-synthesis progress of an agent's static texts (runs in the background after a PUT). */
export interface AgentAudioProgress {
  /** Clips to synthesise. */
  total: number;
  ready: number;
  failed: number;
}

/**
 * An agent as listed by `GET /v1/agents` (DESIGN.md §4, Extensions): the summary fields,
 * without the definition.
 */
export interface AgentSummary {
  /** `ag_[a-z0-9_]{1,64}`, chosen by the operator. */
  id: string;
  name: string;
  description: string | null;
  direction: 'inbound' | 'outbound';
  /** BCP-47 tag, e.g. `en-IN`. */
  language: string;
  /** 1 on the first apply, +1 on each change (re-applying the same definition keeps it). */
  version: number;
  /** SHA-256 (hex) of the stored definition. */
  digest: string;
  /** Epoch seconds. */
  created_at: number;
  /** Epoch seconds. */
  updated_at: number;
  audio: AgentAudioProgress;
}

/** An agent as returned by `PUT`/`GET /v1/agents/{agent_id}`: the summary plus its stored definition. */
export interface Agent extends AgentSummary {
  /** The definition as stored, with defaults applied (DESIGN.md §6). */
  definition: Record<string, unknown>;
}

/**
 * One clip of an opening or a reply (spec: Clip). The optional flags pass through from the
 * engine unchanged; key off their presence.
 */
export interface Clip {
  text: string;
  /** Null when synthesis failed. */
  audio_url: string | null;
  livekit_wav_url: string | null;
  is_filler?: boolean;
  is_readback?: boolean;
  is_digit?: boolean;
  is_confirm_prompt?: boolean;
  intent_key?: string;
  source?: string;
  /** Opening clips only. */
  display_order?: number;
  /** Opening clips only. */
  requires_user_input?: boolean;
  [extra: string]: unknown;
}

/** The response of `POST /v1/sessions` (spec: Session (opened); DESIGN.md §4, Sessions). */
export interface SessionOpened {
  /** `se_<integer>`. */
  session_id: string;
  agent_id: string;
  agent: { id: string; name: string; direction: 'inbound' | 'outbound'; language: string };
  opening: { text: string; clips: Clip[] };
  /** The workflow state before the first turn (the turn result's `state` shape). */
  state: Partial<TurnState>;
  created_at: number;
}

/** Costs in INR, rounded to 6 decimals (spec: Turn result, `cost`). */
export type { CostInr };

/** Running totals of a session (spec: Turn result, `session_totals`). */
export interface SessionTotals extends CostInr {
  turns: number;
  llm_calls: number;
  tts_chars: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  cache_hit_percent: number;
}

/** Workflow progress (spec: Turn result, `state.step_progress`). */
export interface StepProgress {
  done: number;
  total: number;
  /** Integer percent. */
  pct: number;
  /** Step id → status (`done`, `pending`, …). */
  steps: Record<string, string>;
}

/** The state part of a turn result (spec: Turn result, `state`). */
export interface TurnState {
  /** Current step id. */
  cursor: string;
  step_done: boolean;
  /** Always `{}` on `/v1`. */
  slots: Record<string, unknown>;
  step_progress: StepProgress;
}

/** The decision trace of a turn (spec: Turn result, `trace`). */
export interface TurnTrace {
  /** Engine layer that produced the reply; not a stable enum. */
  layer: string;
  llm_used: boolean;
  steps: unknown[];
  /** Milliseconds; `llm` and `stt` may be null. */
  latency_ms: { total: number; llm: number | null; stt: number | null; tts: number; classifier: number };
}

/** The response of `POST /v1/sessions/{session_id}/turn` (spec: Turn result). */
export interface TurnResult {
  session_id: string;
  text: string;
  spoken_text: string;
  audio_url: string | null;
  clips: Clip[];
  cache_hit: boolean;
  ended: boolean;
  state: TurnState;
  trace: TurnTrace;
  cost: CostInr;
  session_totals: SessionTotals;
}

/** The end-of-session summary (DESIGN.md §4, Sessions); `{}` when building it failed. */
export interface SessionSummary {
  outcome?: string;
  steps?: Array<{ id: string; status: string; attempts: number }>;
  /** Slot → canonical value (DESIGN.md §6). */
  extracted?: Record<string, unknown>;
  tool_calls?: unknown[];
  turns?: number;
}

/** The response of `POST /v1/sessions/{session_id}/end` (spec: End-of-session result). */
export interface SessionEndResult {
  session_id: string;
  ended: true;
  summary: SessionSummary;
  cost: CostInr;
}

/** One step of a session as Session detail's extension `session.steps` shows it. */
export interface SessionStepView {
  id: string;
  /** `pending`, `done`, `failed` or `skipped`. */
  status: string;
  attempts: number;
  /** The slot the step captures, or null for a step that only speaks. */
  slot: string | null;
  /** The captured canonical value, as in the summary's `extracted`; null until captured (and confirmed). */
  value: SlotValue | null;
}

/**
 * Session detail's extension object `session` (DESIGN.md §4 "Extensions"): the session's own
 * record, nested because the spec says the detail has no top-level status or `ended_at`.
 */
export interface SessionRecord {
  agent_id: string;
  status: 'open' | 'ended';
  title: string | null;
  customer_name: string | null;
  /** Epoch seconds. */
  created_at: number;
  ended_at: number | null;
  /** The summary's outcome once ended; null while open (or when the summary is `{}`). */
  outcome: string | null;
  steps: SessionStepView[];
}

/** The response of `GET /v1/sessions/{session_id}` (spec: Session detail). */
export interface SessionDetail {
  /** The bare internal integer (not `se_…`). */
  session_id: number;
  cache_hits: number;
  live_tts_calls: number;
  llm_calls: number;
  total_cost_inr: number;
  llm_cost_inr: number;
  tts_cost_inr: number;
  stt_cost_inr: number;
  llm_input_tokens: number;
  llm_output_tokens: number;
  llm_cached_tokens: number;
  tts_chars: number;
  stt_seconds: number;
  cache_hit_percent: number;
  live_tts_percent: number;
  avg_latency_ms: number;
  total_latency_ms: number;
  total_silence_ms: number;
  /** Raw internal turn list; an implementation detail. */
  turns: unknown[];
  /**
   * Extension (DESIGN.md §4 "Extensions"): the session's own record, nested because the spec
   * says the detail has no top-level status or `ended_at`.
   */
  session: SessionRecord;
}

/** An item of `GET /v1/sessions` (extension): a session at a glance. */
export interface SessionListItem {
  /** `se_<n>`. */
  session_id: string;
  agent_id: string;
  status: 'open' | 'ended';
  /** The summary's outcome once ended; null while open. */
  outcome: string | null;
  title: string | null;
  customer_name: string | null;
  /** Epoch seconds. */
  created_at: number;
  ended_at: number | null;
  turns: number;
  cost: CostInr;
}

/** `POST /v1/calls` response (spec: Call placement response). */
export interface CallPlacement {
  call_id: string;
  session_id: string;
  agent_id: string;
  to: string;
  from: string | null;
  /** True when the request carried an `Idempotency-Key` (always, from this client). */
  idempotent: boolean;
  /** `prepared`: nothing dialled; `ringing`: LiveKit accepted the dial. */
  status: 'prepared' | 'ringing';
  dial_required: boolean;
  room_name?: string;
  provider_call_id?: string;
  trunk_id?: string;
  /** Extension, only when dialled: `answered` when the dial waited for the callee's answer, else `ringing`. */
  dial_status?: DialStatus;
  /** Extension, only when dialled: when the callee answered (epoch seconds), or null. */
  answered_at?: number | null;
}

/** Where a call's phone line stands (the state machine is in ./calls.ts). */
export type { DialStatus, LineOutcome } from './calls.js';

/** `GET /v1/calls/{call_id}` response (spec: Call status, with vagent's fields after `cost`). */
export interface CallStatus {
  call_id: string;
  session_id: string;
  agent_id: string;
  status: 'in_progress' | 'completed';
  /** Epoch seconds. */
  started_at: number;
  /** Epoch seconds, or null while in progress. */
  ended_at: number | null;
  duration_s: number | null;
  customer_name: string | null;
  cost: CostInr;
  direction: 'outbound' | 'inbound';
  to: string;
  from: string | null;
  dial_status: DialStatus;
  dial_error: string | null;
  trunk_id: string | null;
  room_name: string | null;
  provider_call_id: string | null;
  /** When the callee answered (inbound: when vagent answered), epoch seconds; null if never. */
  answered_at: number | null;
  /** What carries the call's audio (issue 16): `twilio`, `exotel`, `plivo` or `livekit`; null while none has. */
  transport: 'twilio' | 'exotel' | 'plivo' | 'livekit' | null;
  /** Who made the call: `phone` (a call on a line) or `simulator` (`vagent call simulate`); see ./calls.ts `CALL_SOURCES`. */
  source: CallSource;
}

/** `POST /v1/calls/{call_id}/hangup` response (extension): the call's status after it, and what became of its line. */
export interface CallHangup extends CallStatus {
  line: LineOutcome;
}

/** One dialect as `GET /v1/carriers` shows it. Never holds a secret. */
export interface CarrierView {
  dialect: 'twilio' | 'exotel' | 'plivo';
  /** Credentials are stored for this dialect. */
  configured: boolean;
  /** The last 4 characters of the account SID, Auth ID or API key (never of a secret), or null. */
  hint: string | null;
  /** When the credentials were last set, epoch seconds; null when not configured. */
  updated_at: number | null;
  /**
   * The path to give the carrier as the stream URL (after the daemon's public https/wss
   * origin), with `?tenant=NAME` for a tenant other than `default` — except Twilio, whose
   * `<Stream url>` takes no query string (see the module comment).
   */
  stream_url_path: string;
}

/** `GET /v1/carriers`. */
export interface CarrierList {
  data: CarrierView[];
  /** The tenant's stream token: whether one exists and when it was made (never the token). */
  stream_token: { configured: boolean; created_at: number | null };
}
