/**
 * The agent workflow format (docs/agents.md): what an operator writes in YAML or JSON and
 * applies with `vagent agent apply` or `PUT /v1/agents/{agent_id}`.
 *
 * Validated with zod; {@link parseAgentDefinition} turns zod issues into messages that name
 * the field path (`steps[2].capture.type`), which the CLI maps to a file line.
 */
import { z } from 'zod';
import { DIAL_LIMITS } from './calls.js';
import { ID_PATTERNS } from './ids.js';
import { SLOT_TYPES, type SlotType } from './slot-types.js';
import { LlmSettingsSchema } from './agent-llm.js';
import { AgentVoiceSchema, voiceLanguageIssues } from './voice.js';
import { EXPECTATION_KINDS, MAX_EOU_SILENCE_MS, MIN_EOU_SILENCE_MS, type ExpectationKind } from './media.js';

/** File name endings of agent files (`vagent agent apply -f DIR`, the daemon's example agents). */
export const AGENT_FILE_EXTENSIONS = ['.yaml', '.yml', '.json'] as const;

/** True when `name` ends in one of {@link AGENT_FILE_EXTENSIONS} (any case). */
export function isAgentFileName(name: string): boolean {
  const lower = name.toLowerCase();
  return AGENT_FILE_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

export { SLOT_TYPES, type SlotType, type SlotValue } from './slot-types.js';

const Text = z.string().trim().min(1, 'must not be empty').max(1000, 'at most 1000 characters');
const Word = z.string().trim().min(1).max(100);
const StepId = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a step id is lowercase letters, digits and _ (1–64, starting with a letter)');
const SlotName = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'a slot name is lowercase letters, digits and _ (1–64, starting with a letter)');

/** One option of a `choice` slot: its id (the canonical value) and the words that pick it. */
export const ChoiceOptionSchema = z
  .object({
    id: z.string().regex(/^[a-z0-9_]{1,64}$/, 'an option id is lowercase letters, digits and _'),
    synonyms: z.array(Word).max(50).default([]),
  })
  .strict();
/** A choice option after defaults. */
export type ChoiceOption = z.infer<typeof ChoiceOptionSchema>;

/** What a step captures: the slot it fills and the typed extractor that fills it. */
export const CaptureSchema = z
  .object({
    slot: SlotName,
    type: z.enum(SLOT_TYPES),
    /** `choice` only: the options (at least two). */
    options: z.array(ChoiceOptionSchema).min(2).max(30).optional(),
    /** `digits` only: accepted length bounds (inclusive). */
    min_length: z.number().int().min(1).max(32).optional(),
    max_length: z.number().int().min(1).max(32).optional(),
    /** `number`/`amount`: accepted range (inclusive). */
    min: z.number().optional(),
    max: z.number().optional(),
  })
  .strict()
  .superRefine((c, ctx) => {
    if (c.type === 'choice' && !c.options) ctx.addIssue({ code: 'custom', path: ['options'], message: 'a choice slot needs options' });
    if (c.type !== 'choice' && c.options) ctx.addIssue({ code: 'custom', path: ['options'], message: 'options apply only to type choice' });
    if (c.min_length !== undefined && c.max_length !== undefined && c.min_length > c.max_length) {
      ctx.addIssue({ code: 'custom', path: ['min_length'], message: 'min_length is greater than max_length' });
    }
  });
/** A step's capture after defaults. */
export type Capture = z.infer<typeof CaptureSchema>;

