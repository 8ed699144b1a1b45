/**
 * Carrier credentials and media stream tokens (docs/carrier-auth.md).
 *
 * The daemon's carrier WebSocket endpoints (`GET /v1/media/twilio|exotel|plivo`) accept, besides
 * `Authorization: Bearer <API key>`, the carrier's own proof that the stream comes from the
 * tenant's carrier account, checked with the credentials stored here:
 *
 * - **Twilio**: `X-Twilio-Signature` on the upgrade, HMAC-SHA1 of the stream URL keyed with the
 *   account's auth token (https://www.twilio.com/docs/usage/webhooks/webhooks-security).
 * - **Plivo**: `X-Plivo-Signature-V3` and `X-Plivo-Signature-V3-Nonce`, HMAC-SHA256 keyed with
 *   the auth token (https://www.plivo.com/docs/voice/concepts/signature-validation).
 * - **Exotel**: HTTP basic auth with the API key and token, which Exotel sends when the
 *   Voicebot applet's URL is `wss://API_KEY:API_TOKEN@host/path`
 *   (https://developer.exotel.com/docs/agentstream/stream-voicebot-applet).
 *
 * or a per-tenant **stream token** (`vst_…`) sent as the custom parameter `stream_token` of the
 * stream's `start` event (Twilio `<Parameter>`, Plivo `extraHeaders`, Exotel URL parameters).
 *
 * Which tenant's credentials apply comes from the query `?tenant=NAME` of the stream URL
 * (tenant `default` when absent). Twilio does not allow a query string in `<Stream url>`
 * (https://www.twilio.com/docs/voice/twiml/stream, attribute `url`): for Twilio, the
 * signature works for the `default` tenant only, and any other tenant authenticates its
 * Twilio streams with its stream token as `<Parameter name="stream_token" value="vst_…"/>`
 * (or an API key, where the carrier can send one).
 *
 * Secrets are sealed with the instance master key (AES-256-GCM, bound to the tenant and the
 * purpose `carrier:<dialect>`), never returned, never logged, never put in an error, and the
 * stream token is stored only as its SHA-256 digest. Every operation acts on the caller's own
 * tenant (there are no ids another tenant could name), so there is nothing to audit.
 *
 * Functions named `*Tx` must run inside `Store.write` (one transaction per request).
 */
import crypto from 'node:crypto';
import { ApiError } from '../domain/errors.js';
import type { CarrierList, CarrierView } from '../contract/index.js';
import { randomToken } from '../domain/ids.js';
import { validateExotelBasicAuth, validatePlivoSignatureV3, validateTwilioSignature } from '../media/carriers/auth.js';
import { CARRIER_DIALECTS, type CarrierDialect } from '../media/carriers/types.js';
import type { CarrierCredentialRow } from '../store/index.js';
import type { Principal, ServiceDeps } from './context.js';
import type { Committed, Scope, Tx } from './unit-of-work.js';

import { CARRIER_BODIES, CARRIER_DIALECT_PATTERN, STREAM_TOKEN_PATTERN } from '../contract/carriers.js';
// The credential bodies and their patterns are the /v1 contract's (src/contract/carriers.ts).
export {
  CARRIER_BODIES,
  CARRIER_DIALECT_PATTERN,
  CARRIER_SECRET_PATTERN,
  EXOTEL_API_KEY_PATTERN,
  ExotelCredentialsBody,
  PLIVO_AUTH_ID_PATTERN,
  PlivoCredentialsBody,
  STREAM_TOKEN_PATTERN,
  TWILIO_ACCOUNT_SID_PATTERN,
  TwilioCredentialsBody,
} from '../contract/carriers.js';

/** Candidate URLs {@link CarrierService.verifyNative} looks at, at most. */
export const MAX_SIGNED_URLS = 4;

/** Validated credentials of one dialect. */
export type CarrierCredentials =
  | { dialect: 'twilio'; account_sid?: string | undefined; auth_token: string }
  | { dialect: 'plivo'; auth_id: string; auth_token: string }
  | { dialect: 'exotel'; api_key: string; api_token: string };

