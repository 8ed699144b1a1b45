/**
 * The signature of vagent's webhooks: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`
 * in {@link SIGNATURE_HEADER}, how it is made and how a receiver checks it (HMAC, RFC 2104,
 * compared in constant time, with a clock tolerance).
 */
import crypto from 'node:crypto';

/** The header carrying the request signature, `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = 'vagent-signature';
/** The header carrying the signing time in unix seconds (the same `t` as in the signature). */
export const TIMESTAMP_HEADER = 'vagent-timestamp';
/** Default clock tolerance of {@link verifyWebhookSignature}, in seconds. */
export const DEFAULT_SIGNATURE_TOLERANCE_S = 300;

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
