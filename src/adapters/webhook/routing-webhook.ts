/**
 * The client for a tenant's inbound routing webhook: when a call reaches a DID,
 * vagent POSTs a signed JSON event to the URL the operator configured and reads back which agent
 * should answer. The caller falls back to the number's bound agent on any error thrown here.
 *
 * Guarantees:
 * - https only, unless the policy allows http;
 * - no private, loopback, link-local, unique-local, multicast or reserved target (SSRF), unless
 *   the policy allows them: literal IPs are checked, and a host name is resolved once, every
 *   address it resolves to is checked, and the socket connects only to those checked addresses
 *   (no second resolution, so no DNS rebinding between check and connect);
 * - redirects are never followed; TLS certificates are always verified;
 * - the whole exchange (DNS, connect, TLS, request, response body) is bounded by one deadline and
 *   the response body by a size limit;
 * - error messages name the URL's origin only: never its path or query (which may carry
 *   tokens), the secret or the request body.
 *
 * The target checks are in webhook-target.ts, the signature in webhook-signature.ts.
 */
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { SIGNATURE_HEADER, signWebhookBody, TIMESTAMP_HEADER } from './webhook-signature.js';
import { checkedPostOptions, checkWebhookUrl, WebhookTargetError } from './webhook-target.js';

/** The header carrying the caller's event id, when one is given. */
export const EVENT_ID_HEADER = 'vagent-event-id';
/** Default whole-exchange deadline, in milliseconds. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;
/** Default limit on a response body, in bytes (64 KiB). */
export const DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;

const DEFAULT_USER_AGENT = 'vagent-webhook/1';

/** How a webhook may be called. */
export interface WebhookPolicy {
  /** Allow plain `http:` URLs (default deployments: false; https only). */
  allowHttp: boolean;
  /**
   * Allow targets that are not public unicast addresses: private (RFC 1918), carrier-grade NAT,
   * loopback, link-local, unique-local, multicast, unspecified, reserved and the like.
   */
  allowPrivate: boolean;
  /**
   * Deadline for the whole exchange, in milliseconds: DNS, connect, TLS, request and the full
   * response body. A value that is not a positive finite number means
   * {@link DEFAULT_WEBHOOK_TIMEOUT_MS} (2000).
   */
  timeoutMs: number;
  /**
   * Largest accepted response body, in bytes. Absent, or not a positive finite number:
   * {@link DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES} (64 KiB).
   */
  maxResponseBytes?: number;
}

