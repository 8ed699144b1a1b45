/**
 * `/v1/sessions` (docs/api-decisions.md "Sessions") and
 * `GET /v1/sessions` (extension: a tenant's sessions, newest first, cursor pages).
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import {
  errorResponses,
  EndResultSchema,
  OpenedSessionSchema,
  OpenSessionBody,
  SessionDetailSchema,
  SessionListQuery,
  SessionListSchema,
  SessionParams,
  TurnBody,
  TurnResultSchema,
} from '../../../contract/index.js';

/** Registers the session routes. */
export function sessionRoutes(services: Services): FastifyPluginAsyncZod {
  const { sessions } = services;
  return async (app) => {
    installSchemaErrors(app);
    app.post(
      '/sessions',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Open a conversation session with an agent',
          tags: ['sessions'],
          body: OpenSessionBody,
          response: { 201: OpenedSessionSchema, ...errorResponses },
        },
      },
      async (request, reply) => sendOutcome(reply, await sessions.open(principalOf(request), request.body, scopeOf(request, 201))),
    );

    app.post(
      '/sessions/:session_id/turn',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: "Submit the caller's transcribed text; get the reply, audio, trace and cost",
          tags: ['sessions'],
          params: SessionParams,
          body: TurnBody,
          response: { 200: TurnResultSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await sessions.turn(principalOf(request), request.params.session_id, request.body, scopeOf(request, 200))),
    );

    app.post(
      '/sessions/:session_id/end',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'End a session: finalise its cost and build its summary',
          tags: ['sessions'],
          params: SessionParams,
          response: { 200: EndResultSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await sessions.end(principalOf(request), request.params.session_id, scopeOf(request, 200))),
    );

    app.get(
      '/sessions',
      {
        schema: {
          summary: 'List sessions, newest first (extension)',
          tags: ['sessions'],
          querystring: SessionListQuery,
          response: { 200: SessionListSchema, ...errorResponses },
        },
      },
      async (request) => sessions.list(principalOf(request), request.query.cursor ?? null, request.query.limit),
    );

    app.get(
      '/sessions/:session_id',
      {
        schema: {
          summary: 'Session detail: metrics, costs and the raw turn list',
          tags: ['sessions'],
          params: SessionParams,
          response: { 200: SessionDetailSchema, ...errorResponses },
        },
      },
      async (request) => sessions.detail(principalOf(request), request.params.session_id),
    );
  };
}
