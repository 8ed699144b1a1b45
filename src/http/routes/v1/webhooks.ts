/**
 * `/v1/webhook_endpoints` (docs/events.md "Webhooks"): create (the only answer with the
 * secret), list, show, delete, rotate the secret, send a test delivery, and replay events.
 */
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Services } from '../../../app/index.js';
import { principalOf } from '../../plugins/auth.js';
import { scopeOf, sendOutcome } from '../../plugins/idempotency.js';
import { installSchemaErrors } from '../../../contract/schema-errors.js';
import {
  CreateWebhookEndpointBody,
  errorResponses,
  ReplayBody,
  ReplayEventBody,
  ReplayResultSchema,
  WebhookEndpointCreatedSchema,
  WebhookEndpointDeletedSchema,
  WebhookEndpointListSchema,
  WebhookEndpointParams,
  WebhookEndpointSchema,
  WebhookSecretRotatedSchema,
  WebhookTestResultSchema,
} from '../../../contract/index.js';

/** Registers the webhook endpoint routes. */
export function webhookRoutes(services: Services): FastifyPluginAsyncZod {
  const { webhooks } = services;
  const tags = ['webhooks'];
  return async (app) => {
    installSchemaErrors(app);
    app.post(
      '/webhook_endpoints',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Add a webhook endpoint (its signing secret is in this answer only)',
          tags,
          body: CreateWebhookEndpointBody,
          response: { 201: WebhookEndpointCreatedSchema, ...errorResponses },
        },
      },
      async (request, reply) => sendOutcome(reply, await webhooks.create(principalOf(request), request.body, scopeOf(request, 201))),
    );

    app.get(
      '/webhook_endpoints',
      {
        schema: { summary: 'List webhook endpoints, oldest first', tags, response: { 200: WebhookEndpointListSchema, ...errorResponses } },
      },
      async (request) => ({ data: webhooks.list(principalOf(request)), has_more: false, next_cursor: null }),
    );

    app.get(
      '/webhook_endpoints/:webhook_endpoint_id',
      {
        schema: {
          summary: 'Get a webhook endpoint',
          tags,
          params: WebhookEndpointParams,
          response: { 200: WebhookEndpointSchema, ...errorResponses },
        },
      },
      async (request) => webhooks.get(principalOf(request), request.params.webhook_endpoint_id),
    );

    app.delete(
      '/webhook_endpoints/:webhook_endpoint_id',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Delete a webhook endpoint and its queued deliveries',
          tags,
          params: WebhookEndpointParams,
          response: { 200: WebhookEndpointDeletedSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await webhooks.delete(principalOf(request), request.params.webhook_endpoint_id, scopeOf(request, 200))),
    );

    app.post(
      '/webhook_endpoints/:webhook_endpoint_id/rotate_secret',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Give a webhook endpoint a new secret (the old one signs too for 24 hours)',
          tags,
          params: WebhookEndpointParams,
          response: { 200: WebhookSecretRotatedSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await webhooks.rotateSecret(principalOf(request), request.params.webhook_endpoint_id, scopeOf(request, 200))),
    );

    app.post(
      '/webhook_endpoints/:webhook_endpoint_id/test',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Send a signed webhook.test delivery and report the answer',
          tags,
          params: WebhookEndpointParams,
          response: { 200: WebhookTestResultSchema, ...errorResponses },
        },
      },
      async (request, reply) =>
        sendOutcome(reply, await webhooks.test(principalOf(request), request.params.webhook_endpoint_id, scopeOf(request, 200))),
    );

    app.post(
      '/webhook_replays/event',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Queue one event again for delivery',
          tags,
          body: ReplayEventBody,
          response: { 200: ReplayResultSchema, ...errorResponses },
        },
      },
      async (request, reply) => sendOutcome(reply, await webhooks.replay(principalOf(request), request.body, scopeOf(request, 200))),
    );

    app.post(
      '/webhook_replays',
      {
        config: { idempotency: 'atomic' },
        schema: {
          summary: 'Queue events again for delivery: one event, or those of the last `since` seconds',
          tags,
          body: ReplayBody,
          response: { 200: ReplayResultSchema, ...errorResponses },
        },
      },
      async (request, reply) => sendOutcome(reply, await webhooks.replay(principalOf(request), request.body, scopeOf(request, 200))),
    );
  };
}
