/**
 * `GET /v1/health` (no API key): liveness and version, and what hears callers (speech
 * recognition) and the state of the call-audio workers (docs/media.md).
 */
import { z } from 'zod';

const HealthExtrasSchema = {
  recognition: z
    .object({
      status: z.enum(['on', 'off']),
      provider: z.string().nullable(),
      reason: z.string().optional(),
      languages: z
        .array(
          z.object({
            range: z.string(),
            provider: z.string().nullable(),
            fallback: z.string().nullable(),
            reason: z.string().optional(),
          }),
        )
        .optional(),
      for_language: z
        .object({
          language: z.string(),
          provider: z.string().nullable(),
          fallback: z.string().nullable(),
          reason: z.string().optional(),
          fix: z.string().optional(),
        })
        .optional()
        .meta({
          description:
            'With ?language=: the recogniser that hears callers of that language; when none does (provider null), why not (reason) and the settings that would serve it (fix).',
        }),
    })
    .optional(),
  media: z
    .object({
      workers: z.number().int(),
      streams: z.number().int(),
      rooms: z.number().int().optional(),
      // Ahead of the first call (docs/media.md, "The first call after start").
      warm_up: z.object({ state: z.enum(['warming', 'ready']), opening_clips: z.number().int() }).optional(),
    })
    .optional(),
};

/** `GET /v1/health` query. */
export const HealthQuery = z.object({
  language: z
    .string({ error: 'language must be a BCP-47 language tag such as hi-IN' })
    .max(64, { error: 'language must be at most 64 characters: a BCP-47 language tag such as hi-IN' })
    .optional()
    .meta({
      description: "A BCP-47 language tag (an agent's language): recognition.for_language then says what hears it.",
    }),
});

/** `GET /v1/health` response. */
export const HealthSchema = z.object({ status: z.literal('ok'), version: z.string(), ...HealthExtrasSchema });
/**
 * The response of `GET /v1/health`: `recognition` says whether speech recognition is on (the
 * default's `provider`, per language range in `languages`, and with `?language=` what hears that
 * language in `for_language`, or why nothing does and the settings that would); `media` counts
 * the call-audio workers, streams and rooms. Both are absent from a daemon without call audio.
 */
export type HealthStatus = z.infer<typeof HealthSchema>;