export type { CarrierView, CarrierList } from '../contract/index.js';

/** The answer of {@link CarrierService.verifyNative}. */
export type NativeAuthOutcome = 'ok' | 'bad' | 'absent';

/** What {@link CarrierService.verifyNative} needs of the WebSocket upgrade request. */
export interface NativeAuthRequest {
  /** Node's `IncomingMessage.headers` (lower-case names). */
  headers: Record<string, string | string[] | undefined>;
  /**
   * Absolute URLs the carrier may have signed (scheme, host, path and query as the carrier
   * dialled them, e.g. from the daemon's public URL and from the `Host` header). At most
   * {@link MAX_SIGNED_URLS} are looked at; each is also tried with its scheme twins
   * (`wss` as `https` and `http`, `ws` as `http`, and back), as carriers differ in which
   * scheme they sign. Every candidate is checked (no early exit).
   */
  urls: string[];
}

/** Purpose the sealed credentials of `dialect` are bound to. */
const purposeOf = (dialect: CarrierDialect) => `carrier:${dialect}`;

/** SHA-256 hex digest of a stream token: what is stored and looked up. */
export function hashStreamToken(token: string): string {
  return crypto.createHash('sha256').update(token, 'utf8').digest('hex');
}

/** The 4 last characters of an account identifier (never of a secret), or null. */
function hintOf(creds: CarrierCredentials): string | null {
  const id = creds.dialect === 'twilio' ? creds.account_sid : creds.dialect === 'plivo' ? creds.auth_id : creds.api_key;
  return id === undefined ? null : id.slice(-4);
}

/** The one value of a header, or undefined when absent or empty; `null` when sent more than once. */
function single(value: string | string[] | undefined): string | undefined | null {
  if (Array.isArray(value)) return value.length === 0 ? undefined : value.length === 1 ? single(value[0]) : null;
  return value === undefined || value.length === 0 ? undefined : value;
}

/**
 * Other schemes a URL of each scheme may have been signed under: `https://` for a `wss://`
 * stream URL, and `http://` too, as integrations report Plivo's upgrade validating only with
 * the stream URL written as `http://` (see `validatePlivoSignatureV3`).
 */
const TWIN_SCHEMES: Record<string, string[]> = {
  'wss:': ['https:', 'http:'],
  'ws:': ['http:'],
  'https:': ['wss:'],
  'http:': ['ws:'],
};

/** `urls` (first {@link MAX_SIGNED_URLS} strings) and their scheme twins, without duplicates. */
function candidateUrls(urls: unknown): string[] {
  if (!Array.isArray(urls)) return [];
  const out = new Set<string>();
  for (const url of urls.slice(0, MAX_SIGNED_URLS)) {
    if (typeof url !== 'string') continue;
    out.add(url);
    const m = /^([a-z]+:)(\/\/.*)$/i.exec(url);
    for (const twin of m ? (TWIN_SCHEMES[m[1]!.toLowerCase()] ?? []) : []) out.add(twin + m![2]);
  }
  return [...out];
}

/** Carrier credential and stream token use cases. */
export class CarrierService {
  constructor(private readonly deps: ServiceDeps) {}

  /**
   * Checks `body` against `dialect`'s schema.
   * @throws ApiError not_found for an unknown dialect; invalid_request naming the field for a
   *         bad body (the message never repeats a secret).
   */
  parse(dialect: string, body: unknown): CarrierCredentials {
    const d = this.dialectOf(dialect);
    const r = CARRIER_BODIES[d].safeParse(body);
    if (!r.success) {
      const issue = r.error.issues[0]!;
      const param = issue.path.length > 0 ? issue.path.map(String).join('.') : undefined;
      throw new ApiError('invalid_request', issue.message, param === undefined ? {} : { param });
    }
    return { dialect: d, ...r.data } as CarrierCredentials;
  }

  /**
   * Stores (or replaces) the caller's tenant's credentials for `dialect`, sealed.
   * @returns the dialect's view (never the secret).
   * @throws ApiError not_found (unknown dialect), invalid_request (see {@link parse}).
   */
  set(principal: Principal, dialect: string, body: unknown, scope: Scope): Promise<Committed<CarrierView>> {
    return this.deps.uow.run(scope, (tx) => this.setTx(tx, principal, dialect, body));
  }