/** One step of the workflow: a question, what it captures, and how the answer is confirmed. */
export const StepSchema = z
  .object({
    id: StepId,
    ask: Text,
    /** Said when the answer was not understood; defaults to the language's "sorry" + `ask`. */
    reprompt: Text.optional(),
    capture: CaptureSchema.optional(),
    /** `readback`: "That's Friday, 14 November — right?"; `digits`: digit-by-digit readback. */
    confirm: z.enum(['none', 'readback', 'digits']).default('none'),
    /** Re-prompts before the fallback (1–5). */
    max_attempts: z.number().int().min(1).max(5).default(2),
    /** Said when the attempts run out; the workflow then moves on with the step `failed`. */
    fallback: Text.optional(),
    /** An optional step is skipped (not failed) when its attempts run out. */
    optional: z.boolean().default(false),
    /**
     * Ends the conversation when the step settles on `value` (e.g. `false` for "Am I speaking
     * with …?"): `say` is spoken instead of the rest of the workflow and its closing line.
     */
    stop_if: z
      .object({ value: z.union([z.boolean(), z.number(), z.string()]), say: Text })
      .strict()
      .optional(),
    /**
     * `false`: on a phone line, caller speech never interrupts this step's question and
     * re-prompt (a legal disclaimer that must be heard whole); their clips carry the flag
     * `barge_in: false`. Absent means the agent's `media.barge_in`. Optional without a default
     * so definitions stored before it keep their digest.
     */
    barge_in: z.literal(false, { error: 'barge_in on a step can only be false (leave it out to allow barge-in)' }).optional(),
  })
  .strict()
  .superRefine((s, ctx) => {
    if (s.confirm === 'digits' && s.capture && s.capture.type !== 'digits') {
      ctx.addIssue({ code: 'custom', path: ['confirm'], message: 'confirm: digits needs a capture of type digits' });
    }
    if (s.confirm !== 'none' && !s.capture) ctx.addIssue({ code: 'custom', path: ['confirm'], message: 'confirm needs a capture' });
    if (s.stop_if && !s.capture) ctx.addIssue({ code: 'custom', path: ['stop_if'], message: 'stop_if needs a capture' });
  });
/** A step after defaults. */
export type Step = z.infer<typeof StepSchema>;

/** A frequently asked question: keyword match → answer, then the current step is asked again. */
export const FaqSchema = z
  .object({
    intent: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'an intent is lowercase letters, digits and _'),
    keywords: z.array(Word).min(1).max(50),
    answer: Text,
  })
  .strict();
/** An FAQ entry. */
export type Faq = z.infer<typeof FaqSchema>;

/**
 * One opening clip: what the agent says first, before the caller speaks. `barge_in: false`
 * makes the caller hear it whole on a phone line (a recording notice, a legal disclaimer).
 */
export const OpeningClipSchema = z
  .object({
    text: Text,
    requires_user_input: z.boolean().default(false),
    barge_in: z.literal(false, { error: 'barge_in on an opening line can only be false (leave it out to allow barge-in)' }).optional(),
  })
  .strict();

/** Bounds of the agent's `media` settings (see {@link MediaSettingsSchema}). */
export const MEDIA_LIMITS = Object.freeze({
  /** `no_speech_timeout_ms`: 1–60 s (Twilio `<Gather>` waits 5 s by default). */
  noSpeechTimeoutMs: { min: 1000, max: 60_000, default: 6000 },
  /** `max_silence_reprompts`: 0–5. */
  maxSilenceReprompts: { min: 0, max: 5, default: 2 },
  /** `max_call_duration_s`: the bounds and default of a dialled call's (`DIAL_LIMITS`, src/domain/calls.ts). */
  maxCallDurationS: DIAL_LIMITS.max_call_duration_s,
  /** `end_of_utterance_ms.<kind>`. */
  endOfUtteranceMs: { min: MIN_EOU_SILENCE_MS, max: MAX_EOU_SILENCE_MS },
});

const wholeIn = (name: string, unit: string, b: { min: number; max: number }) =>
  z
    .number({ error: `${name} must be a number of ${unit}` })
    .int({ error: `${name} must be a whole number of ${unit}` })
    .min(b.min, { error: `${name} must be at least ${b.min} ${unit}` })
    .max(b.max, { error: `${name} must be at most ${b.max} ${unit}` });