function positiveOr(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * POSTs `payload` as JSON to a webhook, signed, under `policy`, and resolves with the parsed
 * JSON object of a 2xx response.
 *
 * Request headers: `content-type: application/json`, `user-agent` (default `vagent-webhook/1`),
 * {@link SIGNATURE_HEADER} (see {@link signWebhookBody}), {@link TIMESTAMP_HEADER} (the signing
 * time, unix seconds) and {@link EVENT_ID_HEADER} when `opts.eventId` is given. Each call opens its
 * own connection (no keep-alive reuse), so each call resolves and checks the host anew.
 *
 * @param url the webhook URL; checked with {@link checkWebhookUrl} first.
 * @param payload any JSON-serialisable value; sent as `JSON.stringify(payload)`.
 * @param secret the signing secret; never sent, never in an error message.
 * @param policy scheme, address, deadline and size rules.
 * @param opts `userAgent`, and `eventId` for receivers to de-duplicate retries.
 * @returns `status` (2xx), `body` (a JSON object, never an array or primitive) and `ms`, the
 *   whole exchange in milliseconds (rounded).
 * @throws WebhookTargetError (as a rejection), with reason:
 *   `invalid_url` | `scheme_not_allowed` | `address_not_allowed` (also when any address the host
 *   resolves to is not public) | `dns_failed` | `timeout` (deadline passed) | `redirect` (any 3xx,
 *   never followed; `status` set) | `http_status` (other non-2xx; `status` set) |
 *   `response_too_large` | `bad_response` (body not JSON, or not an object) | `network`
 *   (connection refused or reset, TLS failure such as an unverifiable certificate…).
 * @throws TypeError (as a rejection) if `payload` does not serialise to JSON, or if `userAgent` /
 *   `eventId` is not a valid header value: programming errors, not webhook failures.
 */
export async function postSignedJson(
  url: string,
  payload: unknown,
  secret: string,
  policy: WebhookPolicy,
  opts: { userAgent?: string; eventId?: string } = {},
): Promise<{ status: number; body: unknown; ms: number }> {
  const started = performance.now();
  const target = checkWebhookUrl(url, policy);
  const origin = target.origin;
  // setTimeout fires at once for delays above 2^31-1 ms; cap rather than overflow.
  const timeoutMs = Math.min(positiveOr(policy.timeoutMs, DEFAULT_WEBHOOK_TIMEOUT_MS), 2_147_483_647);
  const maxBytes = positiveOr(policy.maxResponseBytes, DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES);

  const body = JSON.stringify(payload) as string | undefined;
  if (typeof body !== 'string') throw new TypeError('webhook payload does not serialise to JSON');
  const t = Math.floor(Date.now() / 1000);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': opts.userAgent ?? DEFAULT_USER_AGENT,
    [SIGNATURE_HEADER]: signWebhookBody(secret, body, t),
    [TIMESTAMP_HEADER]: String(t),
  };
  if (opts.eventId !== undefined) headers[EVENT_ID_HEADER] = opts.eventId;

  const isHttps = target.protocol === 'https:';
  const options = checkedPostOptions(target, policy.allowPrivate, headers);

  return new Promise((resolve, reject) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const finish = (err: Error | null, value?: { status: number; body: unknown; ms: number }) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (err) {
        req?.destroy();
        reject(err);
      } else {
        resolve(value!);
      }
    };
    const timer = setTimeout(() => {
      finish(new WebhookTargetError('timeout', `webhook ${origin} did not answer within ${timeoutMs} ms`));
    }, timeoutMs);

    try {
      req = (isHttps ? https : http).request(options);
    } catch (err) {
      // Invalid header values (CR/LF in userAgent or eventId) are thrown synchronously.
      finish(err instanceof TypeError ? err : new TypeError('webhook request could not be built', { cause: err }));
      return;
    }

    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof WebhookTargetError) {
        finish(err);
        return;
      }
      const code = err.code ?? err.name;
      finish(new WebhookTargetError('network', `webhook ${origin} could not be reached (${code})`, { cause: err }));
    });

    req.on('response', (res) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400) {
        finish(new WebhookTargetError('redirect', `webhook ${origin} answered ${status}; redirects are not followed`, { status }));
        return;
      }
      if (status < 200 || status >= 300) {
        finish(new WebhookTargetError('http_status', `webhook ${origin} answered ${status}`, { status }));
        return;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > maxBytes) {
        finish(new WebhookTargetError('response_too_large', `webhook ${origin} response exceeds ${maxBytes} bytes`));
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        size += chunk.length;
        if (size > maxBytes) {
          finish(new WebhookTargetError('response_too_large', `webhook ${origin} response exceeds ${maxBytes} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on('error', (err: NodeJS.ErrnoException) => {
        finish(new WebhookTargetError('network', `webhook ${origin} response was cut off (${err.code ?? err.name})`, { cause: err }));
      });
      res.on('close', () => {
        if (!res.complete) finish(new WebhookTargetError('network', `webhook ${origin} response was cut off`));
      });
      res.on('end', () => {
        if (settled) return;
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          finish(new WebhookTargetError('bad_response', `webhook ${origin} answered ${status} with a body that is not JSON`));
          return;
        }
        if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
          finish(new WebhookTargetError('bad_response', `webhook ${origin} answered ${status} with JSON that is not an object`));
          return;
        }
        finish(null, { status, body: parsed, ms: Math.round(performance.now() - started) });
      });
    });

    req.end(body);
  });
}
