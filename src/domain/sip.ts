/**
 * SIP trunk addresses: the carrier host an INVITE is sent to (spec: Trunk.address).
 *
 * Accepted: a DNS host name (`sip.example.in`), an IPv4 address or a bracketed IPv6 address,
 * each with an optional `:port`. Not accepted: a `sip:` URI, a path, credentials or spaces —
 * those belong in other fields.
 */

const LABEL = '(?!-)[A-Za-z0-9-]{1,63}(?<!-)';
const HOST = `(?:${LABEL}(?:\\.${LABEL})*)`;
const IPV6 = '\\[[0-9A-Fa-f:.]{2,45}\\]';
const ADDRESS = new RegExp(`^(?:${HOST}|${IPV6})(?::([0-9]{1,5}))?$`);

/** True when `value` is a SIP host (name or IP) with an optional port 1–65535. */
export function isSipAddress(value: string): boolean {
  if (value.length === 0 || value.length > 260) return false;
  const m = ADDRESS.exec(value);
  if (!m) return false;
  if (m[1] !== undefined) {
    const port = Number(m[1]);
    if (port < 1 || port > 65535) return false;
  }
  return true;
}