const EouMs = wholeIn('end_of_utterance_ms', 'ms', MEDIA_LIMITS.endOfUtteranceMs);
const Confidence = z
  .number({ error: 'min_confidence values must be numbers from 0 to 1' })
  .min(0, { error: 'min_confidence values must be numbers from 0 to 1' })
  .max(1, { error: 'min_confidence values must be numbers from 0 to 1' });

/**
 * How the agent behaves on a phone line (docs/agents.md "Phone calls"). Every field
 * has a default, and the block itself is optional: an agent without it gets the defaults.
 * - `barge_in` (default true): caller speech interrupts the agent's playout; false for none at all;
 * - `no_speech_timeout_ms` (default 6000): silence after a prompt before the silence re-prompt, ms;
 * - `max_silence_reprompts` (default 2): silence re-prompts before the polite hang-up;
 * - `max_call_duration_s` (default 1800): the call is closed politely after this long, s;
 * - `end_of_utterance_ms`: per expectation (`yes_no`, `digits`, `phone`, `number`, `choice`,
 *   `name`, `date`, `time`, `free`), the silence that ends the caller's answer, ms, overriding
 *   the defaults of src/domain/media.ts.
 */
export const MediaSettingsSchema = z
  .object(
    {
      barge_in: z.boolean({ error: 'barge_in must be true or false' }).default(true),
      no_speech_timeout_ms: wholeIn('no_speech_timeout_ms', 'ms', MEDIA_LIMITS.noSpeechTimeoutMs).default(
        MEDIA_LIMITS.noSpeechTimeoutMs.default,
      ),
      max_silence_reprompts: wholeIn('max_silence_reprompts', 're-prompts', MEDIA_LIMITS.maxSilenceReprompts).default(
        MEDIA_LIMITS.maxSilenceReprompts.default,
      ),
      max_call_duration_s: wholeIn('max_call_duration_s', 'seconds', MEDIA_LIMITS.maxCallDurationS).default(
        MEDIA_LIMITS.maxCallDurationS.default,
      ),
      end_of_utterance_ms: z
        .object(
          Object.fromEntries(EXPECTATION_KINDS.map((k) => [k, EouMs.optional()])) as Record<ExpectationKind, z.ZodOptional<typeof EouMs>>,
          {
            error: (iss) =>
              iss.code === 'invalid_type'
                ? `end_of_utterance_ms must be an object of ms by kind (${EXPECTATION_KINDS.join(', ')})`
                : undefined,
          },
        )
        .strict()
        .default({}),
      /**
       * Per slot type, the recogniser confidence (0..1) below which a heard value is read back
       * before it is stored, overriding src/engine/confidence.ts's defaults (docs/agents.md
       * "Recogniser confidence"). Optional without a default so definitions stored before it keep
       * their digest.
       */
      min_confidence: z
        .object(
          Object.fromEntries(SLOT_TYPES.map((t) => [t, Confidence.optional()])) as Record<SlotType, z.ZodOptional<typeof Confidence>>,
          {
            error: (iss) =>
              iss.code === 'invalid_type'
                ? `min_confidence must be an object of 0..1 thresholds by slot type (${SLOT_TYPES.join(', ')})`
                : undefined,
          },
        )
        .strict()
        .optional(),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'media must be an object' : undefined) },
  )
  .strict();
/** An agent's phone-line settings after defaults. */
export type MediaSettings = z.infer<typeof MediaSettingsSchema>;

/** Values of a `recording` setting, of an agent or a tenant. */
export const RECORDING_MODES = ['off', 'mono', 'dual'] as const;

/**
 * Whether a phone call is recorded (docs/media.md "Recordings"): `off`, `mono` (caller and agent
 * mixed in one channel) or `dual` (the caller on the left channel, the agent on the right).
 */
export const RecordingModeSchema = z.enum(RECORDING_MODES, { error: 'recording must be off, mono or dual' });
/** A `recording` setting. */
export type RecordingMode = z.infer<typeof RecordingModeSchema>;

