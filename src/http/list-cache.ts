/**
 * Serialized list responses kept until the database changes.
 *
 * `GET /v1/trunks` and `GET /v1/numbers` are read far more often than written. An entry is
 * valid while {@link Store.generation} is unchanged — any commit by this daemon or by another
 * process (`vagent admin`) moves it — so a cached body is never older than the data.
 */
import type { FastifyReply } from 'fastify';
import type { z } from 'zod';
import type { Store } from '../store/index.js';
import { sendSerialized } from './reply.js';

const MAX_BYTES = 64 * 1024 * 1024;

/** A per-key cache of JSON bodies tied to the store's generation. */
export class ListCache {
  private readonly entries = new Map<string, { generation: number; body: string }>();
  private bytes = 0;

  constructor(private readonly store: Store) {}

  /** The cached body for `key`, or `build()`'s result (then cached) when the data changed. */
  get(key: string, build: () => string): string {
    const generation = this.store.generation();
    const hit = this.entries.get(key);
    if (hit && hit.generation === generation) return hit.body;
    const body = build();
    if (hit) this.bytes -= hit.body.length;
    if (this.bytes + body.length > MAX_BYTES) {
      this.entries.clear();
      this.bytes = 0;
    }
    this.entries.set(key, { generation, body });
    this.bytes += body.length;
    return body;
  }
}

/**
 * Sends a whole, unpaginated list (`{data, has_more: false, next_cursor: null}`) for a
 * tenant from `cache`, building it with `rows()` and the list's response `schema` when the
 * data changed.
 */
export function sendList(reply: FastifyReply, cache: ListCache, tenantId: string, schema: z.ZodType, rows: () => unknown[]): FastifyReply {
  const body = cache.get(tenantId, () => JSON.stringify(schema.parse({ data: rows(), has_more: false, next_cursor: null })));
  return sendSerialized(reply, 200, body);
}
