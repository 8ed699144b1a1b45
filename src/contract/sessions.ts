/**
 * `/v1/sessions`: text sessions with an agent — open, turn, end, list, detail
 * (docs/api-decisions.md "Sessions"). Clips, trace steps and summaries are open-ended (new
 * members may appear): loose objects.
 */
import { z } from 'zod';
import { SESSIONS_CURSOR } from '../domain/cursor.js';
import { jsonDepthAtMost, MAX_CONTEXT_DEPTH } from '../domain/json.js';
import { ISO_TIME_PATTERN } from '../domain/time.js';
import { CostSchema as Cost, idField, listOf, namedE164, namedText as text, NON_BLANK_TEXT, pageQuery, UNICODE_TEXT } from './common.js';

/** Longest caller utterance accepted on a turn, in characters. */
export const MAX_TURN_TEXT = 4000;

const NOW_MESSAGE = 'context.now must be an ISO 8601 time such as 2026-11-21T10:30:00+05:30';

/**
 * A request's `context` (free JSON, used by sessions and calls): an object nested at most
 * {@link MAX_CONTEXT_DEPTH} levels (checked without recursion: deeper values would overflow
 * the stack of whatever walks them later), whose `now`, when given and not null, is an ISO 8601
 * date-time matching {@link ISO_TIME_PATTERN} (the session's reference time). Issues on `now`
 * have the path `context.now`.
 */
export const RequestContext = z
  .looseObject(
    {
      now: z.string({ error: NOW_MESSAGE }).regex(ISO_TIME_PATTERN, { error: NOW_MESSAGE }).nullish(),
    },
    { error: 'context must be a JSON object' },
  )
  .superRefine((value, ctx) => {
    if (!jsonDepthAtMost(value, MAX_CONTEXT_DEPTH)) {
      ctx.addIssue({
        code: 'custom',
        message: `context is nested too deeply: at most ${MAX_CONTEXT_DEPTH} levels`,
        input: value,
      });
    }
  })
  .meta({
    description: `Free JSON for the agent's templates, nested at most ${MAX_CONTEXT_DEPTH} levels; \`now\` sets the session's reference time.`,
  });

/** The optional fields of a session's opening (`POST /v1/sessions`, `POST /v1/agents/{agent_id}/load`). */
export const openFields = {
  context: RequestContext.nullish(),
  customer_name: text(200, 'customer_name').nullish(),
  customer_phone: namedE164('customer_phone').nullish(),
  title: text(200, 'title').nullish(),
};

/** `POST /v1/sessions` body; a malformed agent id is `workflow_not_found` (docs/api-decisions.md "Errors"). */
export const OpenSessionBody = z.object(
  {
    agent_id: idField('agent', 'workflow_not_found', 'agent_id is required: the agent to talk to, for example ag_clinic_booking'),
    ...openFields,
  },
  { error: 'request body must be a JSON object with agent_id' },
);

/** A `POST /v1/sessions` body as sent (what the client takes). */
export type OpenSessionRequest = z.input<typeof OpenSessionBody>;
/** A validated `POST /v1/sessions` body (what the session service takes). */
export type OpenSessionInput = z.infer<typeof OpenSessionBody>;

const ms = (name: string) =>
  z
    .number({ error: `${name} must be a number of milliseconds` })
    .min(0, { error: `${name} must be 0 or more` })
    .max(86_400_000, { error: `${name} must be at most 86400000 (a day)` })
    .nullish();

const TEXT_MESSAGE = 'text must not be empty: send what the caller said';

/** `POST /v1/sessions/{session_id}/turn` body. */
export const TurnBody = z.object(
  {
    text: z
      .string({ error: 'text is required: a string, what the caller said' })
      .min(1, { error: TEXT_MESSAGE })
      .max(MAX_TURN_TEXT, { error: `text must be at most ${MAX_TURN_TEXT} characters` })
      .regex(NON_BLANK_TEXT, {
        error: (issue) =>
          typeof issue.input === 'string' && !UNICODE_TEXT.test(issue.input)
            ? 'text must be valid Unicode text (it has an unpaired surrogate escape such as \\ud800)'
            : TEXT_MESSAGE,
      }),
    stt_confidence: z
      .number({ error: 'stt_confidence must be a number from 0 to 1' })
      .min(0, { error: 'stt_confidence must be a number from 0 to 1' })
      .max(1, { error: 'stt_confidence must be a number from 0 to 1' })
      .nullish(),
    stt_provider: z
      .string({ error: 'stt_provider must be a string' })
      .min(1, { error: 'stt_provider must not be empty' })
      .max(100, { error: 'stt_provider must be at most 100 characters' })
      .nullish(),
    stt_ms: ms('stt_ms'),
    silence_ms: ms('silence_ms'),
  },
  { error: 'request body must be a JSON object with text' },
);
/** A `POST /v1/sessions/{session_id}/turn` body as sent: the caller's text and optional STT telemetry (ms). */
export type TurnRequest = z.input<typeof TurnBody>;
/** A validated turn body (what the session service takes). */
export type TurnInputBody = z.infer<typeof TurnBody>;