/**
 * The recording of a call of an agent whose own setting is `agentMode` (absent: undefined) for
 * a tenant whose setting is `tenantMode` (null: none): the agent's when set, else the tenant's,
 * else `off`.
 */
export function effectiveRecording(agentMode: RecordingMode | undefined, tenantMode: RecordingMode | null): RecordingMode {
  return agentMode ?? tenantMode ?? 'off';
}

/** The phone-line settings of an agent: its `media` block, or every default when it has none. */
export function mediaSettingsOf(agent: Pick<AgentDefinition, 'media'>): MediaSettings {
  return agent.media ?? MediaSettingsSchema.parse({});
}

/** Lines the engine says for control intents and failures; each has a per-language default. */
export const MessagesSchema = z
  .object({
    repeat_prefix: Text,
    wait: Text,
    human: Text,
    not_understood: Text,
    confirm_prompt: Text,
    readback: Text,
    /** The readback of a value heard below its confidence threshold; holds `{{value}}` ("I heard {{value}}. Is that right?"). */
    heard_readback: Text,
    correction: Text,
    goodbye: Text,
    fillers: z.array(Text).min(1).max(10),
    /** Said when the caller has been silent after a prompt, before the step is asked again ("Are you still there?"). */
    no_input: Text,
    /** Said when the silence re-prompts have run out, just before the call ends. */
    no_input_goodbye: Text,
    /** Said when the call reaches the agent's `media.max_call_duration_s`, before `goodbye`. */
    time_up: Text,
    /**
     * On a phone line, added once to a `digits` step's re-ask, the first time that step is asked
     * again ("…or type it on your phone's keypad and press hash"): keyed digits (DTMF) answer it.
     */
    keypad_offer: Text,
  })
  .partial()
  .strict();
/** Agent-level overrides of the engine's default lines. */
export type Messages = z.infer<typeof MessagesSchema>;

/**
 * A key of a session's `context` as templates name it after `context.`: `emi_amount`, or a
 * dotted path into nested objects (`order.id`), the syntax of `{{context.order.id}}`.
 */
export const CONTEXT_KEY_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*(?:\.[a-zA-Z0-9_]+)*$/;
const ContextKey = z
  .string()
  .max(200)
  .regex(CONTEXT_KEY_PATTERN, 'a context key is letters, digits and _ (dots for nested keys), as in {{context.emi_amount}}');
/** A default spoken for a context key the session was opened without. */
const ContextDefault = z.union([z.string().trim().min(1, 'must not be empty').max(1000), z.number().finite()]);

