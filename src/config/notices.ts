/**
 * Lines `vagent serve` and `vagent admin …` print for people (stderr) about how the instance is
 * set up: telephony (issue 14 item 16) and tenant isolation (spec: Authentication 3; item 20).
 * They never hold a credential: LiveKit is named by host and media agent only.
 */
import type { Settings } from './schema.js';

/**
 * One line saying whether telephony is configured and how, or how to configure it.
 * Configured: the LiveKit server's host (and port) and the media agent's name — never the URL's
 * user info, the API key or the secret.
 */
export function telephonyNotice(livekit: Settings['livekit']): string {
  if (livekit.url && livekit.api_key && livekit.api_secret) {
    let host: string;
    try {
      host = new URL(livekit.url).host;
    } catch {
      host = 'the configured LiveKit URL';
    }
    return `telephony: LiveKit at ${host}, media agent "${livekit.agent_name}" (check it: vagent telephony check)`;
  }
  return 'telephony: not configured: calls cannot be dialled and inbound calls are refused. ' +
    'To enable it, set LIVEKIT_URL, LIVEKIT_API_KEY and LIVEKIT_API_SECRET (or livekit: url, api_key, api_secret in the config file) and restart vagent serve';
}

/**
 * The warning that `auth_mode` `audit` (the default) does not isolate tenants, and how to switch
 * to `enforce`. Printed once by `vagent serve` in audit mode and by `vagent admin tenant create`
 * when a second tenant exists.
 */
export function auditModeNotice(): string {
  return 'warning: auth_mode is audit: tenants are not isolated. A key of one tenant can read and change ' +
    "another tenant's resources by id (each such access is recorded: vagent admin audit). " +
    'To isolate tenants, start vagent serve with VAGENT_AUTH_MODE=enforce (or auth_mode: enforce in the config file)';
}
