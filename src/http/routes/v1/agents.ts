/**
 * `/v1/agents` (docs/api-decisions.md "Agents"; docs/agents.md) and
 * `POST /v1/agents/{agent_id}/load` (≡ `POST /v1/sessions`).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import {
  AgentDeletedSchema,
  AgentListSchema,
  AgentParams,
  AgentSchema,
  errorResponses,
  LoadAgentBody,
  OpenedSessionSchema,
  PutAgentBody,
  PutAgentParams,
} from '../../../contract/index.js';

/** Registers the agent routes. */
export function agentRoutes(services: Services, log: () => FastifyBaseLogger): FastifyPluginAsyncZod {
  const { agents, sessions } = services;
  const AgentList = AgentListSchema;
  return async (app) => {
    installSchemaErrors(app);
    app.put(
      '/agents/:agent_id',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Create or replace an agent (workflow definition)',
          description:
            'Body: the agent definition (docs/agents.md). Pre-synthesis of its static texts starts after the reply; poll GET for `audio`.',
          tags: ['agents'],
          params: PutAgentParams,
          body: PutAgentBody,
          response: { 200: AgentSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(
          reply,
          await agents.put(principalOf(request), request.params.agent_id, request.body, scopeOf(request, 200), (err) =>
            log().warn({ err }, 'agent pre-synthesis failed'),
          ),
        ),
    );

    app.get(
      '/agents',
      {
        schema: { summary: 'List agents by id', tags: ['agents'], response: { 200: AgentList, ...errorResponses } },
      },
      async (request) => ({ data: agents.list(principalOf(request)), has_more: false, next_cursor: null }),
    );

    app.get(
      '/agents/:agent_id',
      {
        schema: {
          summary: 'Get an agent with its definition',
          tags: ['agents'],
          params: AgentParams,
          response: { 200: AgentSchema, ...errorResponses },
        },
      },
      async (request) => agents.get(principalOf(request), request.params.agent_id),
    );

    app.delete(
      '/agents/:agent_id',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Delete an agent (open sessions keep their revision)',
          tags: ['agents'],
          params: AgentParams,
          response: { 200: AgentDeletedSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await agents.delete(principalOf(request), request.params.agent_id, scopeOf(request, 200))),
    );

    app.post(
      '/agents/:agent_id/load',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Load an agent: open a session (same as POST /v1/sessions)',
          tags: ['sessions'],
          params: AgentParams,
          body: LoadAgentBody.nullish(),
          response: { 201: OpenedSessionSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(
          reply,
          await sessions.open(principalOf(request), { ...(request.body ?? {}), agent_id: request.params.agent_id }, scopeOf(request, 201)),
        ),
    );
  };
}
