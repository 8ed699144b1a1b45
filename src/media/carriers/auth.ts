/**
 * Carrier-native authentication of the WebSocket upgrade (docs/carrier-auth.md): Twilio's
 * request signature, Plivo's signature V3 and Exotel's HTTP basic auth. Pure functions: each
 * returns a boolean, compares secrets in constant time, and never throws, whatever the input.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/** Longest header value or URL these checks look at; longer input is refused (false). */
export const MAX_AUTH_INPUT_CHARS = 8192;

/** Constant-time equality of two strings of any lengths (compares SHA-256 digests). */
export function constantTimeEqual(a: string, b: string): boolean {
  const da = createHash('sha256').update(a, 'utf8').digest();
  const db = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(da, db);
}

function usable(...values: unknown[]): boolean {
  return values.every((v) => typeof v === 'string' && v.length > 0 && v.length <= MAX_AUTH_INPUT_CHARS);
}

/** Request parameters: one value or several per name (form posts may repeat a name). */
export type SignedParams = Record<string, string | readonly string[]>;

// ---------------------------------------------------------------------------------------------
// Twilio

/**
 * Twilio's `X-Twilio-Signature` for a request to `url` with POST `params` (none for the
 * WebSocket upgrade, a GET): base64 of HMAC-SHA1 keyed with the account's auth token over the
 * full URL (query included) followed by each parameter name and value, names sorted, repeated
 * values sorted and de-duplicated. Source: https://www.twilio.com/docs/usage/webhooks/webhooks-security
 * and twilio-node `getExpectedTwilioSignature` (src/webhooks/webhooks.ts). `url` is signed as
 * given (no normalisation, so a written-out default port stays).
 */
export function twilioSignature(authToken: string, url: string, params: SignedParams = {}): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const v = params[name]!;
    const values = typeof v === 'string' ? [v] : [...new Set(v)].sort();
    for (const value of values) data += name + value;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** `url` with its scheme's default port written out (https/wss 443, http/ws 80), or as is. */
function withDefaultPort(u: URL): string {
  if (u.port) return u.toString();
  const port = u.protocol === 'https:' || u.protocol === 'wss:' ? '443' : '80';
  const auth = u.username || u.password ? `${u.username}${u.password ? `:${u.password}` : ''}@` : '';
  return `${u.protocol}//${auth}${u.hostname}:${port}${u.pathname}${u.search}${u.hash}`;
}

/**
 * Whether `signature` (the `X-Twilio-Signature` header) is Twilio's signature of `url` and
 * `params` with `authToken`. Like twilio-node's `validateRequest`, the URL is tried both with
 * and without its port (and as given), because Twilio signs either form. `url` must be the URL as Twilio
 * dialled it (the `<Stream url>` in the TwiML, scheme and query included). Never throws.
 */
