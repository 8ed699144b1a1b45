/**
 * `/v1/numbers` (docs/api-decisions.md "Numbers").
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import { ListCache, sendList } from '../../list-cache.js';
import {
  BindNumberBody,
  CreateNumberBody,
  errorResponses,
  NumberDeletedSchema,
  NumberListSchema,
  NumberParams,
  NumberSchema,
} from '../../../contract/index.js';

/** Registers the number routes. */
export function numberRoutes(services: Services): FastifyPluginAsyncZod {
  const { numbers, repos } = services;
  const NumberList = NumberListSchema;
  const lists = new ListCache(repos.store);
  return async (app) => {
    installSchemaErrors(app);
    app.post(
      '/numbers',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Register a phone number (DID) the tenant holds with a carrier',
          tags: ['numbers'],
          body: CreateNumberBody,
          response: { 201: NumberSchema, ...errorResponses },
        },
      },
      async (request, reply) => sendOutcome(reply, await numbers.create(principalOf(request), request.body, scopeOf(request, 201))),
    );

    app.get(
      '/numbers',
      {
        schema: {
          summary: 'List number records, sorted by number',
          tags: ['numbers'],
          response: { 200: NumberList, ...errorResponses },
        },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        return sendList(reply, lists, principal.tenantId, NumberList, () => numbers.list(principal));
      },
    );

    app.post(
      '/numbers/:number/bind',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Bind the agent that answers inbound calls on a number',
          tags: ['numbers'],
          params: NumberParams,
          body: BindNumberBody,
          response: { 200: NumberSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await numbers.bind(principalOf(request), request.params.number, request.body.agent_id, scopeOf(request, 200))),
    );

    app.delete(
      '/numbers/:number',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: "Delete a number record (the carrier's number is untouched)",
          tags: ['numbers'],
          params: NumberParams,
          response: { 200: NumberDeletedSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await numbers.delete(principalOf(request), request.params.number, scopeOf(request, 200))),
    );
  };
}