/** `{session_id}` path parameters: a malformed id is `session_not_found` (docs/api-decisions.md "Errors"). */
export const SessionParams = z.object({ session_id: idField('session', 'session_not_found') });

const Clip = z
  .looseObject({ text: z.string(), audio_url: z.string().nullable(), livekit_wav_url: z.string().nullable() })
  .meta({ id: 'Clip' });
/**
 * One clip of an opening or a reply: its text and audio URLs (`audio_url` null when synthesis
 * failed). Further flags (`is_filler`, `is_readback`, `intent_key`, `display_order`, …) pass
 * through from the engine unchanged; key off their presence.
 */
export type Clip = z.infer<typeof Clip>;

const StepProgress = z.object({
  done: z.number().int(),
  total: z.number().int(),
  pct: z.number().int(),
  steps: z.record(z.string(), z.string()),
});
/** Workflow progress: steps done of total, an integer percent, step id → status (`done`, `pending`, …). */
export type StepProgress = z.infer<typeof StepProgress>;

const State = z.object({
  cursor: z.string(),
  step_done: z.boolean(),
  slots: z.object({}),
  step_progress: StepProgress,
});
/** The workflow state of a session: the current step id (`cursor`), and its progress; `slots` is always `{}`. */
export type TurnState = z.infer<typeof State>;

/** Session (opened): the agent, its opening and the state before the first turn. */
export const OpenedSessionSchema = z
  .object({
    session_id: z.string(),
    agent_id: z.string(),
    agent: z.object({ id: z.string(), name: z.string(), direction: z.string(), language: z.string() }),
    opening: z.object({ text: z.string(), clips: z.array(Clip) }),
    state: State,
    created_at: z.number(),
    // Extension: what the open cost (live synthesis of its opening and the session's own
    // texts); part of the session's totals (docs/api-decisions.md "Costs").
    cost: Cost,
  })
  .meta({ id: 'OpenedSession' });
/** The response of `POST /v1/sessions`: `session_id` is `se_<integer>`. */
export type SessionOpened = z.infer<typeof OpenedSessionSchema>;

const TurnTrace = z.object({
  layer: z.string(),
  llm_used: z.boolean(),
  steps: z.array(z.looseObject({})),
  latency_ms: z.object({
    total: z.number(),
    llm: z.number().nullable(),
    stt: z.number().nullable(),
    tts: z.number(),
    classifier: z.number(),
  }),
  /** A turn that sent the language model a request: its model and tokens (docs/llm.md); absent otherwise. */
  usage: z
    .object({ model: z.string(), input_tokens: z.number().int(), output_tokens: z.number().int(), cached_tokens: z.number().int() })
    .optional(),
});
/** The decision trace of a turn: the engine layer that replied (not a stable enum), latencies in ms. */
export type TurnTrace = z.infer<typeof TurnTrace>;

const SessionTotals = z.object({
  llm_inr: z.number(),
  tts_inr: z.number(),
  stt_inr: z.number(),
  total_inr: z.number(),
  turns: z.number().int(),
  llm_calls: z.number().int(),
  tts_chars: z.number().int(),
  llm_input_tokens: z.number().int(),
  llm_output_tokens: z.number().int(),
  cache_hit_percent: z.number(),
});
/** Running totals of a session (INR, counts). */
export type SessionTotals = z.infer<typeof SessionTotals>;

/** Turn result: the agent's reply to one caller utterance. */
export const TurnResultSchema = z
  .object({
    session_id: z.string(),
    text: z.string(),
    spoken_text: z.string(),
    audio_url: z.string().nullable(),
    clips: z.array(Clip),
    cache_hit: z.boolean(),
    ended: z.boolean(),
    state: State,
    trace: TurnTrace,
    cost: Cost,
    session_totals: SessionTotals,
  })
  .meta({ id: 'TurnResult' });
