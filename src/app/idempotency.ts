/**
 * Idempotency keys (docs/api-decisions.md "Idempotency"; docs/unit-of-work.md).
 *
 * - scope (tenant, key); a key is 1–255 printable ASCII characters;
 * - fingerprint = HMAC-SHA256 of method, path (percent-decoded) and the canonical JSON of the
 *   body (keys sorted), keyed by a key derived from the master key: a body may hold a trunk
 *   password, and a plain hash stored for 24 h would let a reader of the database guess it
 *   offline;
 * - the claim (`in_progress`) is taken in the same transaction as the check;
 * - every response is stored except 5xx, 429, 401 and the idempotency errors themselves;
 * - records expire after the retention period and are purged in the background, in small
 *   batches; claims left by a crashed process are released at start-up.
 */
import crypto from 'node:crypto';
import { setImmediate as nextTurn } from 'node:timers/promises';
import stringify from 'safe-stable-stringify';
import { ApiError } from '../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../domain/ids.js';
import type { Repos } from '../store/index.js';

/**
 * How a stored response is kept: `deflated` when long (the default; the store's
 * `IdempotencyRepo`), `plain` however long (the text turn, the hottest write), or `sealed`:
 * encrypted with a key derived from the master key, bound to its tenant and key, for a response
 * that carries a secret shown once (a webhook endpoint's signing secret): the database then
 * holds it as it holds every other secret, sealed. A sealed body is kept in `body` as
 * `sealed:v1:` and base64; JSON never starts so.
 */
export type BodyStorage = 'deflated' | 'plain' | 'sealed';

/** How a sealed body starts (see {@link BodyStorage}). */
const SEALED_PREFIX = 'sealed:v1:';

/** What a claim attempt found. */
export type ClaimOutcome = { kind: 'claimed' } | { kind: 'replay'; status: number; body: string };

/** What a look without claiming found: `absent` means the key is free. */
export type PeekOutcome = { kind: 'absent' } | { kind: 'replay'; status: number; body: string };

/**
 * Validates an `Idempotency-Key` header value.
 * @throws ApiError invalid_request for an empty, over-long or non-printable key.
 */
export function checkIdempotencyKey(key: string): void {
  if (!IDEMPOTENCY_KEY_PATTERN.test(key)) {
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1–255 printable ASCII characters', {
      param: 'Idempotency-Key',
    });
  }
}

/**
 * The request fingerprint: HMAC-SHA256 (hex) of `METHOD path` and the body's canonical JSON.
 * @param key  HMAC key (see {@link fingerprintKey}).
 * @param path Request path without the query; percent-encoding is decoded so `%2B91…`,
 *             `%2b91…` and `+91…` name the same request.
 */
export function fingerprint(key: Buffer, method: string, path: string, body: unknown): string {
  let decoded = path;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    /* keep the raw path */
  }
  return hmacSha256Hex(key, `${method.toUpperCase()} ${decoded}\n${stringify(body ?? null) ?? 'null'}`);
}

/** SHA-256's block size, bytes (FIPS 180-4). */
const SHA256_BLOCK = 64;
/** The inner and outer padded keys of each HMAC key seen (RFC 2104 §2), computed once per key. */
const hmacPads = new WeakMap<Buffer, { inner: Buffer; outer: Buffer }>();

/**
 * HMAC-SHA256 of the UTF-8 `message` under `key`, hex: the same bytes as
 * `crypto.createHmac('sha256', key).update(message).digest('hex')`, computed as RFC 2104 §2
 * writes it, `H((K ^ opad) || H((K ^ ipad) || message))`, with two one-shot `crypto.hash`
 * calls and the padded keys kept per key: ~45% less than a `createHmac` per request
 * (measured: 1.5–2.1 against 2.8–3.8 µs for a turn's fingerprint).
 */
export function hmacSha256Hex(key: Buffer, message: string): string {
  let pads = hmacPads.get(key);
  if (pads === undefined) {
    const k = key.length > SHA256_BLOCK ? crypto.hash('sha256', key, 'buffer') : key;
    const inner = Buffer.alloc(SHA256_BLOCK, 0x36);
    const outer = Buffer.alloc(SHA256_BLOCK, 0x5c);
    for (let i = 0; i < k.length; i++) {
      inner[i]! ^= k[i]!;
      outer[i]! ^= k[i]!;
    }
    pads = { inner, outer };
    hmacPads.set(key, pads);
  }
  const text = Buffer.from(message, 'utf8');
  const innerHash = crypto.hash('sha256', Buffer.concat([pads.inner, text], SHA256_BLOCK + text.length), 'buffer');
  return crypto.hash('sha256', Buffer.concat([pads.outer, innerHash], SHA256_BLOCK + innerHash.length), 'hex');
}

