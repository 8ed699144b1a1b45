/**
 * Sending bodies that are already JSON: stored idempotent replays, cached lists, error
 * bodies. They skip fastify's response serializer (they were validated when built).
 */
import type { FastifyReply } from 'fastify';
import type { ApiError } from '../domain/errors.js';

/** Content type of every JSON response. */
export const JSON_TYPE = 'application/json; charset=utf-8';

/** Sends an already serialized JSON body with `status`. */
export function sendSerialized(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type(JSON_TYPE).send(body);
}

/** Sends the error body (docs/api-decisions.md "Errors") with the error's status. */
export function sendError(reply: FastifyReply, error: ApiError): FastifyReply {
  return sendSerialized(reply, error.status, JSON.stringify(error.toBody()));
}
