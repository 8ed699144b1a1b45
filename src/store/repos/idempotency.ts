/**
 * Idempotency records (docs/api-decisions.md "Idempotency").
 * Rows are keyed by (tenant, key); `in_progress` while the first request runs, `done` with
 * the stored status and body afterwards.
 *
 * A body over {@link COMPRESS_ABOVE_BYTES} is stored deflated in `body_z` (migration 9;
 * docs/api-decisions.md "Idempotency"), `body` then NULL, and inflated on read: replays stay byte-identical. Measured
 * (bench/idempotency-bodies.mjs): session and turn responses of 1.2–1.6 KB deflate 2.4×, the
 * whole idempotency table shrinks from ~2,130 to ~890 bytes per row, at ~14 µs to deflate and
 * ~6 µs to inflate a body; a row written before stays plain and replays as it is. A writer may
 * ask for its body to be kept plain (`plain`): the text turn does, the hottest write there is,
 * where deflating cost more of its throughput than the bytes it saved are worth (see
 * docs/api-decisions.md "Idempotency").
 */
import zlib from 'node:zlib';
import type { Db } from '../database.js';

/** Bodies longer than this (UTF-8 bytes) are stored deflated: a smaller one gains little (1.2–1.4× at ~190 bytes). */
export const COMPRESS_ABOVE_BYTES = 512;

/**
 * Raw deflate of a stored body: level 6 with a 4 KiB window (`windowBits` 12) and a small hash
 * (`memLevel` 5). zlib's defaults (32 KiB window, `memLevel` 8) allocate and clear ~256 KiB of
 * state for every body, most of the cost of deflating a 1–2 KB response and a sweep through the
 * CPU cache on every turn; these ~32 KiB give the same bytes for bodies of that size (a turn:
 * 583 either way). Any inflater reads it: a raw stream with a smaller window inflates with the
 * default 32 KiB one, so rows written with zlib's defaults and these read alike.
 */
const DEFLATE = { level: 6, windowBits: 12, memLevel: 5 } as const;

/** `[body, body_z]` as stored: the text as it is (small or `plain`), or NULL and its raw deflate ({@link DEFLATE}). */
function encodeBody(body: string, plain: boolean): [string | null, Buffer | null] {
  if (plain || body.length <= COMPRESS_ABOVE_BYTES / 3) return [body, null]; // ≤ 512 bytes in any encoding: no need to count
  // As UTF-8, like TEXT: what comes back is what a TEXT column would have given.
  const bytes = Buffer.from(body, 'utf8');
  if (bytes.length <= COMPRESS_ABOVE_BYTES) return [body, null];
  return [null, zlib.deflateRawSync(bytes, DEFLATE)];
}

/** A row as selected: the body still in its two columns. */
type StoredRow = Omit<IdempotencyRow, 'body'> & { body: string | null; body_z: Buffer | null };

/** A stored idempotency record. */
export interface IdempotencyRow {
  tenant_id: string;
  key: string;
  fingerprint: string;
  state: 'in_progress' | 'done';
  status: number | null;
  body: string | null;
  created_at: number;
}

/** Idempotency queries over one connection. */
export class IdempotencyRepo {
  private readonly q;

  constructor(db: Db) {
    this.q = {
      get: db.prepare(
        'SELECT tenant_id, key, fingerprint, state, status, body, body_z, created_at FROM idempotency WHERE tenant_id = ? AND key = ?',
      ),
      claim: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, created_at)
        VALUES (?, ?, ?, 'in_progress', ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = excluded.fingerprint,
          state = 'in_progress', status = NULL, body = NULL, body_z = NULL, created_at = excluded.created_at`),
      store: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, body_z, created_at)
        VALUES (?, ?, ?, 'done', ?, ?, ?, ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET state = 'done', status = excluded.status, body = excluded.body,
          body_z = excluded.body_z
        WHERE idempotency.state = 'in_progress' AND idempotency.fingerprint = excluded.fingerprint`),
      put: db.prepare(`INSERT INTO idempotency (tenant_id, key, fingerprint, state, status, body, body_z, created_at)
        VALUES (?, ?, ?, 'done', ?, ?, ?, ?)
        ON CONFLICT (tenant_id, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = 'done',
          status = excluded.status, body = excluded.body, body_z = excluded.body_z, created_at = excluded.created_at`),
      release: db.prepare(`DELETE FROM idempotency WHERE tenant_id = ? AND key = ? AND state = 'in_progress'`),
      releaseAll: db.prepare(`DELETE FROM idempotency WHERE state = 'in_progress'`),
      // The oldest expired rows first, through idempotency_created: a batch reads only the rows it deletes.
      purgeBatch: db.prepare(`DELETE FROM idempotency WHERE seq IN (
        SELECT seq FROM idempotency WHERE created_at < ? ORDER BY created_at LIMIT ?)`),
    };
  }

  /** The record of (tenant, key), expired or not; a deflated body comes back as the text it was. */
  get(tenantId: string, key: string): IdempotencyRow | undefined {
    const row = this.q.get.get(tenantId, key) as StoredRow | undefined;
    if (!row) return undefined;
    const { body_z: z, ...rest } = row;
    return z === null ? rest : { ...rest, body: zlib.inflateRawSync(z).toString('utf8') };
  }
  /** Inserts (or takes over an expired row as) an `in_progress` claim. */
  claim(tenantId: string, key: string, fingerprint: string, at: number): void {
    this.q.claim.run(tenantId, key, fingerprint, at);
  }
  /**
   * Stores a done response: inserts it, or completes this fingerprint's claim; a done row is kept.
   * @param plain keep the body as it is, however long (see the file's header)
   */
  store(tenantId: string, key: string, fingerprint: string, status: number, body: string, at: number, plain = false): void {
    this.q.store.run(tenantId, key, fingerprint, status, ...encodeBody(body, plain), at);
  }
  /**
   * Records a done response, replacing whatever row the key has: only for a key found free (no
   * row, or an expired one) earlier in the same transaction.
   * @param plain keep the body as it is, however long (see the file's header)
   */
  put(tenantId: string, key: string, fingerprint: string, status: number, body: string, at: number, plain = false): void {
    this.q.put.run(tenantId, key, fingerprint, status, ...encodeBody(body, plain), at);
  }
  /** Drops a claim so the key can be used again (5xx, 429, crashed handler). */
  release(tenantId: string, key: string): void {
    this.q.release.run(tenantId, key);
  }
  /** Drops every claim (start-up: claims of a crashed process). Returns how many. Reads only the claims (partial index `idempotency_in_progress`, migration 6). */
  releaseAll(): number {
    return this.q.releaseAll.run().changes;
  }
  /**
   * Deletes up to `limit` records created before `before` (epoch s), oldest first. Returns how
   * many: fewer than `limit` means none older is left.
   */
  purgeBatch(before: number, limit: number): number {
    return this.q.purgeBatch.run(before, limit).changes;
  }
}