/** Derives the fingerprint HMAC key from the 32-byte master key (HKDF-SHA256). */
export function fingerprintKey(masterKey: Buffer): Buffer {
  return Buffer.from(crypto.hkdfSync('sha256', masterKey, Buffer.alloc(0), 'vagent idempotency fingerprint v1', 32));
}

/** The error for a key already used with a different request (`idempotency_key_reuse`, 422). */
export function keyReuseError(): ApiError {
  return new ApiError(
    'idempotency_key_reuse',
    'this Idempotency-Key was already used with a different request; use a new key for a new request',
    { param: 'Idempotency-Key' },
  );
}

/** True when a response with this status is stored for replay. */
export function isStorableStatus(status: number, code?: string): boolean {
  if (status >= 500 || status === 429 || status === 401) return false;
  return code !== 'idempotency_key_reuse' && code !== 'idempotency_key_in_progress';
}

/**
 * Rows deleted per transaction by {@link IdempotencyService.purgeExpired}: ~5 ms of the event
 * loop each (p50, 100k-row table, bench/idempotency-space.mjs), where the single DELETE of the
 * same backlog held it and the write lock for ~1.1 s.
 */
export const PURGE_BATCH_ROWS = 1000;

/** Options of {@link IdempotencyService.purgeExpired}. */
export interface PurgeOptions {
  /** Rows per transaction (default {@link PURGE_BATCH_ROWS}). */
  batchRows?: number;
  /** Stops between batches when aborted (the daemon's shutdown). */
  signal?: AbortSignal;
}

/** Idempotency use cases over a store. */
export class IdempotencyService {
  readonly #key: Buffer;
  /** AES-256-GCM key of sealed bodies (see {@link BodyStorage}), derived from the master key. */
  readonly #sealKey: Buffer;
  /** The purge under way, which a second caller joins rather than racing it. */
  #purging: Promise<number> | null = null;

  /**
   * @param masterKey  32-byte master key; the fingerprint key is derived from it.
   * @param retentionS How long records are kept, in seconds.
   */
  constructor(
    private readonly repos: Repos,
    masterKey: Buffer,
    private readonly retentionS: number,
    private readonly nowS: () => number = () => Date.now() / 1000,
  ) {
    this.#key = fingerprintKey(masterKey);
    this.#sealKey = Buffer.from(crypto.hkdfSync('sha256', masterKey, Buffer.alloc(0), 'vagent idempotency sealed body v1', 32));
  }

