/**
 * `/v1/telephony`: the telephony check (LiveKit, webhook events, the caller's budget, the cloud
 * recognisers) and the acknowledgement of a LiveKit webhook (docs/calls.md).
 */
import { z } from 'zod';

/** `GET /v1/telephony/check` response. */
export const TelephonyCheckSchema = z
  .object({
    ok: z.boolean(),
    url: z.string().nullable(),
    outbound_trunks: z.number().int().optional(),
    ms: z.number().optional(),
    problem: z.string().optional(),
    message: z.string().optional(),
    agent_name: z.string().nullable(),
    events: z.object({ since_start: z.record(z.string(), z.number()), recorded: z.record(z.string(), z.number()) }),
    budget: z.object({ budget_inr: z.number().nullable(), spent_inr: z.number(), day: z.string(), timezone: z.string() }),
    /** Each configured cloud speech recogniser's handshake (`provider` deepgram or sarvam, `used_for` its language ranges, `ms` the round trip); empty when none is configured. */
    recognizers: z
      .array(
        z.object({
          provider: z.string(),
          used_for: z.array(z.string()),
          ok: z.boolean(),
          detail: z.string().optional(),
          problem: z.string().optional(),
          message: z.string().optional(),
          ms: z.number(),
        }),
      )
      .optional(),
  })
  .meta({ id: 'TelephonyCheck' });
/**
 * The response of `GET /v1/telephony/check`: `url` the LiveKit URL (null when none is
 * configured), `problem` what is wrong (`not_configured`, `unauthenticated`, `permission_denied`,
 * `unreachable`, `error`), the webhook events by outcome, and the caller's daily budget
 * (`budget_inr` null: none; `day` is `YYYY-MM-DD` in `timezone`).
 */
export type TelephonyCheckResult = z.infer<typeof TelephonyCheckSchema>;
/** One cloud speech recogniser's check in {@link TelephonyCheckResult}. */
export type RecognizerCheck = NonNullable<TelephonyCheckResult['recognizers']>[number];

/** `POST /v1/telephony/livekit/webhook` response. */
export const WebhookAckSchema = z.object({ received: z.literal(true), duplicate: z.boolean(), recorded: z.boolean() });