/** The agent definition (docs/agents.md). Unknown keys are rejected so typos surface. */
export const AgentDefinitionSchema = z
  .object({
    id: z.string().regex(ID_PATTERNS.agent, 'an agent id is ag_ followed by 1–64 of a-z, 0-9 and _'),
    name: z.string().trim().min(1).max(200),
    description: z.string().max(2000).optional(),
    direction: z.enum(['inbound', 'outbound']),
    language: z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP-47 tag such as en-IN or hi-IN'),
    timezone: z.string().min(1).max(64).default('Asia/Kolkata'),
    /** Speech voice (docs/agents.md "Voice"): embedded as text, or a cloud voice; default the embedded one for `language`. */
    voice: AgentVoiceSchema.optional(),
    opening: z.array(OpeningClipSchema).min(1).max(10),
    steps: z.array(StepSchema).max(50).default([]),
    faq: z.array(FaqSchema).max(100).default([]),
    closing: Text,
    close_grace_ms: z.number().int().min(0).max(120_000).default(8000),
    messages: MessagesSchema.default({}),
    /**
     * Context keys a session of this agent cannot open without (`POST /v1/sessions`, agent
     * load, `POST /v1/calls`): each must be a non-empty string, a number or a boolean.
     * Optional (no default applied) so definitions stored before it keep their digest.
     */
    required_context: z.array(ContextKey).max(50).optional(),
    /** What `{{context.KEY}}` says when the session's context lacks KEY (text or a number). */
    context_defaults: z.record(ContextKey, ContextDefault).optional(),
    /** Phone-line behaviour ({@link MediaSettingsSchema}); optional without a default so stored definitions keep their digest. */
    media: MediaSettingsSchema.optional(),
    /** Call recording ({@link RecordingModeSchema}); absent: the tenant's (docs/media.md "Recordings"). No default: digests stay. */
    recording: RecordingModeSchema.optional(),
    llm: LlmSettingsSchema.optional(), // ./agent-llm.ts; absent: no model is called (no default: stored digests stay)
  })
  .strict()
  .superRefine((a, ctx) => {
    for (const message of voiceLanguageIssues(a.voice, a.language)) ctx.addIssue({ code: 'custom', path: ['voice', 'provider'], message });
    const ids = new Set<string>();
    const slots = new Set<string>();
    a.steps.forEach((s, i) => {
      if (ids.has(s.id)) ctx.addIssue({ code: 'custom', path: ['steps', i, 'id'], message: `duplicate step id "${s.id}"` });
      ids.add(s.id);
      if (s.capture) {
        if (slots.has(s.capture.slot))
          ctx.addIssue({
            code: 'custom',
            path: ['steps', i, 'capture', 'slot'],
            message: `slot "${s.capture.slot}" is captured by two steps`,
          });
        slots.add(s.capture.slot);
      }
    });
    const required = new Set<string>();
    (a.required_context ?? []).forEach((key, i) => {
      if (required.has(key)) ctx.addIssue({ code: 'custom', path: ['required_context', i], message: `"${key}" is listed twice` });
      required.add(key);
    });
    const defaults = Object.keys(a.context_defaults ?? {});
    if (defaults.length > 100) ctx.addIssue({ code: 'custom', path: ['context_defaults'], message: 'at most 100 defaults' });
    for (const key of defaults) {
      if (required.has(key)) {
        ctx.addIssue({
          code: 'custom',
          path: ['context_defaults', key],
          message: `"${key}" is in required_context, so its default would never be used`,
        });
      }
    }
    const intents = new Set<string>();
    a.faq.forEach((f, i) => {
      if (intents.has(f.intent)) ctx.addIssue({ code: 'custom', path: ['faq', i, 'intent'], message: `duplicate intent "${f.intent}"` });
      intents.add(f.intent);
    });
  });

/** A validated agent definition with defaults applied. */
export type AgentDefinition = z.infer<typeof AgentDefinitionSchema>;

/** One validation problem: the field path (`steps.2.capture.type`) and what is wrong. */
export interface AgentIssue {
  path: (string | number)[];
  message: string;
}

/** The result of {@link parseAgentDefinition}. */
export type AgentParseResult = { ok: true; agent: AgentDefinition } | { ok: false; issues: AgentIssue[] };

/**
 * Validates an agent definition (already parsed from YAML or JSON).
 *
 * @param input any JSON value
 * @returns the agent with defaults applied, or every issue with its field path; never throws.
 */
export function parseAgentDefinition(input: unknown): AgentParseResult {
  const r = AgentDefinitionSchema.safeParse(input);
  if (r.success) return { ok: true, agent: r.data };
  return {
    ok: false,
    issues: r.error.issues.map((i) => ({ path: i.path.map((p) => (typeof p === 'symbol' ? String(p) : p)), message: i.message })),
  };
}

/** `steps[2].capture.type` for a zod path. */
export function formatIssuePath(path: (string | number)[]): string {
  let out = '';
  for (const p of path) out += typeof p === 'number' ? `[${p}]` : out ? `.${p}` : p;
  return out || '(root)';
}

/** The language part of a BCP-47 tag: `hi` for `hi-IN`. */
export function baseLanguage(tag: string): string {
  return tag.split('-')[0]!.toLowerCase();
}
