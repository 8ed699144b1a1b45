/**
 * Event webhooks signed per the Standard Webhooks specification
 * (https://www.standardwebhooks.com, "Signature scheme"; docs/events.md "Webhooks"):
 *
 * - the secret is `whsec_` and the base64 of its random bytes; the key is those bytes;
 * - the signed content is `${webhook-id}.${webhook-timestamp}.${body}`;
 * - the signature is `v1,` and the base64 of HMAC-SHA256(key, content) (RFC 2104);
 * - `webhook-signature` holds one such signature per secret, separated by spaces (two while a
 *   rotated secret's predecessor still signs).
 *
 * {@link postStandardWebhook} sends one delivery under the SSRF rules of webhook-target.ts (the
 * routing webhook's): checked addresses only, no redirect followed, one deadline for the whole
 * exchange. Errors name the URL's origin only, never its path, the secret or the body.
 */
import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import {
  checkedPostOptions,
  checkWebhookUrl,
  isPublicUnicastAddress,
  literalIp,
  WebhookTargetError,
  type WebhookAllowance,
} from './webhook-target.js';

/** The prefix of a Standard Webhooks secret. */
export const SECRET_PREFIX = 'whsec_';

/** The key bytes of a `whsec_…` secret. @throws RangeError for a secret that is not `whsec_` and base64. */
export function secretKey(secret: string): Buffer {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64)) throw new RangeError('webhook secret must be whsec_ and base64');
  return Buffer.from(b64, 'base64');
}

/**
 * The `webhook-signature` value of one message: `v1,<base64 HMAC-SHA256>` per secret, joined
 * by spaces, in the order given.
 * @param msgId the `webhook-id` header (the event id).
 * @param timestampS the `webhook-timestamp` header, whole epoch seconds.
 * @param body the exact body sent.
 * @param secrets one or more `whsec_…` secrets.
 * @throws RangeError for a malformed secret or timestamp.
 */
export function signStandardWebhook(msgId: string, timestampS: number, body: string, secrets: readonly string[]): string {
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) throw new RangeError('timestamp must be whole epoch seconds');
  const content = `${msgId}.${timestampS}.${body}`;
  return secrets.map((s) => `v1,${crypto.createHmac('sha256', secretKey(s)).update(content).digest('base64')}`).join(' ');
}

/** The three headers of a signed delivery, and the JSON content type. */
export function standardWebhookHeaders(
  msgId: string,
  timestampS: number,
  body: string,
  secrets: readonly string[],
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': msgId,
    'webhook-timestamp': String(timestampS),
    'webhook-signature': signStandardWebhook(msgId, timestampS, body, secrets),
  };
}

/** How deliveries are sent: the routing webhook's allow settings, and a deadline. */
export interface DeliveryPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
  /** The whole exchange's deadline, in milliseconds. */
  timeoutMs: number;
}

/** What the receiver made of a delivery. */
export interface DeliveryAnswer {
  /** The receiver's 2xx status. */
  status: number;
  /** The whole exchange, in milliseconds. */
  ms: number;
}

/** At most this much of a receiver's answer is read (and then dropped): 64 KiB. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * POSTs one signed delivery. Any 2xx is success, whatever its body; the body is read up to
 * 64 KiB and dropped.
 * @param url the endpoint URL (checked again here, and its host's addresses at connect).
 * @param msgId the event id (`webhook-id`).
 * @param body the event JSON.
 * @param secrets the secrets that sign (current first).
 * @throws WebhookTargetError as a rejection: `invalid_url`, `scheme_not_allowed`,
 *   `address_not_allowed`, `dns_failed`, `timeout`, `redirect` (3xx, never followed),
 *   `http_status` (any other non-2xx; `status` set), `network` (refused, reset, TLS).
 */
export async function postStandardWebhook(
  url: string,
  msgId: string,
  body: string,
  secrets: readonly string[],
  policy: DeliveryPolicy,
  userAgent = 'vagent-webhook/1',
): Promise<DeliveryAnswer> {
  const started = performance.now();
  const target = checkWebhookUrl(url, policy);
  const origin = target.origin;
  const timeoutMs = Math.min(Math.max(1, policy.timeoutMs), 2_147_483_647);
  const headers = {
    ...standardWebhookHeaders(msgId, Math.floor(Date.now() / 1000), body, secrets),
    'content-length': String(Buffer.byteLength(body)),
    'user-agent': userAgent,
  };
  const isHttps = target.protocol === 'https:';
  const options = checkedPostOptions(target, policy.allowPrivate, headers);
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = (isHttps ? https : http).request(options);
    const finish = (err: Error | null, status = 0) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      if (err) reject(err);
      else resolve({ status, ms: Math.round(performance.now() - started) });
    };
    const timer = setTimeout(
      () => finish(new WebhookTargetError('timeout', `webhook ${origin} did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (err instanceof WebhookTargetError) finish(err);
      else finish(new WebhookTargetError('network', `webhook ${origin} could not be reached (${err.code ?? err.name})`, { cause: err }));
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
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.length;
        // Answered 2xx: what follows is not read.
        if (size > MAX_ANSWER_BYTES) finish(null, status);
      });
      res.on('end', () => finish(null, status));
      res.on('error', () => finish(null, status));
      res.on('close', () => finish(null, status));
    });
    req.end(body);
  });
}

/**
 * Checks an endpoint URL when it is set: {@link checkWebhookUrl}'s rules, then the host name is
 * resolved (whatever the policy: a host that does not resolve is refused), and every address it
 * is or resolves to must be public unicast unless private targets are allowed. A target the
 * allow settings refuse is refused once, naming every setting it needs (`needs`): plain http
 * and a private address at once. The same check runs again at every connection (the resolved
 * addresses may change).
 * @throws WebhookTargetError `invalid_url`; `scheme_not_allowed` (a scheme other than http(s),
 *   no `needs`; or plain http, `needs` set); `address_not_allowed` (`needs` set); `dns_failed`.
 */
export async function checkWebhookTarget(url: string, policy: Omit<DeliveryPolicy, 'timeoutMs'>): Promise<void> {
  // First what no setting lets through (a malformed URL, credentials, an ftp: scheme…).
  const target = checkWebhookUrl(url, { allowHttp: true, allowPrivate: true });
  const ip = literalIp(target);
  let addresses: string[];
  if (ip !== null) addresses = [ip];
  else {
    try {
      addresses = (await dns.promises.lookup(target.hostname, { all: true, verbatim: true })).map((a) => a.address);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'failed';
      throw new WebhookTargetError('dns_failed', `webhook host of ${target.origin} did not resolve (${code})`, { cause: err });
    }
    if (addresses.length === 0)
      throw new WebhookTargetError('dns_failed', `webhook host of ${target.origin} did not resolve (no addresses)`);
  }
  const needs: WebhookAllowance[] = [];
  const why: string[] = [];
  if (target.protocol === 'http:' && !policy.allowHttp) {
    needs.push('inbound_webhook_allow_http');
    why.push('is plain http (https only)');
  }
  const bad = addresses.find((a) => !isPublicUnicastAddress(a));
  if (bad !== undefined && !policy.allowPrivate) {
    needs.push('inbound_webhook_allow_private');
    why.push(`${ip === null ? 'resolves to' : 'is'} ${bad}, which is not a public address`);
  }
  if (needs.length === 0) return;
  const reason = bad !== undefined && !policy.allowPrivate ? 'address_not_allowed' : 'scheme_not_allowed';
  throw new WebhookTargetError(reason, `webhook URL ${target.origin} ${why.join(' and ')}`, { needs });
}