  /** `body` as stored for (tenant, key): as it is, or sealed (`sealed:v1:` and base64 of IV, tag and ciphertext). */
  private encode(tenantId: string, key: string, body: string, storage: BodyStorage): string {
    if (storage !== 'sealed') return body;
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#sealKey, iv);
    cipher.setAAD(Buffer.from(`${tenantId}\n${key}`, 'utf8'));
    const sealed = Buffer.concat([cipher.update(body, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64');
  }

  /** A stored body as it was sent. @throws Error when a sealed one cannot be opened (another master key, or altered). */
  private decode(tenantId: string, key: string, stored: string): string {
    if (!stored.startsWith(SEALED_PREFIX)) return stored;
    try {
      const raw = Buffer.from(stored.slice(SEALED_PREFIX.length), 'base64');
      const decipher = crypto.createDecipheriv('aes-256-gcm', this.#sealKey, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(`${tenantId}\n${key}`, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    } catch {
      throw new Error('a stored idempotent response cannot be decrypted (wrong master key, or the record was altered)');
    }
  }

  /** This daemon's fingerprint of a request (see {@link fingerprint}). */
  fingerprint(method: string, path: string, body: unknown): string {
    return fingerprint(this.#key, method, path, body);
  }

  /**
   * Checks a key without claiming it: in a read batch (where it shares one transaction's read
   * lock with the other reads of the tick), or inside the write that records its response with
   * {@link IdempotencyService.completeTx} — no claim row is written there, since nothing outside
   * the transaction could see it.
   * @throws ApiError idempotency_key_reuse or idempotency_key_in_progress, as {@link claimTx}.
   */
  peek(tenantId: string, key: string, print: string): PeekOutcome {
    return this.check(tenantId, key, print, this.nowS()) ?? { kind: 'absent' };
  }

  /**
   * Checks and claims a key. Must run inside `Store.write`.
   * @throws ApiError idempotency_key_reuse (different fingerprint) or
   *         idempotency_key_in_progress (the first request is still running).
   */
  claimTx(tenantId: string, key: string, print: string): ClaimOutcome {
    const now = this.nowS();
    const found = this.check(tenantId, key, print, now);
    if (found) return found;
    this.repos.idempotency.claim(tenantId, key, print, now);
    return { kind: 'claimed' };
  }

  /**
   * Records the response of a key that {@link IdempotencyService.peek} found free in the same
   * transaction (an expired record under it is replaced). Must run inside `Store.write`.
   * @param storage how the body is kept (see {@link BodyStorage})
   */
  completeTx(tenantId: string, key: string, print: string, status: number, body: string, storage: BodyStorage = 'deflated'): void {
    const stored = this.encode(tenantId, key, body, storage);
    this.repos.idempotency.put(tenantId, key, print, status, stored, this.nowS(), storage !== 'deflated');
  }

  private check(tenantId: string, key: string, print: string, now: number): { kind: 'replay'; status: number; body: string } | undefined {
    const row = this.repos.idempotency.get(tenantId, key);
    if (row && row.created_at >= now - this.retentionS) {
      if (row.fingerprint !== print) throw keyReuseError();
      if (row.state === 'in_progress') {
        throw new ApiError('idempotency_key_in_progress', 'a request with this Idempotency-Key is still being processed; retry shortly', {
          param: 'Idempotency-Key',
        });
      }
      return { kind: 'replay', status: row.status!, body: this.decode(tenantId, key, row.body!) };
    }
    return undefined;
  }

  /**
   * Stores the response for a key: completes this request's claim, or records it for a key
   * not claimed at all (an atomic route that failed before its writes). A response already
   * stored for the key by an identical request is kept. Must run inside `Store.write`.
   * @param storage how the body is kept (see {@link BodyStorage})
   */
  storeTx(tenantId: string, key: string, print: string, status: number, body: string, storage: BodyStorage = 'deflated'): void {
    const stored = this.encode(tenantId, key, body, storage);
    this.repos.idempotency.store(tenantId, key, print, status, stored, this.nowS(), storage !== 'deflated');
  }

  /** Releases a claim so the key runs again. Must run inside `Store.write`. */
  releaseTx(tenantId: string, key: string): void {
    this.repos.idempotency.release(tenantId, key);
  }

  /**
   * Start-up: releases claims left by a crashed process. Reads only the claims (partial index
   * `idempotency_in_progress`), so start-up costs the same with a table of any size; expired
   * records are left to {@link IdempotencyService.purgeExpired}, which the daemon runs in the
   * background once it listens.
   */
  recover(): { released: number } {
    return this.repos.store.writeNow(() => ({ released: this.repos.idempotency.releaseAll() }));
  }

  /**
   * Purges records older than the retention period, in transactions of at most `batchRows`
   * rows through the store's write queue, yielding to the event loop between them: requests'
   * writes commit between batches (or with them), so a backlog of any size never holds the
   * write lock for more than one batch. A call made while a purge runs joins it.
   * @returns how many records were purged (before an abort, if any).
   * @throws RangeError for a `batchRows` that is not a whole number ≥ 1; the store's write errors.
   */
  purgeExpired(options: PurgeOptions = {}): Promise<number> {
    const batch = options.batchRows ?? PURGE_BATCH_ROWS;
    if (!Number.isInteger(batch) || batch < 1) throw new RangeError(`batchRows must be a whole number ≥ 1, not ${batch}`);
    this.#purging ??= this.purgeInBatches(batch, options.signal).finally(() => {
      this.#purging = null;
    });
    return this.#purging;
  }

  private async purgeInBatches(batch: number, signal?: AbortSignal): Promise<number> {
    const { store, idempotency } = this.repos;
    // One cut-off for the whole run: rows expiring meanwhile wait for the next run.
    const before = this.nowS() - this.retentionS;
    let total = 0;
    while (!signal?.aborted) {
      // A DELETE cannot fail half done (it is one statement), so it needs no savepoint of its own.
      const n = await store.write(() => idempotency.purgeBatch(before, batch), { savepoint: false });
      total += n;
      if (n < batch) break;
      await nextTurn();
    }
    return total;
  }
}
