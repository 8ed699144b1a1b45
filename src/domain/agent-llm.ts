/**
 * An agent's `llm` block (docs/agents.md "LLM"; docs/llm.md "Where the model acts"): the rules
 * decide first, and only where they miss is the model asked, for an off-script reply, a slot
 * value or a control intent. An agent without this block never calls a model.
 */
import { z } from 'zod';

/** Bounds of an agent's `llm` block (see {@link LlmSettingsSchema}). */
export const LLM_LIMITS = Object.freeze({
  /** `instructions`: up to 8,000 characters (the system prompt's own text). */
  instructionsChars: 8000,
  /** `max_output_tokens`: 1–4,096, default 200 (a spoken reply is a few sentences). */
  maxOutputTokens: { min: 1, max: 4096, default: 200 },
  /** `max_calls_per_session`: 0–200, default 20 (0: the model is never called). */
  maxCallsPerSession: { min: 0, max: 200, default: 20 },
});

const whole = (name: string, unit: string, b: { min: number; max: number; default: number }) =>
  z
    .number({ error: `llm.${name} must be a whole number of ${unit}` })
    .int({ error: `llm.${name} must be a whole number of ${unit}` })
    .min(b.min, { error: `llm.${name} must be at least ${b.min} ${unit}` })
    .max(b.max, { error: `llm.${name} must be at most ${b.max} ${unit}` })
    .default(b.default);

/**
 * The `llm` block:
 * - `model`: the model name sent to the endpoint and priced in config/pricing.yaml; absent: the
 *   daemon's `llm.model`;
 * - `instructions`: what the model knows and how it answers (a clinic's hours, payment,
 *   address …); the agent's FAQ answers are sent with them;
 * - `temperature` (0–2; absent: the provider's default), `max_output_tokens` (default 200),
 *   `max_calls_per_session` (default 20; 0 turns the model off for the agent's sessions).
 */
export const LlmSettingsSchema = z
  .object(
    {
      model: z
        .string({ error: 'llm.model must be a model name' })
        .trim()
        .min(1, 'llm.model must not be empty')
        .max(200, 'llm.model is at most 200 characters')
        .optional(),
      instructions: z
        .string({ error: 'llm.instructions must be text' })
        .trim()
        .min(1, 'llm.instructions must not be empty')
        .max(LLM_LIMITS.instructionsChars, `llm.instructions is at most ${LLM_LIMITS.instructionsChars} characters`),
      temperature: z
        .number({ error: 'llm.temperature must be a number from 0 to 2' })
        .min(0, 'llm.temperature must be a number from 0 to 2')
        .max(2, 'llm.temperature must be a number from 0 to 2')
        .optional(),
      max_output_tokens: whole('max_output_tokens', 'tokens', LLM_LIMITS.maxOutputTokens),
      max_calls_per_session: whole('max_calls_per_session', 'calls', LLM_LIMITS.maxCallsPerSession),
    },
    { error: (iss) => (iss.code === 'invalid_type' ? 'llm must be an object' : undefined) },
  )
  .strict();
/** An agent's `llm` block after defaults. */
export type LlmSettings = z.infer<typeof LlmSettingsSchema>;