/** The response of `POST /v1/sessions/{session_id}/turn`. */
export type TurnResult = z.infer<typeof TurnResultSchema>;

const SessionSummary = z.looseObject({});
/**
 * The end-of-session summary (docs/api-decisions.md "Sessions"): open-ended, usually `outcome`,
 * `steps`, `extracted` (slot → canonical value), `tool_calls`, `turns`; `{}` when building it failed.
 */
export type SessionSummary = z.infer<typeof SessionSummary>;

/** End-of-session result. */
export const EndResultSchema = z
  .object({
    session_id: z.string(),
    ended: z.literal(true),
    summary: SessionSummary,
    cost: Cost,
  })
  .meta({ id: 'EndResult' });
/** The response of `POST /v1/sessions/{session_id}/end`. */
export type SessionEndResult = z.infer<typeof EndResultSchema>;

const SessionStepView = z.object({
  id: z.string(),
  status: z.string(),
  attempts: z.number().int(),
  slot: z.string().nullable(),
  value: z.union([z.string(), z.number(), z.boolean()]).nullable(),
});
/**
 * One step of a session as the detail's `session.steps` shows it: `status` is `pending`, `done`,
 * `failed` or `skipped`; `slot` null for a step that only speaks; `value` the captured canonical
 * value (as in the summary's `extracted`), null until captured (and confirmed).
 */
export type SessionStepView = z.infer<typeof SessionStepView>;

const SessionRecord = z.object({
  agent_id: z.string(),
  status: z.enum(['open', 'ended']),
  title: z.string().nullable(),
  customer_name: z.string().nullable(),
  created_at: z.number(),
  ended_at: z.number().nullable(),
  outcome: z.string().nullable(),
  steps: z.array(SessionStepView),
  /** What the open cost (its live synthesis), already in the totals: the totals less the turns' costs. */
  opening: z.object({ tts_chars: z.number().int(), cost: Cost }),
});
/**
 * Session detail's extension object `session`: the session's own record (times in epoch
 * seconds; `outcome` the summary's once ended, else null; `opening` what its open cost), nested because the detail has no
 * top-level status or `ended_at` (docs/api-decisions.md "Sessions").
 */
export type SessionRecord = z.infer<typeof SessionRecord>;

/** Session detail: `session_id` is the bare integer. */
export const SessionDetailSchema = z
  .object({
    session_id: z.number().int(),
    cache_hits: z.number().int(),
    live_tts_calls: z.number().int(),
    llm_calls: z.number().int(),
    total_cost_inr: z.number(),
    llm_cost_inr: z.number(),
    tts_cost_inr: z.number(),
    stt_cost_inr: z.number(),
    llm_input_tokens: z.number().int(),
    llm_output_tokens: z.number().int(),
    llm_cached_tokens: z.number().int(),
    tts_chars: z.number().int(),
    stt_seconds: z.number(),
    cache_hit_percent: z.number(),
    live_tts_percent: z.number(),
    avg_latency_ms: z.number(),
    total_latency_ms: z.number(),
    total_silence_ms: z.number(),
    turns: z.array(z.looseObject({})),
    // Extension (after the standard fields, which have no top-level status or ended_at): the
    // session's own record and its steps, in one object.
    session: SessionRecord,
  })
  .meta({ id: 'SessionDetail' });
/** The response of `GET /v1/sessions/{session_id}`. */
export type SessionDetail = z.infer<typeof SessionDetailSchema>;

/** An item of `GET /v1/sessions` (extension). */
export const SessionListItemSchema = z
  .object({
    session_id: z.string(),
    agent_id: z.string(),
    status: z.enum(['open', 'ended']),
    outcome: z.string().nullable(),
    title: z.string().nullable(),
    customer_name: z.string().nullable(),
    created_at: z.number(),
    ended_at: z.number().nullable(),
    turns: z.number().int(),
    cost: Cost,
  })
  .meta({ id: 'SessionListItem' });
/** An item of `GET /v1/sessions`: a session at a glance (`outcome` null while open; times epoch seconds). */
export type SessionListItem = z.infer<typeof SessionListItemSchema>;

/** `GET /v1/sessions` page (extension): newest first. */
export const SessionListSchema = listOf(SessionListItemSchema);

/** `GET /v1/sessions` query: `limit` 1–100 (default 20) and the previous page's `next_cursor`. */
export const SessionListQuery = z.object(pageQuery(SESSIONS_CURSOR));
/** A `GET /v1/sessions` query as sent. */
export type SessionListRequest = z.input<typeof SessionListQuery>;
