/**
 * Webhook endpoints (docs/events.md "Webhooks"): their ids, their states, and when a delivery
 * that failed is tried again (exponential backoff with full jitter, for at most 3 days).
 */

/** A webhook endpoint id: `we_` and 20 lowercase base32 characters (100 random bits). */
export const WEBHOOK_ENDPOINT_ID_PATTERN = /^we_[a-z2-7]{20}$/;

/** An endpoint is `active`, or `failing` once a delivery to it was given up (see {@link RETRY_WINDOW_S}). */
export const WEBHOOK_ENDPOINT_STATES = ['active', 'failing'] as const;
/** One of {@link WEBHOOK_ENDPOINT_STATES}. */
export type WebhookEndpointState = (typeof WEBHOOK_ENDPOINT_STATES)[number];

/** A delivery waits (`pending`), was answered 2xx (`delivered`), or was given up (`dead`). */
export type WebhookDeliveryState = 'pending' | 'delivered' | 'dead';

/** How long a delivery is retried, from when it was queued: 3 days, in seconds. */
export const RETRY_WINDOW_S = 3 * 86_400;
/** How long the previous secret still signs after a rotation: 24 hours, in seconds. */
export const ROTATION_OVERLAP_S = 86_400;

/** The retry schedule: the first retry's ceiling and the largest ceiling, in seconds. */
export interface RetrySchedule {
  /** Ceiling of the wait after the first failure (default 5 s); it doubles with each failure. */
  baseS: number;
  /** The largest ceiling (default 1 hour). */
  capS: number;
}

/** The schedule the daemon uses. */
export const DEFAULT_RETRY_SCHEDULE: RetrySchedule = { baseS: 5, capS: 3600 };

/**
 * Seconds to wait after the `failures`-th failed attempt (1, 2, …): "full jitter", a uniform
 * draw in [0, min(cap, base × 2^(failures−1))], at least 0.1 s, so that receivers coming back
 * are not hit by every queued delivery at once.
 * @param random a uniform draw in [0, 1) (Math.random; tests fix it).
 */
export function retryDelayS(failures: number, random: number, schedule: RetrySchedule = DEFAULT_RETRY_SCHEDULE): number {
  const exponent = Math.min(Math.max(failures, 1) - 1, 40);
  const ceiling = Math.min(schedule.capS, schedule.baseS * 2 ** exponent);
  return Math.max(0.1, ceiling * Math.min(Math.max(random, 0), 1));
}
