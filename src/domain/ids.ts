/**
 * Resource ids: their prefixes and patterns.
 *
 * - trunk `tk_` and number record `num_` + 20 lowercase base32 characters (100 bits of randomness);
 * - API key ids `key_` + 12 base32 characters (only for listing and revoking keys);
 * - agents `ag_[a-z0-9_]{1,64}`, chosen by the operator;
 * - sessions: a random integer in 1..2^53−1, public form `se_<n>`; its call is `cl_<n>`.
 *
 * "Malformed" means not matching these patterns.
 */

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

const POOL = new Uint8Array(8192);
let poolOffset = POOL.length;

/**
 * `n` (≤ 256) bytes from the platform CSPRNG, served from an 8 KiB pool refilled when spent:
 * one `getRandomValues` call per few hundred ids instead of one per id. Every byte is used once.
 */
export function randomBytes(n: number): Uint8Array {
  if (n > 256) throw new RangeError('randomBytes: at most 256 bytes per call');
  if (poolOffset + n > POOL.length) {
    globalThis.crypto.getRandomValues(POOL);
    poolOffset = 0;
  }
  const out = POOL.slice(poolOffset, poolOffset + n);
  poolOffset += n;
  return out;
}

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** `length` random base64url characters (6 bits each), e.g. for request ids. */
export function randomToken(length: number): string {
  let out = '';
  for (const b of randomBytes(length)) out += BASE64URL[b & 63];
  return out;
}

/** `length` random lowercase base32 characters from the platform CSPRNG. */
export function randomBase32(length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (const b of bytes) out += BASE32[b & 31];
  return out;
}

/** Id patterns; a string not matching its kind's pattern is malformed. */
export const ID_PATTERNS = {
  trunk: /^tk_[a-z2-7]{20}$/,
  number: /^num_[a-z2-7]{20}$/,
  agent: /^ag_[a-z0-9_]{1,64}$/,
  session: /^se_[1-9][0-9]{0,15}$/,
  call: /^cl_[1-9][0-9]{0,15}$/,
  apiKey: /^key_[a-z2-7]{12}$/,
} as const;

/** A new trunk id, `tk_` + 20 base32 characters. */
export const newTrunkId = (): string => `tk_${randomBase32(20)}`;
/** A new number-record id, `num_` + 20 base32 characters. */
export const newNumberId = (): string => `num_${randomBase32(20)}`;
/** A new API key id, `key_` + 12 base32 characters (not the secret). */
export const newApiKeyId = (): string => `key_${randomBase32(12)}`;

/** True when `id` is a well-formed trunk id. */
export const isTrunkId = (id: string): boolean => ID_PATTERNS.trunk.test(id);
/** True when `id` is a well-formed agent id (`ag_[a-z0-9_]{1,64}`). */
export const isAgentId = (id: string): boolean => ID_PATTERNS.agent.test(id);

/** An `Idempotency-Key` header value (docs/api-decisions.md "Idempotency"): 1–255 printable ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** Tenant names: a lowercase slug, 1–63 characters, starting with a letter or digit. */
export const TENANT_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,62}$/;

/** An id for an error message: at most 64 characters, so a hostile 16 KiB id is not echoed back whole. */
export function shortId(id: string): string {
  return id.length > 64 ? `${id.slice(0, 64)}…` : id;
}

/** A new internal session number: uniformly random in 1..2^53−1 (never sequential, so ids cannot be guessed). */
export function newSessionNumber(): number {
  for (;;) {
    const b = randomBytes(7);
    // 53 bits: 5 from the first byte, 48 from the other six.
    let n = b[0]! & 0x1f;
    for (let i = 1; i < 7; i++) n = n * 256 + b[i]!;
    if (n >= 1) return n;
  }
}

/**
 * The session number of a public session id `se_<n>` (or a call id `cl_<n>` with `kind`
 * 'call'), or null when malformed or beyond 2^53−1.
 */
export function parseSessionNumber(id: string, kind: 'session' | 'call' = 'session'): number | null {
  if (!ID_PATTERNS[kind].test(id)) return null;
  const n = Number(id.slice(3));
  return Number.isSafeInteger(n) && n >= 1 ? n : null;
}