export function validateTwilioSignature(input: {
  authToken: string;
  signature: string | undefined;
  url: string;
  params?: SignedParams;
}): boolean {
  try {
    const { authToken, signature, url } = input;
    if (!usable(authToken, signature, url)) return false;
    const noPort = new URL(url);
    noPort.port = '';
    const candidates = new Set([url, noPort.toString(), withDefaultPort(new URL(url))]);
    let ok = false;
    for (const candidate of candidates) ok = constantTimeEqual(signature!, twilioSignature(authToken, candidate, input.params)) || ok;
    return ok;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Plivo

const URL_PARTS = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(?:\?([^#]*))?/;

function sortedPairs(params: SignedParams): string[] {
  const out: string[] = [];
  for (const name of Object.keys(params).sort()) {
    const v = params[name]!;
    for (const value of typeof v === 'string' ? [v] : [...v].sort()) out.push(`${name}=${value}`);
  }
  return out;
}

/**
 * The string Plivo signs (V3) for a request, before `.` + nonce: for GET, `scheme://authority/path`
 * then, if the URL has a query or `params` are given, `?` and all query and parameter pairs
 * `name=value` (decoded), sorted by name then value, joined by `&`; for POST, the URL's sorted
 * query the same way, then (if any POST params) `.` after a non-empty query, then the POST
 * pairs sorted and concatenated without separator. Mirrors plivo-node `construct_get_url` and
 * `construct_post_url` (lib/utils/v3Security.js). Throws on a URL without scheme and authority.
 */
export function plivoV3BaseString(method: 'GET' | 'POST', url: string, params: SignedParams = {}): string {
  const m = URL_PARTS.exec(url);
  if (m === null) throw new Error(`not an absolute URL: ${url}`);
  const base = `${m[1]}://${m[2]}${m[3]}`;
  const query: Record<string, string[]> = {};
  for (const [k, v] of new URLSearchParams(m[4] ?? '')) (query[k] ??= []).push(v);
  if (method === 'GET') {
    for (const [k, v] of Object.entries(params)) (query[k] ??= []).push(...(typeof v === 'string' ? [v] : v));
    const q = sortedPairs(query).join('&');
    return q.length > 0 ? `${base}?${q}` : base;
  }
  const q = sortedPairs(query).join('&');
  const hasPost = Object.keys(params).length > 0;
  let out = base;
  if (q.length > 0 || hasPost) out += `?${q}`;
  if (q.length > 0 && hasPost) out += '.';
  return out + sortedPairs(params).join('');
}

/**
 * Plivo's signature V3 of a request: base64 of HMAC-SHA256 keyed with the auth token over
 * {@link plivoV3BaseString} + `.` + nonce. Source: https://plivo.com/docs/voice/concepts/signature-validation
 * and plivo-node `get_signature_v3`. Throws on an invalid URL.
 */
export function plivoSignatureV3(authToken: string, method: 'GET' | 'POST', url: string, nonce: string, params: SignedParams = {}): string {
  return createHmac('sha256', authToken)
    .update(`${plivoV3BaseString(method, url, params)}.${nonce}`, 'utf8')
    .digest('base64');
}

/**
 * Whether `signature` (the `X-Plivo-Signature-V3` header; with several active auth tokens
 * Plivo sends a comma-separated list, any of which may match) is Plivo's V3 signature of the
 * request with `nonce` (`X-Plivo-Signature-V3-Nonce`) and `authToken`. The WebSocket upgrade
 * is a GET without parameters; `url` must be the URL Plivo dialled. Several candidate URLs may
 * be given (any match passes): integrations report the upgrade validating only with the
 * `wss://` of the stream URL written as `http://`, so the caller may offer both. Never throws.
 */
export function validatePlivoSignatureV3(input: {
  authToken: string;
  signature: string | undefined;
  nonce: string | undefined;
  url: string | readonly string[];
  method?: 'GET' | 'POST';
  params?: SignedParams;
}): boolean {
  try {
    const { authToken, signature, nonce } = input;
    const urls = typeof input.url === 'string' ? [input.url] : [...input.url];
    if (!usable(authToken, signature, nonce) || urls.length === 0 || urls.length > 8 || !usable(...urls)) return false;
    const method = input.method ?? 'GET';
    if (method !== 'GET' && method !== 'POST') return false;
    const given = signature!
      .split(',')
      .slice(0, 16)
      .map((c) => c.trim());
    let ok = false;
    for (const url of urls) {
      const expected = plivoSignatureV3(authToken, method, url, nonce!, input.params);
      for (const candidate of given) ok = constantTimeEqual(candidate, expected) || ok;
    }
    return ok;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Exotel

/**
 * The user and password of an `Authorization: Basic` header (RFC 7617): scheme matched
 * case-insensitively, credentials strict base64 of UTF-8 `user:password` (the user has no
 * colon). Exotel sends `base64(API_KEY:API_TOKEN)` when the Voicebot URL is
 * `wss://KEY:TOKEN@host/path` (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet).
 * Returns undefined for anything else. Never throws.
 */
export function parseBasicAuth(header: string | undefined): { username: string; password: string } | undefined {
  if (!usable(header)) return undefined;
  const m = /^\s*basic\s+([A-Za-z0-9+/]+={0,2})\s*$/i.exec(header!);
  if (m === null || m[1]!.length % 4 !== 0) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  return { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/**
 * Whether the `Authorization` header carries exactly `expected` credentials (both compared in
 * constant time, both always compared). Empty expected credentials never match. Never throws.
 */
export function validateExotelBasicAuth(header: string | undefined, expected: { username: string; password: string }): boolean {
  try {
    if (!usable(expected.username, expected.password)) return false;
    const got = parseBasicAuth(header);
    if (got === undefined) return false;
    const user = constantTimeEqual(got.username, expected.username);
    const pass = constantTimeEqual(got.password, expected.password);
    return user && pass;
  } catch {
    return false;
  }
}
