/**
 * `Idempotency-Key` handling for every POST/PUT/DELETE under `/v1` (spec: Endpoints ›
 * Idempotency; DESIGN.md §4).
 *
 * - `preValidation`: validate the key, then check it and (claim-first routes) claim it in one
 *   transaction; a stored response is replayed at once with `Idempotency-Replayed: true`.
 * - {@link commitResponse}: a handler's writes and its stored response commit together (on
 *   atomic routes with the claim too: one fsync per request).
 * - `onSend`: any other response (errors included) is stored, or the claim released for
 *   5xx/429/401, before the client sees it.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { isErrorCode } from '../../domain/errors.js';
import type { Store, WriteOptions } from '../../store/index.js';
import { checkIdempotencyKey, isStorableStatus, type IdempotencyService } from '../../services/idempotency.js';
import { sendSerialized } from '../reply.js';
import { callerOf } from './auth.js';

function errorCodeOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string' || !payload.startsWith('{"error"')) return undefined;
  try {
    const code = (JSON.parse(payload) as { error?: { code?: unknown } }).error?.code;
    return isErrorCode(code) ? code : undefined;
  } catch {
    return undefined;
  }
}

const toArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * Installs the idempotency hooks on every POST, PUT and DELETE route registered in `scope` after
 * this call (GET routes carry no hooks at all). The auth hook must run first.
 */
export function installIdempotency(scope: FastifyInstance, store: Store, service: IdempotencyService): void {
  async function preValidation(request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(',') : header;
    checkIdempotencyKey(key);
    const { tenantId } = callerOf(request);
    const print = service.fingerprint(request.method, request.url.split('?')[0]!, request.body);
    const mode = request.routeOptions.config.idempotency;
    const atomic = (typeof mode === 'function' ? mode(request) : mode) === 'atomic';
    // An atomic route only looks here; its claim is taken with its writes. The look goes in a
    // read batch (one transaction for the reads of this tick), which never waits for a sync.
    const outcome = atomic
      ? await store.read(() => service.peek(tenantId, key, print))
      : await store.write(() => service.claimTx(tenantId, key, print));
    if (outcome.kind === 'replay') {
      // The stored response may belong to a commit whose sync is still running: replay it only
      // once it is durable, as its first sender did.
      await store.whenDurable();
      request.idem = { key, print, state: 'replay', settled: true };
      return sendSerialized(reply.header('idempotency-replayed', 'true'), outcome.status, outcome.body);
    }
    request.idem = { key, print, state: outcome.kind === 'claimed' ? 'claimed' : 'pending', settled: false };
  }

  // onSend and onResponse are callback-style hooks: most requests pass them with nothing to
  // do (a response already stored with its writes), and then cost no promise.
  function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) {
    const idem = request.idem;
    if (!idem || idem.settled) {
      done(null, payload);
      return;
    }
    idem.settled = true;
    let written: Promise<void> | null = null;
    try {
      const { tenantId } = callerOf(request);
      const status = reply.statusCode;
      const body = typeof payload === 'string' ? payload : null;
      if (body !== null && isStorableStatus(status, errorCodeOf(body))) {
        written = store.write(() => service.storeTx(tenantId, idem.key, idem.print, status, body));
      } else if (idem.state === 'claimed') {
        written = store.write(() => service.releaseTx(tenantId, idem.key));
      }
    } catch (err) {
      done(err as Error);
      return;
    }
    if (written === null) done(null, payload);
    else
      written.then(
        () => done(null, payload),
        (err: Error) => done(err),
      );
  }

  function onResponse(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
    const idem = request.idem;
    if (!idem || idem.settled || idem.state !== 'claimed') {
      if (idem) idem.settled = true;
      done();
      return;
    }
    idem.settled = true;
    const tenantId = request.caller?.tenantId;
    if (tenantId === undefined) {
      done();
      return;
    }
    store
      .write(() => service.releaseTx(tenantId, idem.key))
      .then(
        () => done(),
        (err: Error) => done(err),
      );
  }

  scope.addHook('onRoute', (route) => {
    if (!toArray(route.method).some((m) => m === 'POST' || m === 'PUT' || m === 'DELETE')) return;
    route.preValidation = [...toArray(route.preValidation), preValidation] as typeof route.preValidation;
    route.onSend = [...toArray(route.onSend), onSend] as typeof route.onSend;
    route.onResponse = [...toArray(route.onResponse), onResponse] as typeof route.onResponse;
  });
}

/**
 * `view` after its route's response schema, which must leave it as it is (a stripped key or a
 * coerced value means the route builds a shape its schema does not document).
 * @throws Error naming the route and the schema's complaint, or that the schema changed the view.
 */
function checkedResponse(request: FastifyRequest, schema: z.ZodType, view: unknown): unknown {
  const parsed = schema.parse(view);
  if (!isDeepStrictEqual(parsed, JSON.parse(JSON.stringify(view)))) {
    throw new Error(`the response of ${request.method} ${request.routeOptions.url} is not in its schema's exact shape`);
  }
  return parsed;
}

/**
 * Runs a handler's writes and stores its response under the request's idempotency key in
 * the same durable transaction, then sends it with `status`. On an `atomic` route the key is
 * also claimed there; if an identical request committed first, its stored response is
 * replayed instead and `fn` does not run.
 *
 * @param fn Synchronous writes returning the response object, in the exact shape of the route's
 *           response schema for `status` (checked when the app checks responses).
 * @param options `savepoint: false` for a hot route whose `fn` cannot fail once it has written
 *                (see `WriteOptions`)
 * @throws whatever `fn` throws (nothing it wrote is kept), or the idempotency errors.
 */
export async function commitResponse(
  store: Store,
  service: IdempotencyService,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  fn: () => unknown,
  options: WriteOptions = {},
): Promise<FastifyReply> {
  const schemas = request.routeOptions.schema?.response as Record<number, z.ZodType> | undefined;
  const schema = schemas?.[status];
  const idem = request.idem && !request.idem.settled ? request.idem : null;
  const result = await store.write(() => {
    const tenantId = idem ? callerOf(request).tenantId : '';
    // An atomic route's key is checked here and its response recorded in the same transaction:
    // one row written, never a claim.
    const pending = idem?.state === 'pending';
    if (pending) {
      const outcome = service.peek(tenantId, idem.key, idem.print);
      if (outcome.kind === 'replay') return { ...outcome, replayed: true };
    }
    const view = fn();
    const body = JSON.stringify(schema && request.server.checkResponses ? checkedResponse(request, schema, view) : view);
    if (pending) service.completeTx(tenantId, idem.key, idem.print, status, body);
    else if (idem) service.storeTx(tenantId, idem.key, idem.print, status, body);
    return { status, body, replayed: false };
  }, options);
  if (idem) idem.settled = true;
  if (result.replayed) reply.header('idempotency-replayed', 'true');
  return sendSerialized(reply, result.status, result.body);
}
