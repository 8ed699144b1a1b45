/**
 * `/v1/trunks` (docs/api-decisions.md "Trunks").
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import { ListCache, sendList } from '../../list-cache.js';
import { CreateTrunkBody, errorResponses, TrunkDeletedSchema, TrunkListSchema, TrunkParams, TrunkSchema } from '../../../contract/index.js';

/** Registers the trunk routes. */
export function trunkRoutes(services: Services): FastifyPluginAsyncZod {
  const { trunks, repos } = services;
  const TrunkList = TrunkListSchema;
  const lists = new ListCache(repos.store);
  return async (app) => {
    installSchemaErrors(app);
    app.post(
      '/trunks',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Register a SIP trunk',
          tags: ['trunks'],
          body: CreateTrunkBody,
          response: { 201: TrunkSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(
          reply,
          await trunks.create(
            principalOf(request),
            { ...request.body, auth: request.body.auth ?? undefined, numbers: request.body.numbers ?? undefined },
            scopeOf(request, 201),
          ),
        ),
    );

    app.get(
      '/trunks',
      {
        schema: { summary: 'List trunks, oldest first', tags: ['trunks'], response: { 200: TrunkList, ...errorResponses } },
      },
      async (request, reply) => {
        const principal = principalOf(request);
        return sendList(reply, lists, principal.tenantId, TrunkList, () => trunks.list(principal));
      },
    );

    app.get(
      '/trunks/:trunk_id',
      {
        schema: {
          summary: 'Get a trunk',
          tags: ['trunks'],
          params: TrunkParams,
          response: { 200: TrunkSchema, ...errorResponses },
        },
      },
      async (request) => trunks.get(principalOf(request), request.params.trunk_id),
    );

    app.delete(
      '/trunks/:trunk_id',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Delete a trunk',
          tags: ['trunks'],
          params: TrunkParams,
          response: { 200: TrunkDeletedSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await trunks.delete(principalOf(request), request.params.trunk_id, scopeOf(request, 200))),
    );
  };
}
