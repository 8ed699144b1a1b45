/**
 * The client for a tenant's inbound routing webhook (DESIGN.md §8): when a call reaches a DID,
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
 */
import crypto from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { performance } from 'node:perf_hooks';
import ipaddr from 'ipaddr.js';

/** The header carrying the request signature, `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = 'vagent-signature';
/** The header carrying the signing time in unix seconds (the same `t` as in the signature). */
export const TIMESTAMP_HEADER = 'vagent-timestamp';
/** The header carrying the caller's event id, when one is given. */
export const EVENT_ID_HEADER = 'vagent-event-id';
/** Default whole-exchange deadline, in milliseconds. */
export const DEFAULT_WEBHOOK_TIMEOUT_MS = 2000;
/** Default limit on a response body, in bytes (64 KiB). */
export const DEFAULT_WEBHOOK_MAX_RESPONSE_BYTES = 64 * 1024;
/** Default clock tolerance of {@link verifyWebhookSignature}, in seconds. */
export const DEFAULT_SIGNATURE_TOLERANCE_S = 300;

const DEFAULT_USER_AGENT = 'vagent-webhook/1';
/** Longer URLs are refused as `invalid_url`: a routing webhook has no need for more. */
const MAX_URL_LENGTH = 2048;

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

/** Why a webhook call failed; see {@link WebhookTargetError}. */
export type WebhookFailureReason =
  | 'invalid_url'
  | 'scheme_not_allowed'
  | 'address_not_allowed'
  | 'dns_failed'
  | 'timeout'
  | 'redirect'
  | 'http_status'
  | 'response_too_large'
  | 'bad_response'
  | 'network';

/**
 * A webhook URL that cannot be called, or a call that failed. `reason` says why; `status` is the
 * HTTP status for `http_status` and `redirect`. The message names at most the URL's origin.
 */
export class WebhookTargetError extends Error {
  /** The failure class, stable for logs and metrics. */
  readonly reason: WebhookFailureReason;
  /** The HTTP status of the response, for `http_status` and `redirect`. */
  readonly status?: number;

  /**
   * @param reason the failure class.
   * @param message human-readable; must not contain the secret, the body, or the URL's path/query.
   * @param opts `status` for HTTP failures; `cause` for the underlying error.
   */
  constructor(reason: WebhookFailureReason, message: string, opts: { status?: number; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'WebhookTargetError';
    this.reason = reason;
    if (opts.status !== undefined) this.status = opts.status;
  }
}

/** 2000::/3, the IPv6 global unicast space IANA allocates from. */
const IPV6_GLOBAL_UNICAST = ipaddr.IPv6.parseCIDR('2000::/3');

/**
 * Whether `address` (an IPv4 or IPv6 literal, without brackets) is a public unicast address:
 * ipaddr.js's range `unicast` after unwrapping IPv4-mapped IPv6 (`::ffff:a.b.c.d` is judged as
 * `a.b.c.d`), and for IPv6 also inside 2000::/3, which shuts out the deprecated IPv4-compatible
 * form (`::a.b.c.d`) and unallocated space. Anything that does not parse is not public.
 */
export function isPublicUnicastAddress(address: string): boolean {
  let ip: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    ip = ipaddr.process(address);
  } catch {
    return false;
  }
  if (ip.range() !== 'unicast') return false;
  return ip.kind() === 'ipv4' || ip.match(IPV6_GLOBAL_UNICAST);
}

/** The URL's host as a bare IP literal (brackets stripped), or null for a host name. */
function literalIp(url: URL): string | null {
  const host = url.hostname;
  if (host.startsWith('[') && host.endsWith(']')) return host.slice(1, -1);
  // The WHATWG parser has already turned every IPv4 spelling (0x7f.1, 2130706433…) into dotted quad.
  return ipaddr.IPv4.isValidFourPartDecimal(host) ? host : null;
}

/**
 * Checks a webhook URL without resolving it: what can be refused up front, is. Used when an
 * operator sets the URL, and again before every call.
 *
 * Refused, as a {@link WebhookTargetError} with reason:
 * - `invalid_url`: not a string, longer than 2048 characters, unparseable, with userinfo
 *   (`user:pass@`), or with port 0 (ports above 65535 do not parse);
 * - `scheme_not_allowed`: a scheme other than `https:`, or `http:` without `allowHttp`;
 * - `address_not_allowed`: a literal IP host (IPv4 in any spelling, IPv6, IPv4-mapped IPv6)
 *   that is not public unicast (see {@link isPublicUnicastAddress}), without `allowPrivate`.
 *
 * Host names are not resolved here; {@link postSignedJson} checks what they resolve to.
 *
 * @returns the parsed URL.
 * @throws WebhookTargetError as above.
 */