  /** The write step of {@link set}. */
  setTx(_tx: Tx, principal: Principal, dialect: string, body: unknown): CarrierView {
    const creds = this.parse(dialect, body);
    const { dialect: d, ...secret } = creds;
    const sealed = this.deps.credentials.sealText(JSON.stringify(secret), principal.tenantId, purposeOf(d));
    const row: CarrierCredentialRow = {
      tenant_id: principal.tenantId,
      dialect: d,
      hint: hintOf(creds),
      updated_at: this.deps.nowS(),
    };
    this.deps.repos.carriers.upsert(row, sealed);
    return this.viewOf(principal.tenantId, d, row);
  }

  /** The caller's tenant's carriers (every dialect, configured or not) and stream token state. */
  list(principal: Principal): CarrierList {
    const rows = new Map(this.deps.repos.carriers.list(principal.tenantId).map((r) => [r.dialect, r]));
    const token = this.deps.repos.carriers.streamToken(principal.tenantId);
    return {
      data: CARRIER_DIALECTS.map((d) => this.viewOf(principal.tenantId, d, rows.get(d))),
      stream_token: { configured: token !== undefined, created_at: token?.created_at ?? null },
    };
  }

  /**
   * Deletes the caller's tenant's credentials for `dialect`: that carrier's native auth then
   * fails (`bad`) until they are set again; API keys and the stream token still work.
   * @throws ApiError not_found for an unknown dialect, or when none are stored.
   */
  remove(principal: Principal, dialect: string, scope: Scope): Promise<Committed<{ dialect: CarrierDialect; deleted: true }>> {
    return this.deps.uow.run(scope, (tx) => this.removeTx(tx, principal, dialect));
  }

  /** The write step of {@link remove}. */
  removeTx(_tx: Tx, principal: Principal, dialect: string): { dialect: CarrierDialect; deleted: true } {
    const d = this.dialectOf(dialect);
    if (!this.deps.repos.carriers.delete(principal.tenantId, d)) {
      throw new ApiError('not_found', `no ${d} credentials are stored for this tenant (see: GET /v1/carriers)`, {
        param: 'dialect',
      });
    }
    return { dialect: d, deleted: true };
  }

  /**
   * Makes a new stream token for the caller's tenant; the previous one stops working at once.
   * Only its SHA-256 digest is kept: the token is in this answer and nowhere else.
   */
  rotateStreamToken(principal: Principal, scope: Scope): Promise<Committed<{ stream_token: string; created_at: number }>> {
    return this.deps.uow.run(scope, (tx) => this.rotateStreamTokenTx(tx, principal));
  }

  /** The write step of {@link rotateStreamToken}. */
  rotateStreamTokenTx(_tx: Tx, principal: Principal): { stream_token: string; created_at: number } {
    const token = `vst_${randomToken(43)}`;
    const createdAt = this.deps.nowS();
    this.deps.repos.carriers.replaceStreamToken(principal.tenantId, hashStreamToken(token), createdAt);
    return { stream_token: token, created_at: createdAt };
  }

  /**
   * The tenant whose current stream token `token` is (the custom parameter `stream_token` of
   * a stream's `start` event), or null for anything else (not a string, not of the token's
   * form, rotated away, unknown). Looks up the token's SHA-256 digest, so the comparison
   * leaks nothing useful about stored tokens. Never throws.
   */
  tenantOfStreamToken(token: unknown): string | null {
    try {
      if (typeof token !== 'string' || !STREAM_TOKEN_PATTERN.test(token)) return null;
      return this.deps.repos.carriers.tenantOfTokenHash(hashStreamToken(token)) ?? null;
    } catch {
      return null;
    }
  }

