/**
 * SIP trunk addresses: the carrier host an INVITE is sent to (`address` of TrunkSchema,
 * src/contract/trunks.ts; docs/api-decisions.md "Trunks").
 *
 * Accepted: a DNS host name (`sip.example.in`), an IPv4 address or a bracketed IPv6 address,
 * each with an optional `:port` from 1 to 65535 (no leading zeros). Not accepted: a `sip:`
 * URI, a path, credentials or spaces — those belong in other fields.
 */

/** Longest accepted address, in characters. */
export const MAX_SIP_ADDRESS_LENGTH = 260;

const LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const HOST = `${LABEL}(?:\\.${LABEL})*`;
const IPV6 = '\\[[0-9A-Fa-f:.]{2,45}\\]';
const PORT = '(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})';

/**
 * The whole rule as one regular expression (with {@link MAX_SIP_ADDRESS_LENGTH}), so the API
 * schema that enforces it also publishes it. Plain ECMAScript without look-arounds, so that
 * clients and test generators in any language can use it as it is.
 */
export const SIP_ADDRESS_PATTERN = new RegExp(`^(?:${HOST}|${IPV6})(?::${PORT})?$`);

/** True when `value` is a SIP host (name or IP) with an optional port 1–65535. */
export function isSipAddress(value: string): boolean {
  return value.length > 0 && value.length <= MAX_SIP_ADDRESS_LENGTH && SIP_ADDRESS_PATTERN.test(value);
}
