/**
 * Which webhook targets vagent calls: a URL's scheme and length, and every address its host is or
 * resolves to (public unicast only unless the policy allows private ones), checked once and then
 * the only addresses a socket connects to (no DNS rebinding between check and connect); and the
 * error a refused target or a failed call is ({@link WebhookTargetError}).
 */
import dns from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import type https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/** Longer URLs are refused as `invalid_url`: a routing webhook has no need for more. */
const MAX_URL_LENGTH = 2048;

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
 * A daemon setting that lets a webhook target through: plain `http`, or a private, loopback or
 * otherwise non-public address (config/schema.ts; docs/events.md "Webhooks").
 */
export type WebhookAllowance = 'inbound_webhook_allow_http' | 'inbound_webhook_allow_private';

/**
 * A webhook URL that cannot be called, or a call that failed. `reason` says why; `status` is the
 * HTTP status for `http_status` and `redirect`; `needs`, the settings that would let a refused
 * target through (all of them). The message names at most the URL's origin.
 */
export class WebhookTargetError extends Error {
  /** The failure class, stable for logs and metrics. */
  readonly reason: WebhookFailureReason;
  /** The HTTP status of the response, for `http_status` and `redirect`. */
  readonly status?: number;
  /** Every setting the target needs on, for a refusal those settings decide. */
  readonly needs?: readonly WebhookAllowance[];

  /**
   * @param reason the failure class.
   * @param message human-readable; must not contain the secret, the body, or the URL's path/query.
   * @param opts `status` for HTTP failures; `needs` for a refusal the allow settings decide;
   *   `cause` for the underlying error.
   */
  constructor(
    reason: WebhookFailureReason,
    message: string,
    opts: { status?: number; needs?: readonly WebhookAllowance[]; cause?: unknown } = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'WebhookTargetError';
    this.reason = reason;
    if (opts.status !== undefined) this.status = opts.status;
    if (opts.needs !== undefined) this.needs = opts.needs;
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
export function literalIp(url: URL): string | null {
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
export function checkWebhookUrl(url: string, policy: { allowHttp: boolean; allowPrivate: boolean }): URL {
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

/**
 * The options of a POST of `headers` to `target` (a URL {@link checkWebhookUrl} allowed): no
 * pooled agent, a literal IP never looked up (it was checked), a host name through
 * {@link checkedLookup}; over https the certificate is verified, with SNI for a host name (an IP
 * literal is verified against the certificate's IP SANs).
 */
export function checkedPostOptions(target: URL, allowPrivate: boolean, headers: Record<string, string>): https.RequestOptions {
  const ip = literalIp(target);
  const isHttps = target.protocol === 'https:';
  const options: https.RequestOptions = {
    method: 'POST',
    host: ip ?? target.hostname,
    port: target.port === '' ? (isHttps ? 443 : 80) : Number(target.port),
    path: `${target.pathname}${target.search}`,
    headers,
    agent: false,
    lookup: checkedLookup(target.origin, allowPrivate),
  };
  if (isHttps) {
    options.rejectUnauthorized = true;
    if (ip === null) options.servername = target.hostname;
  }
  return options;
}

/**
 * A `lookup` for http(s).request that resolves `hostname` once (all addresses), refuses the
 * connection if any address is not allowed, and hands the socket only those checked addresses.
 */
export function checkedLookup(origin: string, allowPrivate: boolean): LookupFunction {
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