  /**
   * Checks the carrier-native credentials of a WebSocket upgrade for `dialect` against
   * `tenantId`'s stored credentials:
   * - `absent`: the dialect's credential header is not there at all (Twilio: no
   *   `X-Twilio-Signature`; Plivo: neither `X-Plivo-Signature-V3` nor its nonce; Exotel: no
   *   `Authorization: Basic …`, e.g. none or a Bearer key) — try the other mechanisms;
   * - `bad`: it is there but does not verify, the tenant has no credentials for the dialect,
   *   the header is repeated, the dialect is unknown, or the stored credentials cannot be
   *   opened — refuse (401);
   * - `ok`: it verifies with one of the candidate `req.urls` (Twilio, Plivo) or matches the
   *   stored API key and token (Exotel), all compared in constant time.
   * Never throws and never logs; nothing it returns holds a secret.
   */
  verifyNative(dialect: string, tenantId: string, req: NativeAuthRequest): NativeAuthOutcome {
    try {
      const headers = req.headers ?? {};
      if (dialect === 'twilio') {
        const signature = single(headers['x-twilio-signature']);
        if (signature === undefined) return 'absent';
        const creds = this.open(tenantId, 'twilio');
        if (signature === null || creds?.dialect !== 'twilio') return 'bad';
        const ok = candidateUrls(req.urls).map((url) => validateTwilioSignature({ authToken: creds.auth_token, signature, url }));
        return ok.includes(true) ? 'ok' : 'bad';
      }
      if (dialect === 'plivo') {
        const signature = single(headers['x-plivo-signature-v3']);
        const nonce = single(headers['x-plivo-signature-v3-nonce']);
        if (signature === undefined && nonce === undefined) return 'absent';
        const creds = this.open(tenantId, 'plivo');
        const urls = candidateUrls(req.urls);
        if (!signature || !nonce || creds?.dialect !== 'plivo' || urls.length === 0) return 'bad';
        const ok = urls.map((url) => validatePlivoSignatureV3({ authToken: creds.auth_token, signature, nonce, url }));
        return ok.includes(true) ? 'ok' : 'bad';
      }
      if (dialect === 'exotel') {
        const authorization = single(headers.authorization);
        if (authorization === undefined || (authorization !== null && !/^\s*basic(\s|$)/i.test(authorization))) return 'absent';
        const creds = this.open(tenantId, 'exotel');
        if (authorization === null || creds?.dialect !== 'exotel') return 'bad';
        return validateExotelBasicAuth(authorization, { username: creds.api_key, password: creds.api_token }) ? 'ok' : 'bad';
      }
      return 'bad';
    } catch {
      return 'bad';
    }
  }

  /** `dialect` as a dialect. @throws ApiError not_found naming the three (for any other name). */
  dialectOf(dialect: string): CarrierDialect {
    if (typeof dialect === 'string' && CARRIER_DIALECT_PATTERN.test(dialect)) return dialect as CarrierDialect;
    const shown = typeof dialect === 'string' ? dialect.slice(0, 40) : typeof dialect;
    throw new ApiError('not_found', `no carrier dialect ${JSON.stringify(shown)}: vagent speaks twilio, exotel and plivo`, {
      param: 'dialect',
    });
  }

  /** The decrypted credentials of `tenantId` for `dialect`, or null (none, or they cannot be opened). */
  private open(tenantId: string, dialect: CarrierDialect): CarrierCredentials | null {
    if (typeof tenantId !== 'string') return null;
    const sealed = this.deps.repos.carriers.sealed(tenantId, dialect);
    if (sealed === null) return null;
    try {
      return {
        dialect,
        ...JSON.parse(this.deps.credentials.openText(sealed, tenantId, purposeOf(dialect))),
      } as CarrierCredentials;
    } catch {
      return null;
    }
  }

  private viewOf(tenantId: string, dialect: CarrierDialect, row: CarrierCredentialRow | undefined): CarrierView {
    const query = tenantId !== 'default' && dialect !== 'twilio' ? `?tenant=${encodeURIComponent(tenantId)}` : '';
    return {
      dialect,
      configured: row !== undefined,
      hint: row?.hint ?? null,
      updated_at: row?.updated_at ?? null,
      stream_url_path: `/v1/media/${dialect}${query}`,
    };
  }
}
