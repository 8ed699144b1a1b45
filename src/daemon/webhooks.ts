/**
 * The daemon's webhook port (docs/events.md "Webhooks"): Standard Webhooks deliveries under the
 * routing webhook's allow settings (`inbound_webhook_allow_http`, `inbound_webhook_allow_private`;
 * environment `VAGENT_INBOUND_WEBHOOK_ALLOW_HTTP` / `…_ALLOW_PRIVATE`), which cover both webhooks.
 */
import type { Settings } from '../config/schema.js';
import type { WebhookPort } from '../app/webhooks.js';
import { checkWebhookTarget, postStandardWebhook } from '../adapters/webhook/standard-webhooks.js';
import { vagentVersion } from '../version.js';

/** A delivery's whole exchange is cut off after this long (ms) and tried again later. */
export const WEBHOOK_DELIVERY_TIMEOUT_MS = 10_000;

/** The port that checks endpoint URLs and sends deliveries, under `settings`' allow settings. */
export function webhookPortOf(settings: Pick<Settings, 'inbound_webhook_allow_http' | 'inbound_webhook_allow_private'>): WebhookPort {
  const policy = {
    allowHttp: settings.inbound_webhook_allow_http,
    allowPrivate: settings.inbound_webhook_allow_private,
    timeoutMs: WEBHOOK_DELIVERY_TIMEOUT_MS,
  };
  return {
    checkUrl: (url) => checkWebhookTarget(url, policy),
    send: (url, msgId, body, secrets) => postStandardWebhook(url, msgId, body, secrets, policy, `vagent/${vagentVersion()}`),
  };
}

/**
 * The start-up line when an allow setting is on (both webhooks then reach more than public https
 * receivers), or null when neither is.
 */
export function webhookAllowNotice(
  settings: Pick<Settings, 'inbound_webhook_allow_http' | 'inbound_webhook_allow_private'>,
): string | null {
  const on = [
    settings.inbound_webhook_allow_http ? 'plain http (inbound_webhook_allow_http)' : null,
    settings.inbound_webhook_allow_private ? 'private and loopback addresses (inbound_webhook_allow_private)' : null,
  ].filter((s): s is string => s !== null);
  if (on.length === 0) return null;
  return `webhooks: receivers on ${on.join(' and ')} are allowed, for event and routing webhooks alike`;
}
