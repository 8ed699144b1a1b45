/**
 * `Idempotency-Key` handling for every POST/DELETE under `/v1` (spec: Endpoints ›
 * Idempotency; DESIGN.md §4).
 *
 * - `preValidation`: validate the key, then check and claim it in one transaction; a stored
 *   response is replayed at once with `Idempotency-Replayed: true`.
 * - {@link commitResponse}: a handler's writes and its stored response commit together.
 * - `onSend`: any other response (errors included) is stored, or the claim released for
 *   5xx/429/401, before the client sees it.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { isErrorCode } from '../../domain/errors.js';
import type { Store } from '../../store/index.js';
import { checkIdempotencyKey, isStorableStatus, type IdempotencyService } from '../../services/idempotency.js';
import { callerOf } from './auth.js';

const JSON_TYPE = 'application/json; charset=utf-8';

function errorCodeOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{"error"')) return undefined;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return isErrorCode(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Installs the idempotency hooks on `scope` (after the auth hook). */
export function installIdempotency(scope: FastifyInstance, store: Store, service: IdempotencyService): void {
  scope.addHook('preValidation', async (request, reply) => {
    if (request.method !== 'POST' && request.method !== 'DELETE') return;
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(',') : header;
    checkIdempotencyKey(key);
    const caller = callerOf(request);
    const print = service.fingerprint(request.method, request.url.split('?')[0]!, request.body);
    const outcome = await store.write(() => service.claimTx(caller.tenantId, key, print));
    if (outcome.kind === 'claimed') {
      request.idem = { key, state: 'claimed', settled: false };
      return;
    }
    request.idem = { key, state: 'replay', settled: true };
    return reply.code(outcome.status).header('idempotency-replayed', 'true').type(JSON_TYPE).send(outcome.body);
  });

  scope.addHook('onSend', async (request, reply, payload) => {
    const idem = request.idem;
    if (!idem || idem.settled || idem.state !== 'claimed') return payload;
    const { tenantId } = callerOf(request);
    const status = reply.statusCode;
    const body = typeof payload === 'string' ? payload : null;
    idem.settled = true;
    if (body !== null && isStorableStatus(status, errorCodeOf(body))) {
      await store.write(() => service.completeTx(tenantId, idem.key, status, body));
    } else {
      await store.write(() => service.releaseTx(tenantId, idem.key));
    }
    return payload;
  });

  scope.addHook('onResponse', async (request) => {
    const idem = request.idem;
    if (!idem || idem.settled) return;
    idem.settled = true;
    const { tenantId } = callerOf(request);
    await store.write(() => service.releaseTx(tenantId, idem.key));
  });
}

/**
 * Runs a handler's writes and stores its response under the request's idempotency key in
 * the same durable transaction, then sends it with `status`.
 *
 * @param fn Synchronous writes returning the response object; validated and stripped by the
 *           route's response schema for `status`.
 * @throws whatever `fn` throws (nothing it wrote is kept).
 */
export async function commitResponse(
  store: Store,
  service: IdempotencyService,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  fn: () => unknown,
): Promise<FastifyReply> {
  const schemas = request.routeOptions.schema?.response as Record<number, z.ZodType> | undefined;
  const schema = schemas?.[status];
  const idem = request.idem;
  const payload = await store.write(() => {
    const view = fn();
    const body = JSON.stringify(schema ? schema.parse(view) : view);
    if (idem && idem.state === 'claimed' && !idem.settled) {
      service.completeTx(callerOf(request).tenantId, idem.key, status, body);
    }
    return body;
  });
  if (idem) idem.settled = true;
  return reply.code(status).type(JSON_TYPE).send(payload);
}