export function checkWebhookUrl(url: string, policy: Pick<WebhookPolicy, 'allowHttp' | 'allowPrivate'>): URL {
  if (typeof url !== 'string' || url.length === 0 || url.length > MAX_URL_LENGTH) {
    throw new WebhookTargetError('invalid_url', `webhook URL must be an http(s) URL of at most ${MAX_URL_LENGTH} characters`);
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    // The input is not echoed: it may hold a token.
    throw new WebhookTargetError('invalid_url', 'webhook URL is not a valid URL');
  }
  if (parsed.protocol !== 'https:' && !(parsed.protocol === 'http:' && policy.allowHttp)) {
    const allowed = policy.allowHttp ? 'https: or http:' : 'https:';
    throw new WebhookTargetError('scheme_not_allowed', `webhook URL scheme ${parsed.protocol} is not allowed (${allowed} only)`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    throw new WebhookTargetError('invalid_url', 'webhook URL must not carry credentials (user:password@); use the signing secret');
  }
  if (parsed.port === '0') {
    throw new WebhookTargetError('invalid_url', `webhook URL ${parsed.origin} has port 0`);
  }
  if (parsed.hostname === '') {
    throw new WebhookTargetError('invalid_url', 'webhook URL has no host');
  }
  const ip = literalIp(parsed);
  if (ip !== null && !policy.allowPrivate && !isPublicUnicastAddress(ip)) {
    throw new WebhookTargetError('address_not_allowed', `webhook URL ${parsed.origin} is not a public address`);
  }
  return parsed;
}

function hmacHex(secret: string, unixSeconds: number, body: string): string {
  return crypto.createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
}

/**
 * The {@link SIGNATURE_HEADER} value for `body` signed at `unixSeconds`:
 * `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>` (64 lower-case hex digits).
 *
 * @param secret the tenant's webhook signing secret (UTF-8).
 * @param body the exact request body bytes, as a string (UTF-8).
 * @param unixSeconds signing time, whole seconds since the epoch.
 * @throws RangeError if `unixSeconds` is not a non-negative safe integer.
 */
export function signWebhookBody(secret: string, body: string, unixSeconds: number): string {
  if (!Number.isSafeInteger(unixSeconds) || unixSeconds < 0) throw new RangeError('unixSeconds must be a non-negative integer');
  return `t=${unixSeconds},v1=${hmacHex(secret, unixSeconds, body)}`;
}

/**
 * Verifies a {@link SIGNATURE_HEADER} value, for operators' receivers and tests. True when the
 * header has a `t` within `toleranceS` seconds of `nowSeconds` (either side, for clock skew) and
 * at least one `v1` equal to the HMAC of `"<t>.<body>"`, compared in constant time. Unknown
 * `key=value` parts are ignored (room for other schemes); several `v1` parts are allowed (secret
 * rotation). Never throws: a malformed header, or a non-finite `nowSeconds`, is false.
 *
 * @param secret the signing secret.
 * @param body the exact received body, as a string (UTF-8).
 * @param header the received header value.
 * @param nowSeconds the receiver's clock, unix seconds.
 * @param toleranceS accepted clock difference in seconds (default 300); negative counts as 0.
 */
export function verifyWebhookSignature(
  secret: string,
  body: string,
  header: string,
  nowSeconds: number,
  toleranceS: number = DEFAULT_SIGNATURE_TOLERANCE_S,
): boolean {
  if (typeof header !== 'string' || header.length > 4096 || !Number.isFinite(nowSeconds)) return false;
  let t: number | undefined;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return false;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== undefined || !/^\d{1,15}$/.test(value)) return false;
      t = Number(value);
    } else if (key === 'v1') {
      candidates.push(value);
    }
  }
  if (t === undefined || candidates.length === 0) return false;
  const tolerance = Number.isFinite(toleranceS) ? Math.max(0, toleranceS) : DEFAULT_SIGNATURE_TOLERANCE_S;
  if (Math.abs(nowSeconds - t) > tolerance) return false;
  const expected = Buffer.from(hmacHex(secret, t, body), 'hex');
  let ok = false;
  for (const candidate of candidates) {
    if (!/^[0-9a-fA-F]{64}$/.test(candidate)) continue;
    // No early exit: every candidate is compared.
    if (crypto.timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) ok = true;
  }
  return ok;
}

function positiveOr(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

/**
 * A `lookup` for http(s).request that resolves `hostname` once (all addresses), refuses the
 * connection if any address is not allowed, and hands the socket only those checked addresses.
 */
function checkedLookup(origin: string, allowPrivate: boolean): LookupFunction {
  return (hostname: string, options: LookupOptions, callback) => {
    dns.lookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err || addresses.length === 0) {
        const code = err?.code ?? 'no addresses';
        callback(
          new WebhookTargetError('dns_failed', `webhook host of ${origin} did not resolve (${code})`, {
            cause: err ?? undefined,
          }),
          [],
        );
        return;
      }
      if (!allowPrivate) {
        const bad = addresses.find((a) => !isPublicUnicastAddress(a.address));
        if (bad) {
          callback(
            new WebhookTargetError(
              'address_not_allowed',
              `webhook host of ${origin} resolves to ${bad.address}, which is not a public address`,
            ),
            [],
          );
          return;
        }
      }
      const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
      if (wanted.length === 0) {
        callback(new WebhookTargetError('dns_failed', `webhook host of ${origin} has no IPv${String(options.family)} address`), []);
        return;
      }
      if (options.all) callback(null, wanted);
      else callback(null, wanted[0]!.address, wanted[0]!.family);
    });
  };
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

  const ip = literalIp(target);
  const host = ip ?? target.hostname;
  const isHttps = target.protocol === 'https:';
  const options: https.RequestOptions = {
    method: 'POST',
    host,
    port: target.port === '' ? (isHttps ? 443 : 80) : Number(target.port),
    path: `${target.pathname}${target.search}`,
    headers,
    agent: false,
    // A literal IP is never looked up (it was checked above); a name goes through the checked lookup.
    lookup: checkedLookup(origin, policy.allowPrivate),
  };
  if (isHttps) {
    options.rejectUnauthorized = true;
    // SNI carries a host name only; an IP literal is verified against the certificate's IP SANs.
    if (ip === null) options.servername = target.hostname;
  }

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
