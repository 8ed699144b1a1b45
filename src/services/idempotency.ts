/**
 * Idempotency keys (spec: Endpoints › Idempotency; DESIGN.md §4 "Idempotency").
 *
 * - scope (tenant, key); a key is 1–255 printable ASCII characters;
 * - fingerprint = SHA-256 of method, path and the canonical JSON of the body (keys sorted);
 * - the claim (`in_progress`) is taken in the same transaction as the check;
 * - every response is stored except 5xx, 429, 401 and the idempotency errors themselves;
 * - records expire after the retention period; claims left by a crashed process are
 *   released at start-up.
 */
import crypto from 'node:crypto';
import stringify from 'safe-stable-stringify';
import { ApiError } from '../domain/errors.js';
import type { Repos } from '../store/index.js';

const KEY_PATTERN = /^[\x20-\x7e]{1,255}$/;

/** What a claim attempt found. */
export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; status: number; body: string };

/**
 * Validates an `Idempotency-Key` header value.
 * @throws ApiError invalid_request for an empty, over-long or non-printable key.
 */
export function checkIdempotencyKey(key: string): void {
  if (!KEY_PATTERN.test(key)) {
    throw new ApiError('invalid_request', 'Idempotency-Key must be 1–255 printable ASCII characters', { param: 'Idempotency-Key' });
  }
}

/** The request fingerprint: SHA-256 hex of `METHOD path` and the body's canonical JSON. */
export function fingerprint(method: string, path: string, body: unknown): string {
  return crypto.createHash('sha256')
    .update(`${method.toUpperCase()} ${path}\n`)
    .update(stringify(body ?? null) ?? 'null')
    .digest('hex');
}

/** True when a response with this status is stored for replay. */
export function isStorableStatus(status: number, code?: string): boolean {
  if (status >= 500 || status === 429 || status === 401) return false;
  return code !== 'idempotency_key_reuse' && code !== 'idempotency_key_in_progress';
}

/** Idempotency use cases over a store. */
export class IdempotencyService {
  constructor(
    private readonly repos: Repos,
    private readonly retentionS: number,
    private readonly now: () => number = () => Date.now() / 1000,
  ) {}

  /**
   * Checks and claims a key. Must run inside `Store.write`.
   * @throws ApiError idempotency_key_reuse (different fingerprint) or
   *         idempotency_key_in_progress (the first request is still running).
   */
  claimTx(tenantId: string, key: string, print: string): ClaimOutcome {
    const now = this.now();
    const row = this.repos.idempotency.get(tenantId, key);
    if (row && row.created_at >= now - this.retentionS) {
      if (row.fingerprint !== print) {
        throw new ApiError('idempotency_key_reuse',
          'this Idempotency-Key was already used with a different request; use a new key for a new request',
          { param: 'Idempotency-Key' });
      }
      if (row.state === 'in_progress') {
        throw new ApiError('idempotency_key_in_progress',
          'a request with this Idempotency-Key is still being processed; retry shortly',
          { param: 'Idempotency-Key' });
      }
      return { kind: 'replay', status: row.status!, body: row.body! };
    }
    this.repos.idempotency.claim(tenantId, key, print, now);
    return { kind: 'claimed' };
  }

  /** Stores the response of a claimed key. Must run inside `Store.write`. */
  completeTx(tenantId: string, key: string, status: number, body: string): void {
    this.repos.idempotency.complete(tenantId, key, status, body);
  }

  /** Releases a claim so the key runs again. Must run inside `Store.write`. */
  releaseTx(tenantId: string, key: string): void {
    this.repos.idempotency.release(tenantId, key);
  }

  /** Start-up: releases claims left by a crashed process and purges expired records. */
  recover(): { released: number; purged: number } {
    return this.repos.store.writeNow(() => ({
      released: this.repos.idempotency.releaseAll(),
      purged: this.repos.idempotency.purgeBefore(this.now() - this.retentionS),
    }));
  }

  /** Purges records older than the retention period. Returns how many. */
  async purgeExpired(): Promise<number> {
    return this.repos.store.write(() => this.repos.idempotency.purgeBefore(this.now() - this.retentionS));
  }
}
