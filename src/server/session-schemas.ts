/**
 * Request and response schemas of agents, sessions and audio (spec: Sessions, Turn result,
 * Clip, Session detail, End-of-session result; DESIGN.md §4 "Sessions", "Extensions").
 * Clips, trace steps and summaries are open-ended (spec: Versioning 2): loose objects.
 */
import { z } from 'zod';
import { SESSIONS_CURSOR } from '../domain/cursor.js';
import { jsonDepthAtMost, MAX_CONTEXT_DEPTH } from '../domain/json.js';
import { ISO_TIME_PATTERN } from '../domain/time.js';
import { CostSchema as Cost, idField, namedE164, namedText as text, NON_BLANK_TEXT, pageQuery, UNICODE_TEXT } from './schemas.js';

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

const openFields = {
  context: RequestContext.nullish(),
  customer_name: text(200, 'customer_name').nullish(),
  customer_phone: namedE164('customer_phone').nullish(),
  title: text(200, 'title').nullish(),
};

/** `POST /v1/sessions` body; a malformed agent id is `workflow_not_found` (spec: Errors). */
export const OpenSessionBody = z.object(
  {
    agent_id: idField('agent', 'workflow_not_found', 'agent_id is required: the agent to talk to, for example ag_clinic_booking'),
    ...openFields,
  },
  { error: 'request body must be a JSON object with agent_id' },
);

/** `POST /v1/agents/{agent_id}/load` body (the agent id is the path's). */
export const LoadAgentBody = z.object({ ...openFields }, { error: 'request body must be a JSON object' });

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

/** `{session_id}` path parameters: a malformed id is `session_not_found` (spec: Errors). */
export const SessionParams = z.object({ session_id: idField('session', 'session_not_found') });
/** `{agent_id}` path parameters: a malformed id is `workflow_not_found` (DESIGN.md §4 "Extensions"). */
export const AgentParams = z.object({ agent_id: idField('agent', 'workflow_not_found') });
/** `PUT /v1/agents/{agent_id}` path parameters: the agent is being created, so a malformed id is `invalid_request`. */
export const PutAgentParams = z.object({ agent_id: idField('agent', 'invalid_request') });

const Clip = z
  .looseObject({ text: z.string(), audio_url: z.string().nullable(), livekit_wav_url: z.string().nullable() })
  .meta({ id: 'Clip' });
const State = z.object({
  cursor: z.string(),
  step_done: z.boolean(),
  slots: z.object({}),
  step_progress: z.object({
    done: z.number().int(),
    total: z.number().int(),
    pct: z.number().int(),
    steps: z.record(z.string(), z.string()),
  }),
});

/** Session (opened) — DESIGN.md §4 "Sessions". */
export const OpenedSessionSchema = z
  .object({
    session_id: z.string(),
    agent_id: z.string(),
    agent: z.object({ id: z.string(), name: z.string(), direction: z.string(), language: z.string() }),
    opening: z.object({ text: z.string(), clips: z.array(Clip) }),
    state: State,
    created_at: z.number(),
  })
  .meta({ id: 'OpenedSession' });

/** Turn result (spec). */
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
    trace: z.object({
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
    }),
    cost: Cost,
    session_totals: z.object({
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
    }),
  })
  .meta({ id: 'TurnResult' });

/** End-of-session result (spec). */
export const EndResultSchema = z
  .object({
    session_id: z.string(),
    ended: z.literal(true),
    summary: z.looseObject({}),
    cost: Cost,
  })
  .meta({ id: 'EndResult' });

/** Session detail (spec): `session_id` is the bare integer. */
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
    // Extension (after the spec's fields, which say there is no top-level status or ended_at):
    // the session's own record and its steps, in one object.
    session: z.object({
      agent_id: z.string(),
      status: z.enum(['open', 'ended']),
      title: z.string().nullable(),
      customer_name: z.string().nullable(),
      created_at: z.number(),
      ended_at: z.number().nullable(),
      outcome: z.string().nullable(),
      steps: z.array(
        z.object({
          id: z.string(),
          status: z.string(),
          attempts: z.number().int(),
          slot: z.string().nullable(),
          value: z.union([z.string(), z.number(), z.boolean()]).nullable(),
        }),
      ),
    }),
  })
  .meta({ id: 'SessionDetail' });

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

/** `GET /v1/sessions` page (extension): newest first. */
export const SessionListSchema = z.object({
  data: z.array(SessionListItemSchema),
  has_more: z.boolean(),
  next_cursor: z.string().nullable(),
});

/** `GET /v1/sessions` query: `limit` 1–100 (default 20) and the previous page's `next_cursor`. */
export const SessionListQuery = z.object(pageQuery(SESSIONS_CURSOR));

const AudioStatus = z.object({ total: z.number().int(), ready: z.number().int(), failed: z.number().int() });

/** The Agent resource (DESIGN.md §4 "Extensions"). */
export const AgentSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    direction: z.enum(['inbound', 'outbound']),
    language: z.string(),
    version: z.number().int(),
    digest: z.string(),
    created_at: z.number(),
    updated_at: z.number(),
    audio: AudioStatus,
    definition: z.looseObject({}).optional(),
  })
  .meta({ id: 'Agent' });

/** `PUT /v1/agents/{agent_id}` body: the agent definition (validated by the service, with field paths). */
export const PutAgentBody = z.record(z.string(), z.unknown(), {
  error: 'request body must be the agent definition as a JSON object',
});
