/**
 * `Idempotency-Key` on every POST/PUT/DELETE under `/v1` (docs/api-decisions.md
 * "Idempotency"): the header becomes the request's {@link Scope}; the unit of work does the rest
 * (src/app/unit-of-work.ts, docs/unit-of-work.md).
 *
 * - `preValidation`: validate the key, then check it (atomic routes) or claim it in a committed
 *   write (claim-first routes); a stored response is replayed at once with
 *   `Idempotency-Replayed: true`.
 * - the handler: its use case runs its writes through `UnitOfWork.run` with {@link scopeOf}, which
 *   stores the response with them; {@link sendOutcome} sends what it returns.
 * - `onSend`: any other response (errors included) is stored, or the claim released for
 *   5xx/429/401, before the client sees it; `onResponse` releases a claim left unanswered.
 */
import { isDeepStrictEqual } from 'node:util';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import { checkIdempotencyKey, type IdempotencyService } from '../../app/idempotency.js';
import type { Outcome, Scope, UnitOfWork } from '../../app/unit-of-work.js';
import { sendSerialized } from '../reply.js';
import { principalOf } from './auth.js';

const toArray = <T>(v: T | T[] | undefined): T[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

/**
 * Installs the idempotency hooks on every POST, PUT and DELETE route registered in `scope` after
 * this call (GET routes carry no hooks at all). The auth hook must run first.
 */
export function installIdempotency(scope: FastifyInstance, service: IdempotencyService, uow: UnitOfWork): void {
  async function preValidation(request: FastifyRequest, reply: FastifyReply) {
    const header = request.headers['idempotency-key'];
    if (header === undefined) return;
    const key = Array.isArray(header) ? header.join(',') : header;
    checkIdempotencyKey(key);
    const { tenantId } = principalOf(request);
    const print = service.fingerprint(request.method, request.url.split('?')[0]!, request.body);
    const mode = request.routeOptions.config.idempotency;
    const atomic = (typeof mode === 'function' ? mode(request) : mode) === 'atomic';
    const begun = await uow.begin(tenantId, key, print, atomic ? 'atomic' : 'claim-first');
    if ('replay' in begun) return sendOutcome(reply, begun.replay);
    request.idem = begun.claim;
  }

  // onSend and onResponse are callback-style hooks: most requests pass them with nothing to
  // do (a response already stored with its writes), and then cost no promise.
  function onSend(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: Error | null, payload?: unknown) => void) {
    const claim = request.idem;
    if (!claim || claim.settled) {
      done(null, payload);
      return;
    }
    let written: Promise<void> | null;
    try {
      written = uow.settle(claim, reply.statusCode, typeof payload === 'string' ? payload : null);
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
    const claim = request.idem;
    const written = claim ? uow.abandon(claim) : null;
    if (written === null) done();
    else
      written.then(
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
 * The unit-of-work scope of a request answering `status` on success: its idempotency claim (if
 * it sent a key) and, when the app checks responses, the check of the view against the
 * route's response schema for `status`.
 */
export function scopeOf(request: FastifyRequest, status: number): Scope {
  const schema = (request.routeOptions.schema?.response as Record<number, z.ZodType> | undefined)?.[status];
  return {
    status,
    idempotency: request.idem,
    check: schema && request.server.checkResponses ? (view) => checkedResponse(request, schema, view) : null,
  };
}

/** Sends a unit of work's outcome: its status and serialized body, marked `Idempotency-Replayed: true` when replayed. */
export function sendOutcome(reply: FastifyReply, outcome: Outcome): FastifyReply {
  if (outcome.replayed) reply.header('idempotency-replayed', 'true');
  return sendSerialized(reply, outcome.status, outcome.body);
}
